#include "nbody/model_registration.hpp"

namespace nbody {

void register_cuda_variants(Registry& registry) {
    (void)registry;
}

}  // namespace nbody
