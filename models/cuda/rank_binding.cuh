#pragma once
// The GPU and the CPUs of one rank of a distributed run (docs/scaling.md), shared by the device
// communicators that start one rank per GPU.
#include <exception>
#include <span>
#include <string>

#include "cuda_common.cuh"
#include "nbody/communicator.hpp"
#include "nbody/errors.hpp"

namespace nbody::cuda {

// Binds this process to the CPUs near its GPU (the PCI device's local_cpulist), whatever the
// launcher or OMP_PLACES chose: a rank fed from the far socket pays a NUMA hop on every launch and
// copy. Local ranks whose GPUs share those CPUs get disjoint equal shares, in device order.
// Returns what was done, for the run's output and results; never fails the run.
std::string bind_near_gpu(int device, int gpus_in_use);

// What the device communicators of one rank per GPU share: the rank, its GPU and their
// descriptions, set by the derived constructor, and the all-gathers forwarded to
// Derived::gather<T>(axes, decomposition, stream), which befriends this class.
template <class Derived>
class OneGpuPerRankCommunicator : public DeviceCommunicator {
public:
    int rank() const final { return rank_; }
    int size() const final { return size_; }
    int device() const final { return device_; }
    std::string device_description() const final { return device_description_; }
    std::string describe() const final { return description_; }
    void allgather_in_place(std::span<float* const> axes, const BlockDecomposition& decomposition, void* stream) final {
        static_cast<Derived*>(this)->gather(axes, decomposition, stream);
    }
    void allgather_in_place(std::span<double* const> axes, const BlockDecomposition& decomposition, void* stream) final {
        static_cast<Derived*>(this)->gather(axes, decomposition, stream);
    }

protected:
    explicit OneGpuPerRankCommunicator(const Communicator& host) : rank_(host.rank()), size_(host.size()) {}

    // Runs the derived start-up. A GPU that is taken, peers that cannot reach each other or a
    // library that cannot start are this machine's state, not a bug: the run ends with exit 2 and
    // the rank's message (docs/scaling.md, "Faults").
    template <class Start>
    void start_or_refuse(Start&& start) {
        try {
            start();
        } catch (const UsageError&) {
            throw;
        } catch (const std::exception& e) {
            const std::string what = e.what();
            throw UsageError(what.rfind("rank ", 0) == 0 ? what : "rank " + std::to_string(rank_) + ": " + what);
        }
    }

    // Takes the GPU of this rank's local rank, creates its context (a GPU taken by another process
    // fails here) and binds this process near it, before a library starts threads that would
    // inherit another binding; sets device_ and device_description_.
    void take_local_gpu(const Communicator& host, int gpus_in_use) {
        device_ = host.local_rank();
        NBODY_CUDA_CHECK(cudaSetDevice(device_));
        NBODY_CUDA_CHECK(cudaFree(nullptr));
        device_description_ =
            describe_device(device_) + ", rank " + std::to_string(rank_) + " " + bind_near_gpu(device_, gpus_in_use);
    }

    const int rank_;
    const int size_;
    int device_ = -1;
    std::string device_description_;
    std::string description_;
};

}  // namespace nbody::cuda
