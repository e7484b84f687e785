#pragma once
// The GPU and the CPUs of one rank of a distributed run (docs/scaling.md), shared by the device
// communicators that start one rank per GPU.
#include <span>
#include <string>

#include "nbody/communicator.hpp"

namespace nbody::cuda {

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

    const int rank_;
    const int size_;
    int device_ = -1;
    std::string device_description_;
    std::string description_;
};

// Binds this process to the CPUs near its GPU (the PCI device's local_cpulist), whatever the
// launcher or OMP_PLACES chose: a rank fed from the far socket pays a NUMA hop on every launch and
// copy. Local ranks whose GPUs share those CPUs get disjoint equal shares, in device order.
// Returns what was done, for the run's output and results; never fails the run.
std::string bind_near_gpu(int device, int gpus_in_use);

}  // namespace nbody::cuda
