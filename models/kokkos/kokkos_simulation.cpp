// KokkosSimulation's members defined outside the class, compiled once for every enabled space and
// workload (the variants' files declare these instantiations extern: kokkos_simulation.hpp).
#define NBODY_KOKKOS_SIMULATION_DEFINITIONS
#include "kokkos_simulation.hpp"

namespace nbody::kokkos {

// The first from.size() elements of `to` (the bodies; a gathered View holds padding after them).
template <class Space, class T>
void copy_in(const Space& space, Kokkos::View<T*, typename Space::memory_space> to, const std::vector<T>& from) {
    Kokkos::deep_copy(space, Kokkos::subview(to, std::make_pair(std::size_t{0}, from.size())),
                      HostConstReals<T>(from.data(), from.size()));
}
template <class Space, class T>
void copy_out(const Space& space, std::vector<T>& to, Kokkos::View<T*, typename Space::memory_space> from) {
    Kokkos::deep_copy(space, HostReals<T>(to.data(), to.size()),
                      Kokkos::subview(from, std::make_pair(std::size_t{0}, to.size())));
    space.fence();
}

template <class Space, class Real, int Dim>
void KokkosSimulation<Space, Real, Dim>::upload(const BodiesT<Real>& initial) {
    if (initial.size() != problem_.n || initial.dim != Dim)
        throw std::logic_error("upload of " + std::to_string(initial.size()) + " bodies in " +
                               std::to_string(initial.dim) + "D to a simulation of " + std::to_string(problem_.n) +
                               " in " + std::to_string(Dim) + "D");
    std::vector<DeviceReals<Space, Real>> positions_and_masses;
    for (int k = 0; k < Dim; ++k) {
        copy_in(space_, motion_.p[k], initial.position(k));
        copy_in(space_, motion_.v[k], initial.velocity(k));
        positions_and_masses.push_back(motion_.p[k]);
    }
    copy_in(space_, m_, initial.m);
    positions_and_masses.push_back(m_);
    // Every rank holds the same whole state; the gather makes each owner's block the one all use.
    gather(positions_and_masses);
#ifdef KOKKOS_ENABLE_CUDA
    if constexpr (kRunsOnGpu<Space>) {
        if (overlapped() && !exchange_) exchange_ = std::make_unique<CudaExchangeInstance>(space_);
    }
#endif
    pulls_zero_ = false;
    // Overlapped, a step begins with the pull of its positions in both integrators.
    if (needs_initial_pull(integrator()) || overlapped()) pull_kernel();
    // Every strategy starts from a full count (map=incremental keeps the cells from here on).
    const StepEnd<Real> map_only = step_end(false, false, false);
    if (map_strategy_ == MapStrategy::scatter_view)
        end_step_and_count_scatter(dispatch_, motion_, map_, scatter_, n_, d_, map_only);
    else
        end_step_and_count_atomic(dispatch_, motion_, map_, n_, d_, map_only,
                                  map_strategy_ == MapStrategy::incremental);
    normalise_map(dispatch_, map_);
}

template <class Space, class Real, int Dim>
void KokkosSimulation<Space, Real, Dim>::advance(int steps) {
    if (steps <= 0) return;
    if (one_kernel_) {
        advance_in_one_kernel(
            {motion_, next_positions_, m_, map_, step_end(true, leapfrog(), false), n_, d_, steps});
        if (steps % 2 == 1) swap_positions();
        pulls_zero_ = false;
        return;
    }
    // The later steps' first halves run in the previous step's last kernel.
    if (leapfrog()) advance_before_force_owned(dispatch_, motion_, owned_range(), integrator(), G(), dt());
    if (graph_steps_ > 0) {
        replay(steps);
        return;
    }
    for (int s = 0; s < steps; ++s) step(s + 1 == steps);
}

template <class Space, class Real, int Dim>
std::optional<Simulation::StepBreakdown> KokkosSimulation<Space, Real, Dim>::step_breakdown(int steps) {
#ifdef KOKKOS_ENABLE_CUDA
    if constexpr (kRunsOnGpu<Space>) {
        if (!reports_step_breakdown() || overlapped()) return std::nullopt;
        if (!step_events_) step_events_ = std::make_unique<CudaStepEvents>();
        const CudaStepEvents& events = *step_events_;
        const cudaStream_t compute = space_.cuda_stream();
        const TimingSteps timing(*this);
        return Simulation::StepBreakdown::mean_of(steps, [&] {
            events.start.record(compute);
            advance(1);
            events.end.record(compute);
            synchronize();
            return std::pair(events.end.seconds_since(events.start),
                             spans_ranks() ? events.exchange_end.seconds_since(events.exchange_start) : 0.0);
        });
    }
#endif
    (void)steps;
    return std::nullopt;
}

template <class Space, class Real, int Dim>
void KokkosSimulation<Space, Real, Dim>::download(BodiesT<Real>& state, std::vector<float>& activity_map) {
    state = BodiesT<Real>(problem_.n, Dim);
    for (int k = 0; k < Dim; ++k) {
        copy_out(space_, state.position(k), motion_.p[k]);
        copy_out(space_, state.velocity(k), motion_.v[k]);
    }
    copy_out(space_, state.m, m_);
    activity_map.resize(cells());
    copy_out(space_, activity_map, map_.map);
}

NBODY_KOKKOS_SIMULATIONS(template)

}  // namespace nbody::kokkos
