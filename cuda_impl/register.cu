#include <cuda_runtime.h>

#include "nbody/model_registration.hpp"
#include "variants.cuh"

namespace nbody {

void register_cuda_variants(Registry& registry) {
    using namespace cuda;
    for (auto* variant : {baseline_aos_variant, rsqrt_variant, soa_ldg_variant, tiled_variant, nxn_atomic_variant,
                          force_matrix_variant, tiled2d_variant, float4_variant, unrolled_variant, fastmath_variant,
                          sliced_variant})
        registry.add(variant());
    for (auto* variant : {pairwise_variant, tiled2d_seed004_variant}) registry.add(variant());  // seed 004's ladder
    registry.add(persistent_variant());
    registry.set_gpu_probe(probe_gpu);
    registry.add_build_fact("cuda_runtime", std::to_string(CUDART_VERSION / 1000) + "." +
                                                std::to_string((CUDART_VERSION % 1000) / 10));
    registry.add_build_fact("cuda_architectures", NBODY_CUDA_ARCHITECTURES);
}

}  // namespace nbody
