#pragma once
// What the Kokkos variants share, templated on the execution space and the workload's real type and
// dimension: the device state in Views, a step's kernels, the activity map, and over several ranks
// the gathers of the positions (docs/scaling.md). A variant supplies its pull kernel (one file per
// variant), or with StepKernels::one_per_advance the kernel of a whole advance() (kokkos.persistent).
// Its parts: kokkos_spaces.hpp (runtime, spaces, kernel pieces), dispatch.hpp (launches, graphs),
// kokkos_variant.hpp (declaring a variant), step_end_and_map.hpp (a step's end and the map),
// cuda_space.hpp (what Kokkos needs CUDA for directly). Valid for Kokkos 3.4 through 4.x.
#include <Kokkos_Core.hpp>
#include <Kokkos_Graph.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cuda_space.hpp"
#include "grid_barrier.hpp"
#include "nbody/communicator.hpp"
#include "simulation_instantiations.hpp"
#include "step_end_and_map.hpp"

namespace nbody::kokkos {

// The state of one simulation of one workload (Real, Dim) in Views of the space's memory; a
// variant adds compute_pulls() (and, running advance() as one kernel, advance_in_one_kernel()). A
// step: advance before force, pulls, advance after force with the map's counting (SPEC §2). Per
// step on a map=incremental simulation: the pull kernel, one kernel for the rest of the step (the
// next step's first half fused in) and the map's rewrite, queued on the space without a fence.
//
// Over several ranks (Problem::distribution, docs/scaling.md) the rank integrates its owned()
// block, and the positions of all N are gathered right after the drift: leapfrog at the start of a
// step (the drift ran in the previous step's last kernel or in advance_before_force_owned), Euler
// after a kernel that ends the owned bodies' step, before the map of all N is counted. Positions
// and masses hold gather_capacity() elements (a device all-gather of equal blocks writes there);
// the velocities and pulls of other ranks' bodies are never used. Host spaces gather through the
// host communicator on the Views' memory, CUDA through the device communicator on the space's
// stream. A variant whose pull kernel sums every body, not just owned(), gives the same results,
// only redundantly. On CUDA a variant may overlap the gather with its pull (overlaps_exchange(),
// the `exchange` tuning): the gather runs on a second instance while the owned bodies are pulled
// from the owned block, and the other blocks are pulled once it has arrived; the pull then follows
// the gather in both integrators (Euler pulls ahead, as cuda.sliced does).
template <class Space, class Real, int Dim>
class KokkosSimulation : public SimulationOf<Real> {
public:
    using SimulationOf<Real>::upload;
    using SimulationOf<Real>::download;

    KokkosSimulation(const Problem& problem, const TuningValues& tuning,
                     StepKernels kernels = StepKernels::per_step)
        : problem_((ensure_initialized(device_of(problem.distribution)), problem)),
          decomposition_(decomposition_of(problem)),
          owned_(owned_block(problem)),
          n_(checked_body_count(problem.n)),
          d_(problem.d),
          map_strategy_(map_strategy_of<Space>(tuning, problem.d)),
          one_kernel_(kernels == StepKernels::one_per_advance),
          graph_steps_(one_kernel_ ? 0 : graph_steps_for(tuning.at("dispatch"))),
          fused_(fused_for(tuning)),
          motion_{device_axes<Space, Real, Dim>("p", decomposition_.gather_capacity()),
                  device_axes<Space, Real, Dim>("v", problem.n), device_axes<Space, Real, Dim>("pull", problem.n)},
          next_positions_(device_axes<Space, Real, Dim>("p_next", fused_ || one_kernel_ ? problem.n : 0)),
          next_moved_{DeviceCounts<Space>("next_moved_from", fused_ ? problem.n : 0),
                      DeviceCounts<Space>("next_moved_to", fused_ ? problem.n : 0)},
          arrivals_("arrivals", fused_ ? problem.n : 0),
          m_("m", decomposition_.gather_capacity()),
          map_{DeviceCounts<Space>("counts", cells()), DeviceCounts<Space>("cell", per_body_cells()),
               {DeviceCounts<Space>("moved_from", per_body_cells()), DeviceCounts<Space>("moved_to", per_body_cells())},
               DeviceReals<Space, float>("map", cells()),
               activity_scale(problem.n, problem.d)} {
        if (map_strategy_ == MapStrategy::scatter_view) scatter_ = CountScatter<Space>(map_.counts);
        check_distribution();
        if (one_kernel_ && !steps_are_kernels_only())
            throw std::logic_error("a whole advance() in one kernel needs map=incremental on one rank");
    }

