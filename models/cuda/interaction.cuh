#pragma once
// The interaction on the device: physics.hpp's accumulate_pull (any Real, 2D or 3D), with the
// reciprocal square root as a policy.
#include "nbody/physics.hpp"

namespace nbody::cuda {

// 1/sqrt as sqrt and divide, correctly rounded (the published ladder's baseline; float32 only).
struct ExactDeviceInvSqrt {
    __device__ float operator()(float v) const { return 1.0f / sqrtf(v); }
};

// The reciprocal square root of the workload's type: rsqrtf is one MUFU.RSQ; the double one is
// refined to double accuracy in FP64 (never through a float32 estimate, SPEC §2; inv_sqrt.hpp's
// rsqrt_of_normal), and --use_fast_math leaves it unchanged.
struct DeviceRsqrt {
    __device__ float operator()(float v) const { return rsqrtf(v); }
    __device__ double operator()(double v) const { return rsqrt_of_normal(v); }
};

// rsqrt of an argument known to be a positive normal number, as an interaction's r^2 + eps2 >= eps2
// = 4 is (SPEC §1): inv_sqrt.hpp's rsqrt_of_normal, whose float32 form saves rsqrtf's scaling of
// subnormal arguments (measured in cuda.persistent's sum). What kokkos.persistent's InvSqrt computes
// on the GPU.
struct NormalRsqrt {
    __device__ float operator()(float v) const { return rsqrt_of_normal(v); }
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
