#pragma once
// What every CUDA variant's Simulation shares: the activity map after every step, the cell
// index per body it is built from, device synchronisation, and (SoaSimulation) the
// structure-of-arrays state with the integrator's kernels. A variant supplies the pull.
// Templated on the real type (and SoaSimulation on the dimension); the members and kernels are
// compiled once, in simulation_base.cu, for every workload.
//
// Distributed (docs/scaling.md; Problem::distribution with a device communicator): each rank
// integrates and pulls its owned block only, the positions are gathered on the device right
// after the drift, and every rank builds the map of all N. Without a device communicator (one
// process) the owned block is all N and no collective is called.
#include <array>
#include <functional>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "activity_map.cuh"
#include "cuda_common.cuh"
#include "nbody/workload_dispatch.hpp"

namespace nbody::cuda {

// The steps a CUDA variant's replayed graph holds (Kokkos's dispatch=auto records as many): the
// GPU runs them back to back, where a graph per step waits for each graph's launch.
inline constexpr int kStepsPerGraph = 16;

// The bodies [first, end) a kernel integrates or pulls: the owned block, all N in one process.
struct BodyRange {
    int first = 0;
    int end = 0;
    int count() const { return end - first; }
};

// std::invalid_argument unless `initial` has the problem's N and dimension.
template <class Real>
void require_state_of(const Problem& problem, const BodiesT<Real>& initial);

// The map of `initial`'s positions counted from zero (map.reset), each body's cell computed from
// the host copy and copied into `cells`; part of the timed upload.
template <class Real>
void reset_map(ActivityMap& map, DeviceBuffer<int>& cells, const BodiesT<Real>& initial, int d);

template <class Real>
class CudaSimulation : public SimulationOf<Real> {
public:
    using SimulationOf<Real>::upload;
    using SimulationOf<Real>::download;

    CudaSimulation(const Problem& problem, const TuningValues& tuning);

    void upload(const BodiesT<Real>& initial) final;
    void advance(int steps) final;
    void synchronize() final;
    void download(BodiesT<Real>& state, std::vector<float>& activity_map) final;
    std::optional<Simulation::StepBreakdown> step_breakdown(int steps) final;

protected:
    // True when the problem came with a device communicator: the steps gather positions.
    bool distributed() const { return devices_ != nullptr; }
    const BodyRange& owned() const { return owned_; }
    // Elements of a gathered position axis: gather_capacity() when distributed (every rank's
    // equal-capacity block, docs/scaling.md), else N.
    std::size_t gathered_capacity() const { return gathered_capacity_; }
    // Every rank's block of each axis (gathered_capacity() elements each) on every rank, on the
    // per-thread default stream; distributed only.
    void allgather(std::span<Real* const> axes);
    // The overlapped exchange (docs/scaling.md): `local` is launched on the compute stream (the
    // per-thread default stream) while the axes are gathered on a second stream; `remote` is
    // launched once they have arrived, and the step's map is built from them on the second stream
    // beside it (build_map; launch_step then builds none). Distributed only.
    void allgather_overlapped(std::span<Real* const> axes, const std::function<void()>& local,
                              const std::function<void()>& remote);

    virtual void upload_bodies(const BodiesT<Real>& initial) = 0;
    // One step (advance before force, pull, advance after force), writing each owned body's new
    // activity cell (or -1) to `cells`.
    virtual void step_bodies(int* cells) = 0;
    // The map after step_bodies, on `stream`, from `cells` unless the variant knows better
    // (distributed SoA: from the gathered positions).
    virtual void build_map(ActivityMap& map, int* cells, cudaStream_t stream) { map.build(cells, stream); }
    virtual void download_bodies(BodiesT<Real>& state) = 0;

    const Problem problem_;
    const DeviceConstants<Real> constants_;

private:
    struct GraphExecDestroy {
        void operator()(cudaGraphExec_t graph) const { cudaGraphExecDestroy(graph); }
    };
    using GraphExec = std::unique_ptr<std::remove_pointer_t<cudaGraphExec_t>, GraphExecDestroy>;
    // The steps (step_bodies and the map) captured as CUDA graphs at the first upload and replayed
    // by advance: a graph node costs less than a launch from the host, and the steps of one graph
    // follow each other without a graph launch between them (docs/performance-cuda.md). NCCL
    // collectives are captured too; host-staged ones are host calls, so those steps are launched
    // directly every time. `timed`: the step records its timing events (step_breakdown's steps).
    GraphExec capture_steps(int count, bool timed);
    void launch_step(bool timed);
    // One step that records its timing events: the timed graph's replay, or its launches.
    void launch_timed_step();

