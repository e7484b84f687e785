// cuda.force_matrix: the published CUDA ladder's "N x N threads, matrix row summation": one thread per
// interaction writes its pull to an N x N matrix (row i = pulls on body i), then each row is
// summed (row_reduction.cuh: hand kernel, CUB or cuBLAS). 8 N^2 bytes of matrix, hence the N cap.
#include "interaction.cuh"
#include "row_reduction.cuh"
#include "simulation_base.cuh"
#include "variants.cuh"

namespace nbody::cuda {
namespace {

constexpr unsigned int kColumnsPerBlock = 32;
constexpr std::size_t kMaxBodies = 65536;  // 32 GiB of matrix

using Vec2 = Vec<float, 2>;

__global__ void force_matrix_pull(DeviceBodies<float, 2> bodies, PartialRows<float, 2> matrix, DeviceConstants<float> c) {
    const int j = blockIdx.y * blockDim.x + threadIdx.x;  // consecutive lanes write consecutive columns
    const int i = blockIdx.x * blockDim.y + threadIdx.y;
    if (i >= c.n || j >= c.n) return;
    Vec2 a{};
    pull(bodies.position_of(i), bodies.position_of(j), bodies.mass[j], c.eps2, a);
    matrix.store(i, j, a);
}

// The canonical workload only (the descriptor keeps the default WorkloadSupport).
class ForceMatrix final : public SoaSimulation<float, 2> {
public:
    ForceMatrix(const Problem& p, const TuningValues& t)
        : SoaSimulation(p, t),
          block_(block_size_of(t)),
          reducer_(p.n, p.n, t.at("reduction")) {}

private:
    void compute_pull() override {
        const dim3 block(kColumnsPerBlock, block_ / kColumnsPerBlock);
        const dim3 grid(blocks_for(problem_.n, block.y), blocks_for(problem_.n, block.x));
        force_matrix_pull<<<grid, block>>>(bodies(), reducer_.destination(), constants_);
        NBODY_CUDA_CHECK_LAUNCH();
        reducer_.sum(pull());
    }
    unsigned int block_;
    RowReducer<float, 2> reducer_;  // owns the matrix
};

}  // namespace

VariantDescriptor force_matrix_variant() {
    return cuda_descriptor("cuda.force_matrix", "N x N threads write an N x N pull matrix, then row sums",
                           {block_size_tuning("256"), map_tuning(), reduction_tuning()},
                           [](const Problem& p, const TuningValues& t) -> std::unique_ptr<Simulation> {
                               return std::make_unique<ForceMatrix>(p, t);
                           },
                           // the row reduction's grouping is fixed by its tuning
                           {.max_n = kMaxBodies, .expected_efficiency = 0.039, .full_rate_bodies = 1024, .step_overhead_s = 1e-05, .reproducibility = Reproducibility::order_fixed});
}

}  // namespace nbody::cuda
