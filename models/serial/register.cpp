#include "nbody/registry.hpp"

namespace nbody {

// One per variant file of this folder.
void register_serial_reference(Registry& registry);

void register_serial_variants(Registry& registry) { register_serial_reference(registry); }

}  // namespace nbody
