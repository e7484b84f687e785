#pragma once
// Hard inputs for verification (docs/verification.md, "Hard inputs"): valid states on which
// rounding is amplified far beyond the generator's workload (softening 2, equal masses, at rest in
// the unit square). Each case sets its softening with its state; G and dt stay the defaults.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nbody/bodies.hpp"
#include "nbody/physics.hpp"

namespace nbody {

enum class StressKind {
    masses,      // masses over 8 decades, softening 0.01
    cluster,     // every body within 1e-3 of one point, softening 0.001 (a collapsing cluster)
    drift,       // the generator's bodies drifting together at |v| = 100
    fast_drift,  // the same at |v| = 1e5
    binary,      // a close heavy pair (0.01 apart, in orbit) among light bodies, softening 0.005
    outside,     // bodies up to 1e3 outside the unit square
    mixed,       // masses over 4 decades, softening 0.01, a close pair and a fast body (verify's default)
};

// Every kind, in the order above.
const std::vector<StressKind>& all_stress_kinds();
const char* to_string(StressKind kind);
// The kind a name gives (UsageError naming the kinds for any other text).
StressKind parse_stress_kind(const std::string& text);

struct StressCase {
    HostState state;
    PhysicsConstants constants;
};

// The case of `kind`: n bodies (at least 4) in `dim` dimensions and `precision`, from the
// generator's positions of `seed`; the same values in both precisions (drawn in double, then rounded).
StressCase stress_state(StressKind kind, std::size_t n, int dim, Precision precision, std::uint64_t seed = 42);

}  // namespace nbody
