// Compiled into the `nbody_variants` library, which links every enabled model.
#include "nbody/model_registration.hpp"

namespace nbody {

Registry& builtin_registry() {
    static Registry registry = [] {
        Registry r;
        register_cpu_ref_variants(r);
#ifdef NBODY_WITH_OPENMP
        register_omp_variants(r);
#endif
#ifdef NBODY_WITH_CUDA
        register_cuda_variants(r);
#endif
#ifdef NBODY_WITH_KOKKOS
        register_kokkos_variants(r);
#endif
#ifdef NBODY_WITH_OMP_TARGET
        register_omp_target_variants(r);
#endif
        return r;
    }();
    return registry;
}

}  // namespace nbody
