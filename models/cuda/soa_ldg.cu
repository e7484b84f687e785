// cuda.soa_ldg: structure of arrays with read-only loads (const __restrict__, __ldg), rsqrtf,
// one thread per body, positions of body j straight from global memory (through L1).
#include "interaction.cuh"
#include "simulation_base.cuh"
#include "variants.cuh"

namespace nbody::cuda {
namespace {

using Vec2 = Vec<float, 2>;

__global__ void soa_ldg_pull(const float* __restrict__ x, const float* __restrict__ y, const float* __restrict__ m,
                             Vec2* __restrict__ pull_out, DeviceConstants<float> c) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c.n) return;
    const Vec2 pi{{__ldg(&x[i]), __ldg(&y[i])}};
    Vec2 a{};
    for (int j = 0; j < c.n; ++j) pull(pi, Vec2{{__ldg(&x[j]), __ldg(&y[j])}}, __ldg(&m[j]), c.eps2, a);
    pull_out[i] = a;
}

// The canonical workload only (the descriptor keeps the default WorkloadSupport).
class SoaLdg final : public SoaSimulation<float, 2> {
public:
    SoaLdg(const Problem& p, const TuningValues& t) : SoaSimulation(p, t), block_(block_size_of(t)) {}

private:
    void compute_pull() override {
        const DeviceBodies<float, 2> b = bodies();
        soa_ldg_pull<<<blocks_for(problem_.n, block_), block_>>>(b.position[0], b.position[1], b.mass, pull(),
                                                                 constants_);
        NBODY_CUDA_CHECK_LAUNCH();
    }
    unsigned int block_;
};

}  // namespace

VariantDescriptor soa_ldg_variant() {
    return cuda_descriptor("cuda.soa_ldg", "SoA, read-only loads (__restrict__, __ldg), rsqrtf, 1 thread/body",
                           {block_size_tuning("256"), map_tuning()},
                           [](const Problem& p, const TuningValues& t) -> std::unique_ptr<Simulation> {
                               return std::make_unique<SoaLdg>(p, t);
                           },
                           {.expected_efficiency = 0.216, .step_overhead_s = 1e-06, .reproducibility = Reproducibility::bitwise});  // one thread per body, j in index order
}

}  // namespace nbody::cuda
