#include "verify/verification.hpp"

#include "platform/distributed.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <type_traits>
#include <variant>

#include "nbody/generator.hpp"
#include "nbody/reference.hpp"

namespace nbody {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// max that lets a NaN through, so a NaN anywhere makes the error NaN (and the check fail).
void raise_to(double& maximum, double value) {
    if (std::isnan(value) || value > maximum) maximum = std::isnan(maximum) ? maximum : value;
}

// Fixed pseudo-random distinct bodies (a constant seed: the same subset for every variant and run).
std::vector<std::size_t> sample_bodies(std::size_t n, std::size_t count) {
    std::vector<std::size_t> chosen;
    if (count >= n) {
        for (std::size_t i = 0; i < n; ++i) chosen.push_back(i);
        return chosen;
    }
    SplitMix64 rng(0x5eedbeefULL);
    std::set<std::size_t> seen;
    while (chosen.size() < count) {
        const std::size_t i = static_cast<std::size_t>(rng.next() % n);
        if (seen.insert(i).second) chosen.push_back(i);
    }
    return chosen;
}

// The cell a variant may have counted a body in, for each axis: [first, last] of the cells within
// `slack` of its reference coordinate (empty when none is), and whether the range leaves the unit
// square. A body far outside (or NaN) gives an empty range that may be outside, never an overflow.
struct CellRange {
    long first, last;
    bool may_be_outside;
    long count() const { return std::max(0L, last - first + 1); }
};

CellRange cells_within(long double coordinate, long double slack, int d) {
    // Clamped to [-1, d] before the conversion to long (1e30 * D does not fit; NaN lands at -1).
    const auto cell_of = [d](long double p) {
        const long double cell = std::floor(p * d);
        return !(cell >= -1) ? -1L : cell > d ? static_cast<long>(d) : static_cast<long>(cell);
    };
    const long lo = cell_of(coordinate - slack), hi = cell_of(coordinate + slack);
    return {std::max(lo, 0L), std::min(hi, static_cast<long>(d) - 1), lo < 0 || hi >= d};
}

// Assigns ambiguous bodies to cells with spare counts (bipartite matching with capacities,
// augmenting paths): how many bodies can be placed, and where.
class CountAssignment {
public:
    CountAssignment(std::vector<std::int64_t> capacity, std::vector<std::vector<std::size_t>> candidates)
        : capacity_(std::move(capacity)), candidates_(std::move(candidates)), holders_(capacity_.size()),
          placed_(candidates_.size(), kNone) {
        for (std::size_t body = 0; body < candidates_.size(); ++body) {
            visited_.assign(capacity_.size(), false);
            place(body);
        }
    }
    std::size_t slot_of(std::size_t body) const { return placed_[body]; }
    static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

private:
    bool place(std::size_t body) {
        for (std::size_t slot : candidates_[body]) {
            if (visited_[slot]) continue;
            visited_[slot] = true;
            if (static_cast<std::int64_t>(holders_[slot].size()) < capacity_[slot]) {
                holders_[slot].push_back(body);
                placed_[body] = slot;
                return true;
            }
            for (std::size_t& holder : holders_[slot]) {
                const std::size_t moved = holder;
                if (place(moved)) {  // `moved` found another slot: this one takes its place
                    holder = body;
                    placed_[body] = slot;
                    return true;
                }
            }
        }
        return false;
    }

    std::vector<std::int64_t> capacity_;
    std::vector<std::vector<std::size_t>> candidates_;
    std::vector<std::vector<std::size_t>> holders_;
    std::vector<std::size_t> placed_;
    std::vector<bool> visited_;
};

}  // namespace

