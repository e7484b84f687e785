#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

#include "nbody/errors.hpp"
#include "simulation_base.cuh"

namespace nbody::cuda {
namespace {

constexpr unsigned int kIntegrateBlock = 256;

// Positions and velocities by axis, as the integration kernels update them.
template <class Real, int Dim>
struct DeviceState {
    Real* position[Dim];
    Real* velocity[Dim];

    __device__ void load(int i, Vec<Real, Dim>& p, Vec<Real, Dim>& v) const {
NBODY_UNROLL_AXES
        for (int k = 0; k < Dim; ++k) {
            p[k] = position[k][i];
            v[k] = velocity[k][i];
        }
    }
    __device__ void store(int i, const Vec<Real, Dim>& p, const Vec<Real, Dim>& v) const {
NBODY_UNROLL_AXES
        for (int k = 0; k < Dim; ++k) {
            position[k][i] = p[k];
            velocity[k][i] = v[k];
        }
    }
};

// Body i's pull, left zero when `consumed` (the overlapped step's first kernel: the pull parts that
// follow add into it).
template <class Real, int Dim>
__device__ Vec<Real, Dim> take_pull(Vec<Real, Dim>* __restrict__ pull, int i, bool consumed) {
    const Vec<Real, Dim> value = pull[i];
    if (consumed) pull[i] = Vec<Real, Dim>{};
    return value;
}

template <class Real, int Dim>
__global__ void advance_before_force_kernel(DeviceState<Real, Dim> state, Vec<Real, Dim>* __restrict__ pull,
                                            bool consumes_pull, Integrator integrator, BodyRange bodies,
                                            DeviceConstants<Real> c) {
    const int i = bodies.first + blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= bodies.end) return;
    Vec<Real, Dim> p, v;
    state.load(i, p, v);
    advance_before_force(integrator, p, v, take_pull(pull, i, consumes_pull), c.G, c.dt);
    state.store(i, p, v);
}

template <class Real, int Dim>
__global__ void advance_after_force_kernel(DeviceState<Real, Dim> state, Vec<Real, Dim>* __restrict__ pull,
                                           bool consumes_pull, Integrator integrator, BodyRange bodies,
                                           int* __restrict__ cells, DeviceConstants<Real> c) {
    const int i = bodies.first + blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= bodies.end) return;
    Vec<Real, Dim> p, v;
    state.load(i, p, v);
    advance_after_force(integrator, p, v, take_pull(pull, i, consumes_pull), c.G, c.dt);
    state.store(i, p, v);
    cells[i] = activity_cell(p[0], p[1], c.d);
}

// Where the integrator moves the positions, and so where the step gathers them (docs/scaling.md).
bool drifts_before_force(Integrator integrator) { return integrator == Integrator::leapfrog; }

// The problem's device communicator, checked against its distribution; nullptr in one process.
DeviceCommunicator* device_communicator_of(const Problem& problem) {
    const Distribution& distribution = problem.distribution;
    if (distribution.device == nullptr) {
        if (distribution.spans_ranks())
            throw UsageError("a CUDA simulation over " + std::to_string(distribution.ranks()) +
                             " ranks needs a device communicator (Problem::distribution.device)");
        return nullptr;
    }
    if (distribution.device->size() != distribution.ranks() || distribution.device->rank() != distribution.rank())
        throw std::logic_error("the device communicator is rank " + std::to_string(distribution.device->rank()) + " of " +
                               std::to_string(distribution.device->size()) + ", the problem's distribution rank " +
                               std::to_string(distribution.rank()) + " of " + std::to_string(distribution.ranks()));
    return distribution.device;
}

BodyRange range_of(const BodyBlock& block) {
    return {static_cast<int>(block.first), static_cast<int>(block.first + block.count)};
}

}  // namespace

unsigned int block_size_of(const TuningValues& tuning) {
    return static_cast<unsigned int>(tuning_int(tuning, "block_size"));
}

