#pragma once
// What the OpenACC variants' compute code shares (nbody_openacc_kernels, compiled with -fopenacc;
// openacc.hpp says why a library of its own): the state kept resident on the GPU across steps (`enter data`
// at upload, `exit data` at destruction), the integration halves and the activity map in compute
// regions of their own, the one interaction of this model. A variant supplies only its force (a
// Force with a `pulls` member); its whole code is in its own file.
//
// The same code runs on the host (openacc.*@host): every data and compute construct carries
// `if(on_gpu)`, and with a false condition a compute region runs on the local thread (GCC's
// OpenACC host execution is sequential: one core) and the data clauses do nothing.
//
// Device layout, structure of arrays with the axes one after another: pos[k * n + i] (k < Dim).
//
// The arithmetic is physics.hpp's (accumulate_pull with the exact reciprocal square root, and
// advance_before_force / advance_after_force), on scalars in `acc routine seq` functions: GCC 12's
// nvptx offload compiler (lto1) crashes in IPA constant propagation when physics.hpp's Vec
// templates are inlined into these compute regions (docs/models.md, "OpenACC").
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "nbody/physics.hpp"
#include "nbody/variant.hpp"
#include "nbody/workload_dispatch.hpp"
#include "openacc.hpp"

namespace nbody::openacc {

#define NBODY_ACC_INLINE __attribute__((always_inline)) inline

// body j's pull (without G) on body i added to (ax, ay, az): m_j d / (|d|^2 + eps2)^(3/2),
// d = p_j - p_i; r^2 summed from the last axis to the first onto eps2, as accumulate_pull does.
#pragma acc routine seq
template <class Real, int Dim>
NBODY_ACC_INLINE void interact(Real xi, Real yi, Real zi, Real xj, Real yj, Real zj, Real mj, Real eps2, Real& ax,
                               Real& ay, Real& az) {
    const Real dx = xj - xi, dy = yj - yi, dz = zj - zi;
    Real r2 = eps2;
    if constexpr (Dim == 3) r2 = dz * dz + r2;
    r2 = dy * dy + r2;
    r2 = dx * dx + r2;
    const Real inv_r = Real(1) / std::sqrt(r2);
    const Real weight = mj * (inv_r * inv_r * inv_r);
    ax += weight * dx;
    ay += weight * dy;
    if constexpr (Dim == 3) az += weight * dz;
}

// One axis of one body through physics.hpp's integrator halves (the axes are independent):
//   before: leapfrog half kick with the previous pull, then drift; Euler nothing
//   after:  leapfrog half kick with the new pull; Euler drift with the old velocity, then kick
#pragma acc routine seq
template <class Real>
NBODY_ACC_INLINE void advance_axis_before_force(bool leapfrog, Real* pos, Real* vel, const Real* pull, int at, Real G,
                                                Real dt) {
    if (!leapfrog) return;
    const Real half_dt = dt * Real(0.5);
    const Real v = vel[at] + half_dt * (G * pull[at]);
    vel[at] = v;
    pos[at] = pos[at] + dt * v;
}
#pragma acc routine seq
template <class Real>
NBODY_ACC_INLINE void advance_axis_after_force(bool leapfrog, Real* pos, Real* vel, const Real* pull, int at, Real G,
                                               Real dt) {
    const Real p = pos[at], v = vel[at], a = pull[at];
    if (leapfrog) {
        const Real half_dt = dt * Real(0.5);
        vel[at] = v + half_dt * (G * a);
        return;
    }
    pos[at] = p + dt * v;
    vel[at] = v + dt * (G * a);
}

// physics.hpp's activity_cell on scalars.
#pragma acc routine seq
template <class Real>
NBODY_ACC_INLINE int cell_of(Real x, Real y, int d) {
    const Real fx = x * static_cast<Real>(d);
    const Real fy = y * static_cast<Real>(d);
    const Real limit = static_cast<Real>(d);
    if (!(fx >= Real(0) && fx < limit && fy >= Real(0) && fy < limit)) return -1;
    const int col = static_cast<int>(fx);
    const int row = static_cast<int>(fy);
    if (col >= d || row >= d) return -1;
    return row * d + col;
}

template <class Real, int Dim, class Force>
class OpenaccSimulation final : public SimulationOf<Real> {
public:
    OpenaccSimulation(const Problem& problem, Force force, bool on_gpu)
        : problem_(problem),
          force_(force),
          on_gpu_(on_gpu),
          n_(static_cast<int>(problem.n)),
          cells_(problem.d * problem.d),
          pos_(static_cast<std::size_t>(Dim) * problem.n),
          vel_(static_cast<std::size_t>(Dim) * problem.n),
          pull_(static_cast<std::size_t>(Dim) * problem.n, Real(0)),
          mass_(problem.n),
          counts_(static_cast<std::size_t>(cells_), 0),
          map_(static_cast<std::size_t>(cells_), 0.0f) {}
    OpenaccSimulation(const OpenaccSimulation&) = delete;
    OpenaccSimulation& operator=(const OpenaccSimulation&) = delete;
    ~OpenaccSimulation() override {
        if (!mapped_) return;
        Real *pos = pos_.data(), *vel = vel_.data(), *pull = pull_.data(), *mass = mass_.data();
        int* counts = counts_.data();
        float* map = map_.data();
        const int bodies = Dim * n_, n = n_, cells = cells_;
        const bool on_gpu = on_gpu_;
#pragma acc exit data delete(pos[0:bodies], vel[0:bodies], pull[0:bodies], mass[0:n], counts[0:cells], map[0:cells]) \
    if(on_gpu)
    }

