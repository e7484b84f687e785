#pragma once
// One descriptor per CUDA variant file, registered in register.cu in ladder order.
#include "cuda_common.cuh"

namespace nbody::cuda {
VariantDescriptor baseline_aos_variant();
VariantDescriptor rsqrt_variant();
VariantDescriptor soa_ldg_variant();
VariantDescriptor tiled_variant();
VariantDescriptor nxn_atomic_variant();
VariantDescriptor force_matrix_variant();
VariantDescriptor tiled2d_variant();
VariantDescriptor float4_variant();
VariantDescriptor unrolled_variant();
VariantDescriptor fastmath_variant();
VariantDescriptor sliced_variant();
VariantDescriptor folded_mass_variant();
VariantDescriptor persistent_variant();
}  // namespace nbody::cuda
// The published 2D tiling ladder (docs/references.md): its GPU0, and its GPU2-GPU8 as tunings of one kernel.
namespace nbody::cuda {
VariantDescriptor pairwise_variant();
VariantDescriptor tiled2d_stepwise_variant();
}  // namespace nbody::cuda