    // upload, advance, step_breakdown and download are defined after the class, not inline: a
    // variant's file then leaves them, and everything they call, to kokkos_simulation.cpp (Clang
    // instantiates the inline members of an extern template for inlining).
    void upload(const BodiesT<Real>& initial) final;

    void advance(int steps) final;

    void synchronize() final {
        space_.fence();
#ifdef KOKKOS_ENABLE_CUDA
        if (exchange_) exchange_->space().fence();  // joined into space_ after every gather; here for a step that threw
#endif
    }

    // On the CUDA space, for a variant that reports_step_breakdown(): each step between events on
    // the compute stream, the all-gather between events around it (all of it exposed), as the CUDA
    // model's. The events are recorded during these steps only (graphs of their own), so that the
    // timed steps carry none.
    // Overlapped, none: the exchange's kernel shares the SMs with the owned block's pull, so the wait
    // at the join is not its cost (docs/scaling.md). Host spaces: none.
    std::optional<Simulation::StepBreakdown> step_breakdown(int steps) final;

    void download(BodiesT<Real>& state, std::vector<float>& activity_map) final;

protected:
    // Writes the summed pull (without G) on every owned() body into pulls() from positions() and
    // masses() of all n() bodies, which stay unchanged meanwhile (the step's snapshot). A variant
    // that adds into pulls() says so in adds_into_pulls(): they are zero when it is called.
    virtual void compute_pulls() = 0;
    // True when compute_pulls() adds into pulls(): the step's last kernel then leaves them zero
    // where it can, so that zero_added_pulls() has nothing to do.
    virtual bool adds_into_pulls() const { return false; }
    // step_end=fused (a variant with step_end_tuning()): the pull kernel that also ends the step
    // (StepEndInPullKernel), in one kernel. Adds into pulls() left zero, as compute_pulls() would.
    virtual void compute_pulls_and_end_step(const StepEndInPullKernel<Space, Real, Dim>& /*end*/) {
        throw std::logic_error("this Kokkos variant cannot end a step in its pull kernel");
    }
    // Whether steps run as compute_pulls_and_end_step().
    bool fuses_step_end() const { return fused_; }
    // The overlapped exchange (the `exchange` tuning; CUDA space over several ranks only, elsewhere
    // the plain gather): a variant that offers it returns true here and pulls from part of the
    // bodies j in compute_pulls_from(), called on the owned block's, then on the other blocks'.
    virtual bool overlaps_exchange() const { return false; }
    // compute_pulls() from `sources` only, on the owned() bodies: written over, or added where
    // sources.accumulate (pulls() are zero before the first part where adds_into_pulls()).
    virtual void compute_pulls_from(const SourceBodies& /*sources*/) {
        throw std::logic_error("this Kokkos variant cannot pull from part of the bodies");
    }
    // Whether step_breakdown() times this variant's steps (CUDA space).
    virtual bool reports_step_breakdown() const { return false; }
    // StepKernels::one_per_advance: the `steps` steps of an advance() in one kernel (WholeAdvance).
    virtual void advance_in_one_kernel(const WholeAdvance<Space, Real, Dim>& /*advance*/) {
        throw std::logic_error("this Kokkos variant cannot run an advance() in one kernel");
    }

    const Space& space() const { return space_; }
    // Where compute_pulls() launches its kernels.
    Dispatch<Space>& dispatch() { return dispatch_; }
    int n() const { return n_; }
    // The bodies whose pulls this rank computes: all n() without ranks.
    OwnedRange owned_range() const {
        return {static_cast<int>(owned_.first), static_cast<int>(owned_.first + owned_.count)};
    }
    const Workload& workload() const { return problem_.workload; }
    Real eps2() const { return static_cast<Real>(problem_.constants.eps2()); }
    // Views of gather_capacity() >= n() elements (the first n() are the bodies).
    DeviceAxes<Space, Real, Dim> positions() const { return motion_.p; }
    DeviceReals<Space, Real> masses() const { return m_; }
    DeviceAxes<Space, Real, Dim> pulls() const { return motion_.pull; }

private:
    std::size_t cells() const { return static_cast<std::size_t>(problem_.d) * problem_.d; }
    std::size_t per_body_cells() const { return map_strategy_ == MapStrategy::incremental ? problem_.n : 0; }
    Integrator integrator() const { return problem_.workload.integrator; }
    Real G() const { return static_cast<Real>(problem_.constants.G); }
    Real dt() const { return static_cast<Real>(problem_.constants.dt); }
    bool spans_ranks() const { return problem_.distribution.spans_ranks(); }
    bool leapfrog() const { return integrator() == Integrator::leapfrog; }

