// cuda.nxn_atomic: the published CUDA ladder's "N x N threads" alternative: one thread per interaction
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

using Vec2 = Vec<float, 2>;

__global__ void nxn_atomic_pull(DeviceBodies<float, 2> bodies, Vec2* pull_out, DeviceConstants<float> c) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c.n) return;
    for (int j = blockIdx.y * blockDim.y + threadIdx.y; j < c.n; j += gridDim.y * blockDim.y) {
        Vec2 a{};
        pull(bodies.position_of(i), bodies.position_of(j), bodies.mass[j], c.eps2, a);
        atomicAdd(&pull_out[i][0], a[0]);
        atomicAdd(&pull_out[i][1], a[1]);
    }
}

// The canonical workload only (the descriptor keeps the default WorkloadSupport).
class NxnAtomic final : public SoaSimulation<float, 2> {
public:
    NxnAtomic(const Problem& p, const TuningValues& t) : SoaSimulation(p, t), block_(block_size_of(t)) {}

private:
    void compute_pull() override {
        NBODY_CUDA_CHECK(cudaMemsetAsync(pull(), 0, problem_.n * sizeof(Vec2)));
        const dim3 block(kBodiesPerBlockRow, block_ / kBodiesPerBlockRow);
        const dim3 grid(blocks_for(problem_.n, block.x), std::min(blocks_for(problem_.n, block.y), kMaxGridY));
        nxn_atomic_pull<<<grid, block>>>(bodies(), pull(), constants_);
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
                           {.expected_efficiency = 0.028, .full_rate_bodies = 1024, .step_overhead_s = 3e-05, .reproducibility = Reproducibility::run_to_run});  // atomicAdd of float pulls
}

}  // namespace nbody::cuda
