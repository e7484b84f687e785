#pragma once
// The models of the suite, as the build found them. Each model folder (models/<name>/) has one
// registration entry point, void register_<name>_variants(Registry&), which adds its variants and
// anything else the model contributes (build facts, execution spaces, a GPU probe); a variant is
// added by its file and one entry there (docs/adding-a-variant.md). Which models exist, whether
// each is in this build and why not, is generated at configure time from the root CMakeLists'
// nbody_add_models() (cmake/NbodyModels.cmake, docs/adding-a-model.md).
#include <vector>

#include "nbody/registry.hpp"

namespace nbody {

// What a model declares in its model.cmake (nbody_register_model) about itself.
struct SuiteModel {
    const char* name;                             // "omp": the model part of variant ids
    bool in_build;                                // whether this build compiled it
    const char* status;                           // the configure step's "on (...)" or "off: <why>"
    void (*register_variants)(Registry& registry);  // nullptr when !in_build
    const char* title;                            // its display name: "OpenMP"
    const char* family;                           // the report's "best <family> variant" row it counts in
    int report_order;                             // its place in the report's tables, smaller first
    std::vector<const char*> native_spaces;       // the portable models' execution spaces it is the hand-written code of
};

// Every model of the suite in nbody_add_models() order (generated: suite_models.cpp).
const std::vector<SuiteModel>& suite_models();

// The serial model is in every build: tests build small registries of its variants.
void register_serial_variants(Registry& registry);

}  // namespace nbody
