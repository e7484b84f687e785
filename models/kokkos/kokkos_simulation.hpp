#pragma once
// What the Kokkos variants share, templated on the execution space and the workload's real type and
// dimension: the runtime (initialised once, lazily), the spaces this Kokkos has, the device state
// in Views (one per axis), the step's halves and the activity map (kept incrementally, or
// recounted with atomics or a ScatterView: the `map` tuning), and over several ranks the gathers of
// the positions (docs/scaling.md). A variant supplies only its pull kernel (one file per variant), or
// with StepKernels::one_per_advance the one kernel of a whole advance() (kokkos.persistent).
// Valid for Kokkos 3.4 through 4.x.
#include <Kokkos_Core.hpp>
#include <Kokkos_Graph.hpp>
#include <Kokkos_ScatterView.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "nbody/communicator.hpp"
#include "nbody/errors.hpp"
#include "nbody/inv_sqrt.hpp"
#include "nbody/registry.hpp"
#include "nbody/variant.hpp"
#include "nbody/workload_dispatch.hpp"
#include "grid_barrier.hpp"

namespace nbody::kokkos {

// Initialises Kokkos on first use (every enabled space at once, as Kokkos does) and finalises it
// at exit. Throws std::runtime_error when availability() says no. `device`: the GPU Kokkos' CUDA
// space is to use (the device communicator's), -1 to leave the choice to Kokkos.
void ensure_initialized(int device = -1);
// Kokkos::initialize starts every enabled backend and aborts the process when one cannot start
// (a CUDA-enabled Kokkos on a machine without a GPU): checked here first, with the reason.
Availability availability();

// The execution spaces this Kokkos has, by the name used in variant ids.
template <class Space> struct SpaceName;
#ifdef KOKKOS_ENABLE_SERIAL
template <> struct SpaceName<Kokkos::Serial> { static constexpr const char* value = "serial"; };
#endif
#ifdef KOKKOS_ENABLE_OPENMP
template <> struct SpaceName<Kokkos::OpenMP> { static constexpr const char* value = "openmp"; };
#endif
#ifdef KOKKOS_ENABLE_CUDA
template <> struct SpaceName<Kokkos::Cuda> { static constexpr const char* value = "cuda"; };
#endif

template <class Space>
inline constexpr bool kRunsOnGpu =
#ifdef KOKKOS_ENABLE_CUDA
    std::is_same_v<Space, Kokkos::Cuda>;
#else
    false;
#endif

template <class Space> struct SpaceTag { using type = Space; };

// Calls visit(SpaceTag<Space>{}) for every enabled space.
template <class Visit>
void for_each_space(Visit visit) {
#ifdef KOKKOS_ENABLE_SERIAL
    visit(SpaceTag<Kokkos::Serial>{});
#endif
#ifdef KOKKOS_ENABLE_OPENMP
    visit(SpaceTag<Kokkos::OpenMP>{});
#endif
#ifdef KOKKOS_ENABLE_CUDA
    visit(SpaceTag<Kokkos::Cuda>{});
#endif
}

// The reciprocal square root, the policy of physics.hpp's accumulate_pull. On the GPU, in both
// precisions, inv_sqrt.hpp's rsqrt_of_normal (the CUDA model's NormalRsqrt: |d|^2 + eps^2 >= eps^2 is
// never subnormal while eps > 0; float64 refined in FP64, no float32 estimate, SPEC §2).
// On the host, float: 1/sqrt compiled with the Kokkos model's math flags: GCC's hardware estimate
// plus one Newton step (rsqrtps for 128/256-bit vectors; for 512-bit ones GCC 12 emits a sqrt
// estimate and a reciprocal estimate, each refined). double: the correctly rounded 1/sqrt: GCC has
// no double reciprocal-square-root estimate on x86 (rsqrt patterns exist for float vectors and
// AVX512ER only), so the math flags leave sqrtsd/sqrtpd + divsd/divpd.
struct InvSqrt {
    KOKKOS_INLINE_FUNCTION float operator()(float v) const {
#if defined(__CUDA_ARCH__)
        return rsqrt_of_normal(v);
#else
        return 1.0f / std::sqrt(saturated(v));  // the estimate and Newton step: see saturated()
#endif
    }
    KOKKOS_INLINE_FUNCTION double operator()(double v) const {
#if defined(__CUDA_ARCH__)
        return rsqrt_of_normal(v);
#else
        return 1.0 / std::sqrt(v);
#endif
    }
};

// The Dim pull components of one body, summed by vector reductions (Kokkos' Sum reducer).
template <class Real, int Dim>
struct Pull : Vec<Real, Dim> {
    KOKKOS_INLINE_FUNCTION Pull() : Vec<Real, Dim>{} {}
    KOKKOS_INLINE_FUNCTION Pull& operator+=(const Pull& other) {
        NBODY_UNROLL_AXES
        for (int k = 0; k < Dim; ++k) this->c[k] += other.c[k];
        return *this;
    }
};

// One View per axis (x, y[, z]): positions, velocities or pulls of every body.
template <class View, int Dim>
struct Axes {
    View c[Dim];
    KOKKOS_INLINE_FUNCTION const View& operator[](int k) const { return c[k]; }
};

// Body i's Dim components of `axes`, and the store back.
template <class View, int Dim>
KOKKOS_INLINE_FUNCTION Vec<typename View::non_const_value_type, Dim> load(const Axes<View, Dim>& axes, int i) {
    Vec<typename View::non_const_value_type, Dim> v;
    NBODY_UNROLL_AXES
    for (int k = 0; k < Dim; ++k) v[k] = axes[k](i);
    return v;
}
template <class View, int Dim>
KOKKOS_INLINE_FUNCTION void store(const Axes<View, Dim>& axes, int i,
                                    const Vec<typename View::non_const_value_type, Dim>& v) {
    NBODY_UNROLL_AXES
    for (int k = 0; k < Dim; ++k) axes[k](i) = v[k];
}

// A CUDA block holds team_size x vector_length threads.
inline constexpr int kMaxGpuTeamThreads = 1024;

// UsageError when a GPU team would exceed a block's threads.
template <class Space>
void check_team_threads(int team_size, int vector_length) {
    if (kRunsOnGpu<Space> && team_size * vector_length > kMaxGpuTeamThreads)
        throw UsageError("tunings team_size=" + std::to_string(team_size) + " x vector_length=" +
                         std::to_string(vector_length) + " exceed " + std::to_string(kMaxGpuTeamThreads) +
                         " threads per team");
}

// UsageError when a kernel's teams of team_size x vector_length threads exceed `largest`, the team
// size Kokkos can launch it with: on the GPU the kernel's registers and scratch per block can
// allow fewer than 1024 threads, more so in float64 and 3D.
template <class Space>
void check_team_size(int largest, int team_size, int vector_length, const Workload& workload) {
    if (team_size > largest)
        throw UsageError("tunings team_size=" + std::to_string(team_size) + " x vector_length=" +
                         std::to_string(vector_length) + " exceed the " + std::to_string(largest) + " x " +
                         std::to_string(vector_length) + " threads per team this kernel's registers and scratch " +
                         "allow on " + SpaceName<Space>::value + " for " + to_string(workload));
}

// One j body as a team stages it in scratch (team_tiled, persistent): its position then its mass,
// packed to 16 bytes in float32 (2D: x, y, m and one unused; 3D: x, y, z, m) so the GPU reads it
// with one 128-bit shared load (three separate float arrays cost three load instructions per
// interaction, which saturates the shared-memory pipe before the FP32 pipes: the reason
// cuda.float4 beats cuda.tiled); 32 bytes in float64.
template <class Real, int Dim>
struct alignas(16) TileBody {
    Real c[4];
    KOKKOS_INLINE_FUNCTION Vec<Real, Dim> position() const {
        Vec<Real, Dim> p;
        NBODY_UNROLL_AXES
        for (int k = 0; k < Dim; ++k) p[k] = c[k];
        return p;
    }
    KOKKOS_INLINE_FUNCTION Real mass() const { return c[Dim]; }
};

// Body j as staged: its position, its mass, zeros in the unused slots.
template <class View, int Dim, class Real = typename View::non_const_value_type>
KOKKOS_INLINE_FUNCTION TileBody<Real, Dim> tile_body(const Axes<View, Dim>& p, const View& m, int j) {
    TileBody<Real, Dim> b;
    NBODY_UNROLL_AXES
    for (int k = 0; k < Dim; ++k) b.c[k] = p[k](j);
    b.c[Dim] = m(j);
    for (int k = Dim + 1; k < 4; ++k) b.c[k] = Real(0);
    return b;
}

template <class Space, class T>
using Scratch = Kokkos::View<T*, typename Space::scratch_memory_space, Kokkos::MemoryUnmanaged>;

// The state a kernel reads or writes: the bodies (positions, masses, velocities, pulls) or the
// activity map (counts, cells, map values), or both. A recorded graph orders a kernel after the
// last kernels that touched the same state only, so that the map's rewrite of one step runs beside
// the next step's pull kernel.
enum class Touches { bodies, map, bodies_and_map };

// Where a simulation's kernels go: launched on the space one by one (in program order), or, while
// steps are recorded, appended to a Kokkos graph (Kokkos::Experimental::Graph, a CUDA graph on the
// GPU; Kokkos 3.4 has it too), which then replays them with one submission instead of a host launch
// each.
template <class Space>
class Dispatch {
public:
    explicit Dispatch(const Space& space) : space_(space) {}

