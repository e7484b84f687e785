// cuda.float4: cuda.tiled with bodies packed as float4 (x, y, m, 0): one 16-byte shared-memory
// load per interaction instead of three. Kernel in tiled_float4.cuh (unroll left to nvcc).
#include "tiled_float4.cuh"
#include "variants.cuh"

namespace nbody::cuda {

VariantDescriptor float4_variant() {
    return cuda_descriptor("cuda.float4", "cuda.tiled with float4-packed bodies (one LDS.128 per interaction)",
                           {block_size_tuning("256"), map_tuning()},
                           [](const Problem& p, const TuningValues& t) -> std::unique_ptr<Simulation> {
                               return std::make_unique<TiledFloat4>(p, t, launch_tiled_float4<0, 1>);
                           });
}

}  // namespace nbody::cuda