template <class Real>
void check_map_counts(const std::vector<float>& map, const BodiesT<long double>& truth, int d, double tolerance,
                      ErrorMetrics& e) {
    const std::size_t n = truth.size();
    const std::size_t cells = static_cast<std::size_t>(d) * d;
    if (map.size() != cells)
        throw std::runtime_error(fmt::format("activity map has {} cells, expected {}", map.size(), cells));
    constexpr std::int64_t kOutside = -1;
    // The variant's counts, sparse (D*D may be far larger than N).
    const double scale = activity_scale(n, d);
    std::map<std::int64_t, std::int64_t> counted;
    std::int64_t counted_inside = 0;
    for (std::size_t c = 0; c < cells; ++c) {
        if (!std::isfinite(map[c])) {
            e.map_diff = kNaN;
            e.map_unexplained_counts = static_cast<std::int64_t>(n);
            return;
        }
        const std::int64_t count = std::llround(map[c] / scale);
        if (count != 0) counted[static_cast<std::int64_t>(c)] = count;
        counted_inside += count;
    }
    counted[kOutside] = static_cast<std::int64_t>(n) - counted_inside;

    // Each body's reference cell in the workload's precision, and the cells within the tolerance,
    // widened by the rounding of p * D in Real: at most p * 2^-24 (float) in position units, p < 1.
    const long double slack = static_cast<long double>(tolerance) + std::numeric_limits<Real>::epsilon();
    e.map_tolerance = static_cast<double>(slack);
    constexpr long kMaxCandidateCells = 16;
    std::int64_t unplaceable = 0;
    std::map<std::int64_t, std::int64_t> own, fixed;
    std::vector<std::int64_t> ambiguous_own;
    std::vector<std::vector<std::int64_t>> ambiguous_cells;
    for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t own_cell =
            activity_cell(static_cast<Real>(truth.x[i]), static_cast<Real>(truth.y[i]), d);
        ++own[own_cell];
        const CellRange cols = cells_within(truth.x[i], slack, d), rows = cells_within(truth.y[i], slack, d);
        // A position error of more than a cell or two places nothing: such a body counts as
        // unexplained (its positions fail anyway), which also bounds the work of a badly wrong run.
        if (cols.count() * rows.count() > kMaxCandidateCells) {
            ++unplaceable;
            continue;
        }
        std::vector<std::int64_t> candidates;
        for (long row = rows.first; row <= rows.last; ++row)
            for (long col = cols.first; col <= cols.last; ++col) candidates.push_back(row * d + col);
        if (cols.may_be_outside || rows.may_be_outside || candidates.empty()) candidates.push_back(kOutside);
        if (candidates.size() == 1) {
            ++fixed[candidates.front()];
        } else {
            ambiguous_own.push_back(own_cell);
            ambiguous_cells.push_back(std::move(candidates));
        }
    }

    // The plain L1 difference against the reference cells, for continuity.
    double l1 = 0;
    auto add_difference = [](const std::map<std::int64_t, std::int64_t>& a, const std::map<std::int64_t, std::int64_t>& b,
                             bool both_ways) {
        double sum = 0;
        for (const auto& [cell, count] : a) {
            const auto it = b.find(cell);
            const std::int64_t other = it == b.end() ? 0 : it->second;
            if (both_ways || it == b.end()) sum += static_cast<double>(std::llabs(count - other));
        }
        return sum;
    };
    l1 = add_difference(counted, own, true) + add_difference(own, counted, false);
    const auto outside_counted = counted[kOutside], outside_own = own.count(kOutside) ? own[kOutside] : 0;
    l1 -= static_cast<double>(std::llabs(outside_counted - outside_own));  // SPEC §5 counts cells only
    e.map_diff = l1 / (2.0 * static_cast<double>(n));

    // What the unambiguous bodies leave: a deficit is unexplained; a surplus must be filled by
    // ambiguous bodies, each counted once in one of its candidate cells.
    std::int64_t deficit = 0, surplus = 0;
    std::map<std::int64_t, std::size_t> slot_of_cell;
    std::vector<std::int64_t> capacity;
    for (const auto& [cell, count] : fixed) {
        const auto it = counted.find(cell);
        const std::int64_t have = it == counted.end() ? 0 : it->second;
        if (have < count) deficit += count - have;
    }
    for (const auto& [cell, have] : counted) {
        const auto it = fixed.find(cell);
        const std::int64_t extra = have - (it == fixed.end() ? 0 : it->second);
        if (extra > 0) {
            slot_of_cell[cell] = capacity.size();
            capacity.push_back(extra);
            surplus += extra;
        }
    }
    std::vector<std::vector<std::size_t>> candidates(ambiguous_cells.size());
    for (std::size_t a = 0; a < ambiguous_cells.size(); ++a)
        for (std::int64_t cell : ambiguous_cells[a])
            if (const auto it = slot_of_cell.find(cell); it != slot_of_cell.end()) candidates[a].push_back(it->second);
    std::vector<std::int64_t> cell_of_slot(capacity.size());
    for (const auto& [cell, slot] : slot_of_cell) cell_of_slot[slot] = cell;

    const CountAssignment assignment(capacity, candidates);
    std::int64_t placed = 0, moved = 0;
    for (std::size_t a = 0; a < ambiguous_cells.size(); ++a) {
        const std::size_t slot = assignment.slot_of(a);
        if (slot == CountAssignment::kNone) continue;
        ++placed;
        if (cell_of_slot[slot] != ambiguous_own[a]) ++moved;
    }
    e.map_ambiguous_bodies = static_cast<std::int64_t>(ambiguous_cells.size());
    e.map_explained_counts = moved;
    e.map_unexplained_counts = deficit + (surplus - placed) + unplaceable;
}

