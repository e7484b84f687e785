#pragma once
// Initial conditions (SPEC §1, §2): SplitMix64; per body, in order, x then y (then z in 3D), each
// (next() >> 40) * 2^-24, an exact float in [0, 1) (exact in double too); velocities zero; mass 1/N
// computed in the workload's precision.
#include <cstddef>
#include <cstdint>

#include "nbody/bodies.hpp"

namespace nbody {

inline constexpr std::uint64_t kDefaultSeed = 42;

class SplitMix64 {
public:
    explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next();
    // The k-th output (k = 0, 1, ...) of a fresh generator with this seed, without drawing the others.
    static std::uint64_t output_at(std::uint64_t seed, std::uint64_t k);

private:
    std::uint64_t state_;
};

// An exact float in [0, 1) from one 64-bit draw.
float unit_float_from(std::uint64_t draw);

// Coordinate `axis` (0: x, 1: y, 2: z) of body `index` as the generator gives it in `dim`
// dimensions: draw dim*index + axis of the stream.
float generated_coordinate(std::uint64_t seed, std::size_t index, int dim, int axis);

// N bodies at rest in `dim` dimensions, positions from the generator, mass 1/N each.
template <class Real>
BodiesT<Real> generate_bodies_of(std::size_t n, int dim, std::uint64_t seed);

// The canonical 2D float32 state.
inline Bodies generate_bodies(std::size_t n, std::uint64_t seed = kDefaultSeed) {
    return generate_bodies_of<float>(n, 2, seed);
}

// The generated state of a workload (its dimension and precision).
HostState generate_state(const Workload& workload, std::size_t n, std::uint64_t seed = kDefaultSeed);

}  // namespace nbody
