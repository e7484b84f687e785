#pragma once
// The host algorithm, templated on precision and dimension: serial.reference (the workload's
// precision) and the references that verification compares every variant against (SPEC §5):
// double for float32 workloads, long double for float64 workloads.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "nbody/bodies.hpp"
#include "nbody/physics.hpp"

namespace nbody {

// Position of body i as a Vec of its first Dim coordinates.
template <int Dim, class Real>
inline Vec<Real, Dim> position_of(const BodiesT<Real>& b, std::size_t i) {
    Vec<Real, Dim> p;
    for (int k = 0; k < Dim; ++k) p[k] = b.position(k)[i];
    return p;
}

// The order in which a body's pulls are summed: j = 0, 1, ... N-1 (every host loop), or from
// N-1 down to 0 (verification's second sample of the rounding a correct program makes).
enum class SumOrder { index, reversed };

// Sum of pulls (without G) on body i from every body j, from a consistent snapshot.
template <int Dim, class Real>
inline Vec<Real, Dim> host_pull_on(const BodiesT<Real>& b, std::size_t i, Real eps2, SumOrder order = SumOrder::index) {
    // Sums in a local (same order): summing into memory that may alias b would store and reload
    // it every j and keep the compiler from vectorising the loop.
    Vec<Real, Dim> sum{};
    const Vec<Real, Dim> pi = position_of<Dim>(b, i);
    const std::size_t n = b.size();
    if (order == SumOrder::reversed) {
        for (std::size_t j = n; j-- > 0;) accumulate_pull(pi, position_of<Dim>(b, j), b.m[j], eps2, sum, ExactInvSqrt{});
        return sum;
    }
    for (std::size_t j = 0; j < n; ++j) accumulate_pull(pi, position_of<Dim>(b, j), b.m[j], eps2, sum, ExactInvSqrt{});
    return sum;
}

// The 2D form writing two components (kept for the 2D float32 OpenMP loop).
template <class Real>
inline void host_pull_on(const BodiesT<Real>& b, std::size_t i, Real eps2, Real& ax, Real& ay) {
    const Vec<Real, 2> sum = host_pull_on<2>(b, i, eps2);
    ax = sum[0];
    ay = sum[1];
}

// Pulls of every body, one vector per axis (pull[k][i]); over OpenMP threads when `parallel` and
// the build has OpenMP (serial.reference: one core).
template <class Real>
void host_pulls(const BodiesT<Real>& b, Real eps2, std::vector<std::vector<Real>>& pull, bool parallel,
                SumOrder order = SumOrder::index);

// One step's halves on every body (physics.hpp's advance_before_force / advance_after_force).
template <class Real>
void host_advance_before_force(BodiesT<Real>& b, const std::vector<std::vector<Real>>& pull, Integrator integrator,
                               Real G, Real dt);
template <class Real>
void host_advance_after_force(BodiesT<Real>& b, const std::vector<std::vector<Real>>& pull, Integrator integrator,
                              Real G, Real dt);

// Bodies per cell (row * d + col) for positions in the unit square (the x-y projection in 3D).
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

// Advances `steps` steps of the reference in Real (float or double: the workload's own precision,
// verification's shadows; double or long double: the truth; OpenMP-parallel when built with
// OpenMP), each pull summed in `order`. Stateless between calls: leapfrog's pull of the current
// positions is recomputed at the start of each call, which gives the same values a kept pull would.
template <class Real>
void reference_advance(BodiesT<Real>& state, const PhysicsConstants& constants, Integrator integrator, int steps,
                       SumOrder order = SumOrder::index);

// Accelerations (G included) of the given bodies, acceleration[k][s] for axis k of body bodies[s],
// in Real (the workload's precision: a shadow; double or long double: the truth), each summed in
// `order`, for the sampled check.
template <class Real>
std::vector<std::vector<Real>> reference_accelerations(const BodiesT<Real>& state, const PhysicsConstants& constants,
                                                       const std::vector<std::size_t>& bodies,
                                                       SumOrder order = SumOrder::index);

}  // namespace nbody