    const Space& space() const { return space_; }

    template <class Policy, class Functor>
    void parallel_for(const std::string& label, const Policy& policy, const Functor& functor,
                      Touches touches = Touches::bodies) {
        if (!recording_) {
            Kokkos::parallel_for(label, policy, functor);
            return;
        }
        switch (touches) {
            case Touches::bodies:
                last_bodies_ = last_bodies_.then_parallel_for(label, policy, functor);
                chains_joined_ = false;
                break;
            case Touches::map:
                last_map_ = last_map_.then_parallel_for(label, policy, functor);
                chains_joined_ = false;
                break;
            case Touches::bodies_and_map: {
                const Node after =
                    chains_joined_ ? last_bodies_ : Node(Kokkos::Experimental::when_all(last_bodies_, last_map_));
                last_bodies_ = last_map_ = after.then_parallel_for(label, policy, functor);
                chains_joined_ = true;
                break;
            }
        }
    }

    // A graph of the kernels record() dispatches, each after the last ones touching its state.
    template <class Record>
    Kokkos::Experimental::Graph<Space> record(Record record) {
        return Kokkos::Experimental::create_graph(space_, [&](const auto& root) {
            const Recording recording(*this, root);
            record();
        });
    }

private:
    using Node = Kokkos::Experimental::GraphNodeRef<Space>;

    // Appending to a graph from `root` while it lives, however record() leaves.
    struct Recording {
        Recording(Dispatch& dispatch, const Node& root) : dispatch(dispatch) {
            dispatch.last_bodies_ = dispatch.last_map_ = root;
            dispatch.chains_joined_ = true;
            dispatch.recording_ = true;
        }
        ~Recording() {
            dispatch.recording_ = false;
            dispatch.last_bodies_ = dispatch.last_map_ = {};
        }
        Recording(const Recording&) = delete;
        Recording& operator=(const Recording&) = delete;
        Dispatch& dispatch;
    };

    Space space_;
    bool recording_ = false;
    Node last_bodies_, last_map_;  // the last recorded kernels touching each
    bool chains_joined_ = true;    // both are the same node
};

// The steps per recorded graph a `dispatch` tuning value names: launch 0 (every kernel launched
// from the host), graphK K.
int graph_steps_of(const std::string& dispatch);
// Whether a `step_end` tuning value fuses the end of a step into the pull kernel (auto: on the GPU
// in 2D, where it measured faster at every N; docs/performance-kokkos.md).
bool fused_step_end_of(const std::string& step_end, bool runs_on_gpu, int dim);
// dispatch=auto's steps per graph on the GPU.
inline constexpr int kAutoGraphSteps = 16;

// How the per-step activity map is counted (the `map` tuning).
enum class MapStrategy {
    // Counts kept between steps with each body's cell: only bodies that changed cell move a count
    // (atomics), only the cells they left and entered are rewritten. Work O(N) per step, not O(D^2).
    incremental,
    // Full recounts every step: counts cleared, every body counted, the whole D x D map written.
    atomic_counts,  // Kokkos::atomic_add on one shared count array
    scatter_view,   // Kokkos::Experimental::ScatterView: atomics on the GPU, per-thread copies on OpenMP
};

template <class Space, class Real>
using DeviceReals = Kokkos::View<Real*, typename Space::memory_space>;
template <class Space, class Real, int Dim>
using DeviceAxes = Axes<DeviceReals<Space, Real>, Dim>;
template <class Space>
using DeviceCounts = Kokkos::View<int*, typename Space::memory_space>;
template <class Real>
using HostReals = Kokkos::View<Real*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class Real>
using HostConstReals = Kokkos::View<const Real*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

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

#ifdef KOKKOS_ENABLE_CUDA
// std::runtime_error naming the CUDA call that failed.
inline void check_cuda(cudaError_t status, const char* call) {
    if (status != cudaSuccess) throw std::runtime_error(std::string(call) + " failed: " + cudaGetErrorString(status));
}

// A CUDA event owned by its holder.
class CudaEvent {
public:
    explicit CudaEvent(unsigned int flags = cudaEventDefault) {
        check_cuda(cudaEventCreateWithFlags(&event_, flags), "cudaEventCreateWithFlags");
    }
    ~CudaEvent() { cudaEventDestroy(event_); }
    CudaEvent(const CudaEvent&) = delete;
    CudaEvent& operator=(const CudaEvent&) = delete;

    cudaEvent_t get() const { return event_; }
    void record(cudaStream_t stream) const { check_cuda(cudaEventRecord(event_, stream), "cudaEventRecord"); }
    // A timing record: while `stream` is captured, an event node that records when the graph runs
    // (an external record), not a dependency.
    void mark(cudaStream_t stream) const {
        cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
        check_cuda(cudaStreamIsCapturing(stream, &capturing), "cudaStreamIsCapturing");
        if (capturing != cudaStreamCaptureStatusActive) return record(stream);
        check_cuda(cudaEventRecordWithFlags(event_, stream, cudaEventRecordExternal), "cudaEventRecordWithFlags");
    }
    // Seconds from `earlier` to this event, both completed.
    double seconds_since(const CudaEvent& earlier) const {
        float ms = 0.0f;
        check_cuda(cudaEventElapsedTime(&ms, earlier.event_, event_), "cudaEventElapsedTime");
        return 1e-3 * ms;
    }

private:
    cudaEvent_t event_ = nullptr;
};

// What the per-step breakdown reads on the CUDA space: the step's start and end on the compute
// stream, and the all-gather's start and end.
struct CudaStepEvents {
    CudaEvent start, end, exchange_start, exchange_end;
};

// exchange=overlap's second instance of the CUDA space: its own stream at the highest priority, so
// that the collective's blocks are scheduled ahead of the pull's, forked from and joined to the
// compute instance with events (no fence: the host keeps queueing).
class CudaExchangeInstance {
public:
    explicit CudaExchangeInstance(const Kokkos::Cuda& compute) {
        check_cuda(cudaSetDevice(compute.cuda_device()), "cudaSetDevice");
        int least = 0, greatest = 0;
        check_cuda(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
        check_cuda(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, greatest), "cudaStreamCreateWithPriority");
        try {
            space_.emplace(stream_);
        } catch (...) {
            cudaStreamDestroy(stream_);
            throw;
        }
    }
    // The instance first (it does not own the stream), then the stream, once idle.
    ~CudaExchangeInstance() {
        cudaStreamSynchronize(stream_);
        space_.reset();
        cudaStreamDestroy(stream_);
    }
    CudaExchangeInstance(const CudaExchangeInstance&) = delete;
    CudaExchangeInstance& operator=(const CudaExchangeInstance&) = delete;