template void check_map_counts<float>(const std::vector<float>&, const BodiesT<long double>&, int, double, ErrorMetrics&);
template void check_map_counts<double>(const std::vector<float>&, const BodiesT<long double>&, int, double,
                                       ErrorMetrics&);

namespace {

// The reference's working precision for a variant precision: more exact than the variant's.
template <class Real>
using TruthOf = std::conditional_t<std::is_same_v<Real, float>, double, long double>;

}  // namespace

const char* to_string(CheckKind kind) { return kind == CheckKind::full ? "full" : "sampled"; }

Thresholds default_thresholds(Precision precision) {
    if (precision == Precision::fp32) return {};
    // Float64: see docs/verification.md for the measured errors these bound.
    return {.max_pos_err = 1e-12, .max_rms_pos_err = 1e-13, .max_vel_err = 1e-12, .max_map_diff = std::nullopt};
}

Thresholds ThresholdOverrides::applied_to(Thresholds t) const {
    t.max_pos_err = max_pos_err.value_or(t.max_pos_err);
    t.max_rms_pos_err = max_rms_pos_err.value_or(t.max_rms_pos_err);
    t.max_vel_err = max_vel_err.value_or(t.max_vel_err);
    if (max_map_diff) t.max_map_diff = max_map_diff;
    return t;
}

ReferenceSolution::ReferenceSolution(const HostState& initial, const PhysicsConstants& constants, Integrator integrator,
                                     std::vector<int> steps, const VerificationSettings& settings,
                                     const std::function<void(int, int)>& on_step)
    : precision_(state_precision(initial)), dim_(state_dim(initial)), n_(state_size(initial)) {
    if (steps.empty()) throw std::logic_error("verification needs at least one step count");
    steps_ = checked_steps(n_, std::move(steps), settings);
    std::visit([&](const auto& bodies) { compute(bodies, constants, integrator, settings, on_step); }, initial);
}

