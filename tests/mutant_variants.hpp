#pragma once
// Test-only variants that plant a known bug (compiled into tests only: nbody-bench never lists
// them). Each is the serial algorithm of the serial model with one mutation, so that a test can require the
// verifier to catch that bug at its default thresholds:
// - in_place_race: each body is pulled and integrated in turn, in place, so later bodies read
//   positions already advanced this step (Euler moves positions after the force);
// - velocity_first: Euler's kick before its drift (the drift then uses the new velocity);
// - dropped_j_tile: the pull sums skip the bodies of the second j tile (64 bodies);
// - no_force: every pull is zero (a kernel that computes nothing);
// - wrong_sign: every pull points away from the other body;
// - missing_mass: the pulls leave out the mass of the pulling body (m_j taken as 1);
// - skipped_body: the pull sums skip body N/2;
// - wrong_softening: eps used where eps^2 belongs;
// - off_by_one_j: the loop over j stops before the last body;
// - float32_stage: float64 workloads sum the pulls in float32 (float32 workloads: unchanged);
// - lost_map_update: one body's count is lost from the map (a lost atomic update);
// - none: the control, which must pass.
// `two_d_only` registers a correct variant that declares only the canonical workload, for the
// "workload not supported" refusal.
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "nbody/reference.hpp"
#include "nbody/registry.hpp"

namespace nbody::testing {

enum class Mutation {
    none,
    in_place_race,
    velocity_first,
    dropped_j_tile,
    no_force,
    wrong_sign,
    missing_mass,
    skipped_body,
    wrong_softening,
    off_by_one_j,
    float32_stage,
    lost_map_update,
};

template <class Real, int Dim>
class MutantSimulation final : public SimulationOf<Real> {
public:
    static constexpr std::size_t kTile = 64;

    MutantSimulation(const Problem& problem, Mutation mutation) : problem_(problem), mutation_(mutation) {}

    void upload(const BodiesT<Real>& initial) override {
        bodies_ = initial;
        pull_.assign(initial.size(), Vec<Real, Dim>{});
        if (needs_initial_pull(problem_.workload.integrator))
            for (std::size_t i = 0; i < bodies_.size(); ++i) pull_[i] = pull_on(i);
    }
    void advance(int steps) override {
        for (int s = 0; s < steps; ++s) step();
    }
    void download(BodiesT<Real>& state, std::vector<float>& map) override {
        state = bodies_;
        auto counts = host_cell_counts(bodies_, problem_.d);
        if (mutation_ == Mutation::lost_map_update)
            for (auto& count : counts)
                if (count > 0) {
                    --count;
                    break;
                }
        map = normalised_map(counts, bodies_.size(), problem_.d);
    }

private:
    Vec<Real, Dim> pull_on(std::size_t i) const {
        if (mutation_ == Mutation::float32_stage && !std::is_same_v<Real, float>) {
            // The same sum in float32, widened.
            const Vec<float, Dim> narrow = summed_pull<float>(i);
            Vec<Real, Dim> sum;
            for (int k = 0; k < Dim; ++k) sum[k] = narrow[k];
            return sum;
        }
        return summed_pull<Real>(i);
    }

    template <class Sum>
    Vec<Sum, Dim> summed_pull(std::size_t i) const {
        Vec<Sum, Dim> sum{};
        if (mutation_ == Mutation::no_force) return sum;
        const double softening = problem_.constants.softening;
        const auto eps2 = static_cast<Sum>(mutation_ == Mutation::wrong_softening ? softening : softening * softening);
        const auto position = [this](std::size_t j) {
            Vec<Sum, Dim> p;
            for (int k = 0; k < Dim; ++k) p[k] = static_cast<Sum>(bodies_.position(k)[j]);
            return p;
        };
        const Vec<Sum, Dim> pi = position(i);
        const std::size_t n = bodies_.size();
        const std::size_t end = mutation_ == Mutation::off_by_one_j ? n - 1 : n;
        for (std::size_t j = 0; j < end; ++j) {
            if (mutation_ == Mutation::dropped_j_tile && j >= kTile && j < 2 * kTile) continue;
            if (mutation_ == Mutation::skipped_body && j == n / 2) continue;
            const Sum mass = mutation_ == Mutation::missing_mass ? Sum(1) : static_cast<Sum>(bodies_.m[j]);
            accumulate_pull(pi, position(j), mass, eps2, sum, ExactInvSqrt{});
        }
        if (mutation_ == Mutation::wrong_sign)
            for (int k = 0; k < Dim; ++k) sum[k] = -sum[k];
        return sum;
    }