    const Kokkos::Cuda& space() const { return *space_; }
    cudaStream_t stream() const { return stream_; }
    // This instance's next work starts after what `compute` has queued so far (the drift).
    void fork_from(const Kokkos::Cuda& compute) {
        fork_.record(compute.cuda_stream());
        check_cuda(cudaStreamWaitEvent(stream_, fork_.get(), 0), "cudaStreamWaitEvent");
    }
    // `compute`'s next work starts after what this instance has queued so far (the gather).
    void join_into(const Kokkos::Cuda& compute) {
        join_.record(stream_);
        check_cuda(cudaStreamWaitEvent(compute.cuda_stream(), join_.get(), 0), "cudaStreamWaitEvent");
    }

private:
    cudaStream_t stream_ = nullptr;
    std::optional<Kokkos::Cuda> space_;
    CudaEvent fork_{cudaEventDisableTiming}, join_{cudaEventDisableTiming};
};
#endif

// Advance before force on the owned bodies (leapfrog only: Euler has nothing to do then). Public
// free functions: nvcc's extended lambdas must not live in private member functions.
template <class Space, class Real, int Dim>
void advance_before_force_owned(Dispatch<Space>& dispatch, Motion<Space, Real, Dim> s, OwnedRange owned,
                                Integrator integrator, Real G, Real dt) {
    dispatch.parallel_for(
        "nbody::kokkos::advance_before_force", Kokkos::RangePolicy<Space>(dispatch.space(), owned.first, owned.end),
        KOKKOS_LAMBDA(const int i) {
            Vec<Real, Dim> p = load(s.p, i), v = load(s.v, i);
            advance_before_force(integrator, p, v, load(s.pull, i), G, dt);
            store(s.p, i, p);
            store(s.v, i, v);
        });
}

// What the kernel after the pulls does to each owned body besides finding its cell: one kernel per
// step instead of one per half and one to clear the pulls. The other ranks' bodies (over several
// ranks) only have their cell found, from the positions gathered this step.
template <class Real>
struct StepEnd {
    Integrator integrator;
    Real G, dt;
    bool advance;            // advance after force (false at upload: the map of the initial positions)
    bool next_before_force;  // leapfrog: the next step's first half too, with the same pull
    bool zero_pulls;         // leave the pulls zero for a pull kernel that adds into them
    OwnedRange owned;
};

// A body's end of step (StepEnd) on its position and velocity; returns the activity cell of its
// position after the step.
template <class Real, int Dim>
KOKKOS_INLINE_FUNCTION int end_step_of(Vec<Real, Dim>& p, Vec<Real, Dim>& v, const Vec<Real, Dim>& pull, int d,
                                       const StepEnd<Real>& e) {
    if (e.advance) advance_after_force(e.integrator, p, v, pull, e.G, e.dt);
    const int cell = activity_cell(p[0], p[1], d);
    if (e.next_before_force) advance_before_force(e.integrator, p, v, pull, e.G, e.dt);
    return cell;
}

// Body i's end of step (StepEnd) in place; returns the activity cell of its positions after the step.
template <class Space, class Real, int Dim>
KOKKOS_INLINE_FUNCTION int end_step(const Motion<Space, Real, Dim>& s, int i, int d, const StepEnd<Real>& e) {
    // Another rank's body, or a map-only end (which may run beside a pull still adding into the pulls).
    if (!e.owned.contains(i) || !(e.advance || e.next_before_force || e.zero_pulls))
        return activity_cell(s.p[0](i), s.p[1](i), d);
    Vec<Real, Dim> p = load(s.p, i), v = load(s.v, i);
    const int cell = end_step_of(p, v, load(s.pull, i), d, e);
    if (e.advance || e.next_before_force) {
        store(s.p, i, p);
        store(s.v, i, v);
    }
    if (e.zero_pulls) store(s.pull, i, Vec<Real, Dim>{});
    return cell;
}

// The moves of one step (map=incremental): the cell each body left and entered, `from` kStayed
// when it kept its cell.
template <class Space>
struct Moves {
    DeviceCounts<Space> from, to;
};

// The counts and map of one simulation. `cell` (each body's cell, -1 outside) and `moved` (the
// moves of the last step) exist for map=incremental only.
template <class Space>
struct MapState {
    DeviceCounts<Space> counts, cell;
    Moves<Space> moved;
    DeviceReals<Space, float> map;
    float scale;
};

inline constexpr int kStayed = -2;  // cells are >= -1

// Body i's place in map=incremental's bookkeeping: the cell it is counted in and its last move in
// a Moves (left kStayed when it kept its cell). kokkos.persistent reads it before the pull sum, so
// that the round trip to memory overlaps the sum instead of following it.
struct CountedBody {
    int cell, left, entered;
};

template <class Space>
KOKKOS_INLINE_FUNCTION CountedBody counted_body(const MapState<Space>& m, const Moves<Space>& moves, int i) {
    return {m.cell(i), moves.from(i), moves.to(i)};
}

// map=incremental: body i, counted in `before` and now in `cell`, moves one count if it changed
// cell, and records its move in `moves`.
template <class Space>
KOKKOS_INLINE_FUNCTION void move_count(const MapState<Space>& m, const Moves<Space>& moves, int i, int cell,
                                       int before) {
    if (cell != before) {
        if (before >= 0) Kokkos::atomic_add(&m.counts(before), -1);
        if (cell >= 0) Kokkos::atomic_add(&m.counts(cell), 1);
        m.cell(i) = cell;
        moves.to(i) = cell;
    }
    moves.from(i) = cell != before ? before : kStayed;
}

template <class Space>
KOKKOS_INLINE_FUNCTION void move_count(const MapState<Space>& m, const Moves<Space>& moves, int i, int cell) {
    move_count(m, moves, i, cell, m.cell(i));
}

// map = count * scale (normalise_map's expression) in the cells a move left and entered (nothing
// for kStayed). The counts are read atomically (relaxed), as the next step may be moving them
// already (step_end=fused, kokkos.persistent), and both before either cell is written: one round
// trip to memory, not two; bodies sharing a cell write it atomically (relaxed): plain stores from
// several threads to one cell are a data race (ThreadSanitizer, tsan preset). On the GPU
// relaxed loads and stores, not read-modify-writes (relaxed_load, relaxed_store).
template <class Space>
KOKKOS_INLINE_FUNCTION void rewrite_cells(const MapState<Space>& m, int left, int entered) {
    if (left == kStayed) return;
    const int left_count = left >= 0 ? relaxed_load(&m.counts(left)) : 0;
    const int entered_count = entered >= 0 ? relaxed_load(&m.counts(entered)) : 0;
    if (left >= 0) relaxed_store(&m.map(left), static_cast<float>(left_count) * m.scale);
    if (entered >= 0) relaxed_store(&m.map(entered), static_cast<float>(entered_count) * m.scale);
}

// The cells body i's move in `moves` left and entered, rewritten.
template <class Space>
KOKKOS_INLINE_FUNCTION void rewrite_cells_of(const MapState<Space>& m, const Moves<Space>& moves, int i) {
    const int left = moves.from(i);
    if (left != kStayed) rewrite_cells(m, left, moves.to(i));
}

// A full recount: counts cleared, every body counted; with `record_cells` each body's cell kept
// for later incremental steps.
template <class Space, class Real, int Dim>
void end_step_and_count_atomic(Dispatch<Space>& dispatch, Motion<Space, Real, Dim> s, MapState<Space> m, int n,
                               int d, StepEnd<Real> e, bool record_cells) {
    Kokkos::deep_copy(dispatch.space(), m.counts, 0);
    dispatch.parallel_for(
        "nbody::kokkos::end_step_count_atomic", Kokkos::RangePolicy<Space>(dispatch.space(), 0, n),
        KOKKOS_LAMBDA(const int i) {
            const int cell = end_step(s, i, d, e);
            if (cell >= 0) Kokkos::atomic_add(&m.counts(cell), 1);
            if (record_cells) {
                m.cell(i) = cell;
                m.moved.from(i) = kStayed;
            }
        },
        Touches::bodies_and_map);
}

template <class Space, class Real, int Dim>
void end_step_and_count_scatter(Dispatch<Space>& dispatch, Motion<Space, Real, Dim> s, MapState<Space> m,
                                CountScatter<Space> scatter_counts, int n, int d, StepEnd<Real> e) {
    Kokkos::deep_copy(dispatch.space(), m.counts, 0);
    scatter_counts.reset(dispatch.space());
    dispatch.parallel_for(
        "nbody::kokkos::end_step_count_scatter", Kokkos::RangePolicy<Space>(dispatch.space(), 0, n),
        KOKKOS_LAMBDA(const int i) {
            const int cell = end_step(s, i, d, e);
            if (cell >= 0) {
                auto access = scatter_counts.access();
                access(cell) += 1;
            }
        },
        Touches::bodies_and_map);
    Kokkos::Experimental::contribute(m.counts, scatter_counts);
}

// The whole map from the counts.
template <class Space>
void normalise_map(Dispatch<Space>& dispatch, MapState<Space> m) {
    dispatch.parallel_for(
        "nbody::kokkos::normalise_map",
        Kokkos::RangePolicy<Space>(dispatch.space(), 0, static_cast<int>(m.map.extent(0))),
        KOKKOS_LAMBDA(const int c) { m.map(c) = static_cast<float>(m.counts(c)) * m.scale; }, Touches::map);
}

// An incremental step: a body whose cell changed moves one count from the cell it left to the one
// it entered. The map cannot be rewritten in the same kernel (a cell's count is final only once
// every body has moved), hence rewrite_moved_cells.
template <class Space, class Real, int Dim>
void end_step_and_move_counts(Dispatch<Space>& dispatch, Motion<Space, Real, Dim> s, MapState<Space> m, int n,
                              int d, StepEnd<Real> e) {
    dispatch.parallel_for(
        "nbody::kokkos::end_step_move_counts", Kokkos::RangePolicy<Space>(dispatch.space(), 0, n),
        KOKKOS_LAMBDA(const int i) { move_count(m, m.moved, i, end_step(s, i, d, e)); }, Touches::bodies_and_map);
}

// The cells bodies left or entered in the last step rewritten (rewrite_cells_of); the other cells
// keep counts and values. Recorded beside the next step's pull kernel (Touches::map).
template <class Space>
void rewrite_moved_cells(Dispatch<Space>& dispatch, MapState<Space> m, int n) {
    dispatch.parallel_for(
        "nbody::kokkos::rewrite_moved_cells", Kokkos::RangePolicy<Space>(dispatch.space(), 0, n),
        KOKKOS_LAMBDA(const int i) { rewrite_cells_of(m, m.moved, i); }, Touches::map);
}

// step_end=fused: the rest of a step done by the pull kernel itself, so that a step is one kernel
// (one dependent kernel per step instead of two: each costs ~2.5 us on the GPU whatever its work,
// docs/performance-kokkos.md). The pull kernel's teams, `slices` per block of bodies, each add their
// partial pulls and count themselves in (an acquire-release count of arrivals, arrive_at: the "last
// block" pattern, no waiting). The last team to arrive ends the block's step: its bodies advance,
// their new positions go to `p_next` (the other teams may still be reading `s.p`: positions are
// double-buffered) and they move their map counts, recording the moves in `next_moved` (double-
// buffered too). The first team to arrive, idle otherwise, rewrites the map cells of the block's
// moves in the previous step (`m.moved`), so that no kernel of its own is needed either: a cell
// rewritten while this step still moves counts is rewritten again by a later step or by the
// rewrite kernel after an advance()'s last step.
template <class Space, class Real, int Dim>
struct StepEndInPullKernel {
    Motion<Space, Real, Dim> s;           // p: the step's positions, read by every team
    DeviceAxes<Space, Real, Dim> p_next;  // the positions after the step
    MapState<Space> m;                    // m.moved: the previous step's moves
    Moves<Space> next_moved;              // this step's moves
    DeviceCounts<Space> arrivals;         // per block of bodies: the teams that have added their pulls
    StepEnd<Real> e;                      // e.zero_pulls: take_added_pull() leaves the added pulls zero
    int d;