    void upload(const BodiesT<Real>& initial) override {
        for (int k = 0; k < Dim; ++k) {
            std::copy(initial.position(k).begin(), initial.position(k).end(), pos_.begin() + std::ptrdiff_t(k) * n_);
            std::copy(initial.velocity(k).begin(), initial.velocity(k).end(), vel_.begin() + std::ptrdiff_t(k) * n_);
        }
        std::copy(initial.m.begin(), initial.m.end(), mass_.begin());
        Real *pos = pos_.data(), *vel = vel_.data(), *pull = pull_.data(), *mass = mass_.data();
        int* counts = counts_.data();
        float* map = map_.data();
        const int bodies = Dim * n_, n = n_, cells = cells_;
        const bool on_gpu = on_gpu_;
        if (!mapped_) {
#pragma acc enter data copyin(pos[0:bodies], vel[0:bodies], mass[0:n], counts[0:cells]) \
    create(pull[0:bodies], map[0:cells]) if(on_gpu)
            mapped_ = true;
        } else {
#pragma acc update device(pos[0:bodies], vel[0:bodies], mass[0:n]) if(on_gpu)
        }
        if (needs_initial_pull(problem_.workload.integrator))
            force_.template pulls<Real, Dim>(pos, mass, pull, n_, eps2(), on_gpu_);
        count_and_normalise(false);
    }

    void advance(int steps) override {
        for (int s = 0; s < steps; ++s) {
            if (leapfrog()) advance_before_force_everywhere();
            force_.template pulls<Real, Dim>(pos_.data(), mass_.data(), pull_.data(), n_, eps2(), on_gpu_);
            count_and_normalise(true);
        }
    }

    void download(BodiesT<Real>& state, std::vector<float>& activity_map) override {
        Real *pos = pos_.data(), *vel = vel_.data();
        float* map = map_.data();
        const int bodies = Dim * n_, cells = cells_;
        const bool on_gpu = on_gpu_;
#pragma acc update self(pos[0:bodies], vel[0:bodies], map[0:cells]) if(on_gpu)
        state = BodiesT<Real>(problem_.n, Dim);
        for (int k = 0; k < Dim; ++k) {
            std::copy(pos_.begin() + std::ptrdiff_t(k) * n_, pos_.begin() + std::ptrdiff_t(k + 1) * n_,
                      state.position(k).begin());
            std::copy(vel_.begin() + std::ptrdiff_t(k) * n_, vel_.begin() + std::ptrdiff_t(k + 1) * n_,
                      state.velocity(k).begin());
        }
        std::copy(mass_.begin(), mass_.end(), state.m.begin());
        activity_map = map_;
    }

private:
    Real eps2() const { return static_cast<Real>(problem_.constants.eps2()); }
    bool leapfrog() const { return problem_.workload.integrator == Integrator::leapfrog; }

    void advance_before_force_everywhere() {
        Real *pos = pos_.data(), *vel = vel_.data(), *pull = pull_.data();
        const int n = n_, bodies = Dim * n_;
        const bool on_gpu = on_gpu_, leap = leapfrog();
        const Real G = static_cast<Real>(problem_.constants.G), dt = static_cast<Real>(problem_.constants.dt);
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
        Real *pos = pos_.data(), *vel = vel_.data(), *pull = pull_.data();
        int* counts = counts_.data();
        float* map = map_.data();
        const int n = n_, d = problem_.d, cells = cells_, bodies = Dim * n_;
        const bool on_gpu = on_gpu_, leap = leapfrog();
        const Real G = static_cast<Real>(problem_.constants.G), dt = static_cast<Real>(problem_.constants.dt);
#pragma acc parallel loop gang vector present(pos[0:bodies], vel[0:bodies], pull[0:bodies], counts[0:cells]) if(on_gpu)
        for (int i = 0; i < n; ++i) {
            if (integrate_first) {
                advance_axis_after_force(leap, pos, vel, pull, i, G, dt);
                advance_axis_after_force(leap, pos, vel, pull, n + i, G, dt);
                if constexpr (Dim == 3) advance_axis_after_force(leap, pos, vel, pull, 2 * n + i, G, dt);
            }
            const int cell = cell_of(pos[i], pos[n + i], d);
            if (cell >= 0) {
#pragma acc atomic update
                counts[cell] += 1;
            }
        }
        const float scale = activity_scale(problem_.n, d);
#pragma acc parallel loop gang vector present(counts[0:cells], map[0:cells]) if(on_gpu)
        for (int c = 0; c < cells; ++c) {
            map[c] = static_cast<float>(counts[c]) * scale;
            counts[c] = 0;
        }
    }

    Problem problem_;
    Force force_;
    bool on_gpu_;
    int n_;
    int cells_;
    std::vector<Real> pos_, vel_, pull_, mass_;
    std::vector<int> counts_;
    std::vector<float> map_;
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
