#include "verification.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <set>
#include <stdexcept>

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

// L1 distance, in bodies, between the variant's map (count * D/N per cell) and the reference
// positions' cell counts, / 2N. The reference side is kept as a sorted list of cells (O(N) memory,
// however large D*D is).
double map_difference(const std::vector<float>& map, const BodiesT<double>& reference_positions, std::size_t n, int d) {
    const std::size_t cells = static_cast<std::size_t>(d) * d;
    if (map.size() != cells)
        throw std::runtime_error(fmt::format("activity map has {} cells, expected {}", map.size(), cells));
    std::vector<std::int64_t> truth_cells;
    truth_cells.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        // The cell in the workload's precision (SPEC §1: x * (float)D), as a float32 variant computes it.
        const int cell = activity_cell(static_cast<float>(reference_positions.x[i]),
                                       static_cast<float>(reference_positions.y[i]), d);
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

}  // namespace

const char* to_string(CheckKind kind) { return kind == CheckKind::full ? "full" : "sampled"; }

ReferenceSolution::ReferenceSolution(const Bodies& initial, const PhysicsConstants& constants,
                                     std::vector<int> steps, const VerificationSettings& settings)
    : n_(initial.size()) {
    if (steps.empty()) throw std::logic_error("verification needs at least one step count");
    std::sort(steps.begin(), steps.end());
    steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
    BodiesT<double> state = BodiesT<double>::converted_from(initial);
    if (n_ <= settings.full_reference_max_n) {
        kind_ = CheckKind::full;
        steps_ = steps;
        int done = 0;
        for (int k : steps_) {
            reference_advance(state, constants, Integrator::euler, k - done);
            done = k;
            states_.emplace(k, state);
        }
        return;
    }
    kind_ = CheckKind::sampled;
    steps_ = {1};
    sample_ = sample_bodies(n_, settings.sample_bodies);
    const auto acceleration = reference_accelerations(state, constants, sample_);
    sample_vx_.resize(sample_.size());
    sample_vy_.resize(sample_.size());
    for (std::size_t k = 0; k < sample_.size(); ++k) {
        sample_vx_[k] = state.vx[sample_[k]] + constants.dt * acceleration[0][k];
        sample_vy_[k] = state.vy[sample_[k]] + constants.dt * acceleration[1][k];
    }
    for (std::size_t i = 0; i < n_; ++i) {  // the position update uses the old velocity only
        state.x[i] += constants.dt * state.vx[i];
        state.y[i] += constants.dt * state.vy[i];
    }
    states_.emplace(1, std::move(state));
}

CheckResult ReferenceSolution::check(int steps, const Bodies& got, const std::vector<float>& map, int d,
                                     const Thresholds& limits) const {
    const auto it = states_.find(steps);
    if (it == states_.end()) throw std::logic_error(fmt::format("no reference after {} steps", steps));
    if (got.size() != n_) throw std::runtime_error(fmt::format("variant returned {} bodies, expected {}", got.size(), n_));
    const BodiesT<double>& truth = it->second;

    CheckResult result;
    result.steps = steps;
    result.kind = kind_;
    ErrorMetrics& e = result.errors;
    double sum_sq = 0;
    for (std::size_t i = 0; i < n_; ++i) {
        const double dx = got.x[i] - truth.x[i], dy = got.y[i] - truth.y[i];
        raise_to(e.max_pos_err, std::max(std::abs(dx), std::abs(dy)));
        sum_sq += dx * dx + dy * dy;
    }
    e.rms_pos_err = std::sqrt(sum_sq / static_cast<double>(2 * n_));
    if (kind_ == CheckKind::full) {
        for (std::size_t i = 0; i < n_; ++i)
            raise_to(e.max_vel_err, std::max(std::abs(got.vx[i] - truth.vx[i]), std::abs(got.vy[i] - truth.vy[i])));
    } else {
        for (std::size_t k = 0; k < sample_.size(); ++k) {
            const std::size_t i = sample_[k];
            raise_to(e.max_vel_err, std::max(std::abs(got.vx[i] - sample_vx_[k]), std::abs(got.vy[i] - sample_vy_[k])));
        }
    }
    e.map_diff = map_difference(map, truth, n_, d);

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

std::vector<CheckResult> verify_simulation(Simulation& simulation, const Bodies& initial,
                                           const ReferenceSolution& reference, int d, const Thresholds& limits) {
    std::vector<CheckResult> results;
    simulation.upload(initial);
    Bodies state;
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
