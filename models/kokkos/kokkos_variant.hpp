#pragma once
// What a Kokkos variant declares and how it is registered on every space (tunings, expected
// efficiency, reproducibility, the descriptor's shared fields), and the ranges of bodies its pull
// kernel reads and writes.
#include <Kokkos_Core.hpp>
#include <Kokkos_ScatterView.hpp>

#include <cstddef>
#include <memory>
#include <string>

#include "dispatch.hpp"
#include "nbody/workload_dispatch.hpp"

namespace nbody::kokkos {

// How a variant's steps run: as kernels per step, launched or replayed from graphs (the base's
// step(): the `map` and `dispatch` tunings), or a whole advance() as one kernel of the variant's
// (kokkos.persistent: the incremental map only, nothing to dispatch).
enum class StepKernels { per_step, one_per_advance };

// The `map` and `dispatch` tunings of StepKernels::per_step variants; the map tuning of a
// one_per_advance variant (incremental only).
TuningParameter map_tuning();
TuningParameter dispatch_tuning();
TuningParameter incremental_map_tuning();
// The `step_end` tuning of a variant whose pull kernel can end the step (StepEndInPullKernel).
TuningParameter step_end_tuning();
// An integer tuning restricted to the listed powers of two.
TuningParameter power_of_two_tuning(const std::string& name, const std::string& description, int smallest,
                                    int largest, int default_value);

// The simulation of the problem's workload: Sim<Space, Real, Dim> chosen once, here.
template <template <class, class, int> class Sim, class Space>
std::unique_ptr<Simulation> create_for_workload(const Problem& problem, const TuningValues& tuning) {
    return dispatch_workload(problem.workload, [&]<class Real, int Dim>() -> std::unique_ptr<Simulation> {
        return std::make_unique<Sim<Space, Real, Dim>>(problem, tuning);
    });
}

// VariantDescriptor::expected_efficiency of a variant on a GPU space and on a host space (on the
// host about 0.6 of the lowest fraction of the limit it reached at N >= 65536 in results/*.json),
// and on a GPU space its full_rate_bodies and step_overhead_s, fitted with it to the GPU sweep of
// docs/estimates.md; 0: the model's defaults. Each variant's file gives its own.
struct ExpectedEfficiency {
    double gpu = 0.0;
    double host = 0.0;
    double gpu_full_rate_bodies = 0.0;
    double gpu_step_overhead_s = 0.0;
};

// VariantDescriptor::reproducibility of a variant on a GPU space and on a host space of several
// threads (OpenMP). The Serial space runs every kernel on one thread in a fixed order: bitwise.
struct SpaceReproducibility {
    Reproducibility gpu = Reproducibility::run_to_run;
    Reproducibility host = Reproducibility::run_to_run;
};

template <class Space>
Reproducibility reproducibility_on(SpaceReproducibility reproducibility) {
#ifdef KOKKOS_ENABLE_SERIAL
    if constexpr (std::is_same_v<Space, Kokkos::Serial>) return Reproducibility::bitwise;
#endif
    return kRunsOnGpu<Space> ? reproducibility.gpu : reproducibility.host;
}

// The descriptor fields every Kokkos variant fills the same way. `distributed`: its pull kernel
// sums only the owned block (KokkosSimulation::owned()), so it runs one simulation over ranks.
template <class Space, template <class, class, int> class Sim>
VariantDescriptor describe_variant(const std::string& variant, const std::string& description,
                                   std::vector<TuningParameter> tunings, ExpectedEfficiency efficiency,
                                   SpaceReproducibility reproducibility, bool distributed = false,
                                   StepKernels kernels = StepKernels::per_step) {
    if (kernels == StepKernels::per_step) {
        tunings.push_back(map_tuning());
        tunings.push_back(dispatch_tuning());
    } else {
        tunings.push_back(incremental_map_tuning());
    }
    return {.id = "kokkos." + variant + "@" + SpaceName<Space>::value,
            .backend = "kokkos",
            .execution_space = SpaceName<Space>::value,
            .description = description,
            .tunings = std::move(tunings),
            .max_n = 0,
            .runs_on_gpu = kRunsOnGpu<Space>,
            .distributed = distributed,
            .workloads = WorkloadSupport::every(),
            .availability = &availability,
            .create = &create_for_workload<Sim, Space>,
            .expected_efficiency = kRunsOnGpu<Space> ? efficiency.gpu : efficiency.host,
            .full_rate_bodies = kRunsOnGpu<Space> ? efficiency.gpu_full_rate_bodies : 0.0,
            .step_overhead_s = kRunsOnGpu<Space> ? efficiency.gpu_step_overhead_s : 0.0,
            .reproducibility = reproducibility_on<Space>(reproducibility)};
}

template <class Space>
using CountScatter = Kokkos::Experimental::ScatterView<int*, typename DeviceCounts<Space>::array_layout, Space>;

// Registers kokkos.<variant>@<space> for every enabled space; tunings(runs_on_gpu) lists its
// tunings on that space.
template <template <class, class, int> class Sim, class Tunings>
void register_for_each_space(Registry& registry, const std::string& variant, const std::string& description,
                             Tunings tunings, ExpectedEfficiency efficiency, SpaceReproducibility reproducibility,
                             bool distributed = false, StepKernels kernels = StepKernels::per_step) {
    for_each_space([&](auto tag) {
        using Space = typename decltype(tag)::type;
        registry.add(describe_variant<Space, Sim>(variant, description, tunings(kRunsOnGpu<Space>), efficiency,
                                                  reproducibility, distributed, kernels));
    });
}

// ScatterView's host duplication (one copy of the counts per thread) is refused above this.
inline constexpr std::size_t kMaxScatterBytes = std::size_t{4} << 30;

// The map strategy a tuning names; UsageError when a ScatterView would duplicate too much.
template <class Space>
MapStrategy map_strategy_of(const TuningValues& tuning, int d) {
    if (tuning.at("map") == "incremental") return MapStrategy::incremental;
    if (tuning.at("map") == "atomic") return MapStrategy::atomic_counts;
    // ScatterView's defaults: atomics on the GPU, one copy per thread on a host space.
    const std::size_t copies = kRunsOnGpu<Space> ? 1 : static_cast<std::size_t>(Space().concurrency());
    const std::size_t bytes = static_cast<std::size_t>(d) * d * sizeof(int) * copies;
    if (bytes > kMaxScatterBytes)
        throw UsageError("tuning map=scatter needs " + std::to_string(bytes >> 20) + " MiB of per-thread counts at D=" +
                         std::to_string(d) + "; use map=atomic");
    return MapStrategy::scatter_view;
}

// N as the int the kernels index with; UsageError beyond.
inline int checked_body_count(std::size_t n) {
    if (n > static_cast<std::size_t>(std::numeric_limits<int>::max()))
        throw UsageError("N=" + std::to_string(n) + " exceeds the Kokkos variants' int indexing");
    return static_cast<int>(n);
}

// The device state of a step's halves: positions, velocities and the last pulls (without G).
template <class Space, class Real, int Dim>
struct Motion {
    DeviceAxes<Space, Real, Dim> p, v, pull;
};

// The bodies [first, end) this rank integrates: all N without ranks.
struct OwnedRange {
    int first, end;
    KOKKOS_INLINE_FUNCTION bool contains(int i) const { return i >= first && i < end; }
};

// The bodies j a pull kernel sums over (as cuda.sliced's SourceBodies): the indices [first, end) of
// the bodies with the skipped_count bodies from skipped_first left out (j = v, or v + skipped_count
// from skipped_first on), so that one launch covers every block but the owned one (the overlapped
// exchange). `accumulate`: add to the pulls already there (teams splitting the j tiles always add).
struct SourceBodies {
    int first, end, skipped_first, skipped_count;
    bool accumulate;
    KOKKOS_INLINE_FUNCTION int count() const { return end - first; }
    KOKKOS_INLINE_FUNCTION int body(int v) const { return v >= skipped_first ? v + skipped_count : v; }
};

// All n bodies j, written over: the pull of one process, and of the all-gather step.
inline SourceBodies all_sources(int n) { return {0, n, n, 0, false}; }
// The owned block's bodies j, written over: their positions are this rank's own.
inline SourceBodies owned_block_sources(OwnedRange owned, int n) { return {owned.first, owned.end, n, 0, false}; }
// Every other block's bodies j (before and after the owned block), added.
inline SourceBodies other_blocks_sources(OwnedRange owned, int n) {
    const int owned_count = owned.end - owned.first;
    return {0, n - owned_count, owned.first, owned_count, true};
}

}  // namespace nbody::kokkos
