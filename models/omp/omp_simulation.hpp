#pragma once
// What the OpenMP variants share: the `threads` and `map` tunings and a Simulation, templated on
// the workload's precision, that owns the host state, advances it with physics.hpp's integrator
// halves and builds the activity map each step. A variant supplies only its pull computation (one
// file per variant); every variant runs every workload (SPEC §2). advance(k) runs its k steps in
// one parallel region (one thread team, no per-step team start-up): every per-step loop, the
// variant's included, is an orphaned `omp for` that the team's threads share.
//
// Over several ranks (Problem::distribution, docs/scaling.md) a rank integrates and computes the
// pulls of its owned block only; the positions of all N are all-gathered through the host
// communicator right after the step's drift (MPI_Allgatherv), and every rank maps all N bodies
// (the incremental map unchanged). Only variants registered `distributed` accept several ranks.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nbody/activity_counts.hpp"
#include "nbody/registry.hpp"
#include "nbody/variant.hpp"
#include "nbody/workload_dispatch.hpp"

namespace nbody::omp {

// How the per-step activity map is counted (the `map` tuning).
enum class MapStrategy {
    private_histograms,  // one D x D count array per thread, merged in a cell-parallel pass
    atomic_counts,       // one shared count array, `omp atomic` increments
    incremental,         // counts and each body's cell kept; only changed cells rewritten (activity_counts.hpp)
};

// The tunings every OpenMP variant has: threads (1..omp_get_num_procs()) and map.
std::vector<TuningParameter> common_tunings();

// Pulls (without G) of every body, one array per axis: pull[k][i]; pull[2] is empty in 2D.
template <class Real>
using AxisPulls = std::array<std::vector<Real>, 3>;

template <class Real>
class OmpSimulation : public SimulationOf<Real> {
public:
    // UsageError when map=private would need more than a few GiB of per-thread histograms.
    OmpSimulation(const Problem& problem, const TuningValues& tuning);

    using SimulationOf<Real>::upload;
    using SimulationOf<Real>::download;
    // Leapfrog computes the pull of the initial positions here (needs_initial_pull).
    void upload(const BodiesT<Real>& initial) final;
    void advance(int steps) final;
    void download(BodiesT<Real>& state, std::vector<float>& activity_map) final;

protected:
    // Sum of pulls without G (physics.hpp's accumulate_pull) on every body of owned() (all N in a
    // single process) from the positions of all N bodies(), which stay unchanged during the call
    // (the step's snapshot). Pulls outside owned() may be left as they are. A variant dispatches
    // on dim() to its kernel for that dimension. Called by every thread of the team (inside the
    // parallel region of advance or upload): the work is shared with orphaned `omp for` loops,
    // the last of which ends with its barrier (the callers rely on it: the pulls are complete,
    // and the map's writes of the previous step are done, when it returns).
    virtual void compute_pulls(AxisPulls<Real>& pull) = 0;

    const BodiesT<Real>& bodies() const { return bodies_; }
    const Problem& problem() const { return problem_; }
    // The bodies this rank integrates: all N in a single process.
    const BodyBlock& owned() const { return owned_; }
    int dim() const { return problem_.workload.dim; }
    Real eps2() const { return static_cast<Real>(problem_.constants.eps2()); }
    int threads() const { return threads_; }

private:
    // `steps` steps in one parallel region.
    template <int Dim>
    void run_steps(int steps);
    // The per-axis arrays of positions, velocities and pulls, for the per-body loops.
    template <int Dim>
    struct AxisPointers {
        Real* position[Dim];
        Real* velocity[Dim];
        const Real* pull[Dim];
    };
    template <int Dim>
    AxisPointers<Dim> axis_pointers();
    // The loops below are called by every thread of the team.
    // `half(integrator, position, velocity, pull, G, dt)` (one of physics.hpp's integrator halves) on
    // every body of the owned block.
    template <int Dim, class Half>
    void advance_owned(Half half);
    // advance_after_force on every body when `integrate`, then the map of the new positions.
    template <int Dim>
    void advance_after_force_and_map(bool integrate);
    // Every rank's block of positions to every rank; called by every thread of the team (one
    // thread calls MPI: the library runs at MPI_THREAD_FUNNELED), barriers on both sides.
    void gather_positions();

    // A thread's list of the cells whose count it changed this step (map=incremental), a cache
    // line apart from the next thread's.
    struct alignas(64) ChangedCells {
        std::vector<int> cells;
    };

    Problem problem_;
    BlockDecomposition decomposition_;
    BodyBlock owned_;
    int threads_;
    MapStrategy map_strategy_;
    BodiesT<Real> bodies_;
    AxisPulls<Real> pull_;
    std::vector<float> map_;
    std::vector<std::int32_t> counts_;  // atomic: cells; private: threads x padded cells
    std::size_t count_stride_ = 0;      // private: cells rounded up to a cache line
    std::optional<ActivityCounts> incremental_counts_;  // incremental, from the upload on
    std::vector<ChangedCells> changed_cells_;          // incremental: one per thread
};

extern template class OmpSimulation<float>;
extern template class OmpSimulation<double>;

// Whether a variant runs one simulation over several ranks (its compute_pulls honours owned()).
enum class Ranks { one, several };

// UsageError when `problem` spans ranks and the variant runs on one only.
void require_single_rank(const Problem& problem, const std::string& id, Ranks ranks);

// Registers `Variant<Real>` (an OmpSimulation<Real> constructed from (Problem, TuningValues)) as
// a CPU variant of the omp backend on the openmp execution space, running every workload:
// `create` picks the precision once. `expected_efficiency`, `reproducibility`: VariantDescriptor's.
template <template <class> class Variant>
void add_omp_variant(Registry& registry, std::string id, std::string description, Ranks ranks, double expected_efficiency,
                     Reproducibility reproducibility, std::vector<TuningParameter> tunings = common_tunings()) {
    registry.add({.id = id,
                  .backend = "omp",
                  .execution_space = "openmp",
                  .description = std::move(description),
                  .tunings = std::move(tunings),
                  .max_n = 0,
                  .runs_on_gpu = false,
                  .distributed = ranks == Ranks::several,
                  .workloads = WorkloadSupport::every(),
                  .availability = {},
                  .create = [id, ranks](const Problem& p, const TuningValues& t) -> std::unique_ptr<Simulation> {
                      require_single_rank(p, id, ranks);
                      return make_for_precision<Variant>(p, t);
                  },
                  .expected_efficiency = expected_efficiency,
                  .reproducibility = reproducibility});
}

}  // namespace nbody::omp