template <class Real>
CudaSimulation<Real>::CudaSimulation(const Problem& problem, const TuningValues& tuning)
    : problem_(problem),
      constants_(device_constants<Real>(problem)),
      devices_(device_communicator_of(problem)),
      decomposition_(decomposition_of(problem)),
      owned_(range_of(owned_block(problem))),
      gathered_capacity_(devices_ != nullptr ? decomposition_.gather_capacity() : problem.n),
      map_(problem, tuning.at("map")),
      cells_(problem.n),
      events_{timing_event(), timing_event(), timing_event(), timing_event()} {
    if (!distributed()) return;
    // Made here, not in the step: the first step is launched inside a stream capture.
    int least = 0, greatest = 0;
    NBODY_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    cudaStream_t stream = nullptr;
    NBODY_CUDA_CHECK(cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, greatest));
    exchange_stream_.reset(stream);
    for (Event* event : {&fork_, &join_, &map_built_}) {
        cudaEvent_t made = nullptr;
        NBODY_CUDA_CHECK(cudaEventCreateWithFlags(&made, cudaEventDisableTiming));
        event->reset(made);
    }
}

template <class Real>
typename CudaSimulation<Real>::Event CudaSimulation<Real>::timing_event() {
    cudaEvent_t event = nullptr;
    NBODY_CUDA_CHECK(cudaEventCreate(&event));
    return Event(event);
}

// While capturing, an external record: an event node that records when the graph runs, not a
// dependency; outside a capture (the upload's gather, host-staged steps) the flag is refused.
template <class Real>
void CudaSimulation<Real>::mark(const Event& event, cudaStream_t stream) const {
    if (!timing_steps_) return;
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    NBODY_CUDA_CHECK(cudaStreamIsCapturing(stream, &capturing));
    if (capturing == cudaStreamCaptureStatusActive)
        NBODY_CUDA_CHECK(cudaEventRecordWithFlags(event.get(), stream, cudaEventRecordExternal));
    else
        NBODY_CUDA_CHECK(cudaEventRecord(event.get(), stream));
}

template <class Real>
void require_state_of(const Problem& problem, const BodiesT<Real>& initial) {
    if (initial.size() != problem.n || initial.dim != problem.workload.dim)
        throw std::invalid_argument("a state of " + std::to_string(initial.size()) + " bodies in " +
                                    std::to_string(initial.dim) + "D uploaded to a simulation of " +
                                    std::to_string(problem.n) + " bodies in " +
                                    std::to_string(problem.workload.dim) + "D");
}

template <class Real>
void reset_map(ActivityMap& map, DeviceBuffer<int>& cells, const BodiesT<Real>& initial, int d) {
    std::vector<int> host_cells(initial.size());
    for (std::size_t i = 0; i < initial.size(); ++i) host_cells[i] = activity_cell(initial.x[i], initial.y[i], d);
    cells.copy_from_host(host_cells.data());
    map.reset(cells.data());
}

template <class Real>
void CudaSimulation<Real>::upload(const BodiesT<Real>& initial) {
    require_state_of(problem_, initial);
    // The upload's gather is not the step's exchange: a later upload leaves the captured step's.
    const StepExchange step_exchange = exchange_;
    upload_bodies(initial);
    exchange_ = step_exchange;
    reset_map(map_, cells_, initial, problem_.d);
    uploaded_ = true;
    if (!step_graph_ && (!distributed() || devices_->allgather_can_be_captured())) {
        timed_step_graph_ = capture_steps(1, true);
        step_graph_ = capture_steps(1, false);
        steps_graph_ = capture_steps(kStepsPerGraph, false);
    }
}

template <class Real>
void CudaSimulation<Real>::allgather(std::span<Real* const> axes) {
    if (!distributed()) throw std::logic_error("allgather in a simulation without a device communicator");
    mark(events_.exchange_start, cudaStreamPerThread);
    devices_->allgather_in_place(axes, decomposition_, cudaStreamPerThread);
    mark(events_.exchange_end, cudaStreamPerThread);
    exchange_ = StepExchange::allgather;
}