    // Body i's half of the step around the force, through its own copies of p and v.
    template <class Half>
    void update(std::size_t i, Half half) {
        Vec<Real, Dim> p = position_of<Dim>(bodies_, i), v;
        for (int k = 0; k < Dim; ++k) v[k] = bodies_.velocity(k)[i];
        half(p, v);
        for (int k = 0; k < Dim; ++k) {
            bodies_.position(k)[i] = p[k];
            bodies_.velocity(k)[i] = v[k];
        }
    }

    void step() {
        const Integrator integrator = problem_.workload.integrator;
        const auto G = static_cast<Real>(problem_.constants.G), dt = static_cast<Real>(problem_.constants.dt);
        const std::size_t n = bodies_.size();
        for (std::size_t i = 0; i < n; ++i)
            update(i, [&](auto& p, auto& v) { advance_before_force(integrator, p, v, pull_[i], G, dt); });
        const auto after_force = [&](std::size_t i) {
            update(i, [&](auto& p, auto& v) {
                if (mutation_ == Mutation::velocity_first && integrator == Integrator::euler) {
                    for (int k = 0; k < Dim; ++k) v[k] += dt * (G * pull_[i][k]);
                    for (int k = 0; k < Dim; ++k) p[k] += dt * v[k];
                } else {
                    advance_after_force(integrator, p, v, pull_[i], G, dt);
                }
            });
        };
        if (mutation_ == Mutation::in_place_race) {
            for (std::size_t i = 0; i < n; ++i) {
                pull_[i] = pull_on(i);
                after_force(i);
            }
            return;
        }
        for (std::size_t i = 0; i < n; ++i) pull_[i] = pull_on(i);
        for (std::size_t i = 0; i < n; ++i) after_force(i);
    }

    Problem problem_;
    Mutation mutation_;
    BodiesT<Real> bodies_;
    std::vector<Vec<Real, Dim>> pull_;
};

inline std::unique_ptr<Simulation> create_mutant(const Problem& problem, Mutation mutation) {
    const Workload& w = problem.workload;
    if (w.precision == Precision::fp32) {
        if (w.dim == 3) return std::make_unique<MutantSimulation<float, 3>>(problem, mutation);
        return std::make_unique<MutantSimulation<float, 2>>(problem, mutation);
    }
    if (w.dim == 3) return std::make_unique<MutantSimulation<double, 3>>(problem, mutation);
    return std::make_unique<MutantSimulation<double, 2>>(problem, mutation);
}

struct MutantEntry {
    const char* id;
    Mutation mutation;
};
inline const MutantEntry kMutants[] = {
    {"mutant.in_place_race", Mutation::in_place_race},
    {"mutant.velocity_first", Mutation::velocity_first},
    {"mutant.dropped_j_tile", Mutation::dropped_j_tile},
    {"mutant.no_force", Mutation::no_force},
    {"mutant.wrong_sign", Mutation::wrong_sign},
    {"mutant.missing_mass", Mutation::missing_mass},
    {"mutant.skipped_body", Mutation::skipped_body},
    {"mutant.wrong_softening", Mutation::wrong_softening},
    {"mutant.off_by_one_j", Mutation::off_by_one_j},
    {"mutant.float32_stage", Mutation::float32_stage},
    {"mutant.lost_map_update", Mutation::lost_map_update},
};

// A descriptor of the mutated serial algorithm (every workload, always available).
inline VariantDescriptor mutant_descriptor(std::string id, Mutation mutation) {
    return {.id = std::move(id),
            .backend = "mutant",
            .execution_space = "host",
            .description = "test-only: the serial algorithm with a planted bug",
            .tunings = {},
            .max_n = 0,
            .runs_on_gpu = false,
            .distributed = false,
            .workloads = WorkloadSupport::every(),
            .availability = [] { return Availability{}; },
            .create = [mutation](const Problem& problem, const TuningValues&) { return create_mutant(problem, mutation); }};
}

// A correct variant that runs only the canonical workload (2D, float32, Euler).
inline VariantDescriptor two_d_only_descriptor() {
    VariantDescriptor d = mutant_descriptor("testonly.two_d_only", Mutation::none);
    d.backend = "testonly";
    d.description = "test-only: the serial algorithm, declaring the canonical workload only";
    d.workloads = WorkloadSupport{};
    return d;
}

}  // namespace nbody::testing
