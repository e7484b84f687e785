#pragma once
// What the Kokkos variants share, templated on the execution space and the workload's real type and
// dimension: the runtime (initialised once, lazily), the spaces this Kokkos has, the device state
// in Views (one per axis), the step's halves and the activity map (atomics or ScatterView, the
// `map` tuning). A variant supplies only its pull kernel (one file per variant). Valid for Kokkos
// 3.4 through 4.x.
#include <Kokkos_Core.hpp>
#include <Kokkos_ScatterView.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
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

// The reciprocal square root, the policy of physics.hpp's accumulate_pull.
// float: the hardware approximation on both sides. On the GPU its flush-to-zero form of MUFU.RSQ:
// rsqrtf() wraps MUFU.RSQ in a rescaling of denormal arguments (a compare and two predicated
// multiplies per interaction, 3 of 13 instructions), which this argument, |d|^2 + eps^2 >= eps^2,
// never is while eps > 0. On the host, 1/sqrt compiled with kokkos_impl's math flags: GCC's
// hardware estimate plus one Newton step (rsqrtps for 128/256-bit vectors; for 512-bit ones GCC 12
// emits a sqrt estimate and a reciprocal estimate, each refined).
// double: the correctly rounded square root and division on every space (SPEC §2: a float64
// variant calls no float32 estimate). GCC has no double reciprocal-square-root estimate on x86
// (rsqrt patterns exist for float vectors and AVX512ER only), so the math flags leave sqrtsd/
// sqrtpd + divsd/divpd; nvcc without fast math compiles both IEEE-rounded.
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
    KOKKOS_INLINE_FUNCTION double operator()(double v) const {
#if defined(__CUDA_ARCH__)
        return 1.0 / ::sqrt(v);
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

// How the per-step activity map is counted (the `map` tuning).
enum class MapStrategy {
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

// The `map` tuning, for every variant.
TuningParameter map_tuning();
// An integer tuning restricted to the listed powers of two.
TuningParameter power_of_two_tuning(const std::string& name, const std::string& description, int smallest,
                                    int largest, int default_value);

// The simulation of the problem's workload: Sim<Space, Real, Dim> chosen once, here.
template <template <class, class, int> class Sim, class Space>
std::unique_ptr<Simulation> create_for_workload(const Problem& problem, const TuningValues& tuning) {
    const bool fp64 = problem.workload.precision == Precision::fp64;
    switch (problem.workload.dim) {
        case 2:
            if (fp64) return std::make_unique<Sim<Space, double, 2>>(problem, tuning);
            return std::make_unique<Sim<Space, float, 2>>(problem, tuning);
        case 3:
            if (fp64) return std::make_unique<Sim<Space, double, 3>>(problem, tuning);
            return std::make_unique<Sim<Space, float, 3>>(problem, tuning);
        default:
            throw UsageError("dimension " + std::to_string(problem.workload.dim) + " is not 2 or 3");
    }
}

// The descriptor fields every Kokkos variant fills the same way.
template <class Space, template <class, class, int> class Sim>
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
            .workloads = WorkloadSupport::every(),
            .availability = &availability,
            .create = &create_for_workload<Sim, Space>};
}

template <class Space>
using CountScatter = Kokkos::Experimental::ScatterView<int*, typename DeviceCounts<Space>::array_layout, Space>;

