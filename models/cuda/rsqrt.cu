// cuda.rsqrt: the baseline with rsqrtf (one MUFU.RSQ) in place of sqrt and divide, and the
// block size the published CUDA ladder settled on (256). Kernels in aos_simulation.cuh.
#include "aos_simulation.cuh"
#include "variants.cuh"

namespace nbody::cuda {

VariantDescriptor rsqrt_variant() {
    return cuda_descriptor("cuda.rsqrt", "AoS, 1 thread/body, hardware rsqrtf",
                           {block_size_tuning("256"), map_tuning()},
                           [](const Problem& p, const TuningValues& t) -> std::unique_ptr<Simulation> {
                               return std::make_unique<AosSimulation<DeviceRsqrt>>(p, t);
                           },
                           {.expected_efficiency = 0.228, .step_overhead_s = 3e-06, .reproducibility = Reproducibility::bitwise});  // one thread per body, j in index order
}

}  // namespace nbody::cuda
