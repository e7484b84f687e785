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

// The reference's working precision for a variant precision: more exact than the variant's.
template <class Real>
using TruthOf = std::conditional_t<std::is_same_v<Real, float>, double, long double>;

constexpr SumOrder kShadowOrders[] = {SumOrder::index, SumOrder::reversed};

// The state one rounding away: every coordinate moved by one ulp, up or down by a fixed pattern.
// Its shadow samples how far this input carries a rounding of the positions (a variant that
// rescales or recentres positions, or any step after the first, rounds them).
template <class Real>
BodiesT<Real> nudged(BodiesT<Real> b) {
    for (int axis = 0; axis < b.dim; ++axis)
        for (std::size_t i = 0; i < b.size(); ++i) {
            Real& p = b.position(axis)[i];
            const bool up = ((i * 3 + static_cast<std::size_t>(axis)) * 0x9E3779B97F4A7C15ULL >> 63) != 0;
            p = std::nextafter(p, up ? std::numeric_limits<Real>::infinity() : -std::numeric_limits<Real>::infinity());
        }
    return b;
}

// The rounding scale of one quantity from its truth (per axis, `count` values each) and the
// shadows' values of it (each per axis, the same layout).
template <class Shadow>
ReferenceSolution::RoundingScale rounding_scale(const std::vector<const std::vector<long double>*>& truth,
                                                const std::vector<std::vector<const std::vector<Shadow>*>>& shadows,
                                                double epsilon) {
    ReferenceSolution::RoundingScale scale;
    double sum_sq = 0, largest_value = 0, largest_error = 0;
    std::size_t values = 0;
    for (std::size_t axis = 0; axis < truth.size(); ++axis) {
        const auto& t = *truth[axis];
        auto& errors = scale.shadow_error.emplace_back(t.size(), 0.0);
        for (std::size_t i = 0; i < t.size(); ++i) {
            for (const auto& shadow : shadows)
                errors[i] = std::max(errors[i], std::abs(static_cast<double>(static_cast<long double>((*shadow[axis])[i]) - t[i])));
            sum_sq += errors[i] * errors[i];
            largest_error = std::max(largest_error, errors[i]);
            largest_value = std::max(largest_value, std::abs(static_cast<double>(t[i])));
        }
        values += t.size();
    }
    scale.floor = values == 0 ? 0 : std::sqrt(sum_sq / static_cast<double>(values));
    scale.largest_error = largest_error;
    scale.largest_value = largest_value;
    scale.amplification = largest_value > 0 ? largest_error / (epsilon * largest_value) : 0;
    return scale;
}

template <class B>
std::vector<const std::vector<typename B::real_type>*> positions_of(const B& b) {
    std::vector<const std::vector<typename B::real_type>*> out;
    for (int axis = 0; axis < b.dim; ++axis) out.push_back(&b.position(axis));
    return out;
}
template <class B>
std::vector<const std::vector<typename B::real_type>*> velocities_of(const B& b) {
    std::vector<const std::vector<typename B::real_type>*> out;
    for (int axis = 0; axis < b.dim; ++axis) out.push_back(&b.velocity(axis));
    return out;
}

}  // namespace

