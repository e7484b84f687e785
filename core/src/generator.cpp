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

float generated_coordinate(std::uint64_t seed, std::size_t index, int dim, int axis) {
    const auto k = static_cast<std::uint64_t>(dim) * static_cast<std::uint64_t>(index) + static_cast<std::uint64_t>(axis);
    return unit_float_from(SplitMix64::output_at(seed, k));
}

template <class Real>
BodiesT<Real> generate_bodies_of(std::size_t n, int dim, std::uint64_t seed) {
    BodiesT<Real> bodies(n, dim);
    SplitMix64 rng(seed);
    const Real mass = Real(1) / static_cast<Real>(n);
    for (std::size_t i = 0; i < n; ++i) {
        for (int axis = 0; axis < dim; ++axis) bodies.position(axis)[i] = unit_float_from(rng.next());
        for (int axis = 0; axis < dim; ++axis) bodies.velocity(axis)[i] = Real(0);
        bodies.m[i] = mass;
    }
    return bodies;
}

template BodiesT<float> generate_bodies_of<float>(std::size_t, int, std::uint64_t);
template BodiesT<double> generate_bodies_of<double>(std::size_t, int, std::uint64_t);

HostState generate_state(const Workload& workload, std::size_t n, std::uint64_t seed) {
    return make_host_state(workload.precision,
                           [&]<class Real>() { return generate_bodies_of<Real>(n, workload.dim, seed); });
}

}  // namespace nbody
