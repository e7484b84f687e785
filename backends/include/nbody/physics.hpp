#pragma once
// The nbody2d workload's constants and the arithmetic of one step (SPEC §1), written once for
// every model that can compile host code: serial, OpenMP, and device code through NBODY_HD.
#include <cmath>
#include <cstddef>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define NBODY_HD __host__ __device__
#else
#define NBODY_HD
#endif

namespace nbody {

struct PhysicsConstants {
    double G = 9.8;
    double dt = 0.01;
    double softening = 2.0;  // eps; the kernels use eps^2
    double eps2() const { return softening * softening; }
};

// FP32 instructions per 2D interaction, SPEC §3 (the reciprocal square root is counted apart).
inline constexpr double kFlopsPerInteraction = 9.0;

// Adds body j's pull (without G) on a body at (xi, yi) to (ax, ay):
// m_j * d / (|d|^2 + eps2)^(3/2), with inv_sqrt supplied by the model (exact or hardware rsqrt).
template <class Real, class InvSqrt>
NBODY_HD inline void accumulate_pull(Real xi, Real yi, Real xj, Real yj, Real mj, Real eps2,
                                     Real& ax, Real& ay, InvSqrt inv_sqrt) {
    const Real dx = xj - xi;
    const Real dy = yj - yi;
    const Real r2 = dx * dx + (dy * dy + eps2);
    const Real inv_r = inv_sqrt(r2);
    const Real weight = mj * (inv_r * inv_r * inv_r);
    ax += weight * dx;
    ay += weight * dy;
}

// Host reciprocal square root, correctly rounded up to the division.
struct ExactInvSqrt {
    float operator()(float v) const { return 1.0f / std::sqrt(v); }
    double operator()(double v) const { return 1.0 / std::sqrt(v); }
};

// Position first with the old velocity, then velocity with G * (summed pull).
template <class Real>
NBODY_HD inline void integrate_body(Real& x, Real& y, Real& vx, Real& vy, Real ax, Real ay,
                                    Real G, Real dt) {
    x += dt * vx;
    y += dt * vy;
    vx += dt * (G * ax);
    vy += dt * (G * ay);
}

// Activity-map cell of a position, or -1 when it lies outside the unit square.
// col = floor(x * D) in the workload's precision; NaN lands outside.
template <class Real>
NBODY_HD inline int activity_cell(Real x, Real y, int d) {
    const Real fx = x * static_cast<Real>(d);
    const Real fy = y * static_cast<Real>(d);
    const Real limit = static_cast<Real>(d);
    if (!(fx >= Real(0) && fx < limit && fy >= Real(0) && fy < limit)) return -1;
    const int col = static_cast<int>(fx);  // truncation == floor for non-negative values
    const int row = static_cast<int>(fy);
    if (col >= d || row >= d) return -1;
    return row * d + col;
}

// map[cell] = count * (D / N), the normalisation every step.
inline float activity_scale(std::size_t n, int d) {
    return static_cast<float>(d) / static_cast<float>(n);
}

}  // namespace nbody