    struct EventDestroy {
        void operator()(cudaEvent_t event) const { cudaEventDestroy(event); }
    };
    struct StreamDestroy {
        void operator()(cudaStream_t stream) const { cudaStreamDestroy(stream); }
    };
    using Event = std::unique_ptr<std::remove_pointer_t<cudaEvent_t>, EventDestroy>;
    // Timing events recorded by every step (captured into the graph as event nodes): the step's
    // start and end, the all-gather's start and end.
    struct StepEvents {
        Event start, end, exchange_start, exchange_end;
    };
    static Event timing_event();
    // Records a timing event, unless the steps being launched or captured are untimed.
    void mark(const Event& event, cudaStream_t stream) const;

    DeviceCommunicator* const devices_;
    const BlockDecomposition decomposition_;
    const BodyRange owned_;
    const std::size_t gathered_capacity_;
    bool uploaded_ = false;
    ActivityMap map_;
    DeviceBuffer<int> cells_;
    StepEvents events_;
    bool timing_steps_ = true;  // whether the steps launched now record events_
    // Which exchange the steps run (set when a step is launched or captured), for the breakdown.
    enum class StepExchange { none, allgather, overlapped };
    StepExchange exchange_ = StepExchange::none;
    // The overlapped exchange's stream (highest priority, so NCCL's blocks are scheduled ahead of
    // the pull's) and the fork/join events, the last when the map beside the pull is done;
    // distributed only.
    std::unique_ptr<std::remove_pointer_t<cudaStream_t>, StreamDestroy> exchange_stream_;
    Event fork_, join_, map_built_;
    // advance(k) replays kStepsPerGraph untimed steps k / kStepsPerGraph times, then one untimed
    // step for the rest; step_breakdown replays the timed step (its event nodes cost time a step
    // does not spend otherwise, docs/scaling.md).
    GraphExec steps_graph_, step_graph_, timed_step_graph_;
};

// What a pull kernel reads: positions by axis and masses.
template <class Real, int Dim>
struct DeviceBodies {
    const Real* position[Dim];
    const Real* mass;

    __device__ Vec<Real, Dim> position_of(int i) const {
        Vec<Real, Dim> p;
NBODY_UNROLL_AXES
        for (int k = 0; k < Dim; ++k) p[k] = position[k][i];
        return p;
    }
};

// Structure-of-arrays state. The variant writes the summed pull of every body into pull()
// (its own kernels, reading bodies() only); the integration kernels around it are common.
// Leapfrog's pull of the initial positions is computed in the upload.
template <class Real, int Dim>
class SoaSimulation : public CudaSimulation<Real> {
public:
    SoaSimulation(const Problem& problem, const TuningValues& tuning);

protected:
    // pull()[i] = sum_j m_j (p_j - p_i) / (|p_j - p_i|^2 + eps2)^(3/2) over all N bodies j, from
    // bodies(), for at least the owned() bodies i (a variant that computes every i is correct,
    // only slower when distributed).
    virtual void compute_pull() = 0;
    // The overlapped exchange (the `exchange=overlap` tuning): the pull split in two parts, the
    // owned bodies pulled from the owned block (its positions are local) while the other blocks
    // arrive, then from every other block, added. A variant that offers it returns true from
    // overlaps_exchange() and overrides both parts; each reads bodies() and adds into pull(), which
    // the step leaves zero for the owned bodies before the first part.
    virtual bool overlaps_exchange() const { return false; }
    virtual void compute_pull_from_owned_block();
    virtual void compute_pull_from_other_blocks();

    DeviceBodies<Real, Dim> bodies() const;
    Vec<Real, Dim>* pull() const { return pull_.data(); }

private:
    void upload_bodies(const BodiesT<Real>& initial) final;
    void step_bodies(int* cells) final;
    void build_map(ActivityMap& map, int* cells, cudaStream_t stream) final;
    void download_bodies(BodiesT<Real>& state) final;

    // Positions and masses hold gathered_capacity() elements (the padding past N stays zero).
    DeviceBuffer<Real> position_[Dim], velocity_[Dim], mass_;
    // The position axes, then the masses: the first `axes` of them are gathered by gather().
    std::array<DeviceBuffer<Real>*, Dim + 1> gathered_axes();
    void gather(int axes);
    // Distributed with overlaps_exchange(): gathers the positions while pulling, the pull of the
    // gathered positions complete on return.
    void gather_and_pull();
    bool overlapped() const { return this->distributed() && overlaps_exchange(); }
    DeviceBuffer<Vec<Real, Dim>> pull_;
};

extern template class CudaSimulation<float>;
extern template class CudaSimulation<double>;
extern template class SoaSimulation<float, 2>;
extern template class SoaSimulation<float, 3>;
extern template class SoaSimulation<double, 2>;
extern template class SoaSimulation<double, 3>;

// Block size of the `block_size` tuning.
unsigned int block_size_of(const TuningValues& tuning);

}  // namespace nbody::cuda