    // One step's kernels after advance_before_force_owned (leapfrog's first step) on dispatch_;
    // `last`: the last of an advance().
    void step(bool last) {
        const StepEnd<Real> end = step_end(true, leapfrog() && !last, step_zeroes_pulls(last));
        if (fused_) {
            zero_added_pulls();
            compute_pulls_and_end_step({motion_, next_positions_, map_, next_moved_, arrivals_, end, d_});
            swap_positions();
            if (last) rewrite_moved_cells(dispatch_, map_, n_);  // the moves the step just recorded
            pulls_zero_ = end.zero_pulls;
            return;
        }
        if (overlapped()) {
            step_overlapped(end);
            return;
        }
        if (leapfrog()) gather_positions();  // after the drift
        pull_kernel();
        if (spans_ranks() && !leapfrog()) {
            end_step_owned(dispatch_, motion_, d_, end);
            gather_positions();  // after the drift
            end_step_and_map(step_end(false, false, false));
        } else {
            end_step_and_map(end);
        }
        pulls_zero_ = end.zero_pulls;
    }

    // exchange=overlap: the gather and the pull in gather_and_pull(), right after the drift. Euler
    // drifts and kicks with the last step's pull (the upload's at first), then pulls from the new
    // positions for the next step.
    void step_overlapped(const StepEnd<Real>& end) {
        if (leapfrog()) {
            gather_and_pull();
            end_step_and_map(end);
            pulls_zero_ = end.zero_pulls;
            return;
        }
        end_step_owned(dispatch_, motion_, d_, end);
        pulls_zero_ = end.zero_pulls;
        // The map only (the pulls are the next step's), beside the pull from the other blocks.
        gather_and_pull([&](Dispatch<Space>& beside) { end_step_and_map(beside, step_end(false, false, false)); });
    }

    // dispatch=graphK: `steps` steps from graphs recorded once, of K steps and of one step before
    // the last, and of the last step. Every graph starts from zero pulls where the variant adds into
    // them (its steps leave them so), so that no graph depends on what ran before it; but where
    // steps pull ahead, from the pulls of its positions, which its first kernel consumes.
    void replay(int steps) {
        if (!pulls_ahead()) zero_added_pulls();
        const int middle = steps - 1;
        for (int g = 0; g < middle / graph_steps_; ++g) submit(graph_steps_, false);
        for (int s = 0; s < middle % graph_steps_; ++s) submit(1, false);
        submit(1, true);
        pulls_zero_ = !pulls_ahead() && step_zeroes_pulls(true);
    }

    // Euler's overlapped steps: each ends with the pull of its new positions, the next step's.
    bool pulls_ahead() const { return overlapped() && !leapfrog(); }

    // The graph of `count` steps (the last of an advance() if `last`) run, and the positions'
    // buffers swapped as its steps swap them.
    void submit(int count, bool last) {
        graph_of(count, last).submit();
        if (fused_ && count % 2 == 1) swap_positions();
    }

    // The positions a step wrote become the current ones; with step_end=fused also its moves.
    void swap_positions() {
        std::swap(motion_.p, next_positions_);
        if (fused_) std::swap(map_.moved, next_moved_);
        positions_swapped_ = !positions_swapped_;
    }

    // Whether a step's last kernel leaves the pulls zero: where the variant adds into them, once
    // they are consumed, which they are unless a later advance() still needs them (leapfrog's
    // first half kick of its first step).
    bool step_zeroes_pulls(bool last) const { return adds_into_pulls() && (!leapfrog() || !last); }

