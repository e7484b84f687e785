#include "run/refusals.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <utility>

#include "nbody/errors.hpp"

namespace nbody {

namespace {

template <class Real>
std::string unrepresentable_in(double value, const std::string& name, const char* precision) {
    const Real x = static_cast<Real>(value);
    const Real square = x * x;
    if (square >= std::numeric_limits<Real>::min() && std::isfinite(square)) return "";
    return fmt::format("{} {:g}: its square {} in {}: it must lie in [{:.2g}, {:.2g}]", name, value,
                       std::isfinite(square) ? "underflows" : "overflows", precision,
                       std::sqrt(static_cast<double>(std::numeric_limits<Real>::min())) * (1 + 1e-6),
                       std::sqrt(static_cast<double>(std::numeric_limits<Real>::max())) * (1 - 1e-6));
}

}  // namespace

std::string unrepresentable_constant(const PhysicsConstants& constants, Precision precision, const std::string& name_prefix) {
    for (const auto& [name, value] : {std::pair{"softening", constants.softening}, std::pair{"dt", constants.dt}}) {
        const std::string why = precision == Precision::fp32
                                    ? unrepresentable_in<float>(value, name_prefix + name, "fp32")
                                    : unrepresentable_in<double>(value, name_prefix + name, "fp64");
        if (!why.empty()) return why;
    }
    return "";
}

void refuse_costly(const std::string& what, const std::string& why) {
    throw UsageError(fmt::format("{}: {}: refused; pass --allow-long to run it anyway", what, why));
}

}  // namespace nbody