const char* to_string(CheckKind kind) { return kind == CheckKind::full ? "full" : "sampled"; }
const char* to_string(Verdict verdict) {
    return verdict == Verdict::pass ? "pass" : verdict == Verdict::fail ? "fail" : "inconclusive";
}
const char* to_string(LimitSource source) { return source == LimitSource::rounding ? "rounding" : "absolute"; }

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
    epsilon_ = std::numeric_limits<Real>::epsilon();
    BodiesT<T> state = BodiesT<T>::converted_from(initial);
    if (n_ <= settings.full_reference_max_n) {
        kind_ = CheckKind::full;
        std::vector<BodiesT<Real>> shadows(std::size(kShadowOrders), initial);
        shadows.push_back(nudged(initial));  // summed in index order
        int done = 0;
        // Reported step by step under Euler; a leapfrog call starts with a force evaluation, so
        // leapfrog advances to each step count at once (reported there).
        const bool step_by_step = on_step && integrator == Integrator::euler;
        for (int k : steps_) {
            for (std::size_t s = 0; s < shadows.size(); ++s)
                reference_advance(shadows[s], constants, integrator, k - done, s < std::size(kShadowOrders) ? kShadowOrders[s] : SumOrder::index);
            for (; step_by_step && done + 1 < k; ++done) {
                reference_advance(state, constants, integrator, 1);
                on_step(done + 1, steps_.back());
            }
            reference_advance(state, constants, integrator, k - done);
            done = k;
            if (on_step) on_step(done, steps_.back());
            const Truth& truth = states_.emplace(k, Truth::converted_from(state)).first->second;
            std::vector<std::vector<const std::vector<Real>*>> shadow_positions, shadow_velocities;
            for (const auto& shadow : shadows) {
                shadow_positions.push_back(positions_of(shadow));
                shadow_velocities.push_back(velocities_of(shadow));
            }
            position_scale_[k] = rounding_scale(positions_of(truth), shadow_positions, epsilon_);
            velocity_scale_[k] = rounding_scale(velocities_of(truth), shadow_velocities, epsilon_);
        }
        return;
    }
    kind_ = CheckKind::sampled;
    sample_ = sample_bodies(n_, settings.sample_bodies);
    const T G = static_cast<T>(constants.G), dt = static_cast<T>(constants.dt);
    // The shadow in the workload's precision, taken through the same stages.
    BodiesT<Real> shadow = initial;
    const Real shadow_dt = static_cast<Real>(constants.dt);
    if (needs_initial_pull(integrator)) {
        // The drift needs every body's half-kicked velocity: one O(N^2) evaluation (and one in Real
        // for the shadow's positions).
        std::vector<std::vector<T>> pull;
        host_pulls(state, static_cast<T>(constants.eps2()), pull, true);
        host_advance_before_force(state, pull, integrator, G, dt);
        std::vector<std::vector<Real>> shadow_pull;
        host_pulls(shadow, static_cast<Real>(constants.eps2()), shadow_pull, true);
        host_advance_before_force(shadow, shadow_pull, integrator, static_cast<Real>(constants.G), shadow_dt);
    }
    // Velocities: v + dt*a (Euler, at the start positions) or v_half + dt/2*a (leapfrog, at the
    // drifted positions); then the positions of the one step (Euler's drift with the old velocity).
    const auto acceleration = reference_accelerations(state, constants, sample_);
    const T kick = integrator == Integrator::leapfrog ? dt * T(0.5) : dt;
    const Real shadow_kick = integrator == Integrator::leapfrog ? shadow_dt * Real(0.5) : shadow_dt;
    sample_velocity_.assign(static_cast<std::size_t>(dim_), std::vector<long double>(sample_.size()));
    for (int axis = 0; axis < dim_; ++axis)
        for (std::size_t k = 0; k < sample_.size(); ++k)
            sample_velocity_[axis][k] = state.velocity(axis)[sample_[k]] + kick * acceleration[axis][k];
    // The sample's velocities in Real, the accelerations summed in both orders, and in index order
    // from the positions one rounding away.
    std::vector<std::vector<std::vector<Real>>> shadow_velocity;  // [shadow][axis][k]
    const BodiesT<Real> shadow_nudged = nudged(shadow);
    for (std::size_t s = 0; s <= std::size(kShadowOrders); ++s) {
        const bool nudge = s == std::size(kShadowOrders);
        const auto a = reference_accelerations(nudge ? shadow_nudged : shadow, constants, sample_,
                                               nudge ? SumOrder::index : kShadowOrders[s]);
        auto& v = shadow_velocity.emplace_back(static_cast<std::size_t>(dim_), std::vector<Real>(sample_.size()));
        for (int axis = 0; axis < dim_; ++axis)
            for (std::size_t k = 0; k < sample_.size(); ++k)
                v[axis][k] = shadow.velocity(axis)[sample_[k]] + shadow_kick * a[axis][k];
    }
    if (integrator == Integrator::euler) {
        for (int axis = 0; axis < dim_; ++axis)
            for (std::size_t i = 0; i < n_; ++i) state.position(axis)[i] += dt * state.velocity(axis)[i];
        for (int axis = 0; axis < dim_; ++axis)
            for (std::size_t i = 0; i < n_; ++i) shadow.position(axis)[i] += shadow_dt * shadow.velocity(axis)[i];
    }
    const Truth& truth = states_.emplace(1, Truth::converted_from(state)).first->second;
    position_scale_[1] = rounding_scale(positions_of(truth), std::vector<std::vector<const std::vector<Real>*>>{positions_of(shadow)}, epsilon_);
    std::vector<const std::vector<long double>*> truth_velocity;
    for (const auto& axis : sample_velocity_) truth_velocity.push_back(&axis);
    std::vector<std::vector<const std::vector<Real>*>> shadow_velocities;
    for (const auto& order : shadow_velocity) {
        auto& axes = shadow_velocities.emplace_back();
        for (const auto& axis : order) axes.push_back(&axis);
    }
    velocity_scale_[1] = rounding_scale(truth_velocity, shadow_velocities, epsilon_);
    if constexpr (std::is_same_v<Real, float>) {
        for (int axis = 0; axis < dim_; ++axis)
            for (std::size_t k = 0; k < sample_.size(); ++k)
                raise_to(float32_sum_vel_err_, std::abs(static_cast<double>(static_cast<long double>(shadow_velocity[0][axis][k]) -
                                                                             sample_velocity_[axis][k])));
    }
}

