#pragma once
// The interaction on the device: physics.hpp's accumulate_pull (any Real, 2D or 3D), with the
// reciprocal square root as a policy.
#include "nbody/physics.hpp"

namespace nbody::cuda {

// 1/sqrt as sqrt and divide, correctly rounded (the published ladder's baseline; float32 only).
struct ExactDeviceInvSqrt {
    __device__ float operator()(float v) const { return 1.0f / sqrtf(v); }
};

// The CUDA math library's rsqrt(double) without its range check: the MUFU.RSQ64H estimate of the
// high word (PTX rsqrt.approx.ftz.f64, no FP64 instruction), then the library's own third-order
// refinement, y + y*e*(1/2 + 3/8 e) with e = 1 - v*y^2 (5 FP64 instructions), so the result is as
// accurate as the library's. The library branches around a slow path for zero, subnormal and
// infinite v, 64 convergence regions per loop iteration that keep nvcc from interleaving the
// bodies' FP64 chains; an interaction's v = r^2 + eps2 is finite and >= eps2 = 4 (SPEC §1), so
// the branch is never taken.
__device__ __forceinline__ double rsqrt_of_normal(double v) {
    double y;
    asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(v));
    const double e = fma(-v * y, y, 1.0);
    return fma(y * e, fma(0.375, e, 0.5), y);
}

// The reciprocal square root of the workload's type: rsqrtf is one MUFU.RSQ; the double one is
// refined to double accuracy in FP64 (never through a float32 estimate, SPEC §2), and
// --use_fast_math leaves it unchanged.
struct DeviceRsqrt {
    __device__ float operator()(float v) const { return rsqrtf(v); }
    __device__ double operator()(double v) const { return rsqrt_of_normal(v); }
};

// rsqrt of an argument known to be a positive normal number, as an interaction's r^2 + eps2 >= eps2
// = 4 is (SPEC §1): float32 the bare MUFU.RSQ (PTX rsqrt.approx.ftz.f32, the same result as rsqrtf
// for such arguments, without rsqrtf's scaling of subnormal ones: a compare and two predicated
// multiplies per interaction in cuda.persistent's sum, measured), float64 rsqrt_of_normal. What
// kokkos.persistent's InvSqrt computes on the GPU.
struct NormalRsqrt {
    __device__ float operator()(float v) const {
        float y;
        asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(v));
        return y;
    }
    __device__ double operator()(double v) const { return rsqrt_of_normal(v); }
};

// Four reals of a body staged for the pull, read with one wide shared load: float4, or double4
// aligned to 32 bytes.
template <class Real>
struct PackedBodyOf;
template <>
struct PackedBodyOf<float> {
    using type = float4;
};
template <>
struct PackedBodyOf<double> {
    using type = double4_32a;
};
template <class Real>
using PackedBody = typename PackedBodyOf<Real>::type;

// a += pull of body j (position pj, mass mj) on body i (position pi), without G.
template <class InvSqrt = DeviceRsqrt, class Real, int Dim>
__device__ __forceinline__ void pull(const Vec<Real, Dim>& pi, const Vec<Real, Dim>& pj, Real mj, Real eps2,
                                     Vec<Real, Dim>& a) {
    accumulate_pull(pi, pj, mj, eps2, a, InvSqrt{});
}

}  // namespace nbody::cuda
