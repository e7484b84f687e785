#pragma once
// What the Kokkos variants share, templated on the execution space: the runtime (initialised once,
// lazily), the spaces this Kokkos has, the device state in Views, integration and the activity map
// (atomics or ScatterView, the `map` tuning). A variant supplies only its pull kernel (one file per
// variant). Valid for Kokkos 3.4 through 4.x.
#include <Kokkos_Core.hpp>
#include <Kokkos_ScatterView.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "nbody/errors.hpp"
#include "nbody/registry.hpp"
#include "nbody/variant.hpp"

namespace nbody::kokkos {

// Initialises Kokkos on first use (every enabled space at once, as Kokkos does) and finalises it
// at exit. Throws std::runtime_error when availability() says no.
void ensure_initialized();
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

// The reciprocal square root: the hardware approximation on both sides. On the GPU its flush-to-
// zero form of MUFU.RSQ: rsqrtf() wraps MUFU.RSQ in a rescaling of denormal arguments (a compare
// and two predicated multiplies per interaction, 3 of 13 instructions), which this argument,
// |d|^2 + eps^2 >= eps^2, never is while eps > 0. On the host, 1/sqrt compiled with
// kokkos_impl's math flags: GCC's hardware estimate plus one Newton step (rsqrtps for 128/256-bit
// vectors; for 512-bit ones GCC 12 emits a sqrt estimate and a reciprocal estimate, each refined).
struct InvSqrt {
    KOKKOS_INLINE_FUNCTION float operator()(float v) const {
#if defined(__CUDA_ARCH__)
        float inv;
        asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(inv) : "f"(v));
        return inv;
#else
        return 1.0f / std::sqrt(v);
#endif
    }
};

// The two pull components of one body, summed by vector reductions (Kokkos' Sum reducer).
struct Pull {
    float x = 0.0f, y = 0.0f;
    KOKKOS_INLINE_FUNCTION Pull& operator+=(const Pull& other) {
        x += other.x;
        y += other.y;
        return *this;
    }
};

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

// How the per-step activity map is counted (the `map` tuning).
enum class MapStrategy {
    atomic_counts,  // Kokkos::atomic_add on one shared count array
    scatter_view,   // Kokkos::Experimental::ScatterView: atomics on the GPU, per-thread copies on OpenMP
};

template <class Space>
using DeviceFloats = Kokkos::View<float*, typename Space::memory_space>;
template <class Space>
using DeviceCounts = Kokkos::View<int*, typename Space::memory_space>;
using HostFloats = Kokkos::View<float*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
using HostConstFloats = Kokkos::View<const float*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// The `map` tuning, for every variant.
TuningParameter map_tuning();
// An integer tuning restricted to the listed powers of two.
TuningParameter power_of_two_tuning(const std::string& name, const std::string& description, int smallest,
                                    int largest, int default_value);
// The descriptor fields every Kokkos variant fills the same way.
template <class Space, class Sim>
VariantDescriptor describe_variant(const std::string& variant, const std::string& description,
                                   std::vector<TuningParameter> tunings) {
    tunings.push_back(map_tuning());
    return {.id = "kokkos." + variant + "@" + SpaceName<Space>::value,
            .backend = "kokkos",
            .execution_space = SpaceName<Space>::value,
            .description = description,
            .tunings = std::move(tunings),
            .max_n = 0,
            .runs_on_gpu = kRunsOnGpu<Space>,
            .availability = &availability,
            .create = [](const Problem& p, const TuningValues& t) -> std::unique_ptr<Simulation> {
                return std::make_unique<Sim>(p, t);
            }};
}

template <class Space>
using CountScatter = Kokkos::Experimental::ScatterView<int*, typename DeviceCounts<Space>::array_layout, Space>;

// Registers kokkos.<variant>@<space> for every enabled space; tunings(runs_on_gpu) lists its
// tunings on that space.
template <template <class> class Sim, class Tunings>
void register_for_each_space(Registry& registry, const std::string& variant, const std::string& description,
                             Tunings tunings) {
    for_each_space([&](auto tag) {
        using Space = typename decltype(tag)::type;
        registry.add(describe_variant<Space, Sim<Space>>(variant, description, tunings(kRunsOnGpu<Space>)));
    });
}

// ScatterView's host duplication (one copy of the counts per thread) is refused above this.
inline constexpr std::size_t kMaxScatterBytes = std::size_t{4} << 30;

