#pragma once
// The workload's constants and the arithmetic of one step (SPEC §1, §2), written once for every
// model that can compile host code: serial, OpenMP, and device code through NBODY_HD. Templated on
// the real type and the dimension; 2D float32 code compiles to the same operations as before the
// axes existed (r^2 summed from the last axis to the first, onto eps^2).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "nbody/inv_sqrt.hpp"
#include "nbody/workload.hpp"

#if defined(__CUDACC__) || defined(__HIPCC__)
#define NBODY_HD __host__ __device__
#else
#define NBODY_HD
#endif

// A function that OpenACC compute regions call, where the code is compiled with -fopenacc: an
// `acc routine seq` (GCC offloads no function without it), always inlined as scalar_physics.hpp's
// functions are. Nothing elsewhere.
#if defined(_OPENACC)
#define NBODY_ACC_ROUTINE _Pragma("acc routine seq")
#define NBODY_ACC_ALWAYS_INLINE __attribute__((always_inline))
#else
#define NBODY_ACC_ROUTINE
#define NBODY_ACC_ALWAYS_INLINE
#endif

// Full unrolling of the loops over the Dim axes (registers on the GPU, no loop on the host).
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define NBODY_UNROLL_AXES _Pragma("unroll")
#elif defined(__CUDACC__) || defined(__HIPCC__)
#define NBODY_UNROLL_AXES  // nvcc's host pass: its front end knows no GCC pragma, GCC no `unroll`
#elif defined(__clang__)
#define NBODY_UNROLL_AXES _Pragma("clang loop unroll(full)")
#else
#define NBODY_UNROLL_AXES _Pragma("GCC unroll 3")
#endif

namespace nbody {

struct PhysicsConstants {
    double G = 9.8;
    double dt = 0.01;
    double softening = 2.0;  // eps; the kernels use eps^2
    double eps2() const { return softening * softening; }
};

// A position, velocity or pull of one body: Dim components in the order x, y, z.
template <class Real, int Dim>
struct Vec {
    static_assert(Dim == 2 || Dim == 3, "the workload is 2D or 3D");
    Real c[Dim];
    NBODY_HD Real& operator[](int k) { return c[k]; }
    NBODY_HD const Real& operator[](int k) const { return c[k]; }
};

// Body i of Dim per-axis arrays (structure of arrays) as a Vec, and back.
template <int Dim, class Pointer>
NBODY_HD inline auto load_axes(Pointer const (&axes)[Dim], std::int64_t i) {
    Vec<std::remove_cv_t<std::remove_pointer_t<Pointer>>, Dim> out;
    NBODY_UNROLL_AXES
    for (int k = 0; k < Dim; ++k) out[k] = axes[k][i];
    return out;
}
template <int Dim, class Real>
NBODY_HD inline void store_axes(Real* const (&axes)[Dim], std::int64_t i, const Vec<Real, Dim>& value) {
    NBODY_UNROLL_AXES
    for (int k = 0; k < Dim; ++k) axes[k][i] = value[k];
}

// m_j r2^(-3/2): m_j times the model's inv_sqrt cubed. A model's inv_sqrt may take the mass into its
// refinement's coefficients instead (`mass_cubed(mass, r2)`, `mass` being what its `fold(m_j)` made
// once per body j): one multiply fewer per interaction, and a refinement taken on the cube itself.
template <class InvSqrt, class Mass, class Real, class = void>
struct HasMassCubed : std::false_type {};
template <class InvSqrt, class Mass, class Real>
struct HasMassCubed<InvSqrt, Mass, Real,
                    std::void_t<decltype(std::declval<const InvSqrt&>().mass_cubed(std::declval<const Mass&>(),
                                                                                    std::declval<Real>()))>>
    : std::true_type {};

template <class InvSqrt, class Mass, class Real>
NBODY_HD inline Real mass_over_cube(const InvSqrt& inv_sqrt, const Mass& mass, Real r2) {
    if constexpr (HasMassCubed<InvSqrt, Mass, Real>::value) {
        return inv_sqrt.mass_cubed(mass, r2);
    } else {
        const Real inv_r = inv_sqrt(r2);
        return static_cast<Real>(mass) * (inv_r * inv_r * inv_r);
    }
}

// x^(-3/2) from an inv_sqrt policy: its own `cubed` where it has one (a refinement taken on the
// cube itself, inv_sqrt.hpp's PortableInvSqrt), else the cube of inv_sqrt(x).
template <class InvSqrt, class Real, class = void>
struct HasCubed : std::false_type {};
template <class InvSqrt, class Real>
struct HasCubed<InvSqrt, Real, std::void_t<decltype(std::declval<const InvSqrt&>().cubed(std::declval<Real>()))>>
    : std::true_type {};

template <class InvSqrt, class Real>
NBODY_HD inline Real inv_sqrt_cubed(const InvSqrt& inv_sqrt, Real x) {
    if constexpr (HasCubed<InvSqrt, Real>::value) {
        return inv_sqrt.cubed(x);
    } else {
        const Real q = inv_sqrt(x);
        return q * q * q;
    }
}

// `loop` called with the reciprocal square root of a source written once for the GPU and the host:
// in device code the model's `Hardware` one (MUFU.RSQ, whose 1/sqrt(inf) is 0); in host code
// inv_sqrt.hpp's portable estimate, which compilers vectorise in both precisions, saturating r^2 in
// a step where `beyond_bound()` (read on the host only) says a coordinate passed the position bound
// (foldable_masses.hpp's folded_position_bound): the estimate of 1/sqrt(inf) is not 0.
template <class Hardware, class BeyondBound, class Loop>
NBODY_HD inline void with_hardware_or_portable_inv_sqrt(const BeyondBound& beyond_bound, const Loop& loop) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    (void)beyond_bound;
    loop(Hardware{});
#else
    if (beyond_bound())
        loop(SaturatedPortableInvSqrt{});
    else
        loop(PortableInvSqrt{});
#endif
}

