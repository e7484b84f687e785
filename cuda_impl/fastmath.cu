// cuda.fastmath: cuda.unrolled's kernels compiled with --use_fast_math (flush denormals to zero,
// approximate division and square root: CMakeLists.txt sets it for this file alone), as seed
// report 002's last step. Kernel in tiled_float4.cuh.
#include "tiled_float4.cuh"
#include "variants.cuh"

namespace nbody::cuda {

VariantDescriptor fastmath_variant() {
    return cuda_descriptor("cuda.fastmath", "cuda.unrolled compiled with --use_fast_math (ftz)",
                           tuned_float4_tunings("8", "2", "1"),
                           [](const Problem& p, const TuningValues& t) -> std::unique_ptr<Simulation> {
                               return std::make_unique<TiledFloat4>(
                                   p, t, tuned_launcher(tuning_int(t, "unroll"), tuning_int(t, "bodies_per_thread")));
                           });
}

}  // namespace nbody::cuda
