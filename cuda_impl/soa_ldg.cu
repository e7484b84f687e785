// cuda.soa_ldg: structure of arrays with read-only loads (const __restrict__, __ldg), rsqrtf,
// one thread per body, positions of body j straight from global memory (through L1).
#include "interaction.cuh"
#include "simulation_base.cuh"
#include "variants.cuh"

namespace nbody::cuda {
namespace {

__global__ void soa_ldg_pull(const float* __restrict__ x, const float* __restrict__ y, const float* __restrict__ m,
                             float2* __restrict__ pull_out, DeviceConstants c) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c.n) return;
    const float xi = __ldg(&x[i]), yi = __ldg(&y[i]);
    float ax = 0.0f, ay = 0.0f;
    for (int j = 0; j < c.n; ++j) pull(xi, yi, __ldg(&x[j]), __ldg(&y[j]), __ldg(&m[j]), c.eps2, ax, ay);
    pull_out[i] = make_float2(ax, ay);
}

class SoaLdg final : public SoaSimulation {
public:
    SoaLdg(const Problem& p, const TuningValues& t) : SoaSimulation(p, t), block_(block_size_of(t)) {}

private:
    void compute_pull() override {
        soa_ldg_pull<<<blocks_for(problem_.n, block_), block_>>>(x(), y(), m(), pull(), constants_);
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
                           });
}

}  // namespace nbody::cuda
