#pragma once
// The Kokkos model's ground floor: the runtime (initialised once, lazily), the spaces this Kokkos
// has, and the pieces every kernel uses (the reciprocal square root, the pull as a reduction value,
// a body's axes in Views, team shapes, a j body staged in scratch). Valid for Kokkos 3.4 through 4.x.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "nbody/errors.hpp"
#include "nbody/inv_sqrt.hpp"
#include "nbody/physics.hpp"
#include "nbody/registry.hpp"
#include "nbody/variant.hpp"

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
struct alignas(16) PackedBody {
    Real c[4];
    KOKKOS_INLINE_FUNCTION Vec<Real, Dim> position() const {
        Vec<Real, Dim> p;
        NBODY_UNROLL_AXES
        for (int k = 0; k < Dim; ++k) p[k] = c[k];
        return p;
    }
};
template <class Real, int Dim>
struct TileBody : PackedBody<Real, Dim> {
    KOKKOS_INLINE_FUNCTION Real mass() const { return this->c[Dim]; }
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

}  // namespace nbody::kokkos

// Kokkos' Sum reducer starts from this identity (the documented way to reduce a custom type).
template <class Real, int Dim>
struct Kokkos::reduction_identity<nbody::kokkos::Pull<Real, Dim>> {
    KOKKOS_FORCEINLINE_FUNCTION static nbody::kokkos::Pull<Real, Dim> sum() { return {}; }
};
