#include "nccl_communicator.cuh"

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "cuda_common.cuh"
#include "nbody/errors.hpp"
#include "rank_binding.cuh"

namespace nbody::cuda {
namespace {

void check_nccl(ncclResult_t status, const char* call, int rank) {
    if (status == ncclSuccess) return;
    std::string message = "rank " + std::to_string(rank) + ": " + call + " failed: " + ncclGetErrorString(status);
    if (const char* detail = ncclGetLastError(nullptr); detail != nullptr && *detail != '\0') message += std::string(" (") + detail + ")";
    throw std::runtime_error(message);
}

#define NBODY_NCCL_CHECK(call) check_nccl((call), #call, rank_)

template <class T>
ncclDataType_t nccl_type();
template <>
ncclDataType_t nccl_type<float>() { return ncclFloat32; }
template <>
ncclDataType_t nccl_type<double>() { return ncclFloat64; }

std::string version_text(int code) {  // NCCL_VERSION_CODE since 2.9: major * 10000 + minor * 100 + patch
    return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." + std::to_string(code % 100);
}

class NcclCommunicator final : public OneGpuPerRankCommunicator<NcclCommunicator> {
public:
    explicit NcclCommunicator(Communicator& host) : OneGpuPerRankCommunicator(host) {
        start_or_refuse([&] { start(host); });
    }

    void start(Communicator& host) {
        // NCCL's support for mixing captured and uncaptured calls makes each captured call wait on an
        // event shared with the uncaptured ones; cuda.sliced's captured step at N = 2^14 on 4 GPUs then
        // ran slow in 9 of 20 launches (docs/scaling.md, "Launch to launch"). The steps never mix
        // them. Set before NCCL reads its environment; a value the user set is kept.
        const bool mixing_set = std::getenv("NCCL_GRAPH_MIXING_SUPPORT") != nullptr;
        if (!mixing_set) setenv("NCCL_GRAPH_MIXING_SUPPORT", "0", 0);
        int version = 0;
        NBODY_NCCL_CHECK(ncclGetVersion(&version));
        if (version / 10000 != NCCL_MAJOR)
            throw std::runtime_error("rank " + std::to_string(rank_) + ": the NCCL library loaded is " + version_text(version) +
                                     ", this build was compiled against NCCL " + std::to_string(NCCL_MAJOR) + "." +
                                     std::to_string(NCCL_MINOR) + "." + std::to_string(NCCL_PATCH));
        int devices = 0;
        NBODY_CUDA_CHECK(cudaGetDeviceCount(&devices));
        if (host.local_rank() >= devices)
            throw UsageError("rank " + std::to_string(rank_) + " is local rank " + std::to_string(host.local_rank()) + " of " +
                             std::to_string(host.local_size()) + " on its node, which has " + std::to_string(devices) +
                             " GPUs: start one rank per GPU (mpirun -np G, or --map-by ppr:<GPUs>:node)");
        take_local_gpu(host, std::min(host.local_size(), devices));  // before NCCL starts its threads

        ncclUniqueId id{};
        if (rank_ == 0) NBODY_NCCL_CHECK(ncclGetUniqueId(&id));
        host.broadcast(std::as_writable_bytes(std::span<ncclUniqueId>(&id, 1)), 0);
        NBODY_NCCL_CHECK(ncclCommInitRank(&comm_, size_, id, rank_));

        // The node's other GPUs in use are those of the other local ranks: 0 .. local_size - 1.
        int others = 0;
        int reachable = 0;
        for (int other = 0; other < std::min(host.local_size(), devices); ++other) {
            if (other == device_) continue;
            int can_access = 0;
            NBODY_CUDA_CHECK(cudaDeviceCanAccessPeer(&can_access, device_, other));
            ++others;
            reachable += can_access;
        }
        description_ = "NCCL " + version_text(version) + " over " + std::to_string(size_) + " GPUs on " + std::to_string(host.nodes()) +
                       (host.nodes() == 1 ? " node" : " nodes") + "; rank 0's GPU has peer access (NVLink or PCIe) to " +
                       std::to_string(reachable) + " of the " + std::to_string(others) +
                       " other GPUs of its node; NCCL_DEBUG=INFO names the transport NCCL chose";
        if (host.nodes() > 1) description_ += "; between nodes NCCL's network transport";
        description_ += mixing_set ? "; NCCL_GRAPH_MIXING_SUPPORT from the environment"
                                   : "; NCCL_GRAPH_MIXING_SUPPORT=0 (the steps never mix captured and uncaptured calls)";
    }

    ~NcclCommunicator() override {
        if (comm_ == nullptr) return;
        const ncclResult_t status = ncclCommDestroy(comm_);
        if (status != ncclSuccess)  // a destructor cannot throw: say it and go on
            std::fprintf(stderr, "rank %d: ncclCommDestroy failed: %s\n", rank_, ncclGetErrorString(status));
    }
    NcclCommunicator(const NcclCommunicator&) = delete;
    NcclCommunicator& operator=(const NcclCommunicator&) = delete;

    void allreduce_sum(std::int32_t* values, std::size_t count, void* stream) override {
        NBODY_NCCL_CHECK(ncclAllReduce(values, values, count, ncclInt32, ncclSum, comm_, static_cast<cudaStream_t>(stream)));
    }

private:
    friend class OneGpuPerRankCommunicator<NcclCommunicator>;

    // NCCL's all-gather moves equal blocks: block_capacity() from each rank, landing at
    // rank * capacity, which is where BlockDecomposition puts every block; the padding of the
    // trailing ranks lies past the last body.
    template <class T>
    void gather(std::span<T* const> axes, const BlockDecomposition& decomposition, void* stream) {
        require_ranks(decomposition, size_, "an NCCL all-gather");
        const std::size_t per_rank = decomposition.block_capacity();
        if (per_rank == 0 || axes.empty()) return;
        NBODY_NCCL_CHECK(ncclGroupStart());
        for (T* axis : axes)
            NBODY_NCCL_CHECK(ncclAllGather(axis + per_rank * static_cast<std::size_t>(rank_), axis, per_rank, nccl_type<T>(), comm_,
                                           static_cast<cudaStream_t>(stream)));
        NBODY_NCCL_CHECK(ncclGroupEnd());
    }

    ncclComm_t comm_ = nullptr;
};

}  // namespace

std::unique_ptr<DeviceCommunicator> make_nccl_communicator(Communicator& host) {
    return std::make_unique<NcclCommunicator>(host);
}

}  // namespace nbody::cuda
