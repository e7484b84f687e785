#include "omp_simulation.hpp"

#include <omp.h>

#include <string>

#include "nbody/errors.hpp"

namespace nbody::omp {

namespace {

// map=private refuses sizes whose per-thread copies alone would exhaust a workstation's memory.
constexpr std::size_t kMaxPrivateMapBytes = std::size_t{4} << 30;
constexpr std::size_t kCountsPerCacheLine = 64 / sizeof(std::int32_t);

MapStrategy pick_map_strategy(const std::string& choice, std::size_t cells, int threads) {
    const std::size_t private_bytes = cells * sizeof(std::int32_t) * static_cast<std::size_t>(threads);
    if (choice == "atomic") return MapStrategy::atomic_counts;
    if (choice == "incremental") return MapStrategy::incremental;
    if (choice == "private") {
        if (private_bytes > kMaxPrivateMapBytes)
            throw UsageError("tuning map=private needs " + std::to_string(private_bytes >> 20) +
                             " MiB of per-thread histograms at this D and thread count; use map=atomic");
        return MapStrategy::private_histograms;
    }
    // auto: incremental, as fast as the recounts at small D and faster from D ~ 300 (measured in
    // docs/performance-openmp.md, "Small N and large D").
    return MapStrategy::incremental;
}

// One body's integrator half: `advance(position, velocity, pull)` on its loaded axes, stored back.
template <class Axes, class Advance>
inline void advance_body(const Axes& axes, std::int64_t i, Advance advance) {
    auto pi = load_axes(axes.position, i), vi = load_axes(axes.velocity, i);
    advance(pi, vi, load_axes(axes.pull, i));
    store_axes(axes.position, i, pi);
    store_axes(axes.velocity, i, vi);
}

}  // namespace

void require_single_rank(const Problem& problem, const std::string& id, Ranks ranks) {
    if (ranks == Ranks::one && problem.distribution.spans_ranks())
        throw UsageError(id + " runs on one rank only, asked for " + std::to_string(problem.distribution.ranks()));
}

std::vector<TuningParameter> common_tunings() {
    const int procs = omp_get_num_procs();
    return {
        {.name = "threads",
         .description = "OpenMP threads",
         .default_value = std::to_string(procs),
         .allowed_values = {},
         .min_value = 1,
         .max_value = procs,
         .values_elsewhere = {},
         .larger_elsewhere = true},
        {.name = "map",
         .description = "activity-map counting: per-thread histograms merged, shared atomic counts "
                        "(both recount every cell each step), incremental (counts and each body's cell "
                        "kept, only the cells that changed rewritten), or auto (incremental)",
         .default_value = "auto",
         .allowed_values = {"auto", "private", "atomic", "incremental"},
         .min_value = 0,
         .max_value = 0},
    };
}

template <class Real>
OmpSimulation<Real>::OmpSimulation(const Problem& problem, const TuningValues& tuning)
    : problem_(problem),
      decomposition_(decomposition_of(problem)),
      owned_(decomposition_.block(problem.distribution.rank())),
      threads_(static_cast<int>(tuning_int(tuning, "threads"))),
      map_strategy_(pick_map_strategy(tuning.at("map"), static_cast<std::size_t>(problem.d) * problem.d, threads_)),
      map_(static_cast<std::size_t>(problem.d) * problem.d) {
    for (int k = 0; k < problem.workload.dim; ++k) pull_[k].assign(problem.n, Real(0));
    const std::size_t cells = map_.size();
    if (map_strategy_ == MapStrategy::private_histograms) {
        count_stride_ = (cells + kCountsPerCacheLine - 1) / kCountsPerCacheLine * kCountsPerCacheLine;
        counts_.assign(count_stride_ * static_cast<std::size_t>(threads_), 0);
    } else if (map_strategy_ == MapStrategy::atomic_counts) {
        counts_.assign(cells, 0);
    } else {
        changed_cells_.resize(static_cast<std::size_t>(threads_));
    }
}

template <class Real>
void OmpSimulation<Real>::upload(const BodiesT<Real>& initial) {
    bodies_ = initial;
    const bool incremental = map_strategy_ == MapStrategy::incremental;
    if (incremental) {
        incremental_counts_.emplace(problem_.n, problem_.d);
        incremental_counts_->recount(bodies_.x.data(), bodies_.y.data(), map_.data());
    }
#pragma omp parallel num_threads(threads_)
    {
        if (needs_initial_pull(problem_.workload.integrator)) compute_pulls(pull_);
        if (!incremental) {
            if (dim() == 3)
                advance_after_force_and_map<3>(false);
            else
                advance_after_force_and_map<2>(false);
        }
    }
}

template <class Real>
void OmpSimulation<Real>::advance(int steps) {
    if (dim() == 3)
        run_steps<3>(steps);
    else
        run_steps<2>(steps);
}

template <class Real>
void OmpSimulation<Real>::download(BodiesT<Real>& state, std::vector<float>& activity_map) {
    state = bodies_;
    activity_map = map_;
}

template <class Real>
template <int Dim>
void OmpSimulation<Real>::run_steps(int steps) {
    // Where the step's drift is, the positions are gathered (communicator.hpp's step).
    const bool spans_ranks = problem_.distribution.spans_ranks();
    const bool drift_before_force = problem_.workload.integrator == Integrator::leapfrog;
#pragma omp parallel num_threads(threads_)
    for (int s = 0; s < steps; ++s) {
        if (drift_before_force) advance_owned<Dim>([](auto&&... a) { advance_before_force(a...); });  // Euler: nothing
        if (spans_ranks && drift_before_force) gather_positions();
        compute_pulls(pull_);
        if (spans_ranks) {
            // The map needs every rank's drift first: the integration alone, the gather, then the map.
            advance_owned<Dim>([](auto&&... a) { advance_after_force(a...); });
            if (!drift_before_force) gather_positions();
            advance_after_force_and_map<Dim>(false);
        } else {
            advance_after_force_and_map<Dim>(true);
        }
    }
}

template <class Real>
void OmpSimulation<Real>::gather_positions() {
    // The loops before end with their barrier: the owned block is final here.
#pragma omp master
    for (int k = 0; k < dim(); ++k)
        problem_.distribution.host->allgather_in_place(std::span<Real>(bodies_.position(k)), decomposition_);
#pragma omp barrier
}

template <class Real>
template <int Dim, class Half>
void OmpSimulation<Real>::advance_owned(Half half) {
    const Integrator integrator = problem_.workload.integrator;
    const auto first = static_cast<std::int64_t>(owned_.first), last = first + static_cast<std::int64_t>(owned_.count);
    const Real G = static_cast<Real>(problem_.constants.G);
    const Real dt = static_cast<Real>(problem_.constants.dt);
    const AxisPointers<Dim> axes = axis_pointers<Dim>();
#pragma omp for schedule(static)
    for (std::int64_t i = first; i < last; ++i)
        advance_body(axes, i, [&](auto& pi, auto& vi, const auto& ai) { half(integrator, pi, vi, ai, G, dt); });
}

template <class Real>
template <int Dim>
typename OmpSimulation<Real>::template AxisPointers<Dim> OmpSimulation<Real>::axis_pointers() {
    AxisPointers<Dim> out;
    for (int k = 0; k < Dim; ++k) {
        out.position[k] = bodies_.position(k).data();
        out.velocity[k] = bodies_.velocity(k).data();
        out.pull[k] = pull_[k].data();
    }
    return out;
}

template <class Real>
template <int Dim>
void OmpSimulation<Real>::advance_after_force_and_map(bool integrate) {
    const Integrator integrator = problem_.workload.integrator;
    const auto n = static_cast<std::int64_t>(bodies_.size());
    const auto cells = static_cast<std::int64_t>(map_.size());
    const int d = problem_.d;
    const Real G = static_cast<Real>(problem_.constants.G);
    const Real dt = static_cast<Real>(problem_.constants.dt);
    const float scale = activity_scale(bodies_.size(), d);
    const bool use_private = map_strategy_ == MapStrategy::private_histograms;
    const bool incremental = map_strategy_ == MapStrategy::incremental;
    // Named references, not a structured binding: Clang 16 crashes on a binding used in an OpenMP loop.
    const AxisPointers<Dim> axes = axis_pointers<Dim>();
    const auto& p = axes.position;
    std::int32_t* counts = counts_.data();
    const auto thread = static_cast<std::size_t>(omp_get_thread_num());

    // Private: this thread's histogram, zeroed here (the previous merge is behind a barrier).
    std::int32_t* mine = counts;
    if (use_private) {
        mine = counts + thread * count_stride_;
        for (std::int64_t c = 0; c < cells; ++c) mine[c] = 0;
    }
    std::vector<int>* changed = incremental ? &changed_cells_[thread].cells : nullptr;
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {
        if (integrate)
            advance_body(axes, i, [&](auto& pi, auto& vi, const auto& ai) { advance_after_force(integrator, pi, vi, ai, G, dt); });
        if (incremental) {
            incremental_counts_->update(static_cast<std::size_t>(i), p[0][i], p[1][i], *changed);
            continue;
        }
        const int cell = activity_cell(p[0][i], p[1][i], d);
        if (cell < 0) continue;
        if (use_private) {
            ++mine[cell];
        } else {
#pragma omp atomic update
            ++mine[cell];
        }
    }
    if (incremental) {
        // Every count of the step is final (the loop's barrier). The next step's updates come
        // after compute_pulls' barrier, so no barrier is needed after the rewrite.
        incremental_counts_->rewrite(*changed, map_.data());
        changed->clear();
        return;
    }
    // Merge in a fixed thread order; atomic counts are cleared for the next step here.
#pragma omp for schedule(static)
    for (std::int64_t c = 0; c < cells; ++c) {
        std::int64_t count = 0;
        if (use_private) {
            for (int t = 0; t < threads_; ++t) count += counts[static_cast<std::size_t>(t) * count_stride_ + c];
        } else {
            count = counts[c];
            counts[c] = 0;
        }
        map_[c] = static_cast<float>(count) * scale;
    }
}

template class OmpSimulation<float>;
template class OmpSimulation<double>;

}  // namespace nbody::omp
