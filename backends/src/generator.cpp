#include "nbody/generator.hpp"

namespace nbody {

namespace {
constexpr std::uint64_t kGamma = 0x9E3779B97F4A7C15ull;

std::uint64_t mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
}  // namespace

std::uint64_t SplitMix64::next() {
    state_ += kGamma;
    return mix(state_);
}

std::uint64_t SplitMix64::output_at(std::uint64_t seed, std::uint64_t k) {
    return mix(seed + (k + 1) * kGamma);
}

float unit_float_from(std::uint64_t draw) {
    return static_cast<float>(draw >> 40) * 0x1.0p-24f;
}

void generated_position(std::uint64_t seed, std::size_t index, float& x, float& y) {
    x = unit_float_from(SplitMix64::output_at(seed, 2 * static_cast<std::uint64_t>(index)));
    y = unit_float_from(SplitMix64::output_at(seed, 2 * static_cast<std::uint64_t>(index) + 1));
}

Bodies generate_bodies(std::size_t n, std::uint64_t seed) {
    Bodies bodies(n);
    SplitMix64 rng(seed);
    const float mass = 1.0f / static_cast<float>(n);
    for (std::size_t i = 0; i < n; ++i) {
        bodies.x[i] = unit_float_from(rng.next());
        bodies.y[i] = unit_float_from(rng.next());
        bodies.vx[i] = 0.0f;
        bodies.vy[i] = 0.0f;
        bodies.m[i] = mass;
    }
    return bodies;
}

}  // namespace nbody
