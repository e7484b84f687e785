#include <string>

#include "kokkos_simulation.hpp"
#include "nbody/registry.hpp"

namespace nbody {

// One per variant file of this folder; each registers its variant for every enabled space.
void register_kokkos_naive(Registry& registry);
void register_kokkos_team_tiled(Registry& registry);
void register_kokkos_hierarchical(Registry& registry);
void register_kokkos_simd(Registry& registry);
void register_kokkos_persistent(Registry& registry);
void register_kokkos_folded_mass(Registry& registry);

void register_kokkos_variants(Registry& registry) {
    register_kokkos_naive(registry);
    register_kokkos_team_tiled(registry);
    register_kokkos_hierarchical(registry);
    register_kokkos_simd(registry);
    register_kokkos_persistent(registry);
    register_kokkos_folded_mass(registry);

    registry.add_build_fact("kokkos_version", std::to_string(KOKKOS_VERSION / 10000) + "." +
                                                  std::to_string(KOKKOS_VERSION / 100 % 100) + "." +
                                                  std::to_string(KOKKOS_VERSION % 100));
    std::string spaces;
    kokkos::for_each_space([&](auto tag) {
        if (!spaces.empty()) spaces += ',';
        spaces += kokkos::SpaceName<typename decltype(tag)::type>::value;
    });
    registry.add_build_fact("kokkos_spaces", spaces);
    // The execution spaces the variants are written for; the Kokkos of this build has some of them.
    for (const std::string space : {"serial", "openmp", "cuda"}) {
        const bool in_build = ("," + spaces + ",").find("," + space + ",") != std::string::npos;
        registry.declare({.model = "kokkos",
                          .space = space,
                          .in_build = in_build,
                          .why_absent = "the Kokkos it was built with has the spaces " + spaces});
    }
}

}  // namespace nbody