namespace {

// The truth a state is held to: every position, and the velocities of every body (`sample` null)
// or of the sampled bodies.
struct TruthView {
    const BodiesT<long double>& state;
    const std::vector<std::size_t>* sample = nullptr;
    const std::vector<std::vector<long double>>* sample_velocity = nullptr;  // [axis][k]
};

// What a check holds the errors to: the rounding rule (scales given) unless an absolute limit is.
struct Limits {
    std::optional<double> max_pos_err, max_rms_pos_err, max_vel_err, max_map_diff;
    const ReferenceSolution::RoundingScale* position_scale = nullptr;
    const ReferenceSolution::RoundingScale* velocity_scale = nullptr;
    double epsilon = 0;
};

// Running worst ratio of error to rounding scale (NaN sticks).
struct Worst {
    double multiple = 0, limit = 0;
    void add(double error, double scale) {
        const double multiple_here = scale > 0 ? error / scale : error == 0 ? 0 : std::numeric_limits<double>::infinity();
        if (std::isnan(multiple_here) || multiple_here > multiple) {
            if (std::isnan(multiple)) return;
            multiple = multiple_here;
            limit = kRoundingMultiple * scale;
        }
    }
};

double scale_of(const ReferenceSolution::RoundingScale& s, int axis, std::size_t i, long double value, double epsilon) {
    return std::max(s.shadow_error[static_cast<std::size_t>(axis)][i], s.floor) +
           kValueUlps * epsilon * std::abs(static_cast<double>(value));
}

CheckResult check_against(int steps, CheckKind kind, const TruthView& truth_view, const HostState& got_state,
                          const std::vector<float>& map, int d, const Limits& limits) {
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
    Worst worst_pos, worst_vel;
    const bool by_rounding = limits.position_scale != nullptr;
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
                    if (by_rounding) worst_pos.add(std::abs(error), scale_of(*limits.position_scale, axis, i, q[i], limits.epsilon));
                }
            }
            e.rms_pos_err = std::sqrt(sum_sq / static_cast<double>(static_cast<std::size_t>(dim) * n));
            for (int axis = 0; axis < dim; ++axis) {
                const auto& v = got.velocity(axis);
                const std::size_t count = truth_view.sample == nullptr ? n : truth_view.sample->size();
                for (std::size_t k = 0; k < count; ++k) {
                    const std::size_t i = truth_view.sample == nullptr ? k : (*truth_view.sample)[k];
                    const long double expected =
                        truth_view.sample == nullptr ? truth.velocity(axis)[i] : (*truth_view.sample_velocity)[axis][k];
                    const double error = std::abs(static_cast<double>(static_cast<long double>(v[i]) - expected));
                    raise_to(e.max_vel_err, error);
                    if (by_rounding) worst_vel.add(error, scale_of(*limits.velocity_scale, axis, k, expected, limits.epsilon));
                }
            }
            // The map is held to the variant's own positions (each body in its own cell, within the
            // rounding of p * D): its positions are held to the truth above, and an input that amplifies
            // rounding may move a correct body by cells, which no tolerance around the truth could place.
            check_map_counts<Real>(map, got, d, 0.0, e);
        },
        got_state);

    auto add_failure = [&](const std::string& text) { result.failure += (result.failure.empty() ? "" : ", ") + text; };
    bool only_rounding_failures = true;  // what INCONCLUSIVE may excuse
    // Within the rule's multiple of the shadows' largest error anywhere (plus the ulps of the largest value).
    const auto within_spread = [&](double error, const ReferenceSolution::RoundingScale* s) {
        return s != nullptr &&
               within(error, kRoundingMultiple * (s->largest_error + kValueUlps * limits.epsilon * s->largest_value));
    };
    // One quantity: its user limit where given, else the rounding rule.
    const auto judge = [&](const char* name, const char* quantity, double error, const std::optional<double>& absolute,
                           const Worst& worst, double& multiple_out, double& limit_out, LimitSource& source) {
        if (by_rounding) multiple_out = worst.multiple;
        if (absolute || !by_rounding) {
            source = LimitSource::absolute;
            limit_out = absolute.value_or(0);
            if (!within(error, limit_out)) {
                add_failure(fmt::format("{} {:.3g} > {:.3g}", name, error, limit_out));
                only_rounding_failures = false;
            }
            return;
        }
        source = LimitSource::rounding;
        limit_out = worst.limit;
        if (!within(worst.multiple, kRoundingMultiple)) {
            add_failure(fmt::format("{} {:.3g}x rounding > {:g}x ({} {:.3g} > {:.3g})", quantity, worst.multiple,
                                    kRoundingMultiple, name, error, worst.limit));
            only_rounding_failures &= within_spread(error, quantity[0] == 'p' ? limits.position_scale : limits.velocity_scale);
        }
    };
    judge("max_pos_err", "positions", e.max_pos_err, limits.max_pos_err, worst_pos, e.pos_rounding_multiple, e.pos_err_limit,
          result.pos_limit_source);
    judge("max_vel_err", "velocities", e.max_vel_err, limits.max_vel_err, worst_vel, e.vel_rounding_multiple, e.vel_err_limit,
          result.vel_limit_source);
    if (limits.max_rms_pos_err && !within(e.rms_pos_err, *limits.max_rms_pos_err)) {
        add_failure(fmt::format("rms_pos_err {:.3g} > {:.3g}", e.rms_pos_err, *limits.max_rms_pos_err));
        only_rounding_failures = false;
    }
    if (limits.max_map_diff) {  // the lax mode
        if (!within(e.map_diff, *limits.max_map_diff)) {
            add_failure(fmt::format("map_diff {:.3g} > {:.3g}", e.map_diff, *limits.max_map_diff));
            only_rounding_failures = false;
        }
    } else if (e.map_unexplained_counts != 0) {
        add_failure(fmt::format("map: {} counts unexplained ({} bodies within {:.2g} of a cell edge)",
                                e.map_unexplained_counts, e.map_ambiguous_bodies, e.map_tolerance));
        only_rounding_failures = false;
    }
    if (by_rounding) {
        e.pos_shadow_err = limits.position_scale->largest_error;
        e.vel_shadow_err = limits.velocity_scale->largest_error;
        e.rounding_amplification = std::max(limits.position_scale->amplification, limits.velocity_scale->amplification);
    }
    if (result.failure.empty()) {
        result.verdict = Verdict::pass;
    } else if (by_rounding && steps > 1 && only_rounding_failures && e.rounding_amplification > kInconclusiveAmplification) {
        result.verdict = Verdict::inconclusive;
        result.failure = fmt::format("rounding amplified {:.2g}x by this input after {} steps; {}", e.rounding_amplification,
                                     steps, result.failure);
    } else {
        result.verdict = Verdict::fail;
    }
    result.passed = result.verdict == Verdict::pass;
    return result;
}

}  // namespace