// The map strategy a tuning names; UsageError when a ScatterView would duplicate too much.
template <class Space>
MapStrategy map_strategy_of(const TuningValues& tuning, int d) {
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

// Counts bodies per cell into `counts` after integrating each with (ax, ay) when `integrate`, then
// writes the normalised map. Public free functions: nvcc's extended lambdas must not live in
// private member functions.
template <class Space>
void integrate_and_count_atomic(const Space& space, DeviceFloats<Space> x, DeviceFloats<Space> y,
                                DeviceFloats<Space> vx, DeviceFloats<Space> vy, DeviceFloats<Space> ax,
                                DeviceFloats<Space> ay, DeviceCounts<Space> counts, int n, int d, float G,
                                float dt, bool integrate) {
    Kokkos::deep_copy(space, counts, 0);
    Kokkos::parallel_for(
        "nbody::kokkos::integrate_atomic", Kokkos::RangePolicy<Space>(space, 0, n), KOKKOS_LAMBDA(const int i) {
            if (integrate) integrate_body(x(i), y(i), vx(i), vy(i), ax(i), ay(i), G, dt);
            const int cell = activity_cell(x(i), y(i), d);
            if (cell >= 0) Kokkos::atomic_add(&counts(cell), 1);
        });
}

template <class Space>
void integrate_and_count_scatter(const Space& space, DeviceFloats<Space> x, DeviceFloats<Space> y,
                                 DeviceFloats<Space> vx, DeviceFloats<Space> vy, DeviceFloats<Space> ax,
                                 DeviceFloats<Space> ay, DeviceCounts<Space> counts, CountScatter<Space> scatter,
                                 int n, int d, float G, float dt, bool integrate) {
    Kokkos::deep_copy(space, counts, 0);
    scatter.reset(space);
    Kokkos::parallel_for(
        "nbody::kokkos::integrate_scatter", Kokkos::RangePolicy<Space>(space, 0, n), KOKKOS_LAMBDA(const int i) {
            if (integrate) integrate_body(x(i), y(i), vx(i), vy(i), ax(i), ay(i), G, dt);
            const int cell = activity_cell(x(i), y(i), d);
            if (cell >= 0) {
                auto access = scatter.access();
                access(cell) += 1;
            }
        });
    Kokkos::Experimental::contribute(counts, scatter);
}

template <class Space>
void normalise_map(const Space& space, DeviceCounts<Space> counts, DeviceFloats<Space> map, float scale) {
    Kokkos::parallel_for(
        "nbody::kokkos::normalise_map", Kokkos::RangePolicy<Space>(space, 0, static_cast<int>(map.extent(0))),
        KOKKOS_LAMBDA(const int c) { map(c) = static_cast<float>(counts(c)) * scale; });
}

// The state of one simulation in Views of the space's memory; a variant adds compute_pulls().
template <class Space>
class KokkosSimulation : public Simulation {
public:
    KokkosSimulation(const Problem& problem, const TuningValues& tuning)
        : problem_((ensure_initialized(), problem)),
          n_(checked_body_count(problem.n)),
          d_(problem.d),
          map_strategy_(map_strategy_of<Space>(tuning, problem.d)),
          x_("x", problem.n), y_("y", problem.n), vx_("vx", problem.n), vy_("vy", problem.n), m_("m", problem.n),
          ax_("ax", problem.n), ay_("ay", problem.n),
          counts_("counts", cells()), map_("map", cells()) {
        if (map_strategy_ == MapStrategy::scatter_view) scatter_ = CountScatter<Space>(counts_);
    }

    void upload(const Bodies& initial) final {
        copy_in(x_, initial.x);
        copy_in(y_, initial.y);
        copy_in(vx_, initial.vx);
        copy_in(vy_, initial.vy);
        copy_in(m_, initial.m);
        integrate_and_map(false);
    }

    void advance(int steps) final {
        for (int s = 0; s < steps; ++s) {
            compute_pulls();
            integrate_and_map(true);
        }
    }

    void synchronize() final { space_.fence(); }

    void download(Bodies& state, std::vector<float>& activity_map) final {
        state = Bodies(problem_.n);
        copy_out(state.x, x_);
        copy_out(state.y, y_);
        copy_out(state.vx, vx_);
        copy_out(state.vy, vy_);
        copy_out(state.m, m_);
        activity_map.resize(cells());
        copy_out(activity_map, map_);
    }

protected:
    // Writes the summed pull (without G) on every body into ax(), ay() from x(), y(), m(), which
    // stay unchanged meanwhile (the step's snapshot).
    virtual void compute_pulls() = 0;

    const Space& space() const { return space_; }
    int n() const { return n_; }
    float eps2() const { return static_cast<float>(problem_.constants.eps2()); }
    DeviceFloats<Space> x() const { return x_; }
    DeviceFloats<Space> y() const { return y_; }
    DeviceFloats<Space> m() const { return m_; }
    DeviceFloats<Space> ax() const { return ax_; }
    DeviceFloats<Space> ay() const { return ay_; }

private:
    std::size_t cells() const { return static_cast<std::size_t>(problem_.d) * problem_.d; }

    void copy_in(DeviceFloats<Space> to, const std::vector<float>& from) {
        Kokkos::deep_copy(space_, to, HostConstFloats(from.data(), from.size()));
    }
    void copy_out(std::vector<float>& to, DeviceFloats<Space> from) {
        Kokkos::deep_copy(space_, HostFloats(to.data(), to.size()), from);
        space_.fence();
    }

    void integrate_and_map(bool integrate) {
        const float G = static_cast<float>(problem_.constants.G), dt = static_cast<float>(problem_.constants.dt);
        if (map_strategy_ == MapStrategy::atomic_counts)
            integrate_and_count_atomic(space_, x_, y_, vx_, vy_, ax_, ay_, counts_, n_, d_, G, dt, integrate);
        else
            integrate_and_count_scatter(space_, x_, y_, vx_, vy_, ax_, ay_, counts_, scatter_, n_, d_, G, dt,
                                        integrate);
        normalise_map(space_, counts_, map_, activity_scale(problem_.n, problem_.d));
    }

    Problem problem_;
    Space space_;
    int n_, d_;
    MapStrategy map_strategy_;
    DeviceFloats<Space> x_, y_, vx_, vy_, m_, ax_, ay_;
    DeviceCounts<Space> counts_;
    DeviceFloats<Space> map_;
    CountScatter<Space> scatter_;
};

}  // namespace nbody::kokkos

// Kokkos' Sum reducer starts from this identity (the documented way to reduce a custom type).
template <>
struct Kokkos::reduction_identity<nbody::kokkos::Pull> {
    KOKKOS_FORCEINLINE_FUNCTION static nbody::kokkos::Pull sum() { return {}; }
};
