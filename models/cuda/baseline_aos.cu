// cuda.baseline_aos: the published CUDA ladder's baseline (array of structures, global memory, one thread
// per body, 32 threads per block, sqrt and divide), with forces from the step's snapshot.
// The kernels are in aos_simulation.cuh, shared with cuda.rsqrt.
#include "aos_simulation.cuh"
#include "variants.cuh"

namespace nbody::cuda {

VariantDescriptor baseline_aos_variant() {
    return cuda_descriptor("cuda.baseline_aos",
                           "baseline: AoS in global memory, 1 thread/body, exact sqrt and divide",
                           {block_size_tuning("32"), map_tuning()},
                           [](const Problem& p, const TuningValues& t) -> std::unique_ptr<Simulation> {
                               return std::make_unique<AosSimulation<ExactDeviceInvSqrt>>(p, t);
                           },
                           {.expected_efficiency = 0.073, .step_overhead_s = 1e-06, .reproducibility = Reproducibility::bitwise});  // one thread per body, j in index order
}

}  // namespace nbody::cuda
