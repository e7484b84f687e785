// Compiled into the `nbody_variants` library, which links every enabled model.
#include "nbody/model_registration.hpp"
#include "nbody/model_status.hpp"  // generated: NBODY_MODEL_STATUS_<MODEL>

#include <string>

namespace nbody {

namespace {

#ifdef NBODY_WITH_OPENMP
constexpr bool kOpenmp = true;
#else
constexpr bool kOpenmp = false;
#endif
#ifdef NBODY_WITH_CUDA
constexpr bool kCuda = true;
#else
constexpr bool kCuda = false;
#endif
#ifdef NBODY_WITH_KOKKOS
constexpr bool kKokkos = true;
#else
constexpr bool kKokkos = false;
#endif
#ifdef NBODY_WITH_OMP_TARGET
constexpr bool kOmpTarget = true;
#else
constexpr bool kOmpTarget = false;
#endif

// The configure step's status of a model that is off ("off: no CUDA compiler ..."), without "off: ".
std::string why_off(std::string status) {
    return status.rfind("off: ", 0) == 0 ? status.substr(5) : status;
}

}  // namespace

void declare_suite_models(Registry& registry) {
    registry.declare({.model = "serial", .space = "", .in_build = true, .why_absent = ""});
    registry.declare({.model = "omp", .space = "", .in_build = kOpenmp, .why_absent = why_off(NBODY_MODEL_STATUS_OPENMP)});
    registry.declare({.model = "cuda", .space = "", .in_build = kCuda, .why_absent = why_off(NBODY_MODEL_STATUS_CUDA)});
    registry.declare({.model = "kokkos", .space = "", .in_build = kKokkos, .why_absent = why_off(NBODY_MODEL_STATUS_KOKKOS)});
    registry.declare(
        {.model = "omp_target", .space = "", .in_build = kOmpTarget, .why_absent = why_off(NBODY_MODEL_STATUS_OMP_TARGET)});
    // The execution spaces the Kokkos variants are written for; the Kokkos found has some of them.
    const auto fact = registry.build_facts().find("kokkos_spaces");
    const std::string spaces = fact == registry.build_facts().end() ? "" : fact->second;
    for (const std::string space : {"serial", "openmp", "cuda"}) {
        const bool in_build = ("," + spaces + ",").find("," + space + ",") != std::string::npos;
        registry.declare({.model = "kokkos", .space = space, .in_build = in_build,
                          .why_absent = kKokkos ? "the Kokkos it was built with has the spaces " + spaces : why_off(NBODY_MODEL_STATUS_KOKKOS)});
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
