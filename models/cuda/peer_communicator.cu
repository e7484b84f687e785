#include "peer_communicator.cuh"

// Driver types only: the driver is reached through cudaGetDriverEntryPointByVersion, so that the
// binary still starts on a machine without it.
#include <cuda.h>
#include <cuda/atomic>
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cuda_common.cuh"
#include "host_staged_communicator.cuh"
#include "nbody/errors.hpp"
#include "rank_binding.cuh"

namespace nbody::cuda {
namespace {

constexpr int kMaxRanks = 16;      // the GPUs of one node
constexpr int kMaxAxes = 4;        // three position axes and the masses
constexpr unsigned int kGatherBlocks = 32;
constexpr unsigned int kGatherThreads = 256;
// A wait this long means a peer is gone without this process being ended: the kernel traps
// (an error at the next synchronisation) instead of spinning for ever. Far above any step.
constexpr unsigned long long kWaitLimitNs = 600ull * 1000 * 1000 * 1000;

// One rank's counters, in its device memory. ready[q] and arrived[q] are written by rank q's
// kernels; calls[b] by block b of this rank's own.
struct PeerFlags {
    unsigned long long ready[kMaxRanks];    // the last all-gather in which rank q may write here
    unsigned long long arrived[kMaxRanks];  // rank q's blocks that finished writing here, all calls
    unsigned long long calls[kGatherBlocks];
};

template <class T>
struct PeerGather {
    T* axis[kMaxAxes][kMaxRanks];  // axis a as rank q holds it, mapped into this process
    PeerFlags* flags[kMaxRanks];
    int axes, ranks, rank;
    unsigned long long first, count;  // this rank's block
};

using SystemWord = ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_system>;

__device__ unsigned long long global_timer_ns() {
    unsigned long long ns;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
    return ns;
}

__device__ void wait_until_at_least(unsigned long long& word, unsigned long long target) {
    SystemWord atomic(word);
    if (atomic.load(::cuda::memory_order_acquire) >= target) return;
    const unsigned long long start = global_timer_ns();
    while (atomic.load(::cuda::memory_order_acquire) < target)
        if (global_timer_ns() - start > kWaitLimitNs) __trap();
}

// Every block: says this rank may be written (the kernels before it on the stream are done with
// the buffers), waits until every other rank says so, writes its share of this rank's block into
// every other rank's buffers, and counts itself arrived there; then waits until every block of
// every other rank has arrived here. Every block signals, so none waits on a block not yet running.
template <class T>
__global__ void __launch_bounds__(kGatherThreads) peer_allgather(PeerGather<T> g) {
    __shared__ unsigned long long call;
    PeerFlags& own = *g.flags[g.rank];
    if (threadIdx.x == 0) {
        call = ++own.calls[blockIdx.x];
        for (int q = 0; q < g.ranks; ++q)
            if (q != g.rank) SystemWord(g.flags[q]->ready[g.rank]).store(call, ::cuda::memory_order_release);
        for (int q = 0; q < g.ranks; ++q)
            if (q != g.rank) wait_until_at_least(own.ready[q], call);
    }
    __syncthreads();
    const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
    for (int q = 0; q < g.ranks; ++q) {
        if (q == g.rank) continue;
        for (int a = 0; a < g.axes; ++a) {
            const T* from = g.axis[a][g.rank] + g.first;
            T* to = g.axis[a][q] + g.first;
            for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < g.count;
                 i += stride)
                to[i] = from[i];
        }
    }
    __threadfence_system();  // this thread's writes reach the other GPUs before the count says so
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int q = 0; q < g.ranks; ++q)
            if (q != g.rank) SystemWord(g.flags[q]->arrived[g.rank]).fetch_add(1, ::cuda::memory_order_release);
        for (int q = 0; q < g.ranks; ++q)
            if (q != g.rank) wait_until_at_least(own.arrived[q], call * gridDim.x);
    }
}

using PointerGetAttribute = CUresult (*)(void*, CUpointer_attribute, CUdeviceptr);