    // The map cells the block's bodies [first, first + count) left and entered in the previous step.
    template <class Member>
    KOKKOS_INLINE_FUNCTION void rewrite_last_moves(const Member& team, int first, int count) const {
        Kokkos::parallel_for(Kokkos::TeamVectorRange(team, count),
                             [&](const int k) { rewrite_cells_of(m, m.moved, first + k); });
    }

    // After the team has added its partial pulls: its place among the `slices` teams of `block`
    // (0 first, slices - 1 last); the last sees every team's additions (each releases them as it
    // counts itself in).
    template <class Member>
    KOKKOS_INLINE_FUNCTION int arrive(const Member& team, int block, int slices) const {
        team.team_barrier();
        int place = 0;
        Kokkos::single(
            Kokkos::PerTeam(team),
            [&](int& arrived_before) {
                arrived_before = arrive_at(&arrivals(block)) - 1;
                if (arrived_before == slices - 1) arrivals(block) = 0;  // every team is in: ready for the next step
            },
            place);
        return place;
    }

    // Body i's summed pull as the teams added it; zeroed for the next step unless kept. Read-modify-
    // writes although every adding team has been acquired: a relaxed load and store instead measured
    // 3 % slower at N = 1024 on the H100 (docs/performance-kokkos.md).
    KOKKOS_INLINE_FUNCTION Vec<Real, Dim> take_added_pull(int i) const {
        Vec<Real, Dim> pull;
        NBODY_UNROLL_AXES
        for (int k = 0; k < Dim; ++k)
            pull[k] = e.zero_pulls ? Kokkos::atomic_exchange(&s.pull[k](i), Real(0)) : atomic_read(&s.pull[k](i));
        return pull;
    }

    // Body i's end of step from its pull: the new position into p_next, its count moved.
    KOKKOS_INLINE_FUNCTION void end_body(int i, const Vec<Real, Dim>& pull) const {
        Vec<Real, Dim> p = load(s.p, i), v = load(s.v, i);
        const int cell = end_step_of(p, v, pull, d, e);
        store(p_next, i, p);
        store(s.v, i, v);
        move_count(m, next_moved, i, cell);
    }
};

// StepKernels::one_per_advance: what the variant's one kernel for `steps` steps reads and writes.
// Steps alternate the positions between s.p (the current ones at the start) and p_next; a body's
// previous move in m.moved is rewritten by the thread that moves it next (one thread per body, so
// the moves are not double-buffered). e: advance after force; e.next_before_force: leapfrog, whose
// first half kick of the first step the kernel does too, from s.pull (kept for the next advance()).
template <class Space, class Real, int Dim>
struct WholeAdvance {
    Motion<Space, Real, Dim> s;
    DeviceAxes<Space, Real, Dim> p_next;
    DeviceReals<Space, Real> m;  // masses
    MapState<Space> map;
    StepEnd<Real> e;
    int n, d, steps;
};

// The end of step of the owned bodies without counting (Euler over several ranks: the map waits
// for the positions gathered after it).
template <class Space, class Real, int Dim>
void end_step_owned(Dispatch<Space>& dispatch, Motion<Space, Real, Dim> s, int d, StepEnd<Real> e) {
    dispatch.parallel_for(
        "nbody::kokkos::end_step_owned", Kokkos::RangePolicy<Space>(dispatch.space(), e.owned.first, e.owned.end),
        KOKKOS_LAMBDA(const int i) { end_step(s, i, d, e); });
}

// Every pull zero, one kernel (a graph node, where deep_copy is not).
template <class Space, class Real, int Dim>
void zero_pulls_of(Dispatch<Space>& dispatch, DeviceAxes<Space, Real, Dim> pull, int n) {
    dispatch.parallel_for(
        "nbody::kokkos::zero_pulls", Kokkos::RangePolicy<Space>(dispatch.space(), 0, n),
        KOKKOS_LAMBDA(const int i) { store(pull, i, Vec<Real, Dim>{}); });
}

// The state of one simulation of one workload (Real, Dim) in Views of the space's memory; a
// variant adds compute_pulls() (and, running advance() as one kernel, advance_in_one_kernel()). A
// step: advance before force, pulls, advance after force with the map's counting (SPEC §2). Per
// step on a map=incremental simulation: the pull kernel, one kernel for the rest of the step (the
// next step's first half fused in) and the map's rewrite, queued on the space without a fence.
//
// Over several ranks (Problem::distribution, docs/scaling.md) the rank integrates its owned()
// block, and the positions of all N are gathered right after the drift: leapfrog at the start of a
// step (the drift ran in the previous step's last kernel or in advance_before_force_owned), Euler
// after a kernel that ends the owned bodies' step, before the map of all N is counted. Positions
// and masses hold gather_capacity() elements (a device all-gather of equal blocks writes there);
// the velocities and pulls of other ranks' bodies are never used. Host spaces gather through the
// host communicator on the Views' memory, CUDA through the device communicator on the space's
// stream. A variant whose pull kernel sums every body, not just owned(), gives the same results,
// only redundantly. On CUDA a variant may overlap the gather with its pull (overlaps_exchange(),
// the `exchange` tuning): the gather runs on a second instance while the owned bodies are pulled
// from the owned block, and the other blocks are pulled once it has arrived; the pull then follows
// the gather in both integrators (Euler pulls ahead, as cuda.sliced does).
template <class Space, class Real, int Dim>
class KokkosSimulation : public SimulationOf<Real> {
public:
    using SimulationOf<Real>::upload;
    using SimulationOf<Real>::download;

