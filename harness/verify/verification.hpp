#pragma once
// Correctness against the more exact reference (SPEC §5), shared by `verify` and `matrix`.
//
// The truth: the reference algorithm in double (float32 workloads) or long double (float64 ones),
// advanced from the variant's initial state. The rule (docs/verification.md, "The rounding rule"):
// beside it run three SHADOWS, the same algorithm in the workload's own precision summing each
// body's pulls in index order and in reversed order, and in index order from the positions one ulp
// away (what a rounding of the positions does, as a variant that rescales them makes). Their errors against the truth, body by body and
// component by component, are what honest rounding does to this very input (with every
// amplification the physics adds). A value's rounding scale is
//     max(the shadows' errors on it, the RMS of the shadows' errors over all bodies) + kValueUlps ulps of it,
// and a check passes where every error is at most kRoundingMultiple times its scale. Where K > 1 and the
// shadows themselves show the input amplifying rounding more than kInconclusiveAmplification times,
// a check beyond that limit is INCONCLUSIVE, not FAIL; the one-step check is always decisive.
// Full check (N <= full_reference_max_n): every body after each requested step count K.
// Sampled check (larger N): the first step only, positions and the map for every body, velocities
// for a fixed pseudo-random subset (their shadows: the subset's accelerations in the three ways;
// leapfrog positions need one O(N^2) pass in the workload's precision).
// User thresholds (--max-pos-err ..., a matrix's `verification` keys) replace the rule by fixed
// absolute limits for what they name. compare_states (distributed against one rank) keeps fixed limits.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nbody/bodies.hpp"
#include "nbody/variant.hpp"
#include "platform/measure.hpp"

namespace nbody {

// The rounding rule's constants, measured in docs/verification.md ("Measured multiples").
inline constexpr double kRoundingMultiple = 16;            // M: an error may be this many rounding scales
inline constexpr double kValueUlps = 4;                    // F: ulps of the value itself in each scale
inline constexpr double kInconclusiveAmplification = 1e4;  // shadows' error in ulps of the value scale

// Fixed absolute limits: those compare_states applies (a distributed result against the one-rank
// result of the same variant) and the bounds models' unit tests use; measured on the generator's
// workload (docs/verification.md). The map has no numeric threshold by default: every count must be
// explained (see MapCheck); `max_map_diff` set is the explicitly lax mode (pass when the plain L1
// difference is at most that), recorded in results as such.
struct Thresholds {
    double max_pos_err = 1e-4;
    double max_rms_pos_err = 1e-5;
    double max_vel_err = 1e-6;
    std::optional<double> max_map_diff;
};
Thresholds default_thresholds(Precision precision);

// Absolute limits a user or a matrix sets explicitly: each replaces the rounding rule for what it
// names (and the fixed limit of compare_states); the rest keep the rule.
struct ThresholdOverrides {
    std::optional<double> max_pos_err, max_rms_pos_err, max_vel_err, max_map_diff;
    Thresholds applied_to(Thresholds defaults) const;
};

struct VerificationSettings {
    std::size_t full_reference_max_n = 16384;
    std::size_t sample_bodies = 1024;
    ThresholdOverrides overrides;
    // The fixed limits compare_states applies: the overrides over default_thresholds.
    Thresholds fixed_thresholds_for(Precision precision) const { return overrides.applied_to(default_thresholds(precision)); }
};

enum class CheckKind { full, sampled };
const char* to_string(CheckKind kind);

// PASS; FAIL; INCONCLUSIVE: beyond the rounding rule's limit after K > 1 steps of an input that
// amplifies rounding beyond kInconclusiveAmplification, with every error still within
// kRoundingMultiple x the shadows' largest error over all bodies (rounding spread from body to
// body); never for NaN, a wrong map or a user's limit.
enum class Verdict { pass, fail, inconclusive };
const char* to_string(Verdict verdict);  // "pass", "fail", "inconclusive"

// Where a check's position or velocity limit came from.
enum class LimitSource { rounding, absolute };
const char* to_string(LimitSource source);  // "rounding", "absolute"

// NaN where a value could not be computed (or the variant produced NaN): such a check fails.
struct ErrorMetrics {
    double max_pos_err = 0;
    double rms_pos_err = 0;
    double max_vel_err = 0;
    double map_diff = 0;  // plain L1 difference in bodies / 2N (kept for continuity)
    // The map check (docs/verification.md): bodies whose reference position lies within the
    // position tolerance of a cell edge are ambiguous and may be counted in any cell within it;
    // every other body must be counted in exactly its reference cell.
    std::int64_t map_ambiguous_bodies = 0;   // bodies within the tolerance of a cell edge
    std::int64_t map_explained_counts = 0;   // ambiguous bodies counted in a neighbouring cell
    std::int64_t map_unexplained_counts = 0; // counts no assignment of ambiguous bodies explains: 0 to pass
    double map_tolerance = 0;                // the position tolerance used (this check's max_pos_err + rounding)
    // Sampled float32 checks: the velocity error of the float32 index-order shadow on the sampled
    // bodies (the rounding a correct float32 program makes at this N); 0 when not computed.
    double float32_sum_vel_err = 0;
    // The rounding rule: each error's worst ratio to its rounding scale (pass: <= kRoundingMultiple),
    // and the limit at that value (kRoundingMultiple x its scale; the user's limit where given).
    double pos_rounding_multiple = 0, vel_rounding_multiple = 0;
    double pos_err_limit = 0, vel_err_limit = 0;
    // The shadows' largest error over every body (what honest rounding reaches on this input), and
    // that in ulps of the largest value (positions or velocities, whichever is more).
    double pos_shadow_err = 0, vel_shadow_err = 0;
    double rounding_amplification = 0;
};


// The cell-count comparison behind ErrorMetrics' map fields, exposed for tests. `map` holds
// count * D/N per cell; `positions` those the map is held to (verify: the variant's own);
// `tolerance` the position error allowed (a body within it of a cell edge may land on either side).
// Cells are found in Real, as the variant finds them. Stored: long double, or Real itself.
template <class Real, class Stored>
void check_map_counts(const std::vector<float>& map, const BodiesT<Stored>& positions, int d, double tolerance,
                      ErrorMetrics& errors);

struct CheckResult {
    int steps = 0;
    CheckKind kind = CheckKind::full;
    ErrorMetrics errors;
    Verdict verdict = Verdict::fail;
    bool passed = false;  // verdict == pass
    LimitSource pos_limit_source = LimitSource::rounding, vel_limit_source = LimitSource::rounding;
    std::string failure;  // FAIL or INCONCLUSIVE: which error exceeded which limit (and why no verdict); empty on PASS
};

// The truth for one initial state and integrator at the requested step counts, computed once and
// shared by every variant and every D of that N: the reference in double for float32 workloads and
// in long double for float64 workloads (more exact than the variant's arithmetic in both cases).
class ReferenceSolution {
public:
    // `on_step` (optional): told after each reference step of a full check (done, of), for progress.
    ReferenceSolution(const HostState& initial, const PhysicsConstants& constants, Integrator integrator,
                      std::vector<int> steps, const VerificationSettings& settings,
                      const std::function<void(int done, int of)>& on_step = {});
    CheckKind kind() const { return kind_; }
    Precision precision() const { return precision_; }
    // The step counts this reference can check (the sampled check: only 1).
    const std::vector<int>& steps() const { return steps_; }
    // Errors of a variant's state and map after `steps` steps, judged by the rounding rule except
    // where `overrides` sets an absolute limit.
    CheckResult check(int steps, const HostState& state, const std::vector<float>& map, int d,
                      const ThresholdOverrides& overrides = {}) const;
    // The step counts a reference of n bodies checks when asked for `steps` (what steps() will be).
    static std::vector<int> checked_steps(std::size_t n, std::vector<int> steps, const VerificationSettings& settings);

