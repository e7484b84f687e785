#include "host_staged_communicator.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "cuda_common.cuh"

namespace nbody::cuda {
namespace {

cudaStream_t as_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

}  // namespace

HostStagedDeviceCommunicator::HostStagedDeviceCommunicator(Communicator& host) : host_(host) {
    int devices = 0;
    const cudaError_t counted = cudaGetDeviceCount(&devices);
    if (counted != cudaSuccess || devices == 0)
        throw std::runtime_error("rank " + std::to_string(host.rank()) + ": host-staged device collectives need a GPU, and " +
                                 (counted != cudaSuccess ? std::string(cudaGetErrorString(counted)) : "this node has none"));
    device_ = host.local_rank() % devices;
    NBODY_CUDA_CHECK(cudaSetDevice(device_));
    device_description_ = describe_device(device_);
    const int gpus_in_use = std::min(host.local_size(), devices);
    description_ = "host-staged (device -> host copy, all-gather over " + host.describe() + ", host -> device copy): " +
                   std::to_string(host.size()) + " ranks on " + std::to_string(host.nodes()) +
                   (host.nodes() == 1 ? " node" : " nodes") + ", each node's " + std::to_string(host.local_size()) +
                   " local ranks on " + std::to_string(gpus_in_use) + (gpus_in_use == 1 ? " GPU" : " GPUs") +
                   " (local rank modulo the GPU count)";
}

template <class T>
void HostStagedDeviceCommunicator::gather(std::span<T* const> axes, const BlockDecomposition& decomposition,
                                          std::vector<T>& staging, void* stream) {
    require_ranks(decomposition, size(), "a host-staged all-gather");
    const std::size_t n = decomposition.bodies();
    const BodyBlock own = decomposition.block(rank());
    staging.resize(n * axes.size());
    for (std::size_t a = 0; a < axes.size(); ++a)
        if (own.count != 0)
            NBODY_CUDA_CHECK(cudaMemcpyAsync(staging.data() + a * n + own.first, axes[a] + own.first, own.count * sizeof(T),
                                             cudaMemcpyDeviceToHost, as_stream(stream)));
    NBODY_CUDA_CHECK(cudaStreamSynchronize(as_stream(stream)));
    for (std::size_t a = 0; a < axes.size(); ++a) host_.allgather_in_place(std::span<T>(staging.data() + a * n, n), decomposition);
    // The other blocks only: the owned one may be read meanwhile (the overlapped exchange).
    const auto copy_back = [&](std::size_t first, std::size_t count) {
        if (count == 0) return;
        for (std::size_t a = 0; a < axes.size(); ++a)
            NBODY_CUDA_CHECK(cudaMemcpyAsync(axes[a] + first, staging.data() + a * n + first, count * sizeof(T),
                                             cudaMemcpyHostToDevice, as_stream(stream)));
    };
    copy_back(0, own.count != 0 ? own.first : n);
    if (own.count != 0) copy_back(own.first + own.count, n - own.first - own.count);
    NBODY_CUDA_CHECK(cudaStreamSynchronize(as_stream(stream)));
}

void HostStagedDeviceCommunicator::allgather_in_place(std::span<float* const> axes, const BlockDecomposition& decomposition,
                                                      void* stream) {
    gather(axes, decomposition, staged_float_, stream);
}

void HostStagedDeviceCommunicator::allgather_in_place(std::span<double* const> axes, const BlockDecomposition& decomposition,
                                                      void* stream) {
    gather(axes, decomposition, staged_double_, stream);
}

void HostStagedDeviceCommunicator::allreduce_sum(std::int32_t* values, std::size_t count, void* stream) {
    allreduce_through_host(host_, values, count, stream, staged_counts_);
}

void allreduce_through_host(Communicator& host, std::int32_t* values, std::size_t count, void* stream,
                            std::vector<std::int32_t>& staging) {
    staging.resize(count);
    if (count == 0) return;
    NBODY_CUDA_CHECK(cudaMemcpyAsync(staging.data(), values, count * sizeof(std::int32_t), cudaMemcpyDeviceToHost,
                                     as_stream(stream)));
    NBODY_CUDA_CHECK(cudaStreamSynchronize(as_stream(stream)));
    host.allreduce_sum(std::span<std::int32_t>(staging));
    NBODY_CUDA_CHECK(cudaMemcpyAsync(values, staging.data(), count * sizeof(std::int32_t), cudaMemcpyHostToDevice,
                                     as_stream(stream)));
    NBODY_CUDA_CHECK(cudaStreamSynchronize(as_stream(stream)));
}

}  // namespace nbody::cuda