// Registers kokkos.<variant>@<space> for every enabled space; tunings(runs_on_gpu) lists its
// tunings on that space.
template <template <class, class, int> class Sim, class Tunings>
void register_for_each_space(Registry& registry, const std::string& variant, const std::string& description,
                             Tunings tunings) {
    for_each_space([&](auto tag) {
        using Space = typename decltype(tag)::type;
        registry.add(describe_variant<Space, Sim>(variant, description, tunings(kRunsOnGpu<Space>)));
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

// The device state of a step's halves: positions, velocities and the last pulls (without G).
template <class Space, class Real, int Dim>
struct Motion {
    DeviceAxes<Space, Real, Dim> p, v, pull;
};

// Advance before force on every body (leapfrog only: Euler has nothing to do then). Public free
// functions: nvcc's extended lambdas must not live in private member functions.
template <class Space, class Real, int Dim>
void advance_before_force_all(const Space& space, Motion<Space, Real, Dim> s, int n, Integrator integrator, Real G,
                              Real dt) {
    Kokkos::parallel_for(
        "nbody::kokkos::advance_before_force", Kokkos::RangePolicy<Space>(space, 0, n), KOKKOS_LAMBDA(const int i) {
            Vec<Real, Dim> p = load(s.p, i), v = load(s.v, i);
            advance_before_force(integrator, p, v, load(s.pull, i), G, dt);
            store(s.p, i, p);
            store(s.v, i, v);
        });
}

// Counts bodies per cell (the x-y projection) into `counts`, after the advance after force on each
// when `advance`, then writes the normalised map.
template <class Space, class Real, int Dim>
KOKKOS_INLINE_FUNCTION int advance_after_force_and_cell(const Motion<Space, Real, Dim>& s, int i, int d,
                                                        Integrator integrator, Real G, Real dt, bool advance) {
    if (advance) {
        Vec<Real, Dim> p = load(s.p, i), v = load(s.v, i);
        advance_after_force(integrator, p, v, load(s.pull, i), G, dt);
        store(s.p, i, p);
        store(s.v, i, v);
    }
    return activity_cell(s.p[0](i), s.p[1](i), d);
}

template <class Space, class Real, int Dim>
void advance_and_count_atomic(const Space& space, Motion<Space, Real, Dim> s, DeviceCounts<Space> counts, int n,
                              int d, Integrator integrator, Real G, Real dt, bool advance) {
    Kokkos::deep_copy(space, counts, 0);
    Kokkos::parallel_for(
        "nbody::kokkos::advance_count_atomic", Kokkos::RangePolicy<Space>(space, 0, n), KOKKOS_LAMBDA(const int i) {
            const int cell = advance_after_force_and_cell(s, i, d, integrator, G, dt, advance);
            if (cell >= 0) Kokkos::atomic_add(&counts(cell), 1);
        });
}

template <class Space, class Real, int Dim>
void advance_and_count_scatter(const Space& space, Motion<Space, Real, Dim> s, DeviceCounts<Space> counts,
                               CountScatter<Space> scatter_counts, int n, int d, Integrator integrator, Real G, Real dt,
                               bool advance) {
    Kokkos::deep_copy(space, counts, 0);
    scatter_counts.reset(space);
    Kokkos::parallel_for(
        "nbody::kokkos::advance_count_scatter", Kokkos::RangePolicy<Space>(space, 0, n), KOKKOS_LAMBDA(const int i) {
            const int cell = advance_after_force_and_cell(s, i, d, integrator, G, dt, advance);
            if (cell >= 0) {
                auto access = scatter_counts.access();
                access(cell) += 1;
            }
        });
    Kokkos::Experimental::contribute(counts, scatter_counts);
}

template <class Space>
void normalise_map(const Space& space, DeviceCounts<Space> counts, DeviceReals<Space, float> map, float scale) {
    Kokkos::parallel_for(
        "nbody::kokkos::normalise_map", Kokkos::RangePolicy<Space>(space, 0, static_cast<int>(map.extent(0))),
        KOKKOS_LAMBDA(const int c) { map(c) = static_cast<float>(counts(c)) * scale; });
}

// The state of one simulation of one workload (Real, Dim) in Views of the space's memory; a
// variant adds compute_pulls(). A step: advance before force, pulls, advance after force with
// the map's counting (SPEC §2).
template <class Space, class Real, int Dim>
class KokkosSimulation : public SimulationOf<Real> {
public:
    using SimulationOf<Real>::upload;
    using SimulationOf<Real>::download;

    KokkosSimulation(const Problem& problem, const TuningValues& tuning)
        : problem_((ensure_initialized(), problem)),
          n_(checked_body_count(problem.n)),
          d_(problem.d),
          map_strategy_(map_strategy_of<Space>(tuning, problem.d)),
          motion_{axes("p"), axes("v"), axes("pull")},
          m_("m", problem.n),
          counts_("counts", cells()),
          map_("map", cells()) {
        if (map_strategy_ == MapStrategy::scatter_view) scatter_ = CountScatter<Space>(counts_);
    }

    void upload(const BodiesT<Real>& initial) final {
        if (initial.size() != problem_.n || initial.dim != Dim)
            throw std::logic_error("upload of " + std::to_string(initial.size()) + " bodies in " +
                                   std::to_string(initial.dim) + "D to a simulation of " + std::to_string(problem_.n) +
                                   " in " + std::to_string(Dim) + "D");
        for (int k = 0; k < Dim; ++k) {
            copy_in(motion_.p[k], initial.position(k));
            copy_in(motion_.v[k], initial.velocity(k));
        }
        copy_in(m_, initial.m);
        if (needs_initial_pull(integrator())) compute_pulls();
        advance_after_force_and_map(false);
    }

    void advance(int steps) final {
        const Real G = static_cast<Real>(problem_.constants.G), dt = static_cast<Real>(problem_.constants.dt);
        for (int s = 0; s < steps; ++s) {
            if (integrator() == Integrator::leapfrog)
                advance_before_force_all(space_, motion_, n_, integrator(), G, dt);
            compute_pulls();
            advance_after_force_and_map(true);
        }
    }

    void synchronize() final { space_.fence(); }

    void download(BodiesT<Real>& state, std::vector<float>& activity_map) final {
        state = BodiesT<Real>(problem_.n, Dim);
        for (int k = 0; k < Dim; ++k) {
            copy_out(state.position(k), motion_.p[k]);
            copy_out(state.velocity(k), motion_.v[k]);
        }
        copy_out(state.m, m_);
        activity_map.resize(cells());
        copy_out(activity_map, map_);
    }

protected:
    // Writes the summed pull (without G) on every body into pulls() from positions() and
    // masses(), which stay unchanged meanwhile (the step's snapshot).
    virtual void compute_pulls() = 0;

    const Space& space() const { return space_; }
    int n() const { return n_; }
    const Workload& workload() const { return problem_.workload; }
    Real eps2() const { return static_cast<Real>(problem_.constants.eps2()); }
    DeviceAxes<Space, Real, Dim> positions() const { return motion_.p; }
    DeviceReals<Space, Real> masses() const { return m_; }
    DeviceAxes<Space, Real, Dim> pulls() const { return motion_.pull; }

private:
    std::size_t cells() const { return static_cast<std::size_t>(problem_.d) * problem_.d; }
    Integrator integrator() const { return problem_.workload.integrator; }

    DeviceAxes<Space, Real, Dim> axes(const std::string& name) const {
        static constexpr const char* kAxis[] = {"x", "y", "z"};
        DeviceAxes<Space, Real, Dim> out;
        for (int k = 0; k < Dim; ++k) out.c[k] = DeviceReals<Space, Real>(name + kAxis[k], problem_.n);
        return out;
    }

    template <class T>
    void copy_in(Kokkos::View<T*, typename Space::memory_space> to, const std::vector<T>& from) {
        Kokkos::deep_copy(space_, to, HostConstReals<T>(from.data(), from.size()));
    }
    template <class T>
    void copy_out(std::vector<T>& to, Kokkos::View<T*, typename Space::memory_space> from) {
        Kokkos::deep_copy(space_, HostReals<T>(to.data(), to.size()), from);
        space_.fence();
    }

    void advance_after_force_and_map(bool advance) {
        const Real G = static_cast<Real>(problem_.constants.G), dt = static_cast<Real>(problem_.constants.dt);
        if (map_strategy_ == MapStrategy::atomic_counts)
            advance_and_count_atomic(space_, motion_, counts_, n_, d_, integrator(), G, dt, advance);
        else
            advance_and_count_scatter(space_, motion_, counts_, scatter_, n_, d_, integrator(), G, dt, advance);
        normalise_map(space_, counts_, map_, activity_scale(problem_.n, problem_.d));
    }

    Problem problem_;
    Space space_;
    int n_, d_;
    MapStrategy map_strategy_;
    Motion<Space, Real, Dim> motion_;
    DeviceReals<Space, Real> m_;
    DeviceCounts<Space> counts_;
    DeviceReals<Space, float> map_;
    CountScatter<Space> scatter_;
};

}  // namespace nbody::kokkos

// Kokkos' Sum reducer starts from this identity (the documented way to reduce a custom type).
template <class Real, int Dim>
struct Kokkos::reduction_identity<nbody::kokkos::Pull<Real, Dim>> {
    KOKKOS_FORCEINLINE_FUNCTION static nbody::kokkos::Pull<Real, Dim> sum() { return {}; }
};
