#pragma once
// The device communicator through host memory (DeviceCollectives::host_staged, docs/scaling.md):
// a collective copies this rank's part device -> host, runs the host communicator's collective
// (MPI) and copies the result host -> device. Slower than NCCL, but several ranks may share one
// GPU, which is how the distributed GPU code is checked on a one-GPU machine. Its collectives are
// host calls, so a CUDA graph cannot capture them (CudaSimulation launches such steps directly).
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nbody/communicator.hpp"

namespace nbody::cuda {

class HostStagedDeviceCommunicator final : public DeviceCommunicator {
public:
    // Collective over every rank of `host`, which must outlive this object. Takes GPU
    // local_rank % (the node's GPU count), so several local ranks may share one GPU; throws
    // std::runtime_error naming the rank when the node has no GPU.
    explicit HostStagedDeviceCommunicator(Communicator& host);

    int rank() const override { return host_.rank(); }
    int size() const override { return host_.size(); }
    int device() const override { return device_; }
    std::string device_description() const override { return device_description_; }
    std::string describe() const override { return description_; }

    // Every CUDA call is checked; `stream` is synchronised before each host collective and before
    // returning (the staging buffers are reused by the next call).
    void allgather_in_place(std::span<float* const> axes, const BlockDecomposition& decomposition, void* stream) override;
    void allgather_in_place(std::span<double* const> axes, const BlockDecomposition& decomposition, void* stream) override;
    void allreduce_sum(std::int32_t* values, std::size_t count, void* stream) override;
    bool allgather_can_be_captured() const override { return false; }  // host calls

private:
    template <class T>
    void gather(std::span<T* const> axes, const BlockDecomposition& decomposition, std::vector<T>& staging, void* stream);

    Communicator& host_;
    int device_ = -1;
    std::string device_description_;
    std::string description_;
    std::vector<float> staged_float_;
    std::vector<double> staged_double_;
    std::vector<std::int32_t> staged_counts_;
};

// The element-wise sum of `values` (device memory) over every rank of `host`: copied to `staging`,
// summed by the host communicator, copied back; `stream` is synchronised before returning.
void allreduce_through_host(Communicator& host, std::int32_t* values, std::size_t count, void* stream,
                            std::vector<std::int32_t>& staging);

}  // namespace nbody::cuda
