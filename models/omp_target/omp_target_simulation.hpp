#pragma once
// What every omp_target variant shares: the state kept resident on the device across steps
// (`target enter data` at upload, `target exit data` at destruction), the integration halves and
// the activity map in target regions of their own, the one interaction of this model, and the
// launch tunings. A variant supplies only its force kernel (a Force with a `pulls` member); its
// whole code is in its own file.
//
// Device layout, structure of arrays with the axes one after another: pos[k * n + i] (k < Dim).
// Every target region names the host pointers of these arrays; being present (mapped at upload),
// they are translated to the device copies (OpenMP's zero-length array sections for pointers).
//
// No aggregate inside a `simd` region (docs/performance-openmp.md): GCC 12 gives each
// lane's arrays, Vec objects and other non-register locals (also those of a function inlined into
// the loop, such as physics.hpp's Vec helpers and accumulate_pull's d[Dim]) a slot in per-lane
// SIMT memory (GOMP_SIMT_ENTER_ALLOC), and in the PTX it wrote for these kernels the stores into
// those slots were gone while the loads remained (every workload but 3d/fp64, whose values stayed
// in registers). So the device code indexes the arrays directly, keeps a body in scalars
// (x, y, z), and calls only the always-inlined scalar functions below, whose locals are scalars;
// scripts/ptx_simt_report.py checks the PTX for SIMT private bytes.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "nbody/libgomp_device.hpp"
#include "nbody/physics.hpp"
#include "nbody/variant.hpp"
#include "nbody/workload_dispatch.hpp"

