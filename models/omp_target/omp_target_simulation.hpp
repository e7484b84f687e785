#pragma once
// What every omp_target variant shares: the state kept resident on the device across steps
// (`target enter data` at upload, `target exit data` at destruction; the host arrays are
// nbody/axis_major_state.hpp's), the integration halves and the activity map in target regions of
// their own, and the launch tunings. A variant supplies only its force kernel (a Force with a
// `pulls` member) written with nbody/scalar_physics.hpp's `interact`; its whole code is in its own
// file.
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
// (x, y, z), and calls only nbody/scalar_physics.hpp's always-inlined functions, whose locals are
// scalars; scripts/ptx_simt_report.py checks the PTX for SIMT private bytes.
#include <omp.h>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "nbody/axis_major_state.hpp"
#include "nbody/libgomp_device.hpp"
#include "nbody/physics.hpp"
#include "nbody/scalar_physics.hpp"
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

template <class Real, int Dim, class Force>
class OmpTargetSimulation final : public SimulationOf<Real> {
public:
    OmpTargetSimulation(const Problem& problem, Force force, OffloadDevice device) : state_(problem), force_(force) {
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
        Real *pos = state_.pos.data(), *vel = state_.vel.data(), *pull = state_.pull.data(), *mass = state_.mass.data();
        int* counts = state_.counts.data();
        float* map = state_.map.data();
        const int bodies = state_.bodies, n = state_.n, cells = state_.cells;
#pragma omp target exit data map(delete : pos[0:bodies], vel[0:bodies], pull[0:bodies], mass[0:n], \
                                     counts[0:cells], map[0:cells])
    }

    void upload(const BodiesT<Real>& initial) override {
        state_.load(initial);
        Real *pos = state_.pos.data(), *vel = state_.vel.data(), *pull = state_.pull.data(), *mass = state_.mass.data();
        int* counts = state_.counts.data();
        float* map = state_.map.data();
        const int bodies = state_.bodies, n = state_.n, cells = state_.cells;
        if (!mapped_) {
#pragma omp target enter data map(to : pos[0:bodies], vel[0:bodies], mass[0:n], counts[0:cells]) \
                              map(alloc : pull[0:bodies], map[0:cells])
            mapped_ = true;
        } else {
#pragma omp target update to(pos[0:bodies], vel[0:bodies], mass[0:n])
        }
        if (needs_initial_pull(state_.problem.workload.integrator))
            force_.template pulls<Real, Dim>(pos, mass, pull, n, state_.eps2());
        count_and_normalise(false);
    }

    void advance(int steps) override {
        for (int s = 0; s < steps; ++s) {
            if (state_.leapfrog()) advance_before_force_on_device();
            force_.template pulls<Real, Dim>(state_.pos.data(), state_.mass.data(), state_.pull.data(), state_.n,
                                             state_.eps2());
            count_and_normalise(true);
        }
    }

    void download(BodiesT<Real>& state, std::vector<float>& activity_map) override {
        Real *pos = state_.pos.data(), *vel = state_.vel.data();
        float* map = state_.map.data();
        const int bodies = state_.bodies, cells = state_.cells;
#pragma omp target update from(pos[0:bodies], vel[0:bodies], map[0:cells])
        state_.store(state, activity_map);
    }

private:
    // Leapfrog's half kick and drift before the force.
    void advance_before_force_on_device() {
        Real *pos = state_.pos.data(), *vel = state_.vel.data(), *pull = state_.pull.data();
        const int n = state_.n;
        const Integrator integrator = state_.problem.workload.integrator;
        const Real G = state_.G(), dt = state_.dt();
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
        Real *pos = state_.pos.data(), *vel = state_.vel.data(), *pull = state_.pull.data();
        int* counts = state_.counts.data();
        float* map = state_.map.data();
        const int n = state_.n, d = state_.problem.d, cells = state_.cells;
        const Integrator integrator = state_.problem.workload.integrator;
        const Real G = state_.G(), dt = state_.dt();
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
        const float scale = state_.map_scale();
#pragma omp target teams distribute parallel for simd
        for (int c = 0; c < cells; ++c) {
            map[c] = static_cast<float>(counts[c]) * scale;
            counts[c] = 0;
        }
    }

    AxisMajorState<Real, Dim> state_;
    Force force_;
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
