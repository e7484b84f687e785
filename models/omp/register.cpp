#include "nbody/registry.hpp"

namespace nbody {

// One per variant file of this folder.
void register_omp_static(Registry& registry);
void register_omp_edge_sharing(Registry& registry);
void register_omp_simd(Registry& registry);

void register_omp_variants(Registry& registry) {
    register_omp_static(registry);
    register_omp_edge_sharing(registry);
    register_omp_simd(registry);
}

}  // namespace nbody
