#include "omp_simulation.hpp"

#include <omp.h>

#include <string>

#include "nbody/errors.hpp"

namespace nbody::omp {

namespace {

// map=auto picks private histograms while all threads' copies stay this small: they are zeroed
// and merged every step, so their traffic grows with threads x D^2. On 16 threads they tied or
// won up to D = 1000 (64 MiB) and lost 2.5x at D = 3000 (docs/performance-openmp.md).
constexpr std::size_t kAutoPrivateMapBytes = std::size_t{64} << 20;
// map=private refuses sizes whose per-thread copies alone would exhaust a workstation's memory.
constexpr std::size_t kMaxPrivateMapBytes = std::size_t{4} << 30;
constexpr std::size_t kCountsPerCacheLine = 64 / sizeof(std::int32_t);

MapStrategy pick_map_strategy(const std::string& choice, std::size_t cells, int threads) {
    const std::size_t private_bytes = cells * sizeof(std::int32_t) * static_cast<std::size_t>(threads);
    if (choice == "atomic") return MapStrategy::atomic_counts;
    if (choice == "private") {
        if (private_bytes > kMaxPrivateMapBytes)
            throw UsageError("tuning map=private needs " + std::to_string(private_bytes >> 20) +
                             " MiB of per-thread histograms at this D and thread count; use map=atomic");
        return MapStrategy::private_histograms;
    }
    return private_bytes <= kAutoPrivateMapBytes ? MapStrategy::private_histograms : MapStrategy::atomic_counts;
}

}  // namespace

std::vector<TuningParameter> common_tunings() {
    const int procs = omp_get_num_procs();
    return {
        {.name = "threads",
         .description = "OpenMP threads",
         .default_value = std::to_string(procs),
         .allowed_values = {},
         .min_value = 1,
         .max_value = procs},
        {.name = "map",
         .description = "activity-map counting: per-thread histograms merged, shared atomic counts, "
                        "or auto (private while threads x D^2 counts fit in 64 MiB)",
         .default_value = "auto",
         .allowed_values = {"auto", "private", "atomic"},
         .min_value = 0,
         .max_value = 0},
    };
}

OmpSimulation::OmpSimulation(const Problem& problem, const TuningValues& tuning)
    : problem_(problem),
      threads_(static_cast<int>(tuning_int(tuning, "threads"))),
      map_strategy_(pick_map_strategy(tuning.at("map"), static_cast<std::size_t>(problem.d) * problem.d, threads_)),
      ax_(problem.n),
      ay_(problem.n),
      map_(static_cast<std::size_t>(problem.d) * problem.d) {
    const std::size_t cells = map_.size();
    if (map_strategy_ == MapStrategy::private_histograms) {
        count_stride_ = (cells + kCountsPerCacheLine - 1) / kCountsPerCacheLine * kCountsPerCacheLine;
        counts_.assign(count_stride_ * static_cast<std::size_t>(threads_), 0);
    } else {
        counts_.assign(cells, 0);
    }
}

void OmpSimulation::upload(const Bodies& initial) {
    bodies_ = initial;
    integrate_and_map(false);
}

void OmpSimulation::advance(int steps) {
    for (int s = 0; s < steps; ++s) {
        compute_pulls(ax_, ay_);
        integrate_and_map(true);
    }
}

void OmpSimulation::download(Bodies& state, std::vector<float>& activity_map) {
    state = bodies_;
    activity_map = map_;
}

void OmpSimulation::integrate_and_map(bool integrate) {
    const auto n = static_cast<std::int64_t>(bodies_.size());
    const auto cells = static_cast<std::int64_t>(map_.size());
    const int d = problem_.d;
    const float G = static_cast<float>(problem_.constants.G);
    const float dt = static_cast<float>(problem_.constants.dt);
    const float scale = activity_scale(bodies_.size(), d);
    const bool use_private = map_strategy_ == MapStrategy::private_histograms;
    float* x = bodies_.x.data();
    float* y = bodies_.y.data();
    float* vx = bodies_.vx.data();
    float* vy = bodies_.vy.data();
    std::int32_t* counts = counts_.data();

#pragma omp parallel num_threads(threads_)
    {
        // Private: this thread's histogram, zeroed here (the previous merge is behind a barrier).
        std::int32_t* mine = counts;
        if (use_private) {
            mine = counts + static_cast<std::size_t>(omp_get_thread_num()) * count_stride_;
            for (std::int64_t c = 0; c < cells; ++c) mine[c] = 0;
        }
#pragma omp for schedule(static)
        for (std::int64_t i = 0; i < n; ++i) {
            if (integrate) integrate_body(x[i], y[i], vx[i], vy[i], ax_[i], ay_[i], G, dt);
            const int cell = activity_cell(x[i], y[i], d);
            if (cell < 0) continue;
            if (use_private) {
                ++mine[cell];
            } else {
#pragma omp atomic update
                ++mine[cell];
            }
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
}

}  // namespace nbody::omp