    // What the shadows give for one quantity (positions or velocities) after a step count:
    // per axis and value, the larger shadow error; their RMS (the floor); their worst in ulps.
    struct RoundingScale {
        std::vector<std::vector<double>> shadow_error;  // [axis][body, or k of the sample]
        double floor = 0;
        double largest_error = 0, largest_value = 0;
        double amplification = 0;  // largest_error / (epsilon x largest_value)
    };

private:
    using Truth = BodiesT<long double>;
    template <class Real>
    void compute(const BodiesT<Real>& initial, const PhysicsConstants& constants, Integrator integrator,
                 const VerificationSettings& settings, const std::function<void(int, int)>& on_step);

    CheckKind kind_ = CheckKind::full;
    Precision precision_ = Precision::fp32;
    int dim_ = 2;
    std::vector<int> steps_;
    std::size_t n_ = 0;
    std::map<int, Truth> states_;           // full: every body after each step count; sampled: positions after 1
    std::vector<std::size_t> sample_;       // sampled: the bodies whose velocity is checked
    std::vector<std::vector<long double>> sample_velocity_;  // [axis][k]
    double float32_sum_vel_err_ = 0;        // sampled float32: see ErrorMetrics::float32_sum_vel_err
    double epsilon_ = 0;                    // of the workload's precision
    std::map<int, RoundingScale> position_scale_, velocity_scale_;  // by step count
};

// Errors of `got` against `expected`, every body's position and velocity and the map, as a full
// check: a distributed result against the single-rank one of the same variant (docs/scaling.md).
CheckResult compare_states(int steps, const HostState& got, const std::vector<float>& map, const HostState& expected, int d,
                           const Thresholds& limits);

// A simulation's state and map after `steps` steps from the initial state.
struct Snapshot {
    int steps = 0;
    HostState state;
    std::vector<float> map;
};

// Uploads `initial`, advances to each of `steps` (ascending) in turn and downloads there; over
// several ranks (`distribution`) every block's velocities are gathered, so each snapshot is whole.
std::vector<Snapshot> snapshots_at(Simulation& simulation, const HostState& initial, const std::vector<int>& steps,
                                   const Distribution& distribution = {}, const StepProgressHook& progress = {});

// Uploads `initial`, advances to each of reference.steps() in turn and checks each. `progress`
// (optional) is told the steps done (measure.hpp: the steps then advance in chunks).
std::vector<CheckResult> verify_simulation(Simulation& simulation, const HostState& initial,
                                           const ReferenceSolution& reference, int d, const ThresholdOverrides& overrides = {},
                                           const StepProgressHook& progress = {}, const Distribution& distribution = {});

// Whether `value` is within `limit` (NaN never is).
inline bool within(double value, double limit) { return value <= limit; }

}  // namespace nbody