// d^2 + r2, one step of |d|^2 + eps2. On the GPU in float64 rounded toward zero (the same DFMA
// with a rounding modifier: no instruction added), so that a sum beyond the largest double stays
// finite: the refined double rsqrt (MUFU.RSQ64H, then y e terms with e = 1 - v y^2) of infinity is
// NaN (0 * inf), while the plain formula's 1/sqrt(inf) = 0 pulls nothing; at the largest double the
// weight underflows to 0 as the plain formula's does. Float32's MUFU.RSQ of infinity is already 0.
template <class Real>
NBODY_HD inline Real add_square(Real d, Real r2) {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<Real, double>)
        return __fma_rz(d, d, r2);
    else
        return d * d + r2;
#else
    return d * d + r2;
#endif
}

// Adds body j's pull (without G) on body i to `a`: m_j * d / (|d|^2 + eps2)^(3/2), d = p_j - p_i,
// with inv_sqrt supplied by the model (exact, or the hardware approximation); mj is body j's mass,
// or what the model's inv_sqrt folded it into (mass_over_cube).
// Instructions: Dim sub, Dim fma for r^2 + eps2, 3 mul, Dim fma, plus inv_sqrt (SPEC §3).
template <class Real, int Dim, class Mass, class InvSqrt>
NBODY_HD inline void accumulate_pull(const Vec<Real, Dim>& pi, const Vec<Real, Dim>& pj, const Mass& mj, Real eps2,
                                     Vec<Real, Dim>& a, InvSqrt inv_sqrt) {
    Real d[Dim];
NBODY_UNROLL_AXES
    for (int k = 0; k < Dim; ++k) d[k] = pj[k] - pi[k];
    Real r2 = eps2;
NBODY_UNROLL_AXES
    for (int k = Dim - 1; k >= 0; --k) r2 = add_square(d[k], r2);
    const Real weight = mass_over_cube(inv_sqrt, mj, r2);
NBODY_UNROLL_AXES
    for (int k = 0; k < Dim; ++k) a[k] += weight * d[k];
}

