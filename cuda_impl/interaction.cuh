#pragma once
// The 2D interaction on the device: physics.hpp's accumulate_pull, with the reciprocal square
// root either exact (sqrt and divide, the seed baseline) or the hardware approximation (MUFU.RSQ).
#include "nbody/physics.hpp"

namespace nbody::cuda {

struct ExactDeviceInvSqrt {
    __device__ float operator()(float v) const { return 1.0f / sqrtf(v); }
};

struct HardwareInvSqrt {
    __device__ float operator()(float v) const { return rsqrtf(v); }
};

template <class InvSqrt = HardwareInvSqrt>
__device__ __forceinline__ void pull(float xi, float yi, float xj, float yj, float mj, float eps2, float& ax,
                                     float& ay) {
    accumulate_pull(xi, yi, xj, yj, mj, eps2, ax, ay, InvSqrt{});
}

}  // namespace nbody::cuda