CheckResult ReferenceSolution::check(int steps, const HostState& got_state, const std::vector<float>& map, int d,
                                     const ThresholdOverrides& overrides) const {
    const auto it = states_.find(steps);
    if (it == states_.end()) throw std::logic_error(fmt::format("no reference after {} steps", steps));
    if (state_precision(got_state) != precision_ || state_dim(got_state) != dim_)
        throw std::logic_error("variant returned a state of another workload than the reference's");
    const TruthView truth = kind_ == CheckKind::full ? TruthView{it->second} : TruthView{it->second, &sample_, &sample_velocity_};
    const Limits limits{.max_pos_err = overrides.max_pos_err,
                        .max_rms_pos_err = overrides.max_rms_pos_err,
                        .max_vel_err = overrides.max_vel_err,
                        .max_map_diff = overrides.max_map_diff,
                        .position_scale = &position_scale_.at(steps),
                        .velocity_scale = &velocity_scale_.at(steps),
                        .epsilon = epsilon_};
    CheckResult result = check_against(steps, kind_, truth, got_state, map, d, limits);
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
    return check_against(steps, CheckKind::full, TruthView{truth}, got, map, d,
                         Limits{.max_pos_err = limits.max_pos_err,
                                .max_rms_pos_err = limits.max_rms_pos_err,
                                .max_vel_err = limits.max_vel_err,
                                .max_map_diff = limits.max_map_diff});
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
                                           const ReferenceSolution& reference, int d, const ThresholdOverrides& overrides,
                                           const StepProgressHook& progress, const Distribution& distribution) {
    std::vector<CheckResult> results;
    for (const Snapshot& s : snapshots_at(simulation, initial, reference.steps(), distribution, progress))
        results.push_back(reference.check(s.steps, s.state, s.map, d, overrides));
    return results;
}

}  // namespace nbody
