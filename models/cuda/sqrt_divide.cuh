#pragma once
// 1/sqrt as a correctly rounded sqrt and a divide, in the workload's precision: the published 2D tiling study's
// rungs before its GPU3 ("use rsqrt"). interaction.cuh's ExactDeviceInvSqrt is the float32-only
// form of the published CUDA ladder's baseline.
namespace nbody::cuda {

struct SqrtDivide {
    __device__ float operator()(float v) const { return 1.0f / sqrtf(v); }
    __device__ double operator()(double v) const { return 1.0 / sqrt(v); }
};

}  // namespace nbody::cuda