namespace nbody::omp_target {

// libgomp runs a target region on the host when it finds no device: a listed variant refuses
// that (gpu_required); only the model's tests ask for the host to check the arithmetic in CI.
enum class OffloadDevice { gpu_required, host_fallback_allowed };

// Available when libgomp finds an offload device; otherwise the reason.
Availability offload_availability();

// SIMT lanes of one OpenMP thread: 32 in GCC's nvptx mapping (a thread is a warp; `simd` spreads
// over its lanes), 1 in Clang's (a thread is a CUDA thread; `simd` is one lane).
#if defined(__clang__)
inline constexpr int kLanes = 1;
#else
inline constexpr int kLanes = 32;
#endif

// num_teams / thread_limit tunings ("teams" 0: enough teams for one body per lane); the default
// thread_limit gives teams of `default_warps` warps (GCC: that many threads; Clang: 32 times as many).
std::vector<TuningParameter> launch_tunings(int default_warps);
struct Launch {
    int teams = 0;
    int threads = 0;
};
// The tuned launch for `n` items of which one OpenMP thread takes `per_thread`.
Launch launch_for(const TuningValues& tuning, std::size_t n, int per_thread);

// Inlined before the offload compile sees the call: GCC inlines into the outlined `simd` body after
// OpenMP lowering, and a call left out of line would take its scalars' addresses.
#define NBODY_OMP_TARGET_INLINE __attribute__((always_inline)) inline

// The one interaction of this model: body j's pull (without G) on body i added to (ax, ay, az),
// m_j * d / (|d|^2 + eps2)^(3/2), d = p_j - p_i, the exact reciprocal square root. The arithmetic
// and its order are physics.hpp's accumulate_pull with ExactInvSqrt (r^2 summed from the last axis
// to the first onto eps2), on scalars; in 2D the z arguments are ignored.
template <class Real, int Dim>
NBODY_OMP_TARGET_INLINE void interact(Real xi, Real yi, Real zi, Real xj, Real yj, Real zj, Real mj, Real eps2,
                                      Real& ax, Real& ay, Real& az) {
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

// One axis of one body (element `at` of the axis-major arrays) through physics.hpp's
// advance_before_force / advance_after_force, on scalars (the axes are independent):
//   before: leapfrog half kick with the previous pull, then drift; Euler nothing
//   after:  leapfrog half kick with the new pull; Euler drift with the old velocity, then kick
// `after` returns the new position (the map's input).
template <class Real>
NBODY_OMP_TARGET_INLINE void advance_axis_before_force(Integrator integrator, Real* pos, Real* vel, const Real* pull,
                                                       int at, Real G, Real dt) {
    if (integrator != Integrator::leapfrog) return;
    const Real half_dt = dt * Real(0.5);
    const Real v = vel[at] + half_dt * (G * pull[at]);
    vel[at] = v;
    pos[at] = pos[at] + dt * v;
}
template <class Real>
NBODY_OMP_TARGET_INLINE Real advance_axis_after_force(Integrator integrator, Real* pos, Real* vel, const Real* pull,
                                                      int at, Real G, Real dt) {
    const Real p = pos[at], v = vel[at], a = pull[at];
    if (integrator == Integrator::leapfrog) {
        const Real half_dt = dt * Real(0.5);
        vel[at] = v + half_dt * (G * a);
        return p;
    }
    const Real moved = p + dt * v;
    pos[at] = moved;
    vel[at] = v + dt * (G * a);
    return moved;
}

template <class Real, int Dim, class Force>
class OmpTargetSimulation final : public SimulationOf<Real> {
public:
    OmpTargetSimulation(const Problem& problem, Force force, OffloadDevice device)
        : problem_(problem),
          force_(force),
          n_(static_cast<int>(problem.n)),
          cells_(problem.d * problem.d),
          pos_(static_cast<std::size_t>(Dim) * problem.n),
          vel_(static_cast<std::size_t>(Dim) * problem.n),
          pull_(static_cast<std::size_t>(Dim) * problem.n, Real(0)),
          mass_(problem.n),
          counts_(static_cast<std::size_t>(cells_), 0),
          map_(static_cast<std::size_t>(cells_), 0.0f) {
        before_openmp_offload();
        if (device == OffloadDevice::gpu_required) {
            const Availability a = offload_availability();
            if (!a.available) throw std::runtime_error("omp_target variant cannot run here: " + a.reason);
        }
    }
    OmpTargetSimulation(const OmpTargetSimulation&) = delete;
    OmpTargetSimulation& operator=(const OmpTargetSimulation&) = delete;
    ~OmpTargetSimulation() override {
        if (!mapped_) return;
        Real *pos = pos_.data(), *vel = vel_.data(), *pull = pull_.data(), *mass = mass_.data();
        int* counts = counts_.data();
        float* map = map_.data();
        const int bodies = Dim * n_, n = n_, cells = cells_;
#pragma omp target exit data map(delete : pos[0:bodies], vel[0:bodies], pull[0:bodies], mass[0:n], \
                                     counts[0:cells], map[0:cells])
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
        if (!mapped_) {
#pragma omp target enter data map(to : pos[0:bodies], vel[0:bodies], mass[0:n], counts[0:cells]) \
                              map(alloc : pull[0:bodies], map[0:cells])
            mapped_ = true;
        } else {
#pragma omp target update to(pos[0:bodies], vel[0:bodies], mass[0:n])
        }
        if (needs_initial_pull(problem_.workload.integrator)) force_.template pulls<Real, Dim>(pos, mass, pull, n_, eps2());
        count_and_normalise(false);
    }

    void advance(int steps) override {
        for (int s = 0; s < steps; ++s) {
            if (problem_.workload.integrator == Integrator::leapfrog) advance_before_force_on_device();
            force_.template pulls<Real, Dim>(pos_.data(), mass_.data(), pull_.data(), n_, eps2());
            count_and_normalise(true);
        }
    }

    void download(BodiesT<Real>& state, std::vector<float>& activity_map) override {
        Real *pos = pos_.data(), *vel = vel_.data();
        float* map = map_.data();
        const int bodies = Dim * n_, cells = cells_;
#pragma omp target update from(pos[0:bodies], vel[0:bodies], map[0:cells])
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

    // Leapfrog's half kick and drift before the force.
    void advance_before_force_on_device() {
        Real *pos = pos_.data(), *vel = vel_.data(), *pull = pull_.data();
        const int n = n_;
        const Integrator integrator = problem_.workload.integrator;
        const Real G = static_cast<Real>(problem_.constants.G), dt = static_cast<Real>(problem_.constants.dt);
#pragma omp target teams distribute parallel for simd
        for (int i = 0; i < n; ++i) {
            advance_axis_before_force(integrator, pos, vel, pull, i, G, dt);
            advance_axis_before_force(integrator, pos, vel, pull, n + i, G, dt);
            if constexpr (Dim == 3) advance_axis_before_force(integrator, pos, vel, pull, 2 * n + i, G, dt);
        }
    }

    // The rest of the step (when `integrate_first`), each body counted in its cell with an atomic
    // update on the device, then the counts normalised there and cleared for the next step.
    void count_and_normalise(bool integrate_first) {
        Real *pos = pos_.data(), *vel = vel_.data(), *pull = pull_.data();
        int* counts = counts_.data();
        float* map = map_.data();
        const int n = n_, d = problem_.d, cells = cells_;
        const Integrator integrator = problem_.workload.integrator;
        const Real G = static_cast<Real>(problem_.constants.G), dt = static_cast<Real>(problem_.constants.dt);
#pragma omp target teams distribute parallel for simd
        for (int i = 0; i < n; ++i) {
            Real x = pos[i], y = pos[n + i];
            if (integrate_first) {
                x = advance_axis_after_force(integrator, pos, vel, pull, i, G, dt);
                y = advance_axis_after_force(integrator, pos, vel, pull, n + i, G, dt);
                if constexpr (Dim == 3) advance_axis_after_force(integrator, pos, vel, pull, 2 * n + i, G, dt);
            }
            const int cell = activity_cell(x, y, d);
            if (cell >= 0) {
#pragma omp atomic update
                counts[cell] += 1;
            }
        }
        const float scale = activity_scale(problem_.n, d);
#pragma omp target teams distribute parallel for simd
        for (int c = 0; c < cells; ++c) {
            map[c] = static_cast<float>(counts[c]) * scale;
            counts[c] = 0;
        }
    }

    Problem problem_;
    Force force_;
    int n_;
    int cells_;
    std::vector<Real> pos_, vel_, pull_, mass_;
    std::vector<int> counts_;
    std::vector<float> map_;
    bool mapped_ = false;
};

// The simulation of `problem` in its precision and dimension with `force`.
template <class Force>
std::unique_ptr<Simulation> make_simulation(const Problem& problem, Force force, OffloadDevice device) {
    return dispatch_workload(problem.workload, [&]<class Real, int Dim>() -> std::unique_ptr<Simulation> {
        return std::make_unique<OmpTargetSimulation<Real, Dim, Force>>(problem, force, device);
    });
}

}  // namespace nbody::omp_target
