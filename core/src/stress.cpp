#include "nbody/stress.hpp"

#include <cmath>
#include <stdexcept>

#include "nbody/errors.hpp"
#include "nbody/generator.hpp"

namespace nbody {

namespace {

struct KindName {
    StressKind kind;
    const char* name;
};
constexpr KindName kKindNames[] = {
    {StressKind::masses, "masses"},   {StressKind::cluster, "cluster"}, {StressKind::drift, "drift"},
    {StressKind::fast_drift, "fast_drift"}, {StressKind::binary, "binary"}, {StressKind::outside, "outside"},
    {StressKind::mixed, "mixed"},
};

// The case in double: positions from the generator, velocities zero, equal masses; then the kind's changes.
BodiesT<double> stress_bodies(StressKind kind, std::size_t n, int dim, std::uint64_t seed, PhysicsConstants& constants) {
    BodiesT<double> b = generate_bodies_of<double>(n, dim, seed);
    SplitMix64 rng(seed ^ 0x57e55c0deULL);
    const auto uniform = [&rng] { return static_cast<double>(unit_float_from(rng.next())); };
    // Masses 10^(-decades * u), normalised to a total of 1.
    const auto spread_masses = [&](double decades) {
        double total = 0;
        for (double& m : b.m) total += (m = std::pow(10.0, -decades * uniform()));
        for (double& m : b.m) m /= total;
    };
    // Bodies 0 and 1, `separation` apart along x around (0.5, 0.5), each of `mass`, in a circular
    // orbit of the softened pull (each at separation/2 from the centre).
    const auto close_pair = [&](double separation, double mass) {
        for (int k = 0; k < dim; ++k) b.position(k)[0] = b.position(k)[1] = 0.5;
        b.x[0] -= separation / 2;
        b.x[1] += separation / 2;
        const double s2 = separation * separation + constants.eps2();
        const double speed = std::sqrt(constants.G * mass * separation * separation / 2 / (s2 * std::sqrt(s2)));
        b.vy[0] = -speed;
        b.vy[1] = speed;
        b.m[0] = b.m[1] = mass;
    };
    switch (kind) {
        case StressKind::masses:
            constants.softening = 0.01;
            spread_masses(8);
            break;
        case StressKind::cluster:
            constants.softening = 0.001;
            for (int k = 0; k < dim; ++k)
                for (double& p : b.position(k)) p = 0.5 + (p - 0.5) * 2e-3;
            break;
        case StressKind::drift:
        case StressKind::fast_drift: {
            const double speed = kind == StressKind::drift ? 100.0 : 1e5;
            for (std::size_t i = 0; i < n; ++i) {
                b.vx[i] = 0.6 * speed;
                b.vy[i] = 0.8 * speed;
            }
            break;
        }
        case StressKind::binary:
            constants.softening = 0.005;
            for (double& m : b.m) m = 0.9 / static_cast<double>(n - 2);
            close_pair(0.01, 0.05);
            break;
        case StressKind::outside:
            // Every fourth body 10 to 1000 units out, in a random direction per axis.
            for (std::size_t i = 0; i < n; i += 4)
                for (int k = 0; k < dim; ++k)
                    b.position(k)[i] = (uniform() < 0.5 ? -1.0 : 1.0) * std::pow(10.0, 1.0 + 2.0 * uniform());
            break;
        case StressKind::mixed:
            constants.softening = 0.01;
            spread_masses(4);
            close_pair(0.05, 0.02);
            b.vx[2] = 60.0;  // a fast body
            b.vy[2] = 80.0;
            break;
    }
    return b;
}

}  // namespace

const std::vector<StressKind>& all_stress_kinds() {
    static const std::vector<StressKind> kinds = [] {
        std::vector<StressKind> out;
        for (const auto& [kind, name] : kKindNames) out.push_back(kind);
        return out;
    }();
    return kinds;
}

const char* to_string(StressKind kind) {
    for (const auto& [k, name] : kKindNames)
        if (k == kind) return name;
    return "?";
}

StressKind parse_stress_kind(const std::string& text) {
    std::string names;
    for (const auto& [kind, name] : kKindNames) {
        if (text == name) return kind;
        names += (names.empty() ? "" : ", ") + std::string(name);
    }
    throw UsageError("unknown hard input '" + text + "' (one of " + names + ")");
}

StressCase stress_state(StressKind kind, std::size_t n, int dim, Precision precision, std::uint64_t seed) {
    if (n < 4) throw UsageError("a hard input needs at least 4 bodies");
    StressCase c{.state = {}, .constants = PhysicsConstants{}};
    c.state = state_in_precision(stress_bodies(kind, n, dim, seed, c.constants), precision);
    return c;
}

}  // namespace nbody