template <class Real>
void ReferenceSolution::compute(const BodiesT<Real>& initial, const PhysicsConstants& constants, Integrator integrator,
                                const VerificationSettings& settings, const std::function<void(int, int)>& on_step) {
    using T = TruthOf<Real>;
    BodiesT<T> state = BodiesT<T>::converted_from(initial);
    if (n_ <= settings.full_reference_max_n) {
        kind_ = CheckKind::full;
        int done = 0;
        // Reported step by step under Euler; a leapfrog call starts with a force evaluation, so
        // leapfrog advances to each step count at once (reported there).
        const bool step_by_step = on_step && integrator == Integrator::euler;
        for (int k : steps_) {
            for (; step_by_step && done + 1 < k; ++done) {
                reference_advance(state, constants, integrator, 1);
                on_step(done + 1, steps_.back());
            }
            reference_advance(state, constants, integrator, k - done);
            done = k;
            if (on_step) on_step(done, steps_.back());
            states_.emplace(k, Truth::converted_from(state));
        }
        return;
    }
    kind_ = CheckKind::sampled;
    sample_ = sample_bodies(n_, settings.sample_bodies);
    const T G = static_cast<T>(constants.G), dt = static_cast<T>(constants.dt);
    std::vector<std::vector<T>> pull;
    if (needs_initial_pull(integrator)) {
        // The drift needs every body's half-kicked velocity: one O(N^2) evaluation.
        host_pulls(state, static_cast<T>(constants.eps2()), pull, true);
        host_advance_before_force(state, pull, integrator, G, dt);
    }
    // Velocities: v + dt*a (Euler, at the start positions) or v_half + dt/2*a (leapfrog, at the
    // drifted positions); then the positions of the one step (Euler's drift with the old velocity).
    const auto acceleration = reference_accelerations(state, constants, sample_);
    const T kick = integrator == Integrator::leapfrog ? dt * T(0.5) : dt;
    sample_velocity_.assign(static_cast<std::size_t>(dim_), std::vector<long double>(sample_.size()));
    for (int axis = 0; axis < dim_; ++axis)
        for (std::size_t k = 0; k < sample_.size(); ++k)
            sample_velocity_[axis][k] = state.velocity(axis)[sample_[k]] + kick * acceleration[axis][k];
    if constexpr (std::is_same_v<Real, float>) {
        // The same accelerations summed in float32 in index order; a whole step's kicks add up to dt
        // (leapfrog: two half kicks), so dt x the acceleration error is the velocity error it makes.
        const auto float32_sum = reference_accelerations(BodiesT<float>::converted_from(state), constants, sample_);
        for (int axis = 0; axis < dim_; ++axis)
            for (std::size_t k = 0; k < sample_.size(); ++k)
                raise_to(float32_sum_vel_err_,
                         static_cast<double>(dt) * std::abs(static_cast<double>(float32_sum[axis][k] - acceleration[axis][k])));
    }
    if (integrator == Integrator::euler)
        for (int axis = 0; axis < dim_; ++axis)
            for (std::size_t i = 0; i < n_; ++i) state.position(axis)[i] += dt * state.velocity(axis)[i];
    states_.emplace(1, Truth::converted_from(state));
}

namespace {

// The truth a state is held to: every position, and the velocities of every body (`sample` null)
// or of the sampled bodies.
struct TruthView {
    const BodiesT<long double>& state;
    const std::vector<std::size_t>* sample = nullptr;
    const std::vector<std::vector<long double>>* sample_velocity = nullptr;  // [axis][k]
};

CheckResult check_against(int steps, CheckKind kind, const TruthView& truth_view, const HostState& got_state,
                          const std::vector<float>& map, int d, const Thresholds& limits) {
    const BodiesT<long double>& truth = truth_view.state;
    const std::size_t n = truth.size();
    const int dim = truth.dim;
    if (state_size(got_state) != n)
        throw std::runtime_error(fmt::format("variant returned {} bodies, expected {}", state_size(got_state), n));
    if (state_dim(got_state) != dim) throw std::logic_error("variant returned a state of another workload than the reference's");

    CheckResult result;
    result.steps = steps;
    result.kind = kind;
    ErrorMetrics& e = result.errors;
    std::visit(
        [&](const auto& got) {
            using Real = typename std::decay_t<decltype(got)>::real_type;
            double sum_sq = 0;
            for (int axis = 0; axis < dim; ++axis) {
                const auto& p = got.position(axis);
                const auto& q = truth.position(axis);
                for (std::size_t i = 0; i < n; ++i) {
                    const double error = static_cast<double>(static_cast<long double>(p[i]) - q[i]);
                    raise_to(e.max_pos_err, std::abs(error));
                    sum_sq += error * error;
                }
            }
            e.rms_pos_err = std::sqrt(sum_sq / static_cast<double>(static_cast<std::size_t>(dim) * n));
            for (int axis = 0; axis < dim; ++axis) {
                const auto& v = got.velocity(axis);
                if (truth_view.sample == nullptr) {
                    for (std::size_t i = 0; i < n; ++i)
                        raise_to(e.max_vel_err, std::abs(static_cast<double>(v[i] - truth.velocity(axis)[i])));
                } else {
                    const auto& sample = *truth_view.sample;
                    for (std::size_t k = 0; k < sample.size(); ++k)
                        raise_to(e.max_vel_err,
                                 std::abs(static_cast<double>(v[sample[k]] - (*truth_view.sample_velocity)[axis][k])));
                }
            }
            check_map_counts<Real>(map, truth, d, e.max_pos_err, e);
        },
        got_state);

    e.vel_err_limit = limits.max_vel_err;
    const std::pair<const char*, std::pair<double, double>> checks[] = {
        {"max_pos_err", {e.max_pos_err, limits.max_pos_err}},
        {"rms_pos_err", {e.rms_pos_err, limits.max_rms_pos_err}},
        {"max_vel_err", {e.max_vel_err, limits.max_vel_err}},
    };
    auto add_failure = [&](const std::string& text) { result.failure += (result.failure.empty() ? "" : ", ") + text; };
    for (const auto& [name, value_limit] : checks) {
        if (!within(value_limit.first, value_limit.second))
            add_failure(fmt::format("{} {:.3g} > {:.3g}", name, value_limit.first, value_limit.second));
    }
    if (limits.max_map_diff) {  // the lax mode
        if (!within(e.map_diff, *limits.max_map_diff))
            add_failure(fmt::format("map_diff {:.3g} > {:.3g}", e.map_diff, *limits.max_map_diff));
    } else if (e.map_unexplained_counts != 0) {
        add_failure(fmt::format("map: {} counts unexplained ({} bodies within {:.2g} of a cell edge)",
                                e.map_unexplained_counts, e.map_ambiguous_bodies, e.map_tolerance));
    }
    result.passed = result.failure.empty();
    return result;
}

}  // namespace

