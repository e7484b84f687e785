// Compiled into the `nbody_variants` library, which links every enabled model.
#include "nbody/model_registration.hpp"
#include "nbody/model_status.hpp"  // generated: NBODY_MODEL_STATUS_<MODEL>, NBODY_MODEL_IN_BUILD_<MODEL>

#include <string>

namespace nbody {

namespace {

// The configure step's status of a model that is off ("off: no CUDA compiler ..."), without "off: ".
std::string why_off(const std::string& status) { return status.rfind("off: ", 0) == 0 ? status.substr(5) : status; }

}  // namespace

void declare_suite_models(Registry& registry) {
    const auto model = [&](const char* name, bool in_build, const char* status) {
        registry.declare({.model = name, .space = "", .in_build = in_build, .why_absent = why_off(status)});
    };
    model("serial", true, "");
    model("omp", NBODY_MODEL_IN_BUILD_OPENMP, NBODY_MODEL_STATUS_OPENMP);
    model("cuda", NBODY_MODEL_IN_BUILD_CUDA, NBODY_MODEL_STATUS_CUDA);
    model("kokkos", NBODY_MODEL_IN_BUILD_KOKKOS, NBODY_MODEL_STATUS_KOKKOS);
    model("omp_target", NBODY_MODEL_IN_BUILD_OMP_TARGET, NBODY_MODEL_STATUS_OMP_TARGET);
    // The execution spaces the Kokkos variants are written for; the Kokkos found has some of them.
    const auto fact = registry.build_facts().find("kokkos_spaces");
    const std::string spaces = fact == registry.build_facts().end() ? "" : fact->second;
    for (const std::string space : {"serial", "openmp", "cuda"}) {
        const bool in_build = ("," + spaces + ",").find("," + space + ",") != std::string::npos;
        registry.declare({.model = "kokkos",
                          .space = space,
                          .in_build = in_build,
                          .why_absent = NBODY_MODEL_IN_BUILD_KOKKOS ? "the Kokkos it was built with has the spaces " + spaces
                                                                    : why_off(NBODY_MODEL_STATUS_KOKKOS)});
    }
}

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
        declare_suite_models(r);
        return r;
    }();
    return registry;
}

}  // namespace nbody
