#pragma once
// One registration entry point per programming model. A model folder adds a variant by adding
// its file and one call inside its register_<model>_variants().
#include "nbody/registry.hpp"

namespace nbody {
void register_cpu_ref_variants(Registry& registry);
void register_omp_variants(Registry& registry);     // when NBODY_WITH_OPENMP
void register_cuda_variants(Registry& registry);    // when NBODY_WITH_CUDA
void register_kokkos_variants(Registry& registry);  // when NBODY_WITH_KOKKOS
void register_omp_target_variants(Registry& registry);  // when NBODY_WITH_OMP_TARGET
// Declares every model and Kokkos execution space of the suite, each in this build or not and why
// (Registry::declare); called by builtin_registry() after the models registered their variants.
void declare_suite_models(Registry& registry);
}  // namespace nbody
