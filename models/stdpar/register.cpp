#include "nbody/registry.hpp"

namespace nbody {

// One per variant file of this folder.
void register_stdpar_plain(Registry& registry);
void register_stdpar_blocked(Registry& registry);

void register_stdpar_variants(Registry& registry) {
    register_stdpar_plain(registry);
    register_stdpar_blocked(registry);
    registry.add_build_fact("stdpar_backend", "libstdc++ parallel algorithms on TBB " NBODY_STDPAR_TBB_VERSION);
}

}  // namespace nbody
