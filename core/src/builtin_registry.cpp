// Compiled into the `nbody_variants` library with the generated list of models (suite_models.cpp),
// which links every model library of this build.
#include <string>

#include "nbody/model_registration.hpp"

namespace nbody {

namespace {

// The configure step's status of a model that is off ("off: no CUDA compiler ..."), without "off: ".
std::string why_off(const std::string& status) { return status.rfind("off: ", 0) == 0 ? status.substr(5) : status; }

}  // namespace

Registry& builtin_registry() {
    static Registry registry = [] {
        Registry r;
        for (const SuiteModel& model : suite_models())
            if (model.in_build) model.register_variants(r);
        // Every model, in this build or not and why (Registry::declare); a model's execution spaces
        // are declared by its own registration (kokkos).
        for (const SuiteModel& model : suite_models())
            r.declare({.model = model.name,
                       .space = "",
                       .in_build = model.in_build,
                       .why_absent = model.in_build ? "" : why_off(model.status)});
        return r;
    }();
    return registry;
}

}  // namespace nbody
