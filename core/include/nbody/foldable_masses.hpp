#pragma once
// The masses physics.hpp's scale_by_mass can fold. Each body j is staged with eps2 s^2 = eps2 / m,
// and the largest weight the sum forms is q^3 at d = 0, (m / eps2)^(3/2) (more than the unfolded
// weight m / eps^3 by sqrt(m)): both must stay normal numbers of the workload's type. A variant
// that folds refuses any other state at upload, before a step, rather than pulling with 0 or
// infinity.
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "nbody/bodies.hpp"
#include "nbody/errors.hpp"
#include "nbody/variant.hpp"

namespace nbody {

// Both within [1/bound, bound]: 1e30 in float32 (its normal range is 1e-38..3e38), 1e300 in float64,
// leaving room for the sums of the interaction.
template <class Real>
constexpr double foldable_mass_bound() {
    return std::numeric_limits<Real>::max_exponent10 >= 300 ? 1e300 : 1e30;
}

// On the bits: variants compiled with -ffinite-math-only may fold an isfinite() or a comparison
// with NaN away.
inline bool positive_finite(double value) {
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(value);
    return bits > 0 && bits < std::bit_cast<std::uint64_t>(std::numeric_limits<double>::infinity());
}

// The largest |coordinate| for which no folded interaction's r2' can overflow, for bodies whose
// smallest mass gives the largest scale S = m^(-1/2): |d'| <= 2 S P per axis, so that
// r2' <= 4 Dim S^2 P^2 + eps2 S^2 stays below the largest finite Real (0.1 % kept for the sum's
// roundings). A portable reciprocal square root (inv_sqrt.hpp) takes r2' saturated in a step where
// a coordinate passes it; the GPU's MUFU.RSQ of infinity is already 0. The largest Real without bodies.
template <class Real>
Real folded_position_bound(const BodiesT<Real>& bodies, double eps2) {
    if (bodies.m.empty()) return std::numeric_limits<Real>::max();
    double smallest = std::numeric_limits<double>::infinity();
    for (const Real m : bodies.m) smallest = std::fmin(smallest, static_cast<double>(m));
    const double scale = 1.0 / std::sqrt(smallest);
    const double room = 0.999 * static_cast<double>(std::numeric_limits<Real>::max()) - eps2 * scale * scale;
    return room > 0 ? static_cast<Real>(std::sqrt(room / (4.0 * bodies.dim)) / scale) : Real(0);
}

// The same bound for unfolded positions (kokkos.simd, stdpar.blocked): the largest |coordinate| for
// which no pair's r^2 = the sum of Dim squared differences + eps2 can overflow, Dim (2 bound)^2 + eps2
// <= the largest finite Real (0.1 % kept for the sum's roundings).
template <class Real, int Dim>
Real overflow_free_bound(Real eps2) {
    const double room = static_cast<double>(std::numeric_limits<Real>::max()) - static_cast<double>(eps2);
    return room > 0 ? static_cast<Real>(std::sqrt(room / (4.0 * Dim)) * 0.999) : Real(0);
}

// UsageError naming the first body whose mass the fold cannot take with this softening;
// `alternative` is a variant that runs such a state, named in the message.
template <class Real>
void require_foldable_masses(const BodiesT<Real>& bodies, double softening, const std::string& variant,
                             const std::string& alternative) {
    const double bound = foldable_mass_bound<Real>(), eps2 = softening * softening;
    for (std::size_t j = 0; j < bodies.size(); ++j) {
        const double m = bodies.m[j];
        if (positive_finite(m)) {
            const double staged_softening = eps2 / m, largest_weight = std::pow(m / eps2, 1.5);
            if (staged_softening >= 1 / bound && staged_softening <= bound && largest_weight >= 1 / bound &&
                largest_weight <= bound)
                continue;
        }
        char text[320];
        std::snprintf(text, sizeof text,
                      "%s: body %zu's mass %.6g with softening %.6g is outside the range its m^-1/2 scaling keeps "
                      "finite in %s (eps^2/m and (m/eps^2)^1.5 within %.0e..%.0e); %s runs it",
                      variant.c_str(), j, m, softening, sizeof(Real) == 4 ? "float32" : "float64", 1 / bound, bound,
                      alternative.c_str());
        throw UsageError(text);
    }
}

// A folding variant (Folded, a SimulationOf<Real>) whose upload refuses, before any step, a state with
// masses the fold cannot keep finite (require_foldable_masses, naming `variant` and `alternative`). A
// Folded with a portable reciprocal square root takes the masses' position bound first
// (bound_positions_for). Not final: a model may name its own constructor (Kokkos' registration).
template <class Real, class Folded>
class MassRangeChecked : public SimulationOf<Real> {
public:
    using SimulationOf<Real>::upload;
    using SimulationOf<Real>::download;

    template <class... FoldedArguments>
    MassRangeChecked(std::string variant, std::string alternative, double softening, FoldedArguments&&... arguments)
        : folded_(std::forward<FoldedArguments>(arguments)...),
          variant_(std::move(variant)),
          alternative_(std::move(alternative)),
          softening_(softening) {}

    void upload(const BodiesT<Real>& initial) override {
        require_foldable_masses(initial, softening_, variant_, alternative_);
        if constexpr (requires { folded_.bound_positions_for(initial); }) folded_.bound_positions_for(initial);
        folded_.upload(initial);
    }
    void advance(int steps) override { folded_.advance(steps); }
    void synchronize() override { folded_.synchronize(); }
    void download(BodiesT<Real>& state, std::vector<float>& activity_map) override {
        folded_.download(state, activity_map);
    }

private:
    Folded folded_;
    std::string variant_, alternative_;
    double softening_;
};

}  // namespace nbody
