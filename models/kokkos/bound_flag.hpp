#pragma once
// The bound check of the portable reciprocal square root (inv_sqrt.hpp) on host spaces: its estimate
// of 1/sqrt(inf) is not 0, so a kernel that packs the bodies j flags a step in which a coordinate
// passes the bound beyond which r^2 may overflow, and the pull kernel then saturates r^2
// (kokkos.folded_mass, kokkos.simd; physics.hpp's with_hardware_or_portable_inv_sqrt reads the
// flag). The GPU's MUFU.RSQ of infinity is 0: no check there.
#include <Kokkos_Core.hpp>

#include <cmath>

#include "kokkos_spaces.hpp"
#include "nbody/inv_sqrt.hpp"
#include "nbody/physics.hpp"

namespace nbody::kokkos {

// Whether a coordinate of some body passed the step's position bound (host spaces: set by the kernel
// that packs the bodies j, read by the pull kernel). A View of one int, zeroed by its own kernel, so
// that a step stays kernels a graph records.
template <class Space>
using BoundFlag = Kokkos::View<int, typename Space::memory_space>;

// On a host space, the flag set where a coordinate of `p` passes `bound`; nothing on the GPU. A
// function of its own: the pack kernel's lambda must capture the same variables in nvcc's host and
// device passes (a lambda whose captures differ by __CUDA_ARCH__ launches a kernel that does not
// exist: "invalid resource handle").
template <class Flag, class Real, int Dim>
KOKKOS_INLINE_FUNCTION void flag_beyond_bound(const Flag& beyond_bound, const Vec<Real, Dim>& p, Real bound) {
#if defined(__CUDA_ARCH__)
    (void)beyond_bound;
    (void)p;
    (void)bound;
#else
    bool beyond = false;
    for (int k = 0; k < Dim; ++k) beyond = beyond || !(std::abs(p[k]) <= bound);
    if (beyond) Kokkos::atomic_exchange(&beyond_bound(), 1);
#endif
}

// The host spaces' bound check, cleared before each step's pack kernel (a functor: nvcc refuses an
// extended lambda in a discarded if constexpr branch, and kokkos.simd's host lambdas need none).
template <class Space>
struct ClearBoundFlag {
    BoundFlag<Space> flag;
    KOKKOS_INLINE_FUNCTION void operator()(const int) const { flag() = 0; }
};

}  // namespace nbody::kokkos
