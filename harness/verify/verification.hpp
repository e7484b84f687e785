#pragma once
// Correctness against the float64 reference (SPEC §5), shared by `verify` and `matrix`.
//
// Full check (N <= full_reference_max_n): the reference (double for float32 workloads, long double
// for float64 ones) is advanced from the same initial state and compared after each requested step
// count K, in every workload.
// Sampled check (larger N): only the first step is compared, positions and the map for every body,
// velocities for a fixed pseudo-random subset. Euler: the positions after one step are p0 + dt*v0
// (no force needed) and the subset's velocities need the subset's accelerations (O(sample x N)).
// Leapfrog: the positions after one step need every body's initial acceleration (one O(N^2)
// evaluation on the host), the subset's velocities the subset's accelerations at the new positions.
// Float32 sampled checks scale the velocity limit with N: a correct float32 program summing the N
// pulls in index order loses accuracy as N grows (5.9e-8 at N = 2^16, 1.7e-6 at 2^21, 1.0e-5 at
// 2^22), so the limit is the larger of the threshold and kIndexOrderSumMargin x that sum's own
// error on the sampled bodies, computed here (docs/verification.md, "Large N in float32").
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

// Defaults per precision, justified by measured errors in docs/verification.md.
// The map has no numeric threshold by default: every count must be explained (see MapCheck).
// `max_map_diff` set is the explicitly lax mode of earlier versions (pass when the plain L1
// difference is at most that), recorded in results as such.
struct Thresholds {
    double max_pos_err = 1e-4;
    double max_rms_pos_err = 1e-5;
    double max_vel_err = 1e-6;
    std::optional<double> max_map_diff;
};
Thresholds default_thresholds(Precision precision);

// Thresholds a user or a matrix sets explicitly; the others keep the precision's default.
struct ThresholdOverrides {
    std::optional<double> max_pos_err, max_rms_pos_err, max_vel_err, max_map_diff;
    Thresholds applied_to(Thresholds defaults) const;
};

struct VerificationSettings {
    std::size_t full_reference_max_n = 16384;
    std::size_t sample_bodies = 1024;
    ThresholdOverrides overrides;
    Thresholds thresholds_for(Precision precision) const { return overrides.applied_to(default_thresholds(precision)); }
};

enum class CheckKind { full, sampled };
const char* to_string(CheckKind kind);

// A sampled float32 check allows this many times the index-order float32 sum's velocity error.
inline constexpr double kIndexOrderSumMargin = 2.0;

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
    // Sampled float32 checks: the velocity error of a float32 index-order sum of the pulls on the
    // sampled bodies (the rounding a correct float32 program makes at this N); 0 when not computed.
    double float32_sum_vel_err = 0;
    double vel_err_limit = 0;                // the velocity limit applied (threshold, or the scaled one)
    bool vel_limit_scaled() const { return float32_sum_vel_err > 0 && vel_err_limit == kIndexOrderSumMargin * float32_sum_vel_err; }
};


// The cell-count comparison behind ErrorMetrics' map fields, exposed for tests. `map` holds
// count * D/N per cell; `truth` the reference positions; `tolerance` the position error allowed
// (a body within it of a cell edge may land on either side). Cells are found in Real, as the
// variant finds them.
template <class Real>
void check_map_counts(const std::vector<float>& map, const BodiesT<long double>& truth, int d, double tolerance,
                      ErrorMetrics& errors);

struct CheckResult {
    int steps = 0;
    CheckKind kind = CheckKind::full;
    ErrorMetrics errors;
    bool passed = false;
    std::string failure;  // which error exceeded which threshold; empty when passed
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
    // Errors of a variant's state and map after `steps` steps, and whether they are within `limits`.
    CheckResult check(int steps, const HostState& state, const std::vector<float>& map, int d,
                      const Thresholds& limits) const;
    // The step counts a reference of n bodies checks when asked for `steps` (what steps() will be).
    static std::vector<int> checked_steps(std::size_t n, std::vector<int> steps, const VerificationSettings& settings);

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
                                           const ReferenceSolution& reference, int d, const Thresholds& limits,
                                           const StepProgressHook& progress = {}, const Distribution& distribution = {});

// Whether `value` is within `limit` (NaN never is).
inline bool within(double value, double limit) { return value <= limit; }

}  // namespace nbody
