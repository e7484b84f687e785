#pragma once
// The CUDA runtime pieces the Kokkos model uses directly, and why Kokkos needs them: Kokkos has no
// timing events (the per-step breakdown of a run over several ranks marks the exchange and the step
// on the stream), no second instance on a stream of its own that another stream's work can join
// (the overlapped exchange: the all-gather runs beside the owned block's pull), and its graphs have
// no node for a collective or another stream's work (the ranks' steps are captured from the
// stream instead). They share the CUDA space's stream. The simulation (kokkos_simulation.hpp)
// calls them on the CUDA space only, and there also hands that stream to the device communicator
// for the ranks' all-gathers.
#include <Kokkos_Core.hpp>
#include <Kokkos_Graph.hpp>

#include <optional>
#include <stdexcept>
#include <string>

#include "kokkos_spaces.hpp"

namespace nbody::kokkos {

#ifdef KOKKOS_ENABLE_CUDA
// std::runtime_error naming the CUDA call that failed.
inline void check_cuda(cudaError_t status, const char* call) {
    if (status != cudaSuccess) throw std::runtime_error(std::string(call) + " failed: " + cudaGetErrorString(status));
}

// A CUDA event owned by its holder.
class CudaEvent {
public:
    explicit CudaEvent(unsigned int flags = cudaEventDefault) {
        check_cuda(cudaEventCreateWithFlags(&event_, flags), "cudaEventCreateWithFlags");
    }
    ~CudaEvent() { cudaEventDestroy(event_); }
    CudaEvent(const CudaEvent&) = delete;
    CudaEvent& operator=(const CudaEvent&) = delete;

    cudaEvent_t get() const { return event_; }
    void record(cudaStream_t stream) const { check_cuda(cudaEventRecord(event_, stream), "cudaEventRecord"); }
    // A timing record: while `stream` is captured, an event node that records when the graph runs
    // (an external record), not a dependency.
    void mark(cudaStream_t stream) const {
        cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
        check_cuda(cudaStreamIsCapturing(stream, &capturing), "cudaStreamIsCapturing");
        if (capturing != cudaStreamCaptureStatusActive) return record(stream);
        check_cuda(cudaEventRecordWithFlags(event_, stream, cudaEventRecordExternal), "cudaEventRecordWithFlags");
    }
    // Seconds from `earlier` to this event, both completed.
    double seconds_since(const CudaEvent& earlier) const {
        float ms = 0.0f;
        check_cuda(cudaEventElapsedTime(&ms, earlier.event_, event_), "cudaEventElapsedTime");
        return 1e-3 * ms;
    }

private:
    cudaEvent_t event_ = nullptr;
};

// What the per-step breakdown reads on the CUDA space: the step's start and end on the compute
// stream, and the all-gather's start and end.
struct CudaStepEvents {
    CudaEvent start, end, exchange_start, exchange_end;
};

// exchange=overlap's second instance of the CUDA space: its own stream at the highest priority, so
// that the collective's blocks are scheduled ahead of the pull's, forked from and joined to the
// compute instance with events (no fence: the host keeps queueing).
class CudaExchangeInstance {
public:
    explicit CudaExchangeInstance(const Kokkos::Cuda& compute) {
        check_cuda(cudaSetDevice(compute.cuda_device()), "cudaSetDevice");
        int least = 0, greatest = 0;
        check_cuda(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
        check_cuda(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, greatest), "cudaStreamCreateWithPriority");
        try {
            space_.emplace(stream_);
        } catch (...) {
            cudaStreamDestroy(stream_);
            throw;
        }
    }
    // The instance first (it does not own the stream), then the stream, once idle.
    ~CudaExchangeInstance() {
        cudaStreamSynchronize(stream_);
        space_.reset();
        cudaStreamDestroy(stream_);
    }
    CudaExchangeInstance(const CudaExchangeInstance&) = delete;
    CudaExchangeInstance& operator=(const CudaExchangeInstance&) = delete;

    const Kokkos::Cuda& space() const { return *space_; }
    cudaStream_t stream() const { return stream_; }
    // This instance's next work starts after what `compute` has queued so far (the drift).
    void fork_from(const Kokkos::Cuda& compute) {
        fork_.record(compute.cuda_stream());
        check_cuda(cudaStreamWaitEvent(stream_, fork_.get(), 0), "cudaStreamWaitEvent");
    }
    // `compute`'s next work starts after what this instance has queued so far (the gather).
    void join_into(const Kokkos::Cuda& compute) {
        join_.record(stream_);
        check_cuda(cudaStreamWaitEvent(compute.cuda_stream(), join_.get(), 0), "cudaStreamWaitEvent");
    }

private:
    cudaStream_t stream_ = nullptr;
    std::optional<Kokkos::Cuda> space_;
    CudaEvent fork_{cudaEventDisableTiming}, join_{cudaEventDisableTiming};
};
// `record`'s launches on `space`'s stream, and the work other streams join to it by events,
// captured into a new graph: Kokkos' own recording has no node for a collective or another
// stream's work.
template <class Record>
Kokkos::Experimental::Graph<Kokkos::Cuda> capture_graph(const Kokkos::Cuda& space, const Record& record) {
    auto graph = Kokkos::Experimental::create_graph(space);
    const cudaStream_t stream = space.cuda_stream();
    // Relaxed: a kernel's first launch may still set its attributes or size Kokkos' scratch.
    check_cuda(cudaStreamBeginCaptureToGraph(stream, graph.native_graph(), nullptr, nullptr, 0,
                                             cudaStreamCaptureModeRelaxed),
               "cudaStreamBeginCaptureToGraph");
    cudaGraph_t captured = nullptr;
    try {
        record();
    } catch (...) {
        cudaStreamEndCapture(stream, &captured);
        throw;
    }
    check_cuda(cudaStreamEndCapture(stream, &captured), "cudaStreamEndCapture");
    return graph;
}
#endif

}  // namespace nbody::kokkos