CheckResult ReferenceSolution::check(int steps, const HostState& got_state, const std::vector<float>& map, int d,
                                     const Thresholds& limits) const {
    const auto it = states_.find(steps);
    if (it == states_.end()) throw std::logic_error(fmt::format("no reference after {} steps", steps));
    if (state_precision(got_state) != precision_ || state_dim(got_state) != dim_)
        throw std::logic_error("variant returned a state of another workload than the reference's");
    const TruthView truth = kind_ == CheckKind::full ? TruthView{it->second} : TruthView{it->second, &sample_, &sample_velocity_};
    Thresholds applied = limits;
    applied.max_vel_err = std::max(limits.max_vel_err, kIndexOrderSumMargin * float32_sum_vel_err_);
    CheckResult result = check_against(steps, kind_, truth, got_state, map, d, applied);
    result.errors.float32_sum_vel_err = float32_sum_vel_err_;
    return result;
}

std::vector<int> ReferenceSolution::checked_steps(std::size_t n, std::vector<int> steps, const VerificationSettings& settings) {
    if (n > settings.full_reference_max_n) return {1};
    std::sort(steps.begin(), steps.end());
    steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
    return steps;
}

CheckResult compare_states(int steps, const HostState& got, const std::vector<float>& map, const HostState& expected, int d,
                           const Thresholds& limits) {
    if (state_precision(got) != state_precision(expected))
        throw std::logic_error("compare_states: states of different precisions");
    const auto truth = std::visit([](const auto& b) { return BodiesT<long double>::converted_from(b); }, expected);
    return check_against(steps, CheckKind::full, TruthView{truth}, got, map, d, limits);
}

std::vector<Snapshot> snapshots_at(Simulation& simulation, const HostState& initial, const std::vector<int>& steps,
                                   const Distribution& distribution, const StepProgressHook& progress) {
    std::vector<Snapshot> snapshots;
    simulation.upload(initial);
    int done = 0;
    for (int k : steps) {
        advance_reporting(simulation, k - done, progress, done, steps.back(), true);
        simulation.synchronize();
        done = k;
        Snapshot& s = snapshots.emplace_back(Snapshot{k, empty_state({state_dim(initial), state_precision(initial), {}}, 0), {}});
        simulation.download(s.state, s.map);
        gather_velocities(s.state, distribution);
    }
    return snapshots;
}

std::vector<CheckResult> verify_simulation(Simulation& simulation, const HostState& initial,
                                           const ReferenceSolution& reference, int d, const Thresholds& limits,
                                           const StepProgressHook& progress, const Distribution& distribution) {
    std::vector<CheckResult> results;
    for (const Snapshot& s : snapshots_at(simulation, initial, reference.steps(), distribution, progress))
        results.push_back(reference.check(s.steps, s.state, s.map, d, limits));
    return results;
}

}  // namespace nbody
