#include "nbody/model_registration.hpp"

namespace nbody {

void register_omp_variants(Registry& registry) {
    (void)registry;
}

}  // namespace nbody
