#pragma once
// Correctness against the float64 reference (SPEC §5), shared by `verify` and `matrix`.
//
// Full check (N <= full_reference_max_n): the float64 reference is advanced from the same initial
// state and compared after each requested step count K.
// Sampled check (larger N): only the first step is compared. After one step the positions are
// p0 + dt*v0 for every body (cheap to compute exactly in float64), so positions and the map are
// still checked for all bodies; velocities v0 + dt*a are checked for a fixed pseudo-random subset
// whose float64 accelerations are computed against all N bodies.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nbody/bodies.hpp"
#include "nbody/variant.hpp"

namespace nbody {

// Defaults are justified by measured errors in docs/verification.md.
struct Thresholds {
    double max_pos_err = 1e-4;
    double max_rms_pos_err = 1e-5;
    double max_vel_err = 1e-6;
    double max_map_diff = 1e-3;
};

struct VerificationSettings {
    std::size_t full_reference_max_n = 16384;
    std::size_t sample_bodies = 1024;
    Thresholds thresholds;
};

enum class CheckKind { full, sampled };
const char* to_string(CheckKind kind);

// NaN where a value could not be computed (or the variant produced NaN): such a check fails.
struct ErrorMetrics {
    double max_pos_err = 0;
    double rms_pos_err = 0;
    double max_vel_err = 0;
    double map_diff = 0;
};

struct CheckResult {
    int steps = 0;
    CheckKind kind = CheckKind::full;
    ErrorMetrics errors;
    bool passed = false;
    std::string failure;  // which error exceeded which threshold; empty when passed
};

// The float64 truth for one initial state at the requested step counts, computed once and shared
// by every variant and every D of that N.
class ReferenceSolution {
public:
    ReferenceSolution(const Bodies& initial, const PhysicsConstants& constants, std::vector<int> steps,
                      const VerificationSettings& settings);
    CheckKind kind() const { return kind_; }
    // The step counts this reference can check (the sampled check: only 1).
    const std::vector<int>& steps() const { return steps_; }
    // Errors of a variant's state and map after `steps` steps, and whether they are within `limits`.
    CheckResult check(int steps, const Bodies& state, const std::vector<float>& map, int d,
                      const Thresholds& limits) const;

private:
    CheckKind kind_;
    std::vector<int> steps_;
    std::size_t n_;
    std::map<int, BodiesT<double>> states_;  // full: all bodies after each step count
    std::vector<std::size_t> sample_;         // sampled: the bodies whose velocity is checked
    std::vector<double> sample_vx_, sample_vy_;
};

// Uploads `initial`, advances to each of reference.steps() in turn and checks each.
std::vector<CheckResult> verify_simulation(Simulation& simulation, const Bodies& initial,
                                           const ReferenceSolution& reference, int d, const Thresholds& limits);

// Whether `value` is within `limit` (NaN never is).
inline bool within(double value, double limit) { return value <= limit; }

}  // namespace nbody
