#include "verification.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
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

// L1 distance, in bodies, between the variant's map (count * D/N per cell) and the cells of the
// reference positions, / 2N. The cell is found in the workload's precision (SPEC §1: x * (float)D
// for float32), as the variant finds it. The reference side is kept as a sorted list of cells (O(N)
// memory, however large D*D is).
template <class Real>
double map_difference(const std::vector<float>& map, const BodiesT<long double>& reference_positions, int d) {
    const std::size_t n = reference_positions.size();
    const std::size_t cells = static_cast<std::size_t>(d) * d;
    if (map.size() != cells)
        throw std::runtime_error(fmt::format("activity map has {} cells, expected {}", map.size(), cells));
    std::vector<std::int64_t> truth_cells;
    truth_cells.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        const int cell = activity_cell(static_cast<Real>(reference_positions.x[i]),
                                       static_cast<Real>(reference_positions.y[i]), d);
        if (cell >= 0) truth_cells.push_back(cell);
    }
    std::sort(truth_cells.begin(), truth_cells.end());
    const double scale = activity_scale(n, d);
    double l1 = 0;
    std::size_t next = 0;
    for (std::size_t c = 0; c < cells; ++c) {
        if (!std::isfinite(map[c])) return kNaN;
        std::int64_t truth = 0;
        while (next < truth_cells.size() && truth_cells[next] == static_cast<std::int64_t>(c)) {
            ++truth;
            ++next;
        }
        l1 += static_cast<double>(std::llabs(std::llround(map[c] / scale) - truth));
    }
    return l1 / (2.0 * static_cast<double>(n));
}

// The reference's working precision for a variant precision: more exact than the variant's.
template <class Real>
using TruthOf = std::conditional_t<std::is_same_v<Real, float>, double, long double>;

}  // namespace

const char* to_string(CheckKind kind) { return kind == CheckKind::full ? "full" : "sampled"; }

Thresholds default_thresholds(Precision precision) {
    if (precision == Precision::fp32) return {};
    // Float64: see docs/verification.md for the measured errors these bound.
    return {.max_pos_err = 1e-12, .max_rms_pos_err = 1e-13, .max_vel_err = 1e-12, .max_map_diff = 1e-3};
}

Thresholds ThresholdOverrides::applied_to(Thresholds t) const {
    t.max_pos_err = max_pos_err.value_or(t.max_pos_err);
    t.max_rms_pos_err = max_rms_pos_err.value_or(t.max_rms_pos_err);
    t.max_vel_err = max_vel_err.value_or(t.max_vel_err);
    t.max_map_diff = max_map_diff.value_or(t.max_map_diff);
    return t;
}

ReferenceSolution::ReferenceSolution(const HostState& initial, const PhysicsConstants& constants, Integrator integrator,
                                     std::vector<int> steps, const VerificationSettings& settings)
    : precision_(state_precision(initial)), dim_(state_dim(initial)), n_(state_size(initial)) {
    if (steps.empty()) throw std::logic_error("verification needs at least one step count");
    std::sort(steps.begin(), steps.end());
    steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
    steps_ = std::move(steps);
    std::visit([&](const auto& bodies) { compute(bodies, constants, integrator, settings); }, initial);
}

template <class Real>
void ReferenceSolution::compute(const BodiesT<Real>& initial, const PhysicsConstants& constants, Integrator integrator,
                                const VerificationSettings& settings) {
    using T = TruthOf<Real>;
    BodiesT<T> state = BodiesT<T>::converted_from(initial);
    if (n_ <= settings.full_reference_max_n) {
        kind_ = CheckKind::full;
        int done = 0;
        for (int k : steps_) {
            reference_advance(state, constants, integrator, k - done);
            done = k;
            states_.emplace(k, Truth::converted_from(state));
        }
        return;
    }
    kind_ = CheckKind::sampled;
    steps_ = {1};
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
    if (integrator == Integrator::euler)
        for (int axis = 0; axis < dim_; ++axis)
            for (std::size_t i = 0; i < n_; ++i) state.position(axis)[i] += dt * state.velocity(axis)[i];
    states_.emplace(1, Truth::converted_from(state));
}

CheckResult ReferenceSolution::check(int steps, const HostState& got_state, const std::vector<float>& map, int d,
                                     const Thresholds& limits) const {
    const auto it = states_.find(steps);
    if (it == states_.end()) throw std::logic_error(fmt::format("no reference after {} steps", steps));
    if (state_size(got_state) != n_)
        throw std::runtime_error(fmt::format("variant returned {} bodies, expected {}", state_size(got_state), n_));
    if (state_precision(got_state) != precision_ || state_dim(got_state) != dim_)
        throw std::logic_error("variant returned a state of another workload than the reference's");
    const Truth& truth = it->second;

    CheckResult result;
    result.steps = steps;
    result.kind = kind_;
    ErrorMetrics& e = result.errors;
    std::visit(
        [&](const auto& got) {
            using Real = typename std::decay_t<decltype(got)>::real_type;
            double sum_sq = 0;
            for (int axis = 0; axis < dim_; ++axis) {
                const auto& p = got.position(axis);
                const auto& q = truth.position(axis);
                for (std::size_t i = 0; i < n_; ++i) {
                    const double error = static_cast<double>(static_cast<long double>(p[i]) - q[i]);
                    raise_to(e.max_pos_err, std::abs(error));
                    sum_sq += error * error;
                }
            }
            e.rms_pos_err = std::sqrt(sum_sq / static_cast<double>(static_cast<std::size_t>(dim_) * n_));
            for (int axis = 0; axis < dim_; ++axis) {
                const auto& v = got.velocity(axis);
                if (kind_ == CheckKind::full) {
                    for (std::size_t i = 0; i < n_; ++i)
                        raise_to(e.max_vel_err, std::abs(static_cast<double>(v[i] - truth.velocity(axis)[i])));
                } else {
                    for (std::size_t k = 0; k < sample_.size(); ++k)
                        raise_to(e.max_vel_err,
                                 std::abs(static_cast<double>(v[sample_[k]] - sample_velocity_[axis][k])));
                }
            }
            e.map_diff = map_difference<Real>(map, truth, d);
        },
        got_state);

    const std::pair<const char*, std::pair<double, double>> checks[] = {
        {"max_pos_err", {e.max_pos_err, limits.max_pos_err}},
        {"rms_pos_err", {e.rms_pos_err, limits.max_rms_pos_err}},
        {"max_vel_err", {e.max_vel_err, limits.max_vel_err}},
        {"map_diff", {e.map_diff, limits.max_map_diff}},
    };
    for (const auto& [name, value_limit] : checks) {
        if (!within(value_limit.first, value_limit.second))
            result.failure += fmt::format("{}{} {:.3g} > {:.3g}", result.failure.empty() ? "" : ", ", name,
                                          value_limit.first, value_limit.second);
    }
    result.passed = result.failure.empty();
    return result;
}

std::vector<CheckResult> verify_simulation(Simulation& simulation, const HostState& initial,
                                           const ReferenceSolution& reference, int d, const Thresholds& limits) {
    std::vector<CheckResult> results;
    simulation.upload(initial);
    HostState state = empty_state({state_dim(initial), state_precision(initial), {}}, 0);
    std::vector<float> map;
    int done = 0;
    for (int k : reference.steps()) {
        simulation.advance(k - done);
        simulation.synchronize();
        done = k;
        simulation.download(state, map);
        results.push_back(reference.check(k, state, map, d, limits));
    }
    return results;
}

}  // namespace nbody