    // The graph of `count` steps, the last of an advance() if `last`, recorded at first use: one
    // for each buffer the positions start in (step_end=fused swaps them every step), as a graph
    // keeps the Views it was recorded with; both at once, so that none is recorded while steps are
    // timed after a warm-up.
    const Kokkos::Experimental::Graph<Space>& graph_of(int count, bool last) {
        // step_breakdown()'s steps (one each) carry its events: a graph of their own.
        auto& graphs = timing_steps_ ? timed_step_graph_ : last ? last_step_graph_ : count == 1 ? step_graph_ : steps_graph_;
        if (!graphs[positions_swapped_]) {
            for (int buffer = 0; buffer < (fused_ ? 2 : 1); ++buffer) {
                graphs[positions_swapped_] = record_steps(count, last);
                if (fused_) swap_positions();
            }
        }
        return *graphs[positions_swapped_];
    }

    // A graph of `count` steps from zero pulls (replay()), recorded without changing the state
    // the host keeps of the simulation.
    Kokkos::Experimental::Graph<Space> record_steps(int count, bool last) {
        const bool pulls_were_zero = pulls_zero_;
        const bool swapped = positions_swapped_;
        pulls_zero_ = true;
        const auto steps = [&] {
            for (int s = 0; s < count; ++s) step(last && s + 1 == count);
        };
        auto graph = spans_ranks() ? capture(steps) : dispatch_.record(steps);
        pulls_zero_ = pulls_were_zero;
        if (positions_swapped_ != swapped) swap_positions();
        return graph;
    }

    // Over several ranks (steps_can_be_captured()): what `record` launches on the compute stream,
    // with the exchange instance's work and the all-gather joined to it by their events, captured
    // into a graph. Kokkos' own recording has no node for a collective or another stream's work.
    template <class Record>
    Kokkos::Experimental::Graph<Space> capture(const Record& record) {
#ifdef KOKKOS_ENABLE_CUDA
        if constexpr (kRunsOnGpu<Space>) return capture_graph(space_, record);
#endif
        (void)record;
        throw std::logic_error("steps are captured on the CUDA space only");
    }

    // The steps per graph of the `dispatch` tuning (0: launched), refused where steps cannot be
    // recorded: a full recount clears its counts with deep_copy, and the ranks' gathers run between
    // kernels. auto: graphs on the GPU where they can be recorded, launches on host spaces (whose
    // graphs run the same kernels one by one).
    int graph_steps_for(const std::string& dispatch) const {
        const int steps = dispatch == "auto" ? (kRunsOnGpu<Space> ? kAutoGraphSteps : 0) : graph_steps_of(dispatch);
        if (steps == 0) return 0;
        if (dispatch == "auto") return steps_are_kernels_only() || steps_can_be_captured() ? steps : 0;
        if (steps_can_be_captured()) return steps;
        if (spans_ranks() && map_strategy_ == MapStrategy::incremental)
            throw UsageError("tuning dispatch=" + dispatch + " records steps over " +
                             std::to_string(problem_.distribution.ranks()) +
                             " ranks on the CUDA space with device collectives nccl or peer only; use dispatch=launch");
        require_kernels_only("dispatch=" + dispatch, "records steps", "dispatch=launch");
        return steps;
    }

    // Over several ranks: the steps and their all-gathers can be captured from the compute stream
    // into a graph (capture()): on the CUDA space, with map=incremental (a full recount clears its
    // counts with deep_copy) and device collectives that queue on the stream (not host-staged).
    bool steps_can_be_captured() const {
        const DeviceCommunicator* device = problem_.distribution.device;
        return kRunsOnGpu<Space> && spans_ranks() && map_strategy_ == MapStrategy::incremental && device != nullptr &&
               device->allgather_can_be_captured();
    }

    // step_end=fused where the variant has the tuning and its steps are kernels only.
    bool fused_for(const TuningValues& tuning) const {
        const auto step_end = tuning.find("step_end");
        if (step_end == tuning.end() || !fused_step_end_of(step_end->second, kRunsOnGpu<Space>, Dim)) return false;
        if (step_end->second == "auto") return steps_are_kernels_only();
        require_kernels_only("step_end=fused", "ends steps in the pull kernel", "step_end=separate");
        return true;
    }

    // Whether a step is kernels and nothing between them, as recorded graphs and a step ended in
    // the pull kernel need: map=incremental (the full recounts clear their counts with deep_copy)
    // on one rank (the ranks' gathers run between the kernels).
    bool steps_are_kernels_only() const { return map_strategy_ == MapStrategy::incremental && !spans_ranks(); }

