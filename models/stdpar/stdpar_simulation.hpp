#pragma once
// What the stdpar variants share: a Simulation, templated on the workload's precision and dimension
// (workload_dispatch.hpp's make_for_workload picks them once), that keeps the state on the host
// (structure of arrays) and runs every per-body and per-cell loop as a C++17 parallel algorithm
// (libstdc++'s parallel algorithms on its TBB backend). A variant supplies only its pull
// computation. One step: advance_before_force (leapfrog), the pulls, advance_after_force, then the
// activity map: each body's cell in parallel, counted with std::atomic_ref under `par`
// (an atomic is not allowed under par_unseq, whose iterations may interleave on one thread), and
// the counts normalised as the reference does (count * activity_scale, float32). The algorithms run
// in the arena of tbb_start_arena.hpp: on the CPUs the process started on, whatever OpenMP's
// binding variables did to the main thread.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <execution>
#include <memory>
#include <string>
#include <vector>

#include "index_iterator.hpp"
#include "nbody/errors.hpp"
#include "nbody/registry.hpp"
#include "nbody/tbb_start_arena.hpp"
#include "nbody/variant.hpp"
#include "nbody/workload_dispatch.hpp"

namespace nbody::stdpar {

// Per-axis arrays of one body set: pull[k][i].
template <class Real, int Dim>
using AxisPulls = std::array<std::vector<Real>, Dim>;

template <class Real, int Dim>
class StdparSimulation : public SimulationOf<Real> {
public:
    explicit StdparSimulation(const Problem& problem)
        : problem_(problem),
          counts_(static_cast<std::size_t>(problem.d) * static_cast<std::size_t>(problem.d), 0),
          map_(counts_.size(), 0.0f) {
        for (auto& axis : pull_) axis.assign(problem.n, Real(0));
    }

    using SimulationOf<Real>::upload;
    using SimulationOf<Real>::download;

    void upload(const BodiesT<Real>& initial) final {
        bodies_ = initial;
        in_start_affinity_arena([&] {
            if (needs_initial_pull(problem_.workload.integrator)) compute_pulls(pull_);
            update_map();
        });
    }

    void advance(int steps) final {
        in_start_affinity_arena([&] {
            for (int s = 0; s < steps; ++s) step();
        });
    }

    void download(BodiesT<Real>& state, std::vector<float>& activity_map) final {
        state = bodies_;
        activity_map = map_;
    }

protected:
    // Sum of pulls without G (physics.hpp's accumulate_pull) on every body from the positions of
    // bodies(), which stay unchanged during the call; pull[k][i] per axis.
    virtual void compute_pulls(AxisPulls<Real, Dim>& pull) = 0;

    const BodiesT<Real>& bodies() const { return bodies_; }
    Real eps2() const { return static_cast<Real>(problem_.constants.eps2()); }

private:
    void step() {
        const Integrator integrator = problem_.workload.integrator;
        if (integrator == Integrator::leapfrog) advance_all([](auto&&... a) { advance_before_force(a...); });
        compute_pulls(pull_);
        advance_all([](auto&&... a) { advance_after_force(a...); });
        update_map();
    }

    // `half(integrator, position, velocity, pull, G, dt)` (an integrator half of physics.hpp) on every body.
    template <class Half>
    void advance_all(Half half) {
        Real* position[Dim];
        Real* velocity[Dim];
        const Real* pull[Dim];
        for (int k = 0; k < Dim; ++k) {
            position[k] = bodies_.position(k).data();
            velocity[k] = bodies_.velocity(k).data();
            pull[k] = pull_[k].data();
        }
        const Integrator integrator = problem_.workload.integrator;
        const Real G = static_cast<Real>(problem_.constants.G), dt = static_cast<Real>(problem_.constants.dt);
        const Indices bodies(static_cast<std::int64_t>(problem_.n));
        std::for_each(std::execution::par_unseq, bodies.begin(), bodies.end(), [=](std::int64_t i) {
            Vec<Real, Dim> p = load_axes<Dim>(position, i), v = load_axes<Dim>(velocity, i);
            half(integrator, p, v, load_axes<Dim>(pull, i), G, dt);
            store_axes<Dim>(position, i, p);
            store_axes<Dim>(velocity, i, v);
        });
    }

    void update_map() {
        const Real* x = bodies_.x.data();
        const Real* y = bodies_.y.data();
        std::int32_t* counts = counts_.data();
        const int d = problem_.d;
        const Indices bodies(static_cast<std::int64_t>(problem_.n));
        std::for_each(std::execution::par, bodies.begin(), bodies.end(), [=](std::int64_t i) {
            const int cell = activity_cell(x[i], y[i], d);
            if (cell >= 0) std::atomic_ref<std::int32_t>(counts[cell]).fetch_add(1, std::memory_order_relaxed);
        });
        // The algorithm's return orders every count before this pass; it also clears them for the next step.
        const float scale = activity_scale(problem_.n, d);
        float* map = map_.data();
        const Indices cells(static_cast<std::int64_t>(counts_.size()));
        std::for_each(std::execution::par_unseq, cells.begin(), cells.end(), [=](std::int64_t c) {
            map[c] = static_cast<float>(counts[c]) * scale;
            counts[c] = 0;
        });
    }

    Problem problem_;
    BodiesT<Real> bodies_;
    AxisPulls<Real, Dim> pull_;
    std::vector<std::int32_t> counts_;
    std::vector<float> map_;
};

// UsageError when `problem` spans ranks: the stdpar variants run on one process.
inline void require_single_rank(const Problem& problem, const std::string& id) {
    if (problem.distribution.spans_ranks())
        throw UsageError(id + " runs on one rank only, asked for " + std::to_string(problem.distribution.ranks()));
}

// Registers `Variant<Real, Dim>` (a StdparSimulation<Real, Dim> constructed from (Problem,
// TuningValues)) as a CPU variant of the stdpar backend running every workload.
template <template <class, int> class Variant>
void add_stdpar_variant(Registry& registry, std::string id, std::string description, double expected_efficiency,
                        Reproducibility reproducibility, std::vector<TuningParameter> tunings = {}) {
    registry.add({.id = id,
                  .backend = "stdpar",
                  .execution_space = "tbb",
                  .description = std::move(description),
                  .tunings = std::move(tunings),
                  .max_n = 0,
                  .runs_on_gpu = false,
                  .distributed = false,
                  .workloads = WorkloadSupport::every(),
                  .availability = {},
                  .create = [id](const Problem& p, const TuningValues& t) -> std::unique_ptr<Simulation> {
                      require_single_rank(p, id);
                      return make_for_workload<Variant>(p, t);
                  },
                  .expected_efficiency = expected_efficiency,
                  .reproducibility = reproducibility});
}

}  // namespace nbody::stdpar
