#pragma once
// What the OpenACC variants' compute code shares (nbody_openacc_kernels, compiled with -fopenacc;
// openacc.hpp says why a library of its own): the state kept resident on the GPU across steps (`enter data`
// at upload, `exit data` at destruction; the host arrays are nbody/axis_major_state.hpp's), the
// integration halves and the activity map in compute regions of their own. A variant supplies only
// its force (a Force with a `pulls` member) written with nbody/scalar_physics.hpp's `interact`; its
// whole code is in its own file.
//
// The same code runs on the host (openacc.*@host): every data and compute construct carries
// `if(on_gpu)`, and with a false condition a compute region runs on the local thread (GCC's
// OpenACC host execution is sequential: one core) and the data clauses do nothing.
//
// Device layout, structure of arrays with the axes one after another: pos[k * n + i] (k < Dim).
//
// The arithmetic is physics.hpp's (accumulate_pull with the exact reciprocal square root, and
// advance_before_force / advance_after_force), on scalars in nbody/scalar_physics.hpp's `acc routine
// seq` functions: GCC 12's nvptx offload compiler (lto1) crashes in IPA constant propagation when
// physics.hpp's Vec templates are inlined into these compute regions (docs/models.md, "OpenACC").
#include <memory>
#include <vector>

#include "nbody/axis_major_state.hpp"
#include "nbody/physics.hpp"
#include "nbody/scalar_physics.hpp"
#include "nbody/variant.hpp"
#include "nbody/workload_dispatch.hpp"
#include "openacc.hpp"

namespace nbody::openacc {

template <class Real, int Dim, class Force>
class OpenaccSimulation final : public SimulationOf<Real> {
public:
    OpenaccSimulation(const Problem& problem, Force force, bool on_gpu)
        : state_(problem), force_(force), on_gpu_(on_gpu) {}
    OpenaccSimulation(const OpenaccSimulation&) = delete;
    OpenaccSimulation& operator=(const OpenaccSimulation&) = delete;
    ~OpenaccSimulation() override {
        if (!mapped_) return;
        Real *pos = state_.pos.data(), *vel = state_.vel.data(), *pull = state_.pull.data(), *mass = state_.mass.data();
        int* counts = state_.counts.data();
        float* map = state_.map.data();
        const int bodies = state_.bodies, n = state_.n, cells = state_.cells;
        const bool on_gpu = on_gpu_;
#pragma acc exit data delete(pos[0:bodies], vel[0:bodies], pull[0:bodies], mass[0:n], counts[0:cells], map[0:cells]) \
    if(on_gpu)
    }

    void upload(const BodiesT<Real>& initial) override {
        state_.load(initial);
        Real *pos = state_.pos.data(), *vel = state_.vel.data(), *pull = state_.pull.data(), *mass = state_.mass.data();
        int* counts = state_.counts.data();
        float* map = state_.map.data();
        const int bodies = state_.bodies, n = state_.n, cells = state_.cells;
        const bool on_gpu = on_gpu_;
        if (!mapped_) {
#pragma acc enter data copyin(pos[0:bodies], vel[0:bodies], mass[0:n], counts[0:cells]) \
    create(pull[0:bodies], map[0:cells]) if(on_gpu)
            mapped_ = true;
        } else {
#pragma acc update device(pos[0:bodies], vel[0:bodies], mass[0:n]) if(on_gpu)
        }
        if (needs_initial_pull(state_.problem.workload.integrator))
            force_.template pulls<Real, Dim>(pos, mass, pull, n, state_.eps2(), on_gpu_);
        count_and_normalise(false);
    }

    void advance(int steps) override {
        for (int s = 0; s < steps; ++s) {
            if (state_.leapfrog()) advance_before_force_everywhere();
            force_.template pulls<Real, Dim>(state_.pos.data(), state_.mass.data(), state_.pull.data(), state_.n,
                                             state_.eps2(), on_gpu_);
            count_and_normalise(true);
        }
    }

    void download(BodiesT<Real>& state, std::vector<float>& activity_map) override {
        Real *pos = state_.pos.data(), *vel = state_.vel.data();
        float* map = state_.map.data();
        const int bodies = state_.bodies, cells = state_.cells;
        const bool on_gpu = on_gpu_;
#pragma acc update self(pos[0:bodies], vel[0:bodies], map[0:cells]) if(on_gpu)
        state_.store(state, activity_map);
    }

private:
    void advance_before_force_everywhere() {
        Real *pos = state_.pos.data(), *vel = state_.vel.data(), *pull = state_.pull.data();
        const int n = state_.n, bodies = state_.bodies;
        const bool on_gpu = on_gpu_, leap = state_.leapfrog();
        const Real G = state_.G(), dt = state_.dt();
#pragma acc parallel loop gang vector present(pos[0:bodies], vel[0:bodies], pull[0:bodies]) if(on_gpu)
        for (int i = 0; i < n; ++i) {
            advance_axis_before_force(leap, pos, vel, pull, i, G, dt);
            advance_axis_before_force(leap, pos, vel, pull, n + i, G, dt);
            if constexpr (Dim == 3) advance_axis_before_force(leap, pos, vel, pull, 2 * n + i, G, dt);
        }
    }

    // The rest of the step (when `integrate_first`), each body counted in its cell with an atomic
    // update, then the counts normalised as the reference does and cleared for the next step.
    void count_and_normalise(bool integrate_first) {
        Real *pos = state_.pos.data(), *vel = state_.vel.data(), *pull = state_.pull.data();
        int* counts = state_.counts.data();
        float* map = state_.map.data();
        const int n = state_.n, d = state_.problem.d, cells = state_.cells, bodies = state_.bodies;
        const bool on_gpu = on_gpu_, leap = state_.leapfrog();
        const Real G = state_.G(), dt = state_.dt();
#pragma acc parallel loop gang vector present(pos[0:bodies], vel[0:bodies], pull[0:bodies], counts[0:cells]) if(on_gpu)
        for (int i = 0; i < n; ++i) {
            if (integrate_first) {
                advance_axis_after_force(leap, pos, vel, pull, i, G, dt);
                advance_axis_after_force(leap, pos, vel, pull, n + i, G, dt);
                if constexpr (Dim == 3) advance_axis_after_force(leap, pos, vel, pull, 2 * n + i, G, dt);
            }
            const int cell = activity_cell(pos[i], pos[n + i], d);
            if (cell >= 0) {
#pragma acc atomic update
                counts[cell] += 1;
            }
        }
        const float scale = state_.map_scale();
#pragma acc parallel loop gang vector present(counts[0:cells], map[0:cells]) if(on_gpu)
        for (int c = 0; c < cells; ++c) {
            map[c] = static_cast<float>(counts[c]) * scale;
            counts[c] = 0;
        }
    }

    AxisMajorState<Real, Dim> state_;
    Force force_;
    bool on_gpu_;
    bool mapped_ = false;
};

// The simulation of `problem` in its precision and dimension with `force`.
template <class Force>
std::unique_ptr<Simulation> make_simulation(const Problem& problem, Force force, bool on_gpu) {
    return dispatch_workload(problem.workload, [&]<class Real, int Dim>() -> std::unique_ptr<Simulation> {
        return std::make_unique<OpenaccSimulation<Real, Dim, Force>>(problem, force, on_gpu);
    });
}

}  // namespace nbody::openacc
