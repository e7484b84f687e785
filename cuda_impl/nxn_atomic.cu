// cuda.nxn_atomic: seed report 000's "N x N threads" alternative: one thread per interaction
// (i, j), each adding its pull to body i with atomicAdd. threadIdx.x and blockIdx.x run over i,
// so the 32 atomics of a warp hit 32 different addresses and the blocks running at one time
// mostly hit different bodies (with blockIdx.x over j, every resident block hammered the same
// 32 addresses: 0.29 s per step at N = 30000 on the H200). The j range is grid-strided so
// that gridDim.y stays within its 65535 limit.
#include <algorithm>

#include "interaction.cuh"
#include "simulation_base.cuh"
#include "variants.cuh"

namespace nbody::cuda {
namespace {

constexpr unsigned int kBodiesPerBlockRow = 32;
constexpr unsigned int kMaxGridY = 65535;

__global__ void nxn_atomic_pull(const float* __restrict__ x, const float* __restrict__ y, const float* __restrict__ m,
                                float2* pull_out, DeviceConstants c) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c.n) return;
    for (int j = blockIdx.y * blockDim.y + threadIdx.y; j < c.n; j += gridDim.y * blockDim.y) {
        float ax = 0.0f, ay = 0.0f;
        pull(x[i], y[i], x[j], y[j], m[j], c.eps2, ax, ay);
        atomicAdd(&pull_out[i].x, ax);
        atomicAdd(&pull_out[i].y, ay);
    }
}

class NxnAtomic final : public SoaSimulation {
public:
    NxnAtomic(const Problem& p, const TuningValues& t) : SoaSimulation(p, t), block_(block_size_of(t)) {}

private:
    void compute_pull() override {
        NBODY_CUDA_CHECK(cudaMemsetAsync(pull(), 0, problem_.n * sizeof(float2)));
        const dim3 block(kBodiesPerBlockRow, block_ / kBodiesPerBlockRow);
        const dim3 grid(blocks_for(problem_.n, block.x), std::min(blocks_for(problem_.n, block.y), kMaxGridY));
        nxn_atomic_pull<<<grid, block>>>(x(), y(), m(), pull(), constants_);
        NBODY_CUDA_CHECK_LAUNCH();
    }
    unsigned int block_;
};

}  // namespace

VariantDescriptor nxn_atomic_variant() {
    return cuda_descriptor("cuda.nxn_atomic", "N x N threads, one interaction each, atomicAdd into the body's pull",
                           {block_size_tuning("256"), map_tuning()},
                           [](const Problem& p, const TuningValues& t) -> std::unique_ptr<Simulation> {
                               return std::make_unique<NxnAtomic>(p, t);
                           });
}

}  // namespace nbody::cuda