template <class Real>
void CudaSimulation<Real>::allgather_overlapped(std::span<Real* const> axes, const std::function<void()>& local,
                                                const std::function<void()>& remote) {
    if (!distributed()) throw std::logic_error("allgather_overlapped in a simulation without a device communicator");
    cudaStream_t exchange = exchange_stream_.get();
    // Fork: the exchange stream starts after the compute stream's work so far (the drift).
    NBODY_CUDA_CHECK(cudaEventRecord(fork_.get(), cudaStreamPerThread));
    NBODY_CUDA_CHECK(cudaStreamWaitEvent(exchange, fork_.get(), 0));
    // The local work is enqueued first: a host-staged gather blocks the host until it is done.
    local();
    devices_->allgather_in_place(axes, decomposition_, exchange);
    exchange_ = StepExchange::overlapped;
    // Join: the rest of the step waits for the gathered blocks.
    NBODY_CUDA_CHECK(cudaEventRecord(join_.get(), exchange));
    NBODY_CUDA_CHECK(cudaStreamWaitEvent(cudaStreamPerThread, join_.get(), 0));
    // The map needs the positions only: its small kernels run beside the pull instead of after it,
    // and the compute stream waits for them at once (a leapfrog kick may write the owned cells next).
    build_map(map_, cells_.data(), exchange);
    remote();
    NBODY_CUDA_CHECK(cudaEventRecord(map_built_.get(), exchange));
    NBODY_CUDA_CHECK(cudaStreamWaitEvent(cudaStreamPerThread, map_built_.get(), 0));
}

template <class Real>
void CudaSimulation<Real>::launch_step(bool timed) {
    timing_steps_ = timed;
    mark(events_.start, cudaStreamPerThread);
    step_bodies(cells_.data());
    if (exchange_ != StepExchange::overlapped) build_map(map_, cells_.data(), cudaStreamPerThread);
    mark(events_.end, cudaStreamPerThread);
    timing_steps_ = true;
}

template <class Real>
typename CudaSimulation<Real>::GraphExec CudaSimulation<Real>::capture_steps(int count, bool timed) {
    // nbody_cuda compiles with the per-thread default stream, so the variants' launches on the
    // default stream are captured. Every step launches the same kernels on the same buffers, so
    // `count` of them in one graph replay as `count` replays of one.
    NBODY_CUDA_CHECK(cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeThreadLocal));
    cudaGraph_t graph = nullptr;
    try {
        for (int s = 0; s < count; ++s) launch_step(timed);
    } catch (...) {
        timing_steps_ = true;
        if (cudaStreamEndCapture(cudaStreamPerThread, &graph) == cudaSuccess && graph != nullptr)
            cudaGraphDestroy(graph);
        throw;
    }
    NBODY_CUDA_CHECK(cudaStreamEndCapture(cudaStreamPerThread, &graph));
    cudaGraphExec_t executable = nullptr;
    // Kernel nodes keep the priority of the stream they were captured on (the exchange stream's is
    // the highest) only with this flag; without it the whole graph runs at the launch stream's.
    const cudaError_t instantiated = cudaGraphInstantiate(&executable, graph, cudaGraphInstantiateFlagUseNodePriority);
    cudaGraphDestroy(graph);
    NBODY_CUDA_CHECK(instantiated);
    return GraphExec(executable);
}

template <class Real>
void CudaSimulation<Real>::advance(int steps) {
    if (!uploaded_) throw std::logic_error("advance before the first upload");
    if (!step_graph_) {
        for (int s = 0; s < steps; ++s) launch_step(true);
        return;
    }
    for (int g = 0; g < steps / kStepsPerGraph; ++g)
        NBODY_CUDA_CHECK(cudaGraphLaunch(steps_graph_.get(), cudaStreamPerThread));
    for (int s = 0; s < steps % kStepsPerGraph; ++s)
        NBODY_CUDA_CHECK(cudaGraphLaunch(step_graph_.get(), cudaStreamPerThread));
}

template <class Real>
void CudaSimulation<Real>::launch_timed_step() {
    if (timed_step_graph_)
        NBODY_CUDA_CHECK(cudaGraphLaunch(timed_step_graph_.get(), cudaStreamPerThread));
    else
        launch_step(true);
}

template <class Real>
std::optional<Simulation::StepBreakdown> CudaSimulation<Real>::step_breakdown(int steps) {
    if (!uploaded_) throw std::logic_error("step_breakdown before the first upload");
    // Overlapped, the exchange's kernel shares the SMs with the owned block's pull: the wait at the
    // join says when NCCL got SMs, not what the exchange cost (docs/scaling.md). No breakdown then.
    if (exchange_ == StepExchange::overlapped) return std::nullopt;
    const auto elapsed = [](const Event& from, const Event& to) {
        float ms = 0.0f;
        NBODY_CUDA_CHECK(cudaEventElapsedTime(&ms, from.get(), to.get()));
        return 1e-3 * ms;
    };
    return Simulation::StepBreakdown::mean_of(steps, [&] {
        launch_timed_step();
        synchronize();
        return std::pair(elapsed(events_.start, events_.end),
                         exchange_ == StepExchange::allgather ? elapsed(events_.exchange_start, events_.exchange_end) : 0.0);
    });
}