    KokkosSimulation(const Problem& problem, const TuningValues& tuning,
                     StepKernels kernels = StepKernels::per_step)
        : problem_((ensure_initialized(device_of(problem.distribution)), problem)),
          decomposition_(decomposition_of(problem)),
          owned_(owned_block(problem)),
          n_(checked_body_count(problem.n)),
          d_(problem.d),
          map_strategy_(map_strategy_of<Space>(tuning, problem.d)),
          one_kernel_(kernels == StepKernels::one_per_advance),
          graph_steps_(one_kernel_ ? 0 : graph_steps_for(tuning.at("dispatch"))),
          fused_(fused_for(tuning)),
          motion_{axes("p", decomposition_.gather_capacity()), axes("v", problem.n), axes("pull", problem.n)},
          next_positions_(axes("p_next", fused_ || one_kernel_ ? problem.n : 0)),
          next_moved_{DeviceCounts<Space>("next_moved_from", fused_ ? problem.n : 0),
                      DeviceCounts<Space>("next_moved_to", fused_ ? problem.n : 0)},
          arrivals_("arrivals", fused_ ? problem.n : 0),
          m_("m", decomposition_.gather_capacity()),
          map_{DeviceCounts<Space>("counts", cells()), DeviceCounts<Space>("cell", per_body_cells()),
               {DeviceCounts<Space>("moved_from", per_body_cells()), DeviceCounts<Space>("moved_to", per_body_cells())},
               DeviceReals<Space, float>("map", cells()),
               activity_scale(problem.n, problem.d)} {
        if (map_strategy_ == MapStrategy::scatter_view) scatter_ = CountScatter<Space>(map_.counts);
        check_distribution();
        if (one_kernel_ && !steps_are_kernels_only())
            throw std::logic_error("a whole advance() in one kernel needs map=incremental on one rank");
    }

    // upload, advance, step_breakdown and download are defined after the class, not inline: a
    // variant's file then leaves them, and everything they call, to kokkos_simulation.cpp (Clang
    // instantiates the inline members of an extern template for inlining).
    void upload(const BodiesT<Real>& initial) final;

    void advance(int steps) final;

    void synchronize() final {
        space_.fence();
#ifdef KOKKOS_ENABLE_CUDA
        if (exchange_) exchange_->space().fence();  // joined into space_ after every gather; here for a step that threw
#endif
    }

    // On the CUDA space, for a variant that reports_step_breakdown(): each step between events on
    // the compute stream, the all-gather between events around it (all of it exposed), as the CUDA
    // model's. The events are recorded during these steps only (graphs of their own), so that the
    // timed steps carry none.
    // Overlapped, none: the exchange's kernel shares the SMs with the owned block's pull, so the wait
    // at the join is not its cost (docs/scaling.md). Host spaces: none.
    std::optional<Simulation::StepBreakdown> step_breakdown(int steps) final;

    void download(BodiesT<Real>& state, std::vector<float>& activity_map) final;

protected:
    // Writes the summed pull (without G) on every owned() body into pulls() from positions() and
    // masses() of all n() bodies, which stay unchanged meanwhile (the step's snapshot). A variant
    // that adds into pulls() says so in adds_into_pulls(): they are zero when it is called.
    virtual void compute_pulls() = 0;
    // True when compute_pulls() adds into pulls(): the step's last kernel then leaves them zero
    // where it can, so that zero_added_pulls() has nothing to do.
    virtual bool adds_into_pulls() const { return false; }
    // step_end=fused (a variant with step_end_tuning()): the pull kernel that also ends the step
    // (StepEndInPullKernel), in one kernel. Adds into pulls() left zero, as compute_pulls() would.
    virtual void compute_pulls_and_end_step(const StepEndInPullKernel<Space, Real, Dim>& /*end*/) {
        throw std::logic_error("this Kokkos variant cannot end a step in its pull kernel");
    }
    // Whether steps run as compute_pulls_and_end_step().
    bool fuses_step_end() const { return fused_; }
    // The overlapped exchange (the `exchange` tuning; CUDA space over several ranks only, elsewhere
    // the plain gather): a variant that offers it returns true here and pulls from part of the
    // bodies j in compute_pulls_from(), called on the owned block's, then on the other blocks'.
    virtual bool overlaps_exchange() const { return false; }
    // compute_pulls() from `sources` only, on the owned() bodies: written over, or added where
    // sources.accumulate (pulls() are zero before the first part where adds_into_pulls()).
    virtual void compute_pulls_from(const SourceBodies& /*sources*/) {
        throw std::logic_error("this Kokkos variant cannot pull from part of the bodies");
    }
    // Whether step_breakdown() times this variant's steps (CUDA space).
    virtual bool reports_step_breakdown() const { return false; }
    // StepKernels::one_per_advance: the `steps` steps of an advance() in one kernel (WholeAdvance).
    virtual void advance_in_one_kernel(const WholeAdvance<Space, Real, Dim>& /*advance*/) {
        throw std::logic_error("this Kokkos variant cannot run an advance() in one kernel");
    }

    const Space& space() const { return space_; }
    // Where compute_pulls() launches its kernels.
    Dispatch<Space>& dispatch() { return dispatch_; }
    int n() const { return n_; }
    // The bodies whose pulls this rank computes: all n() without ranks.
    OwnedRange owned_range() const {
        return {static_cast<int>(owned_.first), static_cast<int>(owned_.first + owned_.count)};
    }
    const Workload& workload() const { return problem_.workload; }
    Real eps2() const { return static_cast<Real>(problem_.constants.eps2()); }
    // Views of gather_capacity() >= n() elements (the first n() are the bodies).
    DeviceAxes<Space, Real, Dim> positions() const { return motion_.p; }
    DeviceReals<Space, Real> masses() const { return m_; }
    DeviceAxes<Space, Real, Dim> pulls() const { return motion_.pull; }

private:
    std::size_t cells() const { return static_cast<std::size_t>(problem_.d) * problem_.d; }
    std::size_t per_body_cells() const { return map_strategy_ == MapStrategy::incremental ? problem_.n : 0; }
    Integrator integrator() const { return problem_.workload.integrator; }
    Real G() const { return static_cast<Real>(problem_.constants.G); }
    Real dt() const { return static_cast<Real>(problem_.constants.dt); }
    bool spans_ranks() const { return problem_.distribution.spans_ranks(); }
    bool leapfrog() const { return integrator() == Integrator::leapfrog; }

