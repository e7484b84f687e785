#pragma once
// The host side of a directive model's simulation (models/omp_target/, models/openacc/): the arrays
// that its data directives keep resident on the device across steps, in the device layout, and the
// step's constants in the workload's precision. The model writes the directives (mapping these
// arrays at upload, the kernels, copying them back at download) with scalar_physics.hpp's functions;
// this holds what is the same in every such model.
//
// Layout: structure of arrays with the axes one after another, pos[k * n + i] (k < Dim), so that a
// kernel indexes plain arrays and keeps a body in scalars.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "nbody/bodies.hpp"
#include "nbody/physics.hpp"
#include "nbody/variant.hpp"

namespace nbody {

template <class Real, int Dim>
struct AxisMajorState {
    explicit AxisMajorState(const Problem& problem)
        : problem(problem),
          n(static_cast<int>(problem.n)),
          bodies(Dim * n),
          cells(problem.d * problem.d),
          pos(static_cast<std::size_t>(Dim) * problem.n),
          vel(static_cast<std::size_t>(Dim) * problem.n),
          pull(static_cast<std::size_t>(Dim) * problem.n, Real(0)),
          mass(problem.n),
          counts(static_cast<std::size_t>(cells), 0),
          map(static_cast<std::size_t>(cells), 0.0f) {}

    // The bodies' positions, velocities and masses into pos, vel and mass.
    void load(const BodiesT<Real>& initial) {
        for (int k = 0; k < Dim; ++k) {
            std::copy(initial.position(k).begin(), initial.position(k).end(), pos.begin() + std::ptrdiff_t(k) * n);
            std::copy(initial.velocity(k).begin(), initial.velocity(k).end(), vel.begin() + std::ptrdiff_t(k) * n);
        }
        std::copy(initial.m.begin(), initial.m.end(), mass.begin());
    }

    // pos, vel and mass back into `state` (made anew), the map into `activity_map`.
    void store(BodiesT<Real>& state, std::vector<float>& activity_map) const {
        state = BodiesT<Real>(problem.n, Dim);
        for (int k = 0; k < Dim; ++k) {
            std::copy(pos.begin() + std::ptrdiff_t(k) * n, pos.begin() + std::ptrdiff_t(k + 1) * n,
                      state.position(k).begin());
            std::copy(vel.begin() + std::ptrdiff_t(k) * n, vel.begin() + std::ptrdiff_t(k + 1) * n,
                      state.velocity(k).begin());
        }
        std::copy(mass.begin(), mass.end(), state.m.begin());
        activity_map = map;
    }

    bool leapfrog() const { return problem.workload.integrator == Integrator::leapfrog; }
    Real G() const { return static_cast<Real>(problem.constants.G); }
    Real dt() const { return static_cast<Real>(problem.constants.dt); }
    Real eps2() const { return static_cast<Real>(problem.constants.eps2()); }
    // What a cell's count is multiplied by in the map (activity_scale).
    float map_scale() const { return activity_scale(problem.n, problem.d); }

    Problem problem;
    int n;       // bodies
    int bodies;  // elements of pos, vel and pull: Dim * n
    int cells;   // D * D
    std::vector<Real> pos, vel, pull, mass;  // pull: the summed pull without G
    std::vector<int> counts;                 // bodies per map cell, cleared by each normalisation
    std::vector<float> map;
};

}  // namespace nbody