    // UsageError for the tuning `setting` (which `does` something to the steps) unless they are
    // kernels only; over several ranks it names the setting to use instead.
    void require_kernels_only(const std::string& setting, const std::string& does,
                              const std::string& over_ranks_use) const {
        if (map_strategy_ != MapStrategy::incremental)
            throw UsageError("tuning " + setting + " " + does + " with map=incremental only");
        if (spans_ranks())
            throw UsageError("tuning " + setting + " runs on one rank; over " +
                             std::to_string(problem_.distribution.ranks()) + " ranks use " + over_ranks_use);
    }

    StepEnd<Real> step_end(bool advance, bool next_before_force, bool zero) const {
        return {integrator(), G(), dt(), advance, next_before_force, zero, owned_range()};
    }

    // The GPU Kokkos is to use: the device communicator's, so that the gathers and the kernels
    // share one device.
    static int device_of(const Distribution& distribution) {
        if (!kRunsOnGpu<Space> || !distribution.spans_ranks() || distribution.device == nullptr) return -1;
        return distribution.device->device();
    }

    // UsageError when the ranks cannot be served: a GPU space without device collectives, or a
    // Kokkos already running on another GPU than the device communicator's.
    void check_distribution() const {
        if (!spans_ranks()) return;
        if constexpr (kRunsOnGpu<Space>) {
            const Distribution& distribution = problem_.distribution;
            const std::string id = std::string("kokkos@") + SpaceName<Space>::value;
            if (distribution.device == nullptr)
                throw UsageError(id + " over " + std::to_string(distribution.ranks()) +
                                 " ranks needs device collectives (NCCL or host-staged); this run has none");
#ifdef KOKKOS_ENABLE_CUDA
            const int device = distribution.device->device();
            if (device >= 0 && device != space_.cuda_device())
                throw UsageError(id + " on rank " + std::to_string(distribution.rank()) + " runs on GPU " +
                                 std::to_string(space_.cuda_device()) + " (Kokkos was started before) but its "
                                 "device collectives use GPU " + std::to_string(device));
#endif
        }
    }

    // Every rank's block of each View onto every rank (nothing without ranks).
    void gather(const std::vector<DeviceReals<Space, Real>>& views) {
        if (!spans_ranks()) return;
        const Distribution& distribution = problem_.distribution;
        if constexpr (kRunsOnGpu<Space>) {
#ifdef KOKKOS_ENABLE_CUDA
            // Queued on the space's stream after the kernels that wrote the blocks, and before the
            // next ones: no fence.
            std::vector<Real*> buffers;
            for (const auto& view : views) buffers.push_back(view.data());
            const cudaStream_t stream = space_.cuda_stream();
            if (timing_steps_) step_events_->exchange_start.mark(stream);
            distribution.device->allgather_in_place(std::span<Real* const>(buffers), decomposition_,
                                                    static_cast<void*>(stream));
            if (timing_steps_) step_events_->exchange_end.mark(stream);
#endif
        } else {
            space_.fence();  // the blocks written before the host collective reads them
            for (const auto& view : views)
                distribution.host->allgather_in_place(std::span<Real>(view.data(), problem_.n), decomposition_);
        }
    }
    void gather_positions() {
        if (!spans_ranks()) return;
        gather(std::vector<DeviceReals<Space, Real>>(motion_.p.c, motion_.p.c + Dim));
    }

    void pull_kernel() {
        zero_added_pulls();
        compute_pulls();
        pulls_zero_ = false;
    }

    // CUDA space over several ranks with exchange=overlap.
    bool overlapped() const { return kRunsOnGpu<Space> && spans_ranks() && overlaps_exchange(); }

