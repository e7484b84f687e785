// The Thrust model: one source (thrust_simulation.inl) on each backend this build has.
#include "nbody/model_registration.hpp"

namespace nbody {

// One per backend file of this folder.
void register_thrust_omp(Registry& registry);
void register_thrust_tbb(Registry& registry);
void register_thrust_cuda(Registry& registry);

void register_thrust_variants(Registry& registry) {
#ifdef NBODY_THRUST_CUDA
    register_thrust_cuda(registry);
#endif
#ifdef NBODY_THRUST_OMP
    register_thrust_omp(registry);
#endif
#ifdef NBODY_THRUST_TBB
    register_thrust_tbb(registry);
#endif
    registry.add_build_fact("thrust_version", NBODY_THRUST_VERSION);
    registry.add_build_fact("thrust_backends", NBODY_THRUST_BACKENDS);
}

}  // namespace nbody
