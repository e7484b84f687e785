// The Thrust model: one source (thrust_simulation.inl) on each backend this build has.
#include <string>
#include <utility>

#include "nbody/registry.hpp"

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
    // The backends as the model's execution spaces, so that a pattern naming one this build lacks
    // (thrust.*@cuda without nvcc) is skipped with the reason.
    const std::pair<const char*, const char*> spaces[] = {
        {"cuda", NBODY_THRUST_WHY_NO_CUDA}, {"omp", NBODY_THRUST_WHY_NO_OMP}, {"tbb", NBODY_THRUST_WHY_NO_TBB}};
    const std::string backends = std::string(",") + NBODY_THRUST_BACKENDS + ",";
    for (const auto& [space, why_not] : spaces)
        registry.declare({.model = "thrust",
                          .space = space,
                          .in_build = backends.find(std::string(",") + space + ",") != std::string::npos,
                          .why_absent = why_not});
}

}  // namespace nbody