// a b + c in one rounding on the GPU (fma: nvcc does not always contract a - b c written apart);
// on the host as written, contracted where the compiler's flags allow (a call of std::fma would be
// a library call without FMA instructions in the target ISA).
template <class Real>
NBODY_HD inline Real fused_multiply_add(Real a, Real b, Real c) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    return fma(a, b, c);
#else
    return a * b + c;
#endif
}

// Body j with its mass folded into its coordinates: s = m_j^(-1/2), the position times s, and
// eps2 s^2. In these coordinates d' = s p_j - s p_i = s d (one fused multiply-add per axis),
// r2' = |d'|^2 + eps2 s^2 = s^2 (|d|^2 + eps2) and q = r2'^(-1/2), so that q^3 d' is
// m_j d (|d|^2 + eps2)^(-3/2), the same pull as accumulate_pull's with one multiply fewer. s is
// computed in double, so that s^2 m_j = 1 to the precision of Real.
template <class Real, int Dim>
struct ScaledBody {
    Vec<Real, Dim> position;  // s p_j
    Real scale;               // s
    Real softening;           // eps2 s^2
};

template <class Real, int Dim>
NBODY_HD inline ScaledBody<Real, Dim> scale_by_mass(const Vec<Real, Dim>& p, Real m, Real eps2) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    const double s = 1.0 / sqrt(static_cast<double>(m));
#else
    const double s = 1.0 / std::sqrt(static_cast<double>(m));
#endif
    ScaledBody<Real, Dim> body;
NBODY_UNROLL_AXES
    for (int k = 0; k < Dim; ++k) body.position[k] = static_cast<Real>(s) * p[k];
    body.scale = static_cast<Real>(s);
    body.softening = static_cast<Real>(static_cast<double>(eps2) * s * s);
    return body;
}

// accumulate_pull from a ScaledBody j (position s p_j, scale s, softening eps2 s^2). Instructions
// on the GPU: Dim fma for d', Dim fma for r2', 2 mul, Dim fma, plus inv_sqrt: one multiply fewer
// than accumulate_pull. s p_j rounds once, so d' carries an ulp of s p_j rather than of d.
template <class Real, int Dim, class InvSqrt>
NBODY_HD inline void accumulate_scaled_pull(const Vec<Real, Dim>& pi, const Vec<Real, Dim>& scaled_pj, Real scale,
                                            Real scaled_softening, Vec<Real, Dim>& a, InvSqrt inv_sqrt) {
    Real d[Dim];
NBODY_UNROLL_AXES
    for (int k = 0; k < Dim; ++k) d[k] = fused_multiply_add(-scale, pi[k], scaled_pj[k]);
    Real r2 = scaled_softening;
NBODY_UNROLL_AXES
    for (int k = Dim - 1; k >= 0; --k) r2 = add_square(d[k], r2);
    const Real weight = inv_sqrt_cubed(inv_sqrt, r2);
NBODY_UNROLL_AXES
    for (int k = 0; k < Dim; ++k) a[k] = fused_multiply_add(weight, d[k], a[k]);
}

// The 2D form on scalars (the same arithmetic, for kernels that keep x and y apart).
template <class Real, class InvSqrt>
NBODY_HD inline void accumulate_pull(Real xi, Real yi, Real xj, Real yj, Real mj, Real eps2, Real& ax, Real& ay,
                                     InvSqrt inv_sqrt) {
    Vec<Real, 2> a{{ax, ay}};
    accumulate_pull(Vec<Real, 2>{{xi, yi}}, Vec<Real, 2>{{xj, yj}}, mj, eps2, a, inv_sqrt);
    ax = a[0];
    ay = a[1];
}

