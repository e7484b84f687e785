#pragma once
// The interaction on the device: physics.hpp's accumulate_pull (any Real, 2D or 3D), with the
// reciprocal square root as a policy.
#include "nbody/physics.hpp"

namespace nbody::cuda {

// 1/sqrt as sqrt and divide, correctly rounded (the seed baseline; float32 only).
struct ExactDeviceInvSqrt {
    __device__ float operator()(float v) const { return 1.0f / sqrtf(v); }
};

// The CUDA math library's reciprocal square root of the workload's type: rsqrtf is one MUFU.RSQ;
// rsqrt(double) is the accurate double one (an FP64 refinement of MUFU.RSQ64H). A float64
// interaction never goes through the float32 estimate (SPEC §2), and --use_fast_math leaves the
// double one unchanged.
struct DeviceRsqrt {
    __device__ float operator()(float v) const { return rsqrtf(v); }
    __device__ double operator()(double v) const { return rsqrt(v); }
};

// a += pull of body j (position pj, mass mj) on body i (position pi), without G.
template <class InvSqrt = DeviceRsqrt, class Real, int Dim>
__device__ __forceinline__ void pull(const Vec<Real, Dim>& pi, const Vec<Real, Dim>& pj, Real mj, Real eps2,
                                     Vec<Real, Dim>& a) {
    accumulate_pull(pi, pj, mj, eps2, a, InvSqrt{});
}

}  // namespace nbody::cuda
