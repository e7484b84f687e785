// KokkosSimulation compiled once for every enabled space and workload (kokkos_simulation.hpp; the
// variants' files declare these instantiations extern).
#define NBODY_KOKKOS_SIMULATION_DEFINITIONS
#include "kokkos_simulation.hpp"

namespace nbody::kokkos {
NBODY_KOKKOS_SIMULATIONS(template)
}  // namespace nbody::kokkos
