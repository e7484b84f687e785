#pragma once
// The list of variants this build contains (SPEC §4).
#include <string>
#include <vector>

#include "nbody/variant.hpp"

namespace nbody {

class Registry {
public:
    // Throws std::logic_error on a duplicate or malformed id.
    void add(VariantDescriptor descriptor);
    const std::vector<VariantDescriptor>& all() const { return variants_; }
    // nullptr when absent.
    const VariantDescriptor* find(const std::string& id) const;
    // Variants whose id matches a comma-separated list of glob patterns (`*`, `?`).
    std::vector<const VariantDescriptor*> match(const std::string& patterns) const;
    // Defaults overlaid with `overrides`; UsageError naming the variant and parameter on an
    // unknown name or a value outside the allowed set.
    static TuningValues resolve_tuning(const VariantDescriptor& variant, const TuningValues& overrides);

private:
    std::vector<VariantDescriptor> variants_;
};

bool glob_match(const std::string& pattern, const std::string& text);

// Every variant compiled into this build; each model contributes through its own
// register_<model>_variants() (declared in model_registration.hpp).
Registry& builtin_registry();

}  // namespace nbody
