#pragma once
// How many bodies a host work item holds as the lanes of its vector registers (kokkos.simd's work
// items, kokkos.folded_mass's body_mapping=lanes, thrust.split_j's bodies=lanes): the loop over
// them is the one the compiler vectorises, each lane an independent chain of interactions.
#include <type_traits>

namespace nbody {

// Bytes of each axis per work item, in AVX-512 vectors (independent chains per j body; more chains
// share the j body's loads and the loop counter): the most that measured faster on the Xeon hosts
// with AVX-512's 32 vector registers, which hold the chains' positions, sums and temporaries and the
// refinement's constants. Four in float32 (3D reads a few positions back from the stack and still
// gained 3-4 % over two; three measured the same as four), three in 2D float64, two in 3D float64
// (three or four spill there, and lost 1-3 %), measured with kokkos.simd. Elsewhere (16 vector
// registers) 128 bytes, unmeasured wider. docs/performance-kokkos.md.
template <class Real, int Dim>
inline constexpr int kGroupBytes =
#if defined(__AVX512F__)
    64 * (std::is_same_v<Real, float> ? 4 : Dim == 2 ? 3 : 2);
#else
    128;
#endif

template <class Real, int Dim>
inline constexpr int kLanes = kGroupBytes<Real, Dim> / static_cast<int>(sizeof(Real));

}  // namespace nbody