    // One step's kernels after advance_before_force_owned (leapfrog's first step) on dispatch_;
    // `last`: the last of an advance().
    void step(bool last) {
        const StepEnd<Real> end = step_end(true, leapfrog() && !last, step_zeroes_pulls(last));
        if (fused_) {
            zero_added_pulls();
            compute_pulls_and_end_step({motion_, next_positions_, map_, next_moved_, arrivals_, end, d_});
            swap_positions();
            if (last) rewrite_moved_cells(dispatch_, map_, n_);  // the moves the step just recorded
            pulls_zero_ = end.zero_pulls;
            return;
        }
        if (overlapped()) {
            step_overlapped(end);
            return;
        }
        if (leapfrog()) gather_positions();  // after the drift
        pull_kernel();
        if (spans_ranks() && !leapfrog()) {
            end_step_owned(dispatch_, motion_, d_, end);
            gather_positions();  // after the drift
            end_step_and_map(step_end(false, false, false));
        } else {
            end_step_and_map(end);
        }
        pulls_zero_ = end.zero_pulls;
    }

    // exchange=overlap: the gather and the pull in gather_and_pull(), right after the drift. Euler
    // drifts and kicks with the last step's pull (the upload's at first), then pulls from the new
    // positions for the next step.
    void step_overlapped(const StepEnd<Real>& end) {
        if (leapfrog()) {
            gather_and_pull();
            end_step_and_map(end);
            pulls_zero_ = end.zero_pulls;
            return;
        }
        end_step_owned(dispatch_, motion_, d_, end);
        pulls_zero_ = end.zero_pulls;
        // The map only (the pulls are the next step's), beside the pull from the other blocks.
        gather_and_pull([&](Dispatch<Space>& beside) { end_step_and_map(beside, step_end(false, false, false)); });
    }

    // dispatch=graphK: `steps` steps from graphs recorded once, of K steps and of one step before
    // the last, and of the last step. Every graph starts from zero pulls where the variant adds into
    // them (its steps leave them so), so that no graph depends on what ran before it; but where
    // steps pull ahead, from the pulls of its positions, which its first kernel consumes.
    void replay(int steps) {
        if (!pulls_ahead()) zero_added_pulls();
        const int middle = steps - 1;
        for (int g = 0; g < middle / graph_steps_; ++g) submit(graph_steps_, false);
        for (int s = 0; s < middle % graph_steps_; ++s) submit(1, false);
        submit(1, true);
        pulls_zero_ = !pulls_ahead() && step_zeroes_pulls(true);
    }

    // Euler's overlapped steps: each ends with the pull of its new positions, the next step's.
    bool pulls_ahead() const { return overlapped() && !leapfrog(); }

    // The graph of `count` steps (the last of an advance() if `last`) run, and the positions'
    // buffers swapped as its steps swap them.
    void submit(int count, bool last) {
        graph_of(count, last).submit();
        if (fused_ && count % 2 == 1) swap_positions();
    }

    // The positions a step wrote become the current ones; with step_end=fused also its moves.
    void swap_positions() {
        std::swap(motion_.p, next_positions_);
        if (fused_) std::swap(map_.moved, next_moved_);
        positions_swapped_ = !positions_swapped_;
    }

    // Whether a step's last kernel leaves the pulls zero: where the variant adds into them, once
    // they are consumed, which they are unless a later advance() still needs them (leapfrog's
    // first half kick of its first step).
    bool step_zeroes_pulls(bool last) const { return adds_into_pulls() && (!leapfrog() || !last); }

    // The graph of `count` steps, the last of an advance() if `last`, recorded at first use: one
    // for each buffer the positions start in (step_end=fused swaps them every step), as a graph
    // keeps the Views it was recorded with; both at once, so that none is recorded while steps are
    // timed after a warm-up.
    const Kokkos::Experimental::Graph<Space>& graph_of(int count, bool last) {
        // step_breakdown()'s steps (one each) carry its events: a graph of their own.
        auto& graphs = timing_steps_ ? timed_step_graph_ : last ? last_step_graph_ : count == 1 ? step_graph_ : steps_graph_;
        if (!graphs[positions_swapped_]) {
            for (int buffer = 0; buffer < (fused_ ? 2 : 1); ++buffer) {
                graphs[positions_swapped_] = record_steps(count, last);
                if (fused_) swap_positions();
            }
        }
        return *graphs[positions_swapped_];
    }

    // A graph of `count` steps from zero pulls (replay()), recorded without changing the state
    // the host keeps of the simulation.
    Kokkos::Experimental::Graph<Space> record_steps(int count, bool last) {
        const bool pulls_were_zero = pulls_zero_;
        const bool swapped = positions_swapped_;
        pulls_zero_ = true;
        const auto steps = [&] {
            for (int s = 0; s < count; ++s) step(last && s + 1 == count);
        };
        auto graph = spans_ranks() ? capture(steps) : dispatch_.record(steps);
        pulls_zero_ = pulls_were_zero;
        if (positions_swapped_ != swapped) swap_positions();
        return graph;
    }

    // Over several ranks (steps_can_be_captured()): what `record` launches on the compute stream,
    // with the exchange instance's work and the all-gather joined to it by their events, captured
    // into a graph. Kokkos' own recording has no node for a collective or another stream's work.
    template <class Record>
    Kokkos::Experimental::Graph<Space> capture(const Record& record) {
#ifdef KOKKOS_ENABLE_CUDA
        if constexpr (kRunsOnGpu<Space>) {
            auto graph = Kokkos::Experimental::create_graph(space_);
            const cudaStream_t stream = space_.cuda_stream();
            // Relaxed: a kernel's first launch may still set its attributes or size Kokkos' scratch.
            check_cuda(cudaStreamBeginCaptureToGraph(stream, graph.native_graph(), nullptr, nullptr, 0,
                                                     cudaStreamCaptureModeRelaxed),
                       "cudaStreamBeginCaptureToGraph");
            cudaGraph_t captured = nullptr;
            try {
                record();
            } catch (...) {
                cudaStreamEndCapture(stream, &captured);
                throw;
            }
            check_cuda(cudaStreamEndCapture(stream, &captured), "cudaStreamEndCapture");
            return graph;
        }
#endif
        (void)record;
        throw std::logic_error("steps are captured on the CUDA space only");
    }

    // The steps per graph of the `dispatch` tuning (0: launched), refused where steps cannot be
    // recorded: a full recount clears its counts with deep_copy, and the ranks' gathers run between
    // kernels. auto: graphs on the GPU where they can be recorded, launches on host spaces (whose
    // graphs run the same kernels one by one).
    int graph_steps_for(const std::string& dispatch) const {
        const int steps = dispatch == "auto" ? (kRunsOnGpu<Space> ? kAutoGraphSteps : 0) : graph_steps_of(dispatch);
        if (steps == 0) return 0;
        if (dispatch == "auto") return steps_are_kernels_only() || steps_can_be_captured() ? steps : 0;
        if (steps_can_be_captured()) return steps;
        if (spans_ranks() && map_strategy_ == MapStrategy::incremental)
            throw UsageError("tuning dispatch=" + dispatch + " records steps over " +
                             std::to_string(problem_.distribution.ranks()) +
                             " ranks on the CUDA space with device collectives nccl or peer only; use dispatch=launch");
        require_kernels_only("dispatch=" + dispatch, "records steps", "dispatch=launch");
        return steps;
    }

    // Over several ranks: the steps and their all-gathers can be captured from the compute stream
    // into a graph (capture()): on the CUDA space, with map=incremental (a full recount clears its
    // counts with deep_copy) and device collectives that queue on the stream (not host-staged).
    bool steps_can_be_captured() const {
        const DeviceCommunicator* device = problem_.distribution.device;
        return kRunsOnGpu<Space> && spans_ranks() && map_strategy_ == MapStrategy::incremental && device != nullptr &&
               device->allgather_can_be_captured();
    }

    // step_end=fused where the variant has the tuning and its steps are kernels only.
    bool fused_for(const TuningValues& tuning) const {
        const auto step_end = tuning.find("step_end");
        if (step_end == tuning.end() || !fused_step_end_of(step_end->second, kRunsOnGpu<Space>, Dim)) return false;
        if (step_end->second == "auto") return steps_are_kernels_only();
        require_kernels_only("step_end=fused", "ends steps in the pull kernel", "step_end=separate");
        return true;
    }

    // Whether a step is kernels and nothing between them, as recorded graphs and a step ended in
    // the pull kernel need: map=incremental (the full recounts clear their counts with deep_copy)
    // on one rank (the ranks' gathers run between the kernels).
    bool steps_are_kernels_only() const { return map_strategy_ == MapStrategy::incremental && !spans_ranks(); }