PointerGetAttribute pointer_get_attribute() {
    static const PointerGetAttribute function = [] {
        void* found = nullptr;
        cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
        NBODY_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuPointerGetAttribute", &found, 12000, cudaEnableDefault, &status));
        if (status != cudaDriverEntryPointSuccess || found == nullptr)
            throw std::runtime_error("the CUDA driver has no cuPointerGetAttribute");
        return reinterpret_cast<PointerGetAttribute>(found);
    }();
    return function;
}

// The allocation a device pointer lies in: its process-wide unique id (never reused, unlike an
// address) and its first byte.
struct Allocation {
    unsigned long long id = 0;
    char* base = nullptr;
};

Allocation allocation_of(const void* pointer) {
    Allocation allocation;
    CUdeviceptr base = 0;
    const auto address = reinterpret_cast<CUdeviceptr>(pointer);
    if (pointer_get_attribute()(&allocation.id, CU_POINTER_ATTRIBUTE_BUFFER_ID, address) != CUDA_SUCCESS ||
        pointer_get_attribute()(&base, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, address) != CUDA_SUCCESS)
        throw std::invalid_argument("a peer all-gather was given a buffer that is not device memory");
    allocation.base = reinterpret_cast<char*>(base);
    return allocation;
}

// What a rank tells the others of one of its buffers.
struct BufferRecord {
    std::int64_t process;
    std::uint64_t allocation;  // Allocation::id in that process
    std::uint64_t base;        // the allocation's address in that process
    std::uint64_t offset;      // of the buffer in the allocation
    cudaIpcMemHandle_t handle;
};
static_assert(sizeof(BufferRecord) % sizeof(std::int32_t) == 0);

class PeerCommunicator final : public DeviceCommunicator {
public:
    explicit PeerCommunicator(Communicator& host) : host_(host), rank_(host.rank()), size_(host.size()) {
        // A GPU that is taken or peers that cannot reach each other are this machine's state: exit 2
        // with the rank's message (docs/scaling.md, "Faults").
        try {
            start();
        } catch (const UsageError&) {
            throw;
        } catch (const std::exception& e) {
            throw UsageError(std::string(e.what()).rfind("rank ", 0) == 0 ? std::string(e.what()) : where() + e.what());
        }
    }

    ~PeerCommunicator() override {
        // The other ranks' last writes here are done: each rank's last kernel waited for them.
        cudaDeviceSynchronize();
        for (const auto& [key, base] : opened_) cudaIpcCloseMemHandle(base);
        if (flags_ != nullptr) cudaFree(flags_);
    }
    PeerCommunicator(const PeerCommunicator&) = delete;
    PeerCommunicator& operator=(const PeerCommunicator&) = delete;

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
    // Not on a step's path: through host memory.
    void allreduce_sum(std::int32_t* values, std::size_t count, void* stream) override {
        allreduce_through_host(host_, values, count, stream, staged_counts_);
    }

private:
    std::string where() const { return "rank " + std::to_string(rank_) + ": "; }

