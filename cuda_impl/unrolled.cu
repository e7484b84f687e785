// cuda.unrolled: cuda.float4 with an explicit unroll factor on the loop over a tile and, as a
// tuning, several bodies i per thread. Kernel in tiled_float4.cuh.
#include "tiled_float4.cuh"
#include "variants.cuh"

namespace nbody::cuda {

VariantDescriptor unrolled_variant() {
    return cuda_descriptor("cuda.unrolled", "cuda.float4 with #pragma unroll and bodies per thread as tunings",
                           tuned_float4_tunings("8", "1", "1"),
                           [](const Problem& p, const TuningValues& t) -> std::unique_ptr<Simulation> {
                               return std::make_unique<TiledFloat4>(
                                   p, t, tuned_launcher(tuning_int(t, "unroll"), tuning_int(t, "bodies_per_thread")));
                           });
}

}  // namespace nbody::cuda