// One step is: advance_before_force, the pull of every body from the positions this leaves,
// advance_after_force (SPEC §2). `pull` is the summed pull without G.
//   Euler:    nothing | drift with the old velocity, then kick: p += dt v; v += dt G a
//   leapfrog: half kick with the previous step's pull, drift | half kick with the new pull
//             (kick-drift-kick, one force evaluation per step; the pull of the initial positions
//             is computed once at upload, see needs_initial_pull)
template <class Real, int Dim>
NBODY_HD inline void advance_before_force(Integrator integrator, Vec<Real, Dim>& p, Vec<Real, Dim>& v,
                                          const Vec<Real, Dim>& pull, Real G, Real dt) {
    if (integrator != Integrator::leapfrog) return;
    const Real half_dt = dt * Real(0.5);
NBODY_UNROLL_AXES
    for (int k = 0; k < Dim; ++k) v[k] += half_dt * (G * pull[k]);
NBODY_UNROLL_AXES
    for (int k = 0; k < Dim; ++k) p[k] += dt * v[k];
}

template <class Real, int Dim>
NBODY_HD inline void advance_after_force(Integrator integrator, Vec<Real, Dim>& p, Vec<Real, Dim>& v,
                                         const Vec<Real, Dim>& pull, Real G, Real dt) {
    if (integrator == Integrator::leapfrog) {
        const Real half_dt = dt * Real(0.5);
NBODY_UNROLL_AXES
        for (int k = 0; k < Dim; ++k) v[k] += half_dt * (G * pull[k]);
        return;
    }
NBODY_UNROLL_AXES
    for (int k = 0; k < Dim; ++k) p[k] += dt * v[k];
NBODY_UNROLL_AXES
    for (int k = 0; k < Dim; ++k) v[k] += dt * (G * pull[k]);
}

// Leapfrog's first half kick needs the pull of the initial positions: one extra force evaluation
// at upload (timed with the upload, not with the steps).
NBODY_HD inline bool needs_initial_pull(Integrator integrator) { return integrator == Integrator::leapfrog; }

// The 2D Euler step on scalars: position first with the old velocity, then velocity.
template <class Real>
NBODY_HD inline void integrate_body(Real& x, Real& y, Real& vx, Real& vy, Real ax, Real ay, Real G, Real dt) {
    Vec<Real, 2> p{{x, y}}, v{{vx, vy}};
    advance_after_force(Integrator::euler, p, v, Vec<Real, 2>{{ax, ay}}, G, dt);
    x = p[0];
    y = p[1];
    vx = v[0];
    vy = v[1];
}

// The largest map size D: cell indices row * D + col are 32-bit ints in every model, and
// 46340^2 - 1 is the last square below 2^31 (the map alone is then 8.6 GB of floats).
inline constexpr int kMaxMapSize = 46340;

// Activity-map cell of a position, or -1 when it lies outside the unit square (a 3D run maps its
// x-y projection). col = floor(x * D) in the workload's precision; NaN lands outside.
NBODY_ACC_ROUTINE
template <class Real>
NBODY_HD NBODY_ACC_ALWAYS_INLINE inline int activity_cell(Real x, Real y, int d) {
    const Real fx = x * static_cast<Real>(d);
    const Real fy = y * static_cast<Real>(d);
    const Real limit = static_cast<Real>(d);
    if (!(fx >= Real(0) && fx < limit && fy >= Real(0) && fy < limit)) return -1;
    const int col = static_cast<int>(fx);  // truncation == floor for non-negative values
    const int row = static_cast<int>(fy);
    if (col >= d || row >= d) return -1;
    return row * d + col;
}

// map[cell] = count * (D / N), the normalisation every step; float32 in every workload (SPEC §2).
inline float activity_scale(std::size_t n, int d) {
    return static_cast<float>(d) / static_cast<float>(n);
}

}  // namespace nbody
