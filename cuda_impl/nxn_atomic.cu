// cuda.nxn_atomic: seed report 000's "N x N threads" alternative: one thread per interaction
// (i, j), each adding its pull to body i with atomicAdd. threadIdx.x runs over i, so the 32
// atomics of a warp hit 32 different addresses; threadIdx.y over j.
#include "interaction.cuh"
#include "simulation_base.cuh"
#include "variants.cuh"

namespace nbody::cuda {
namespace {

constexpr unsigned int kBodiesPerBlockRow = 32;

__global__ void nxn_atomic_pull(const float* __restrict__ x, const float* __restrict__ y, const float* __restrict__ m,
                                float2* pull_out, DeviceConstants c) {
    const int i = blockIdx.y * blockDim.x + threadIdx.x;
    const int j = blockIdx.x * blockDim.y + threadIdx.y;
    if (i >= c.n || j >= c.n) return;
    float ax = 0.0f, ay = 0.0f;
    pull(x[i], y[i], x[j], y[j], m[j], c.eps2, ax, ay);
    atomicAdd(&pull_out[i].x, ax);
    atomicAdd(&pull_out[i].y, ay);
}

class NxnAtomic final : public SoaSimulation {
public:
    NxnAtomic(const Problem& p, const TuningValues& t) : SoaSimulation(p, t), block_(block_size_of(t)) {}

private:
    void compute_pull() override {
        NBODY_CUDA_CHECK(cudaMemsetAsync(pull(), 0, problem_.n * sizeof(float2)));
        const dim3 block(kBodiesPerBlockRow, block_ / kBodiesPerBlockRow);
        const dim3 grid(blocks_for(problem_.n, block.y), blocks_for(problem_.n, block.x));
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
                           },
                           // gridDim.y = ceil(N / 32) <= 65535
                           std::size_t{65535} * kBodiesPerBlockRow);
}

}  // namespace nbody::cuda