    void start() {
        if (size_ > kMaxRanks)
            throw UsageError(where() + "peer device collectives join at most " + std::to_string(kMaxRanks) + " ranks, this run has " +
                             std::to_string(size_) + ": use --device-collectives nccl");
        if (host_.nodes() != 1)
            throw UsageError(where() + "peer device collectives join the GPUs of one node, these " + std::to_string(size_) +
                             " ranks run on " + std::to_string(host_.nodes()) + " nodes: use --device-collectives nccl");
        int devices = 0;
        const cudaError_t counted = cudaGetDeviceCount(&devices);
        if (counted != cudaSuccess || devices == 0)
            throw std::runtime_error(where() + "peer device collectives need a GPU, and " +
                                     (counted != cudaSuccess ? std::string(cudaGetErrorString(counted)) : "this node has none"));
        device_ = host_.local_rank() % devices;
        NBODY_CUDA_CHECK(cudaSetDevice(device_));
        NBODY_CUDA_CHECK(cudaFree(nullptr));  // creates the context: a GPU taken by another process fails here
        const int gpus_in_use = std::min(host_.local_size(), devices);
        const std::string binding = bind_near_gpu(device_, gpus_in_use);
        device_description_ = describe_device(device_) + ", rank " + std::to_string(rank_) + " " + binding;

        // Every rank checks every pair, so all refuse together or none does.
        std::vector<std::int32_t> device_of(static_cast<std::size_t>(size_));
        device_of[static_cast<std::size_t>(rank_)] = device_;
        host_.allgather_in_place(std::span<std::int32_t>(device_of), BlockDecomposition(device_of.size(), size_));
        for (int a = 0; a < size_; ++a)
            for (int b = 0; b < size_; ++b) {
                const int from = device_of[static_cast<std::size_t>(a)], to = device_of[static_cast<std::size_t>(b)];
                if (from == to) continue;
                int reachable = 0;
                NBODY_CUDA_CHECK(cudaDeviceCanAccessPeer(&reachable, from, to));
                if (!reachable)
                    throw UsageError(where() + "GPU " + std::to_string(from) + " (rank " + std::to_string(a) + ") has no peer access to GPU " +
                                     std::to_string(to) + " (rank " + std::to_string(b) +
                                     "): peer device collectives need NVLink or PCIe peer access between every pair; use "
                                     "--device-collectives nccl");
                if (a == rank_ && from == device_) enable_peer_access(to);
            }

        NBODY_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&flags_), sizeof(PeerFlags)));
        NBODY_CUDA_CHECK(cudaMemset(flags_, 0, sizeof(PeerFlags)));
        NBODY_CUDA_CHECK(cudaDeviceSynchronize());  // zero before any other rank can write here
        void* const flags[] = {flags_};
        const std::vector<std::vector<void*>> mapped = map_buffers(flags);
        for (int q = 0; q < size_; ++q) flags_at_[q] = static_cast<PeerFlags*>(mapped[0][static_cast<std::size_t>(q)]);
        host_.barrier();  // every rank's flags zeroed and mapped before any kernel writes them

        const bool shared = gpus_in_use < host_.local_size();
        description_ = "peer (each rank's kernel writes its block into every other rank's buffers through CUDA IPC "
                       "mappings, counters in device memory): " +
                       std::to_string(size_) + " ranks on 1 node, " +
                       (shared ? std::to_string(host_.local_size()) + " ranks sharing " + std::to_string(gpus_in_use) +
                                     (gpus_in_use == 1 ? " GPU" : " GPUs")
                               : "one GPU each, peer access (NVLink or PCIe) between every pair");
    }

    // Peer access from this device for this process's own mappings (IPC mappings enable it lazily).
    void enable_peer_access(int to) {
        const cudaError_t enabled = cudaDeviceEnablePeerAccess(to, 0);
        if (enabled == cudaErrorPeerAccessAlreadyEnabled) {
            cudaGetLastError();  // the refusal is not an error here: clear it
            return;
        }
        NBODY_CUDA_CHECK(enabled);
    }

    // Each of this rank's `buffers` as every rank holds it ([buffer][rank], mapped into this
    // process). Collective: every rank passes its buffers of the same roles in the same order.
    std::vector<std::vector<void*>> map_buffers(std::span<void* const> buffers) {
        const std::size_t count = buffers.size();
        const std::size_t words = count * sizeof(BufferRecord) / sizeof(std::int32_t);
        std::vector<BufferRecord> mine(count);
        for (std::size_t b = 0; b < count; ++b) {
            const Allocation allocation = allocation_of(buffers[b]);
            BufferRecord& record = mine[b];
            std::memset(&record, 0, sizeof record);
            record.process = static_cast<std::int64_t>(getpid());
            record.allocation = allocation.id;
            record.base = reinterpret_cast<std::uint64_t>(allocation.base);
            record.offset = static_cast<std::uint64_t>(static_cast<const char*>(buffers[b]) - allocation.base);
            NBODY_CUDA_CHECK(cudaIpcGetMemHandle(&record.handle, allocation.base));
        }
        std::vector<std::int32_t> exchanged(words * static_cast<std::size_t>(size_));
        if (words != 0) std::memcpy(exchanged.data() + words * static_cast<std::size_t>(rank_), mine.data(), count * sizeof(BufferRecord));
        host_.allgather_in_place(std::span<std::int32_t>(exchanged), BlockDecomposition(exchanged.size(), size_));

        std::vector<std::vector<void*>> at(count, std::vector<void*>(static_cast<std::size_t>(size_)));
        for (int q = 0; q < size_; ++q)
            for (std::size_t b = 0; b < count; ++b) {
                BufferRecord record;
                std::memcpy(&record, exchanged.data() + words * static_cast<std::size_t>(q) + b * (sizeof record / sizeof(std::int32_t)),
                            sizeof record);
                at[b][static_cast<std::size_t>(q)] = base_of(q, record) + record.offset;
            }
        return at;
    }

    // Where rank q's allocation is in this process: its own address when q is a thread of this
    // process, else an IPC mapping (opened once per allocation, closed with the communicator).
    char* base_of(int q, const BufferRecord& record) {
        if (record.process == static_cast<std::int64_t>(getpid())) return reinterpret_cast<char*>(record.base);
        const auto key = std::make_pair(q, record.allocation);
        if (const auto known = opened_.find(key); known != opened_.end()) return static_cast<char*>(known->second);
        void* base = nullptr;
        NBODY_CUDA_CHECK(cudaIpcOpenMemHandle(&base, record.handle, cudaIpcMemLazyEnablePeerAccess));
        opened_.emplace(key, base);
        return static_cast<char*>(base);
    }

    template <class T>
    void gather(std::span<T* const> axes, const BlockDecomposition& decomposition, void* stream) {
        require_ranks(decomposition, size_, "a peer all-gather");
        if (axes.empty() || decomposition.block_capacity() == 0) return;
        if (axes.size() > static_cast<std::size_t>(kMaxAxes))
            throw std::logic_error("a peer all-gather of " + std::to_string(axes.size()) + " axes; at most " + std::to_string(kMaxAxes));
        const auto launch_stream = static_cast<cudaStream_t>(stream);

        // Each buffer by its allocation's id and offset: an address may come back for a new allocation.
        std::vector<std::pair<unsigned long long, std::uint64_t>> keys;
        bool all_known = true;
        for (T* axis : axes) {
            const Allocation allocation = allocation_of(axis);
            keys.emplace_back(allocation.id, static_cast<std::uint64_t>(reinterpret_cast<char*>(axis) - allocation.base));
            all_known = all_known && mapped_.count(keys.back()) != 0;
        }
        if (!all_known) {
            cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
            NBODY_CUDA_CHECK(cudaStreamIsCapturing(launch_stream, &capturing));
            if (capturing != cudaStreamCaptureStatusNone)
                throw std::logic_error("a peer all-gather captured with a buffer no all-gather has mapped before");
            std::vector<void*> buffers(axes.begin(), axes.end());
            const std::vector<std::vector<void*>> at = map_buffers(buffers);
            for (std::size_t a = 0; a < axes.size(); ++a) mapped_[keys[a]] = at[a];
        }

        PeerGather<T> g{};
        g.axes = static_cast<int>(axes.size());
        g.ranks = size_;
        g.rank = rank_;
        const BodyBlock own = decomposition.block(rank_);
        g.first = own.first;
        g.count = own.count;
        for (int q = 0; q < size_; ++q) g.flags[q] = flags_at_[q];
        for (std::size_t a = 0; a < axes.size(); ++a)
            for (int q = 0; q < size_; ++q) g.axis[a][q] = static_cast<T*>(mapped_.at(keys[a])[static_cast<std::size_t>(q)]);
        peer_allgather<T><<<kGatherBlocks, kGatherThreads, 0, launch_stream>>>(g);
        NBODY_CUDA_CHECK_LAUNCH();
    }

    Communicator& host_;
    const int rank_;
    const int size_;
    int device_ = -1;
    std::string device_description_;
    std::string description_;
    PeerFlags* flags_ = nullptr;
    PeerFlags* flags_at_[kMaxRanks] = {};
    // This rank's buffers by (allocation id, offset): the buffer as every rank holds it.
    std::map<std::pair<unsigned long long, std::uint64_t>, std::vector<void*>> mapped_;
    // Other processes' allocations mapped here, by (rank, their allocation id).
    std::map<std::pair<int, std::uint64_t>, void*> opened_;
    std::vector<std::int32_t> staged_counts_;
};

}  // namespace

std::unique_ptr<DeviceCommunicator> make_peer_communicator(Communicator& host) {
    return std::make_unique<PeerCommunicator>(host);
}

}  // namespace nbody::cuda
