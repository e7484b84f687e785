// The float64 reference used by verify: the same algorithm as serial.reference, in double.
#include <cstdint>

#include "nbody/reference.hpp"

namespace nbody {

std::vector<float> normalised_map(const std::vector<std::int64_t>& counts, std::size_t n, int d) {
    const float scale = activity_scale(n, d);
    std::vector<float> map(counts.size());
    for (std::size_t c = 0; c < counts.size(); ++c) map[c] = static_cast<float>(counts[c]) * scale;
    return map;
}

void reference_fp64_advance(BodiesT<double>& state, const PhysicsConstants& constants, int steps) {
    const std::int64_t n = static_cast<std::int64_t>(state.size());
    std::vector<double> ax(state.size()), ay(state.size());
    for (int s = 0; s < steps; ++s) {
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < n; ++i)
            host_pull_on(state, static_cast<std::size_t>(i), constants.eps2(), ax[i], ay[i]);
        for (std::int64_t i = 0; i < n; ++i)
            integrate_body(state.x[i], state.y[i], state.vx[i], state.vy[i], ax[i], ay[i],
                           constants.G, constants.dt);
    }
}

void reference_fp64_accelerations(const BodiesT<double>& state, const PhysicsConstants& constants,
                                  const std::vector<std::size_t>& bodies, std::vector<double>& ax,
                                  std::vector<double>& ay) {
    const std::int64_t count = static_cast<std::int64_t>(bodies.size());
    ax.assign(bodies.size(), 0.0);
    ay.assign(bodies.size(), 0.0);
#pragma omp parallel for schedule(static)
    for (std::int64_t k = 0; k < count; ++k) {
        host_pull_on(state, bodies[k], constants.eps2(), ax[k], ay[k]);
        ax[k] *= constants.G;
        ay[k] *= constants.G;
    }
}

}  // namespace nbody
