#pragma once
// The host algorithm, templated on precision: serial.reference (float32) and the float64
// reference that verification compares every variant against (SPEC §5).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "nbody/bodies.hpp"
#include "nbody/physics.hpp"

namespace nbody {

// Sum of pulls (without G) on body i from every body j, from a consistent snapshot.
template <class Real>
inline void host_pull_on(const BodiesT<Real>& b, std::size_t i, Real eps2, Real& ax, Real& ay) {
    // Sums in locals (same order): summing into ax/ay, which may alias b, would store and reload
    // them every j and keep the compiler from vectorising the loop.
    Real sum_x = Real(0), sum_y = Real(0);
    const Real xi = b.x[i], yi = b.y[i];
    const std::size_t n = b.size();
    for (std::size_t j = 0; j < n; ++j)
        accumulate_pull(xi, yi, b.x[j], b.y[j], b.m[j], eps2, sum_x, sum_y, ExactInvSqrt{});
    ax = sum_x;
    ay = sum_y;
}

// Bodies per cell (row * d + col) for positions in the unit square.
template <class Real>
std::vector<std::int64_t> host_cell_counts(const BodiesT<Real>& b, int d) {
    std::vector<std::int64_t> counts(static_cast<std::size_t>(d) * d, 0);
    for (std::size_t i = 0; i < b.size(); ++i) {
        const int cell = activity_cell(b.x[i], b.y[i], d);
        if (cell >= 0) ++counts[static_cast<std::size_t>(cell)];
    }
    return counts;
}

// The map of SPEC §1 from cell counts: count * (D / N).
std::vector<float> normalised_map(const std::vector<std::int64_t>& counts, std::size_t n, int d);

// Advances `steps` steps of the float64 reference (OpenMP-parallel when built with OpenMP).
void reference_fp64_advance(BodiesT<double>& state, const PhysicsConstants& constants, int steps);

// Float64 accelerations (G included) of the given bodies, for the sampled check.
void reference_fp64_accelerations(const BodiesT<double>& state, const PhysicsConstants& constants,
                                  const std::vector<std::size_t>& bodies, std::vector<double>& ax,
                                  std::vector<double>& ay);

}  // namespace nbody
