#pragma once
// What the OpenMP variants share: the `threads` and `map` tunings and a Simulation that owns the
// host state, integrates and builds the activity map each step. A variant supplies only its pull
// computation (one file per variant).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nbody/registry.hpp"
#include "nbody/variant.hpp"

namespace nbody::omp {

// How the per-step activity map is counted (the `map` tuning).
enum class MapStrategy {
    private_histograms,  // one D x D count array per thread, merged in a cell-parallel pass
    atomic_counts,       // one shared count array, `omp atomic` increments
};

// The tunings every OpenMP variant has: threads (1..omp_get_num_procs()) and map.
std::vector<TuningParameter> common_tunings();

class OmpSimulation : public Simulation {
public:
    // UsageError when map=private would need more than a few GiB of per-thread histograms.
    OmpSimulation(const Problem& problem, const TuningValues& tuning);

    void upload(const Bodies& initial) final;
    void advance(int steps) final;
    void download(Bodies& state, std::vector<float>& activity_map) final;

protected:
    // Sum of pulls without G (physics.hpp's accumulate_pull) on every body from the positions of
    // bodies(), which stay unchanged during the call (the step's snapshot).
    virtual void compute_pulls(std::vector<float>& ax, std::vector<float>& ay) = 0;

    const Bodies& bodies() const { return bodies_; }
    const Problem& problem() const { return problem_; }
    int threads() const { return threads_; }

private:
    // Integrates every body with (ax_, ay_) when `integrate`, then rebuilds the map.
    void integrate_and_map(bool integrate);

    Problem problem_;
    int threads_;
    MapStrategy map_strategy_;
    Bodies bodies_;
    std::vector<float> ax_, ay_, map_;
    std::vector<std::int32_t> counts_;  // atomic: cells; private: threads x padded cells
    std::size_t count_stride_ = 0;      // private: cells rounded up to a cache line
};

// Registers `Variant` (an OmpSimulation constructed from (Problem, TuningValues)) as a CPU variant
// of the omp backend on the openmp execution space.
template <class Variant>
void add_omp_variant(Registry& registry, std::string id, std::string description,
                     std::vector<TuningParameter> tunings = common_tunings()) {
    registry.add({.id = std::move(id),
                  .backend = "omp",
                  .execution_space = "openmp",
                  .description = std::move(description),
                  .tunings = std::move(tunings),
                  .max_n = 0,
                  .runs_on_gpu = false,
                  .availability = {},
                  .create = [](const Problem& p, const TuningValues& t) -> std::unique_ptr<Simulation> {
                      return std::make_unique<Variant>(p, t);
                  }});
}

}  // namespace nbody::omp
