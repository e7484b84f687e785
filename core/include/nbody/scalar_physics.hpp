#pragma once
// physics.hpp's interaction and integrator halves on scalars, for the directive models' device
// code (models/omp_target/, models/openacc/): a body as x, y, z, the arrays axis after axis
// (pos[k * n + i]), no Vec and no array anywhere. Two GCC 12 offload problems rule out the Vec
// templates there:
//   - OpenMP: inside a `simd` region every lane's arrays and Vec objects (also those of a function
//     inlined into the loop, such as accumulate_pull's d[Dim]) get a slot in SIMT lane memory, and
//     the PTX written for these kernels lost the stores into those slots
//     (docs/performance-openmp.md; scripts/ptx_simt_report.py checks the PTX);
//   - OpenACC: the nvptx offload compiler (lto1) crashes in IPA constant propagation when the Vec
//     templates are inlined into a compute region (docs/models.md, "OpenACC").
// The operations and their order are physics.hpp's with the exact reciprocal square root, so the
// results are bitwise the same (tests/test_physics.cpp). physics.hpp keeps its own Vec forms rather
// than calling these: they take an inv_sqrt policy, fold masses, round toward zero in CUDA's float64
// and update every axis's velocity before the positions, and every other model's generated code
// follows their text. The map cell is physics.hpp's activity_cell, already scalar and annotated
// there as these are.
//
// Every function is always inlined: GCC inlines into an outlined `simd` body after OpenMP lowering,
// and a call left out of line would take its scalars' addresses. Compiled with -fopenacc it is also
// an `acc routine seq` (NBODY_ACC_ROUTINE): GCC offloads no function called from a compute region
// without it. OpenMP offload needs no annotation: GCC makes the functions that a target region calls
// device functions itself.
#include <cmath>

#include "nbody/physics.hpp"
#include "nbody/workload.hpp"

#define NBODY_SCALAR_INLINE __attribute__((always_inline)) inline

namespace nbody {

// Body j's pull (without G) on body i added to (ax, ay, az): m_j d / (|d|^2 + eps2)^(3/2),
// d = p_j - p_i, the exact reciprocal square root; r^2 summed from the last axis to the first onto
// eps2, as accumulate_pull does. In 2D the z arguments are ignored.
NBODY_ACC_ROUTINE
template <class Real, int Dim>
NBODY_SCALAR_INLINE void interact(Real xi, Real yi, Real zi, Real xj, Real yj, Real zj, Real mj, Real eps2, Real& ax,
                                  Real& ay, Real& az) {
    const Real dx = xj - xi, dy = yj - yi, dz = zj - zi;
    Real r2 = eps2;
    if constexpr (Dim == 3) r2 = dz * dz + r2;
    r2 = dy * dy + r2;
    r2 = dx * dx + r2;
    const Real inv_r = Real(1) / std::sqrt(r2);
    const Real weight = mj * (inv_r * inv_r * inv_r);
    ax += weight * dx;
    ay += weight * dy;
    if constexpr (Dim == 3) az += weight * dz;
}

// The value of an integrator argument that means leapfrog: the integrator is given either as the
// step's Integrator or as a bool that says whether it is leapfrog. Each model passes what its
// kernels hold (omp_target the Integrator, OpenACC the bool), so that its device code stays the
// code it had with a copy of its own; no other type compiles.
template <class Scheme>
inline constexpr Scheme kLeapfrog = Integrator::leapfrog;
template <>
inline constexpr bool kLeapfrog<bool> = true;

// One axis of one body (element `at` of the axis-major arrays) through advance_before_force /
// advance_after_force (the axes are independent):
//   before: leapfrog half kick with the previous pull, then drift; Euler nothing
//   after:  leapfrog half kick with the new pull; Euler drift with the old velocity, then kick
// `after` returns the new position (the map's input).
NBODY_ACC_ROUTINE
template <class Real, class Scheme>
NBODY_SCALAR_INLINE void advance_axis_before_force(Scheme integrator, Real* pos, Real* vel, const Real* pull, int at,
                                                   Real G, Real dt) {
    if (integrator != kLeapfrog<Scheme>) return;
    const Real half_dt = dt * Real(0.5);
    const Real v = vel[at] + half_dt * (G * pull[at]);
    vel[at] = v;
    pos[at] = pos[at] + dt * v;
}
NBODY_ACC_ROUTINE
template <class Real, class Scheme>
NBODY_SCALAR_INLINE Real advance_axis_after_force(Scheme integrator, Real* pos, Real* vel, const Real* pull, int at,
                                                  Real G, Real dt) {
    const Real p = pos[at], v = vel[at], a = pull[at];
    if (integrator == kLeapfrog<Scheme>) {
        const Real half_dt = dt * Real(0.5);
        vel[at] = v + half_dt * (G * a);
        return p;
    }
    const Real moved = p + dt * v;
    pos[at] = moved;
    vel[at] = v + dt * (G * a);
    return moved;
}

}  // namespace nbody
