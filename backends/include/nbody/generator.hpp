#pragma once
// Initial conditions (SPEC §1): SplitMix64, x then y per body, (next() >> 40) * 2^-24.
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

// Position of body `index` as the generator would give it (draws 2*index and 2*index+1).
void generated_position(std::uint64_t seed, std::size_t index, float& x, float& y);

// N bodies at rest, positions from the generator, mass 1/N each.
Bodies generate_bodies(std::size_t n, std::uint64_t seed = kDefaultSeed);

}  // namespace nbody