    // exchange=overlap: forked from the compute instance after the drift, the exchange instance
    // gathers the positions while the compute one pulls the owned bodies from the owned block (its
    // positions are this rank's own; the gather leaves them alone); joined, the compute instance
    // adds the pull from every other block. The owned pull is queued first: a host-staged gather
    // holds the host until it is done.
    // `beside`, if given, is launched on the exchange instance once the positions have arrived,
    // beside the pull from the other blocks; the compute instance waits for both.
    void gather_and_pull([[maybe_unused]] const std::function<void(Dispatch<Space>&)>& beside = {}) {
#ifdef KOKKOS_ENABLE_CUDA
        if constexpr (kRunsOnGpu<Space>) {
            if (!exchange_) throw std::logic_error("an overlapped exchange before the upload");
            zero_added_pulls();
            exchange_->fork_from(space_);
            compute_pulls_from(owned_block_sources(owned_range(), n_));
            std::vector<Real*> buffers;
            for (int k = 0; k < Dim; ++k) buffers.push_back(motion_.p[k].data());
            const cudaStream_t exchange = exchange_->stream();
            problem_.distribution.device->allgather_in_place(std::span<Real* const>(buffers), decomposition_,
                                                             static_cast<void*>(exchange));
            exchange_->join_into(space_);
            if (beside) {
                Dispatch<Space> exchange_dispatch(exchange_->space());
                beside(exchange_dispatch);
            }
            compute_pulls_from(other_blocks_sources(owned_range(), n_));
            if (beside) exchange_->join_into(space_);
            pulls_zero_ = false;
            return;
        }
#endif
        throw std::logic_error("the overlapped exchange runs on the CUDA space only");
    }

    // Zeroes pulls() where the variant adds into them, unless the last kernel left them zero.
    void zero_added_pulls() {
        if (!adds_into_pulls() || pulls_zero_) return;
        zero_pulls_of(dispatch_, motion_.pull, n_);
        pulls_zero_ = true;
    }

    void end_step_and_map(const StepEnd<Real>& e) { end_step_and_map(dispatch_, e); }
    void end_step_and_map(Dispatch<Space>& dispatch, const StepEnd<Real>& e) {
        switch (map_strategy_) {
            case MapStrategy::incremental:
                end_step_and_move_counts(dispatch, motion_, map_, n_, d_, e);
                rewrite_moved_cells(dispatch, map_, n_);
                break;
            case MapStrategy::atomic_counts:
                end_step_and_count_atomic(dispatch, motion_, map_, n_, d_, e, false);
                normalise_map(dispatch, map_);
                break;
            case MapStrategy::scatter_view:
                end_step_and_count_scatter(dispatch, motion_, map_, scatter_, n_, d_, e);
                normalise_map(dispatch, map_);
                break;
        }
    }

    Problem problem_;
    BlockDecomposition decomposition_;
    BodyBlock owned_;
    Space space_;
    Dispatch<Space> dispatch_{space_};
    int n_, d_;
    MapStrategy map_strategy_;
    bool one_kernel_;  // StepKernels::one_per_advance
    int graph_steps_;  // dispatch=graphK: K; 0: launched or one_kernel_
    bool fused_;       // step_end=fused
    // Per buffer of the positions (positions_swapped_).
    std::optional<Kokkos::Experimental::Graph<Space>> steps_graph_[2], step_graph_[2], last_step_graph_[2],
        timed_step_graph_[2];
    Motion<Space, Real, Dim> motion_;
    DeviceAxes<Space, Real, Dim> next_positions_;  // fused_ or one_kernel_: where a step writes the positions
    Moves<Space> next_moved_;                      // step_end=fused: where a step records its moves
    DeviceCounts<Space> arrivals_;                 // step_end=fused: StepEndInPullKernel::arrivals
    bool positions_swapped_ = false;               // motion_.p is the buffer allocated as p_next
    DeviceReals<Space, Real> m_;
    MapState<Space> map_;
    CountScatter<Space> scatter_;
    bool pulls_zero_ = false;  // the last kernel left every pull zero

    bool timing_steps_ = false;  // step_breakdown() is running: the steps record their events
    // Sets timing_steps_ while it lives, however step_breakdown() leaves.
    struct TimingSteps {
        explicit TimingSteps(KokkosSimulation& simulation) : simulation(simulation) { simulation.timing_steps_ = true; }
        ~TimingSteps() { simulation.timing_steps_ = false; }
        TimingSteps(const TimingSteps&) = delete;
        TimingSteps& operator=(const TimingSteps&) = delete;
        KokkosSimulation& simulation;
    };
#ifdef KOKKOS_ENABLE_CUDA
    std::unique_ptr<CudaStepEvents> step_events_;     // made by the first step_breakdown()
    std::unique_ptr<CudaExchangeInstance> exchange_;  // exchange=overlap over several ranks, made at upload
#endif
};

#ifndef NBODY_KOKKOS_SIMULATION_DEFINITIONS
NBODY_KOKKOS_SIMULATIONS(extern template)
#endif

}  // namespace nbody::kokkos
