// cuda.pairwise: the published 2D tiling study's GPU0, "simple pairwise": one thread per body, every body j
// read from global memory (structure of arrays), 1/sqrt as sqrt and divide. Every workload,
// so that the study's ladder starts on its own 3D leapfrog workload.
#include "interaction.cuh"
#include "simulation_base.cuh"
#include "sqrt_divide.cuh"
#include "variants.cuh"

namespace nbody::cuda {
namespace {

template <class Real, int Dim>
__global__ void pairwise_pull(DeviceBodies<Real, Dim> bodies, Vec<Real, Dim>* __restrict__ pull_out,
                              DeviceConstants<Real> c) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c.n) return;
    const Vec<Real, Dim> pi = bodies.position_of(i);
    Vec<Real, Dim> a{};
    for (int j = 0; j < c.n; ++j) pull<SqrtDivide>(pi, bodies.position_of(j), bodies.mass[j], c.eps2, a);
    pull_out[i] = a;
}

template <class Real, int Dim>
class Pairwise final : public SoaSimulation<Real, Dim> {
public:
    Pairwise(const Problem& p, const TuningValues& t)
        : SoaSimulation<Real, Dim>(p, t), block_(static_cast<unsigned int>(tuning_int(t, "block_size"))) {
        require_block_fits(reinterpret_cast<const void*>(pairwise_pull<Real, Dim>), block_, "cuda.pairwise");
    }

private:
    void compute_pull() override {
        pairwise_pull<Real, Dim><<<blocks_for(this->problem_.n, block_), block_>>>(this->bodies(), this->pull(),
                                                                                   this->constants_);
        NBODY_CUDA_CHECK_LAUNCH();
    }
    unsigned int block_;
};

}  // namespace

VariantDescriptor pairwise_variant() {
    // The study swept 16, 64, 128, 256 threads per block for its GPU0.
    TuningParameter block_size{.name = "block_size",
                               .description = "threads per block",
                               .default_value = "128",
                               .allowed_values = {"16", "32", "64", "128", "256", "512", "1024"}};
    return cuda_descriptor("cuda.pairwise",
                           "pairwise (the 2D tiling ladder's GPU0): SoA in global memory, 1 thread/body, sqrt and divide (every workload)",
                           {block_size, map_tuning()},
                           [](const Problem& p, const TuningValues& t) { return make_for_workload<Pairwise>(p, t); },
                           // lowest measured 0.105; one thread per body, j in index order
                           {.workloads = WorkloadSupport::every(), .expected_efficiency = 0.136, .step_overhead_s = 3e-06,
                            .reproducibility = Reproducibility::bitwise});
}

}  // namespace nbody::cuda