template <class Real>
void CudaSimulation<Real>::synchronize() {
    NBODY_CUDA_CHECK(cudaDeviceSynchronize());
}

template <class Real>
void CudaSimulation<Real>::download(BodiesT<Real>& state, std::vector<float>& activity_map) {
    synchronize();
    download_bodies(state);
    map_.copy_to_host(activity_map);
}

template <class Real, int Dim>
SoaSimulation<Real, Dim>::SoaSimulation(const Problem& problem, const TuningValues& tuning)
    : CudaSimulation<Real>(problem, tuning), mass_(this->gathered_capacity()), pull_(problem.n) {
    for (int k = 0; k < Dim; ++k) {
        position_[k] = DeviceBuffer<Real>(this->gathered_capacity());
        velocity_[k] = DeviceBuffer<Real>(problem.n);
    }
    if (!this->distributed()) return;
    // The padding past N travels in the gathers of the trailing blocks: zero, never uninitialised.
    for (DeviceBuffer<Real>* gathered : gathered_axes())
        NBODY_CUDA_CHECK(cudaMemset(gathered->data(), 0, gathered->size() * sizeof(Real)));
}

template <class Real, int Dim>
DeviceBodies<Real, Dim> SoaSimulation<Real, Dim>::bodies() const {
    DeviceBodies<Real, Dim> view{};
    for (int k = 0; k < Dim; ++k) view.position[k] = position_[k].data();
    view.mass = mass_.data();
    return view;
}

template <class Real, int Dim>
std::array<DeviceBuffer<Real>*, Dim + 1> SoaSimulation<Real, Dim>::gathered_axes() {
    std::array<DeviceBuffer<Real>*, Dim + 1> axes{};
    for (int k = 0; k < Dim; ++k) axes[k] = &position_[k];
    axes[Dim] = &mass_;
    return axes;
}

template <class Real, int Dim>
void SoaSimulation<Real, Dim>::gather(int axes) {
    Real* pointers[Dim + 1];
    const auto buffers = gathered_axes();
    for (int k = 0; k < axes; ++k) pointers[k] = buffers[k]->data();
    this->allgather(std::span<Real* const>(pointers, static_cast<std::size_t>(axes)));
}

template <class Real, int Dim>
void SoaSimulation<Real, Dim>::upload_bodies(const BodiesT<Real>& initial) {
    const std::size_t n = this->problem_.n;
    for (int k = 0; k < Dim; ++k) {
        position_[k].copy_from_host(initial.position(k).data(), n);
        velocity_[k].copy_from_host(initial.velocity(k).data());
    }
    mass_.copy_from_host(initial.m.data(), n);
    // Every rank uploads the same state; the gather makes each rank's block the one it holds.
    if (this->distributed()) gather(Dim + 1);
    // Overlapped, every integrator pulls right after the gather, so a step begins with the pull
    // of its positions (docs/scaling.md): Euler then needs one at the start too.
    if (needs_initial_pull(this->problem_.workload.integrator) || overlapped()) compute_pull();
}

template <class Real, int Dim>
void SoaSimulation<Real, Dim>::compute_pull_from_owned_block() {
    throw std::logic_error("a variant without an overlapped exchange asked for its owned block's pull");
}

template <class Real, int Dim>
void SoaSimulation<Real, Dim>::compute_pull_from_other_blocks() {
    throw std::logic_error("a variant without an overlapped exchange asked for the other blocks' pull");
}

template <class Real, int Dim>
void SoaSimulation<Real, Dim>::gather_and_pull() {
    Real* pointers[Dim];
    const auto buffers = gathered_axes();
    for (int k = 0; k < Dim; ++k) pointers[k] = buffers[k]->data();
    this->allgather_overlapped(std::span<Real* const>(pointers, Dim), [this] { compute_pull_from_owned_block(); },
                               [this] { compute_pull_from_other_blocks(); });
}