    // UsageError for the tuning `setting` (which `does` something to the steps) unless they are
    // kernels only; over several ranks it names the setting to use instead.
    void require_kernels_only(const std::string& setting, const std::string& does,
                              const std::string& over_ranks_use) const {
        if (map_strategy_ != MapStrategy::incremental)
            throw UsageError("tuning " + setting + " " + does + " with map=incremental only");
        if (spans_ranks())
            throw UsageError("tuning " + setting + " runs on one rank; over " +
                             std::to_string(problem_.distribution.ranks()) + " ranks use " + over_ranks_use);
    }

    StepEnd<Real> step_end(bool advance, bool next_before_force, bool zero) const {
        return {integrator(), G(), dt(), advance, next_before_force, zero, owned_range()};
    }

    // The GPU Kokkos is to use: the device communicator's, so that the gathers and the kernels
    // share one device.
    static int device_of(const Distribution& distribution) {
        if (!kRunsOnGpu<Space> || !distribution.spans_ranks() || distribution.device == nullptr) return -1;
        return distribution.device->device();
    }

    // UsageError when the ranks cannot be served: a GPU space without device collectives, or a
    // Kokkos already running on another GPU than the device communicator's.
    void check_distribution() const {
        if (!spans_ranks()) return;
        if constexpr (kRunsOnGpu<Space>) {
            const Distribution& distribution = problem_.distribution;
            const std::string id = std::string("kokkos@") + SpaceName<Space>::value;
            if (distribution.device == nullptr)
                throw UsageError(id + " over " + std::to_string(distribution.ranks()) +
                                 " ranks needs device collectives (NCCL or host-staged); this run has none");
#ifdef KOKKOS_ENABLE_CUDA
            const int device = distribution.device->device();
            if (device >= 0 && device != space_.cuda_device())
                throw UsageError(id + " on rank " + std::to_string(distribution.rank()) + " runs on GPU " +
                                 std::to_string(space_.cuda_device()) + " (Kokkos was started before) but its "
                                 "device collectives use GPU " + std::to_string(device));
#endif
        }
    }

    DeviceAxes<Space, Real, Dim> axes(const std::string& name, std::size_t size) const {
        static constexpr const char* kAxis[] = {"x", "y", "z"};
        DeviceAxes<Space, Real, Dim> out;
        for (int k = 0; k < Dim; ++k) out.c[k] = DeviceReals<Space, Real>(name + kAxis[k], size);
        return out;
    }

    // The first from.size() elements of `to` (the bodies; a gathered View holds padding after them).
    template <class T>
    void copy_in(Kokkos::View<T*, typename Space::memory_space> to, const std::vector<T>& from) {
        Kokkos::deep_copy(space_, Kokkos::subview(to, std::make_pair(std::size_t{0}, from.size())),
                          HostConstReals<T>(from.data(), from.size()));
    }
    template <class T>
    void copy_out(std::vector<T>& to, Kokkos::View<T*, typename Space::memory_space> from) {
        Kokkos::deep_copy(space_, HostReals<T>(to.data(), to.size()),
                          Kokkos::subview(from, std::make_pair(std::size_t{0}, to.size())));
        space_.fence();
    }

    // Every rank's block of each View onto every rank (nothing without ranks).
    void gather(const std::vector<DeviceReals<Space, Real>>& views) {
        if (!spans_ranks()) return;
        const Distribution& distribution = problem_.distribution;
        if constexpr (kRunsOnGpu<Space>) {
#ifdef KOKKOS_ENABLE_CUDA
            // Queued on the space's stream after the kernels that wrote the blocks, and before the
            // next ones: no fence.
            std::vector<Real*> buffers;
            for (const auto& view : views) buffers.push_back(view.data());
            const cudaStream_t stream = space_.cuda_stream();
            if (timing_steps_) step_events_->exchange_start.mark(stream);
            distribution.device->allgather_in_place(std::span<Real* const>(buffers), decomposition_,
                                                    static_cast<void*>(stream));
            if (timing_steps_) step_events_->exchange_end.mark(stream);
#endif
        } else {
            space_.fence();  // the blocks written before the host collective reads them
            for (const auto& view : views)
                distribution.host->allgather_in_place(std::span<Real>(view.data(), problem_.n), decomposition_);
        }
    }
    void gather_positions() {
        if (!spans_ranks()) return;
        gather(std::vector<DeviceReals<Space, Real>>(motion_.p.c, motion_.p.c + Dim));
    }

    void pull_kernel() {
        zero_added_pulls();
        compute_pulls();
        pulls_zero_ = false;
    }

    // CUDA space over several ranks with exchange=overlap.
    bool overlapped() const { return kRunsOnGpu<Space> && spans_ranks() && overlaps_exchange(); }

    // exchange=overlap: forked from the compute instance after the drift, the exchange instance
    // gathers the positions while the compute one pulls the owned bodies from the owned block (its
    // positions are this rank's own; the gather leaves them alone); joined, the compute instance
    // adds the pull from every other block. The owned pull is queued first: a host-staged gather
    // holds the host until it is done.
    // `beside`, if given, is launched on the exchange instance once the positions have arrived,
    // beside the pull from the other blocks; the compute instance waits for both.
    void gather_and_pull([[maybe_unused]] const std::function<void(Dispatch<Space>&)>& beside = {}) {
#ifdef KOKKOS_ENABLE_CUDA
        if constexpr (kRunsOnGpu<Space>) {
            if (!exchange_) throw std::logic_error("an overlapped exchange before the upload");
            zero_added_pulls();
            exchange_->fork_from(space_);
            compute_pulls_from(owned_block_sources(owned_range(), n_));
            std::vector<Real*> buffers;
            for (int k = 0; k < Dim; ++k) buffers.push_back(motion_.p[k].data());
            const cudaStream_t exchange = exchange_->stream();
            problem_.distribution.device->allgather_in_place(std::span<Real* const>(buffers), decomposition_,
                                                             static_cast<void*>(exchange));
            exchange_->join_into(space_);
            if (beside) {
                Dispatch<Space> exchange_dispatch(exchange_->space());
                beside(exchange_dispatch);
            }
            compute_pulls_from(other_blocks_sources(owned_range(), n_));
            if (beside) exchange_->join_into(space_);
            pulls_zero_ = false;
            return;
        }
#endif
        throw std::logic_error("the overlapped exchange runs on the CUDA space only");
    }

    // Zeroes pulls() where the variant adds into them, unless the last kernel left them zero.
    void zero_added_pulls() {
        if (!adds_into_pulls() || pulls_zero_) return;
        zero_pulls_of(dispatch_, motion_.pull, n_);
        pulls_zero_ = true;
    }

    void end_step_and_map(const StepEnd<Real>& e) { end_step_and_map(dispatch_, e); }
    void end_step_and_map(Dispatch<Space>& dispatch, const StepEnd<Real>& e) {
        switch (map_strategy_) {
            case MapStrategy::incremental:
                end_step_and_move_counts(dispatch, motion_, map_, n_, d_, e);
                rewrite_moved_cells(dispatch, map_, n_);
                break;
            case MapStrategy::atomic_counts:
                end_step_and_count_atomic(dispatch, motion_, map_, n_, d_, e, false);
                normalise_map(dispatch, map_);
                break;
            case MapStrategy::scatter_view:
                end_step_and_count_scatter(dispatch, motion_, map_, scatter_, n_, d_, e);
                normalise_map(dispatch, map_);
                break;
        }
    }

