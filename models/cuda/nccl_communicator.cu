#include "nccl_communicator.cuh"

#include <cuda_runtime.h>
#include <nccl.h>

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_common.cuh"
#include "nbody/errors.hpp"

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

// "0-3,8,10-11" -> {0, 1, 2, 3, 8, 10, 11}; empty for text that is no CPU list.
std::vector<int> parse_cpu_list(const std::string& text) {
    std::vector<int> cpus;
    std::stringstream items(text);
    std::string item;
    while (std::getline(items, item, ',')) {
        if (item.empty() || item == "\n") continue;
        int first = -1, last = -1;
        char dash = 0;
        std::stringstream range(item);
        if (!(range >> first)) return {};
        if (range >> dash) {
            if (dash != '-' || !(range >> last)) return {};
        } else {
            last = first;
        }
        if (first < 0 || last < first || last >= CPU_SETSIZE) return {};
        for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
    }
    return cpus;
}

std::string cpu_list_text(const std::vector<int>& cpus) {
    std::string text;
    for (std::size_t i = 0; i < cpus.size();) {
        std::size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
        if (!text.empty()) text += ',';
        text += std::to_string(cpus[i]);
        if (j > i) {
            text += '-';
            text += std::to_string(cpus[j]);
        }
        i = j + 1;
    }
    return text;
}

// The sysfs folder of a GPU's PCI device, e.g. /sys/bus/pci/devices/0000:1b:00.0.
std::string pci_folder(int device) {
    char bus_id[64] = {};
    NBODY_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device));
    std::string id(bus_id);
    std::transform(id.begin(), id.end(), id.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return "/sys/bus/pci/devices/" + id;
}

std::string first_line_of(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

// Binds this process to the CPUs near its GPU (the PCI device's local_cpulist), whatever the
// launcher or OMP_PLACES chose: a rank fed from the far socket pays a NUMA hop on every launch and
// copy. Local ranks whose GPUs share those CPUs get disjoint equal shares, in device order.
// Returns what was done, for the run's output and results; never fails the run.
std::string bind_near_gpu(int device, int gpus_in_use) {
    const std::string folder = pci_folder(device);
    const std::vector<int> near = parse_cpu_list(first_line_of(folder + "/local_cpulist"));
    if (near.empty()) return "not bound (no CPU list in " + folder + "/local_cpulist)";
    int share = 0, sharing = 0;
    for (int other = 0; other < gpus_in_use; ++other) {
        if (parse_cpu_list(first_line_of(pci_folder(other) + "/local_cpulist")) != near) continue;
        if (other == device) share = sharing;
        ++sharing;
    }
    sharing = std::max(sharing, 1);
    const std::size_t per = near.size() / static_cast<std::size_t>(sharing);
    std::vector<int> mine = per == 0 ? near
                                     : std::vector<int>(near.begin() + static_cast<std::ptrdiff_t>(per * share),
                                                        near.begin() + static_cast<std::ptrdiff_t>(per * (share + 1)));
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu : mine) CPU_SET(cpu, &set);
    const std::string numa = first_line_of(folder + "/numa_node");
    const std::string where = "near " + folder.substr(folder.rfind('/') + 1) + " (NUMA node " + (numa.empty() ? "?" : numa) +
                              ", CPUs " + cpu_list_text(near) + (sharing > 1 ? ", shared by " + std::to_string(sharing) + " GPUs" : "") + ")";
    if (sched_setaffinity(0, sizeof set, &set) != 0) return "not bound to CPUs " + cpu_list_text(mine) + " " + where + ": sched_setaffinity refused";
    cpu_set_t now;
    CPU_ZERO(&now);
    std::vector<int> bound;
    if (sched_getaffinity(0, sizeof now, &now) == 0)
        for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
            if (CPU_ISSET(cpu, &now)) bound.push_back(cpu);
    return "bound to CPUs " + cpu_list_text(bound) + " " + where;
}

class NcclCommunicator final : public DeviceCommunicator {
public:
    explicit NcclCommunicator(Communicator& host) : rank_(host.rank()), size_(host.size()) {
        // A GPU that is taken or an NCCL that cannot start is this machine's state, not a bug: the
        // run ends with exit 2 and the rank's message (docs/scaling.md, "Faults").
        try {
            start(host);
        } catch (const UsageError&) {
            throw;
        } catch (const std::exception& e) {
            throw UsageError(std::string(e.what()).rfind("rank ", 0) == 0
                                 ? std::string(e.what())
                                 : "rank " + std::to_string(rank_) + ": " + e.what());
        }
    }

    void start(Communicator& host) {
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
        device_ = host.local_rank();
        NBODY_CUDA_CHECK(cudaSetDevice(device_));
        NBODY_CUDA_CHECK(cudaFree(nullptr));  // creates the context: a GPU taken by another process fails here
        // Before NCCL starts its threads, so that they inherit the binding.
        binding_ = bind_near_gpu(device_, std::min(host.local_size(), devices));

        ncclUniqueId id{};
        if (rank_ == 0) NBODY_NCCL_CHECK(ncclGetUniqueId(&id));
        host.broadcast(std::as_writable_bytes(std::span<ncclUniqueId>(&id, 1)), 0);
        NBODY_NCCL_CHECK(ncclCommInitRank(&comm_, size_, id, rank_));

        device_description_ = describe_device(device_) + ", rank " + std::to_string(rank_) + " " + binding_;

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
    }

    ~NcclCommunicator() override {
        if (comm_ == nullptr) return;
        const ncclResult_t status = ncclCommDestroy(comm_);
        if (status != ncclSuccess)  // a destructor cannot throw: say it and go on
            std::fprintf(stderr, "rank %d: ncclCommDestroy failed: %s\n", rank_, ncclGetErrorString(status));
    }
    NcclCommunicator(const NcclCommunicator&) = delete;
    NcclCommunicator& operator=(const NcclCommunicator&) = delete;

    int rank() const override { return rank_; }
    int size() const override { return size_; }
    int device() const override { return device_; }
    std::string device_description() const override { return device_description_; }
    std::string describe() const override { return description_; }

    void allgather_in_place(std::span<float* const> axes, const BlockDecomposition& decomposition, void* stream) override {
        gather(axes, decomposition, stream);
    }
    void allgather_in_place(std::span<double* const> axes, const BlockDecomposition& decomposition, void* stream) override {
        gather(axes, decomposition, stream);
    }
    void allreduce_sum(std::int32_t* values, std::size_t count, void* stream) override {
        NBODY_NCCL_CHECK(ncclAllReduce(values, values, count, ncclInt32, ncclSum, comm_, static_cast<cudaStream_t>(stream)));
    }

private:
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

    int rank_;
    int size_;
    int device_ = -1;
    ncclComm_t comm_ = nullptr;
    std::string binding_;
    std::string device_description_;
    std::string description_;
};

}  // namespace

std::unique_ptr<DeviceCommunicator> make_nccl_communicator(Communicator& host) {
    return std::make_unique<NcclCommunicator>(host);
}

}  // namespace nbody::cuda