template <class Real, int Dim>
void SoaSimulation<Real, Dim>::step_bodies(int* cells) {
    DeviceState<Real, Dim> state{};
    for (int k = 0; k < Dim; ++k) {
        state.position[k] = position_[k].data();
        state.velocity[k] = velocity_[k].data();
    }
    const Integrator integrator = this->problem_.workload.integrator;
    const BodyRange own = this->owned();
    const unsigned int blocks = blocks_for(static_cast<std::size_t>(own.count()), kIntegrateBlock);
    const bool distributed = this->distributed();
    if (overlapped()) {
        // The pull of this step's positions is already there (the upload's, or the last step's):
        // integrate, then gather the new positions while pulling from the owned block, and pull
        // from the others as they arrive; the pull is then the next step's. The first kernel leaves
        // the pull zero once read, for the parts to add into. Every body's cell comes from the
        // gathered positions, which the kick of leapfrog does not move.
        if (own.count() > 0) {
            if (drifts_before_force(integrator)) {
                advance_before_force_kernel<<<blocks, kIntegrateBlock>>>(state, pull_.data(), true, integrator, own,
                                                                         this->constants_);
                NBODY_CUDA_CHECK_LAUNCH();
            } else {
                advance_after_force_kernel<<<blocks, kIntegrateBlock>>>(state, pull_.data(), true, integrator, own,
                                                                        cells, this->constants_);
                NBODY_CUDA_CHECK_LAUNCH();
            }
        }
        gather_and_pull();
        if (drifts_before_force(integrator) && own.count() > 0) {
            advance_after_force_kernel<<<blocks, kIntegrateBlock>>>(state, pull_.data(), false, integrator, own, cells,
                                                                    this->constants_);
            NBODY_CUDA_CHECK_LAUNCH();
        }
        return;
    }
    // Euler has nothing to do before the force: no kernel. An empty trailing block launches none.
    if (drifts_before_force(integrator)) {
        if (own.count() > 0) {
            advance_before_force_kernel<<<blocks, kIntegrateBlock>>>(state, pull_.data(), false, integrator, own,
                                                                     this->constants_);
            NBODY_CUDA_CHECK_LAUNCH();
        }
        if (distributed) gather(Dim);
    }
    compute_pull();
    if (own.count() > 0) {
        advance_after_force_kernel<<<blocks, kIntegrateBlock>>>(state, pull_.data(), false, integrator, own, cells,
                                                                this->constants_);
        NBODY_CUDA_CHECK_LAUNCH();
    }
    if (distributed && !drifts_before_force(integrator)) gather(Dim);
}

// Distributed, the map of all N comes from the gathered positions (the integration kernels wrote
// the owned bodies' cells only): one kernel computes each body's cell and moves its count.
template <class Real, int Dim>
void SoaSimulation<Real, Dim>::build_map(ActivityMap& map, int* cells, cudaStream_t stream) {
    if (this->distributed())
        map.build_from_positions(position_[0].data(), position_[1].data(), cells, stream);
    else
        map.build(cells, stream);
}

template <class Real, int Dim>
void SoaSimulation<Real, Dim>::download_bodies(BodiesT<Real>& state) {
    const std::size_t n = this->problem_.n;
    state = BodiesT<Real>(n, Dim);
    for (int k = 0; k < Dim; ++k) {
        position_[k].copy_to_host(state.position(k).data(), n);
        velocity_[k].copy_to_host(state.velocity(k).data());
    }
    mass_.copy_to_host(state.m.data(), n);
}

template void require_state_of<float>(const Problem&, const BodiesT<float>&);
template void require_state_of<double>(const Problem&, const BodiesT<double>&);
template void reset_map<float>(ActivityMap&, DeviceBuffer<int>&, const BodiesT<float>&, int);
template void reset_map<double>(ActivityMap&, DeviceBuffer<int>&, const BodiesT<double>&, int);
template class CudaSimulation<float>;
template class CudaSimulation<double>;
template class SoaSimulation<float, 2>;
template class SoaSimulation<float, 3>;
template class SoaSimulation<double, 2>;
template class SoaSimulation<double, 3>;

}  // namespace nbody::cuda