    Problem problem_;
    BlockDecomposition decomposition_;
    BodyBlock owned_;
    Space space_;
    Dispatch<Space> dispatch_{space_};
    int n_, d_;
    MapStrategy map_strategy_;
    bool one_kernel_;  // StepKernels::one_per_advance
    int graph_steps_;  // dispatch=graphK: K; 0: launched or one_kernel_
    bool fused_;       // step_end=fused
    // Per buffer of the positions (positions_swapped_).
    std::optional<Kokkos::Experimental::Graph<Space>> steps_graph_[2], step_graph_[2], last_step_graph_[2],
        timed_step_graph_[2];
    Motion<Space, Real, Dim> motion_;
    DeviceAxes<Space, Real, Dim> next_positions_;  // fused_ or one_kernel_: where a step writes the positions
    Moves<Space> next_moved_;                      // step_end=fused: where a step records its moves
    DeviceCounts<Space> arrivals_;                 // step_end=fused: StepEndInPullKernel::arrivals
    bool positions_swapped_ = false;               // motion_.p is the buffer allocated as p_next
    DeviceReals<Space, Real> m_;
    MapState<Space> map_;
    CountScatter<Space> scatter_;
    bool pulls_zero_ = false;  // the last kernel left every pull zero

    bool timing_steps_ = false;  // step_breakdown() is running: the steps record their events
    // Sets timing_steps_ while it lives, however step_breakdown() leaves.
    struct TimingSteps {
        explicit TimingSteps(KokkosSimulation& simulation) : simulation(simulation) { simulation.timing_steps_ = true; }
        ~TimingSteps() { simulation.timing_steps_ = false; }
        TimingSteps(const TimingSteps&) = delete;
        TimingSteps& operator=(const TimingSteps&) = delete;
        KokkosSimulation& simulation;
    };
#ifdef KOKKOS_ENABLE_CUDA
    std::unique_ptr<CudaStepEvents> step_events_;     // made by the first step_breakdown()
    std::unique_ptr<CudaExchangeInstance> exchange_;  // exchange=overlap over several ranks, made at upload
#endif
};

template <class Space, class Real, int Dim>
void KokkosSimulation<Space, Real, Dim>::upload(const BodiesT<Real>& initial) {
    if (initial.size() != problem_.n || initial.dim != Dim)
        throw std::logic_error("upload of " + std::to_string(initial.size()) + " bodies in " +
                               std::to_string(initial.dim) + "D to a simulation of " + std::to_string(problem_.n) +
                               " in " + std::to_string(Dim) + "D");
    std::vector<DeviceReals<Space, Real>> positions_and_masses;
    for (int k = 0; k < Dim; ++k) {
        copy_in(motion_.p[k], initial.position(k));
        copy_in(motion_.v[k], initial.velocity(k));
        positions_and_masses.push_back(motion_.p[k]);
    }
    copy_in(m_, initial.m);
    positions_and_masses.push_back(m_);
    // Every rank holds the same whole state; the gather makes each owner's block the one all use.
    gather(positions_and_masses);
#ifdef KOKKOS_ENABLE_CUDA
    if constexpr (kRunsOnGpu<Space>) {
        if (overlapped() && !exchange_) exchange_ = std::make_unique<CudaExchangeInstance>(space_);
    }
#endif
    pulls_zero_ = false;
    // Overlapped, a step begins with the pull of its positions in both integrators.
    if (needs_initial_pull(integrator()) || overlapped()) pull_kernel();
    // Every strategy starts from a full count (map=incremental keeps the cells from here on).
    const StepEnd<Real> map_only = step_end(false, false, false);
    if (map_strategy_ == MapStrategy::scatter_view)
        end_step_and_count_scatter(dispatch_, motion_, map_, scatter_, n_, d_, map_only);
    else
        end_step_and_count_atomic(dispatch_, motion_, map_, n_, d_, map_only,
                                  map_strategy_ == MapStrategy::incremental);
    normalise_map(dispatch_, map_);
}

template <class Space, class Real, int Dim>
void KokkosSimulation<Space, Real, Dim>::advance(int steps) {
    if (steps <= 0) return;
    if (one_kernel_) {
        advance_in_one_kernel(
            {motion_, next_positions_, m_, map_, step_end(true, leapfrog(), false), n_, d_, steps});
        if (steps % 2 == 1) swap_positions();
        pulls_zero_ = false;
        return;
    }
    // The later steps' first halves run in the previous step's last kernel.
    if (leapfrog()) advance_before_force_owned(dispatch_, motion_, owned_range(), integrator(), G(), dt());
    if (graph_steps_ > 0) {
        replay(steps);
        return;
    }
    for (int s = 0; s < steps; ++s) step(s + 1 == steps);
}

template <class Space, class Real, int Dim>
std::optional<Simulation::StepBreakdown> KokkosSimulation<Space, Real, Dim>::step_breakdown(int steps) {
#ifdef KOKKOS_ENABLE_CUDA
    if constexpr (kRunsOnGpu<Space>) {
        if (!reports_step_breakdown() || overlapped()) return std::nullopt;
        if (!step_events_) step_events_ = std::make_unique<CudaStepEvents>();
        const CudaStepEvents& events = *step_events_;
        const cudaStream_t compute = space_.cuda_stream();
        const TimingSteps timing(*this);
        return Simulation::StepBreakdown::mean_of(steps, [&] {
            events.start.record(compute);
            advance(1);
            events.end.record(compute);
            synchronize();
            return std::pair(events.end.seconds_since(events.start),
                             spans_ranks() ? events.exchange_end.seconds_since(events.exchange_start) : 0.0);
        });
    }
#endif
    (void)steps;
    return std::nullopt;
}

template <class Space, class Real, int Dim>
void KokkosSimulation<Space, Real, Dim>::download(BodiesT<Real>& state, std::vector<float>& activity_map) {
    state = BodiesT<Real>(problem_.n, Dim);
    for (int k = 0; k < Dim; ++k) {
        copy_out(state.position(k), motion_.p[k]);
        copy_out(state.velocity(k), motion_.v[k]);
    }
    copy_out(state.m, m_);
    activity_map.resize(cells());
    copy_out(activity_map, map_.map);
}

// KokkosSimulation's code is the same for every variant: kokkos_simulation.cpp compiles it once per
// enabled space and workload, and a variant's file only declares those instantiations (compiled in
// every variant's file, it is 40 % of the model's compile time).
#define NBODY_KOKKOS_SIMULATIONS_ON(keyword, Space) \
    keyword class KokkosSimulation<Space, float, 2>;  \
    keyword class KokkosSimulation<Space, float, 3>;  \
    keyword class KokkosSimulation<Space, double, 2>; \
    keyword class KokkosSimulation<Space, double, 3>;
#ifdef KOKKOS_ENABLE_SERIAL
#define NBODY_KOKKOS_SIMULATIONS_SERIAL(keyword) NBODY_KOKKOS_SIMULATIONS_ON(keyword, Kokkos::Serial)
#else
#define NBODY_KOKKOS_SIMULATIONS_SERIAL(keyword)
#endif
#ifdef KOKKOS_ENABLE_OPENMP
#define NBODY_KOKKOS_SIMULATIONS_OPENMP(keyword) NBODY_KOKKOS_SIMULATIONS_ON(keyword, Kokkos::OpenMP)
#else
#define NBODY_KOKKOS_SIMULATIONS_OPENMP(keyword)
#endif
#ifdef KOKKOS_ENABLE_CUDA
#define NBODY_KOKKOS_SIMULATIONS_CUDA(keyword) NBODY_KOKKOS_SIMULATIONS_ON(keyword, Kokkos::Cuda)
#else
#define NBODY_KOKKOS_SIMULATIONS_CUDA(keyword)
#endif
// Every enabled space's, the spaces for_each_space() visits.
#define NBODY_KOKKOS_SIMULATIONS(keyword) \
    NBODY_KOKKOS_SIMULATIONS_SERIAL(keyword) NBODY_KOKKOS_SIMULATIONS_OPENMP(keyword) NBODY_KOKKOS_SIMULATIONS_CUDA(keyword)
#ifndef NBODY_KOKKOS_SIMULATION_DEFINITIONS
NBODY_KOKKOS_SIMULATIONS(extern template)
#endif

}  // namespace nbody::kokkos

// Kokkos' Sum reducer starts from this identity (the documented way to reduce a custom type).
template <class Real, int Dim>
struct Kokkos::reduction_identity<nbody::kokkos::Pull<Real, Dim>> {
    KOKKOS_FORCEINLINE_FUNCTION static nbody::kokkos::Pull<Real, Dim> sum() { return {}; }
};
