#include "peer_communicator.cuh"

#include <cuda_runtime.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_common.cuh"
#include "host_staged_communicator.cuh"
#include "nbody/errors.hpp"
#include "rank_binding.cuh"

namespace nbody::cuda {
namespace {

constexpr int kMaxRanks = 16;  // the GPUs of one node
constexpr int kMaxAxes = 4;    // three position axes and the masses
constexpr unsigned int kGatherBlocks = 32;
constexpr unsigned int kGatherThreads = 256;
// A wait this long means a peer is gone without this process being ended: the kernel traps
// (an error at the next synchronisation) instead of spinning for ever. Far above any step.
constexpr unsigned long long kWaitLimitNs = 600ull * 1000 * 1000 * 1000;

// NCCL's low-latency protocol, between every pair directly: 4 bytes of data and the call's flag
// travel in one 8-byte store, so a receiver that sees the flag sees the data, with no fence and no
// second signal. Each rank's inbox holds two slots (calls alternate), each [sender][axis][element]
// [word]. No rank writes a slot that its peer may still read: writing call c + 2 needs the peer's
// data of call c + 1, which it sends only after its kernel of call c has read everything.
struct LlWord {
    std::uint32_t data;
    std::uint32_t flag;
};

template <class T>
constexpr int kWordsPerElement = static_cast<int>(sizeof(T) / sizeof(std::uint32_t));

template <class T>
struct PeerGather {
    T* axis[kMaxAxes];              // this rank's gathered axes
    LlWord* inbox[kMaxRanks];       // rank q's inbox, mapped into this process
    unsigned long long* calls;      // calls[b]: all-gathers block b of this rank has made
    unsigned long long capacity;    // elements of every rank's block (the padding travels too)
    unsigned long long slot_words;  // LlWords of one slot of an inbox
    unsigned long long axis_words;  // LlWords of one axis of one sender in a slot
    int axes, ranks, rank;
};

__device__ unsigned long long global_timer_ns() {
    unsigned long long ns;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
    return ns;
}

__device__ void store_word(LlWord* to, std::uint32_t data, std::uint32_t flag) {
    asm volatile("st.volatile.global.v2.u32 [%0], {%1, %2};" ::"l"(to), "r"(data), "r"(flag) : "memory");
}

// The word's data once its flag is `flag`; traps after kWaitLimitNs.
__device__ std::uint32_t await_word(const LlWord* from, std::uint32_t flag) {
    std::uint32_t data = 0, seen = 0;
    unsigned long long start = 0;
    for (;;) {
        asm volatile("ld.volatile.global.v2.u32 {%0, %1}, [%2];" : "=r"(data), "=r"(seen) : "l"(from) : "memory");
        if (seen == flag) return data;
        if (start == 0) start = global_timer_ns();
        else if (global_timer_ns() - start > kWaitLimitNs) __trap();
    }
}

// Every block sends its share of this rank's block (every axis, to every other rank), then
// receives its share of every other rank's block into the axes.
template <class T>
__global__ void __launch_bounds__(kGatherThreads) peer_allgather(PeerGather<T> g) {
    __shared__ unsigned long long call;
    if (threadIdx.x == 0) call = ++g.calls[blockIdx.x];
    __syncthreads();
    const auto flag = static_cast<std::uint32_t>(call);  // never 0, which a fresh inbox holds
    const unsigned long long slot = (call & 1) * g.slot_words;
    const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
    const unsigned long long first = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    constexpr int kWords = kWordsPerElement<T>;
    for (int q = 0; q < g.ranks; ++q) {
        if (q == g.rank) continue;
        LlWord* to = g.inbox[q] + slot + static_cast<unsigned long long>(g.rank) * g.axes * g.axis_words;
        for (int a = 0; a < g.axes; ++a) {
            const T* from = g.axis[a] + static_cast<unsigned long long>(g.rank) * g.capacity;
            for (unsigned long long i = first; i < g.capacity; i += stride) {
                std::uint32_t bits[kWords];
                const T value = from[i];
                memcpy(bits, &value, sizeof value);
                for (int w = 0; w < kWords; ++w) store_word(to + a * g.axis_words + i * kWords + w, bits[w], flag);
            }
        }
    }
    for (int q = 0; q < g.ranks; ++q) {
        if (q == g.rank) continue;
        const LlWord* from = g.inbox[g.rank] + slot + static_cast<unsigned long long>(q) * g.axes * g.axis_words;
        for (int a = 0; a < g.axes; ++a) {
            T* to = g.axis[a] + static_cast<unsigned long long>(q) * g.capacity;
            for (unsigned long long i = first; i < g.capacity; i += stride) {
                std::uint32_t bits[kWords];
                for (int w = 0; w < kWords; ++w) bits[w] = await_word(from + a * g.axis_words + i * kWords + w, flag);
                T value;
                memcpy(&value, bits, sizeof value);
                to[i] = value;
            }
        }
    }
}

// What a rank tells the others of its inbox.
struct InboxRecord {
    std::int64_t process;
    std::uint64_t address;  // in that process
    cudaIpcMemHandle_t handle;
};
static_assert(sizeof(InboxRecord) % sizeof(std::int32_t) == 0);

class PeerCommunicator final : public OneGpuPerRankCommunicator<PeerCommunicator> {
public:
    explicit PeerCommunicator(Communicator& host) : OneGpuPerRankCommunicator(host), host_(host) {
        start_or_refuse([&] { start(); });
    }

    ~PeerCommunicator() override {
        cudaDeviceSynchronize();  // this rank's kernels are done with every inbox
        release_inboxes();
        if (calls_ != nullptr) cudaFree(calls_);
    }
    PeerCommunicator(const PeerCommunicator&) = delete;
    PeerCommunicator& operator=(const PeerCommunicator&) = delete;

    // Not on a step's path: through host memory.
    void allreduce_sum(std::int32_t* values, std::size_t count, void* stream) override {
        allreduce_through_host(host_, values, count, stream, staged_counts_);
    }

private:
    friend class OneGpuPerRankCommunicator<PeerCommunicator>;

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
        // Every rank decides alike: ranks sharing a GPU would wait for each other's kernels from one
        // context (thread-ranks) or from time-sliced ones; host-staged collectives serve them.
        if (host_.local_size() > devices)
            throw UsageError(where() + "peer device collectives take one GPU per rank; this node runs " +
                             std::to_string(host_.local_size()) + " ranks on " + std::to_string(devices) +
                             " GPUs: start one rank per GPU, or use --device-collectives host-staged");
        take_local_gpu(host_, host_.local_size());

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
                if (a == rank_) enable_peer_access(to);
            }
        NBODY_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&calls_), kGatherBlocks * sizeof(unsigned long long)));
        NBODY_CUDA_CHECK(cudaMemset(calls_, 0, kGatherBlocks * sizeof(unsigned long long)));

        description_ = "peer (each rank's kernel writes its block into every other rank's GPU memory, mapped through CUDA "
                       "IPC, as data and flag in one store): " +
                       std::to_string(size_) + " ranks on 1 node, one GPU each, peer access (NVLink or PCIe) between every pair";
    }

    // Peer access from this device for this process's own pointers (IPC mappings enable it lazily).
    void enable_peer_access(int to) {
        const cudaError_t enabled = cudaDeviceEnablePeerAccess(to, 0);
        if (enabled == cudaErrorPeerAccessAlreadyEnabled) {
            cudaGetLastError();  // the refusal is not an error here: clear it
            return;
        }
        NBODY_CUDA_CHECK(enabled);
    }

    // Every rank's inbox with room for slots of `slot_words` words, mapped here. Collective: every
    // rank asks for the same size in the same call. The old inboxes go first: every word sent to
    // them was read (each rank's last kernel waited for it), and no kernel is running here.
    void grow_inboxes(unsigned long long slot_words) {
        NBODY_CUDA_CHECK(cudaDeviceSynchronize());
        release_inboxes();
        host_.barrier();  // every rank has closed its mapping of the inbox its peer frees
        NBODY_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&own_inbox_), 2 * slot_words * sizeof(LlWord)));
        NBODY_CUDA_CHECK(cudaMemset(own_inbox_, 0, 2 * slot_words * sizeof(LlWord)));
        NBODY_CUDA_CHECK(cudaDeviceSynchronize());  // zero before any peer can write it
        slot_words_ = slot_words;

        InboxRecord mine{};
        std::memset(&mine, 0, sizeof mine);
        mine.process = static_cast<std::int64_t>(getpid());
        mine.address = reinterpret_cast<std::uint64_t>(own_inbox_);
        NBODY_CUDA_CHECK(cudaIpcGetMemHandle(&mine.handle, own_inbox_));
        constexpr std::size_t kWords = sizeof(InboxRecord) / sizeof(std::int32_t);
        std::vector<std::int32_t> exchanged(kWords * static_cast<std::size_t>(size_));
        std::memcpy(exchanged.data() + kWords * static_cast<std::size_t>(rank_), &mine, sizeof mine);
        host_.allgather_in_place(std::span<std::int32_t>(exchanged), BlockDecomposition(exchanged.size(), size_));
        for (int q = 0; q < size_; ++q) {
            InboxRecord record;
            std::memcpy(&record, exchanged.data() + kWords * static_cast<std::size_t>(q), sizeof record);
            if (q == rank_) {
                inbox_at_[q] = own_inbox_;
            } else if (record.process == static_cast<std::int64_t>(getpid())) {
                inbox_at_[q] = reinterpret_cast<LlWord*>(record.address);  // a thread-rank of this process
            } else {
                void* mapped = nullptr;
                NBODY_CUDA_CHECK(cudaIpcOpenMemHandle(&mapped, record.handle, cudaIpcMemLazyEnablePeerAccess));
                inbox_at_[q] = static_cast<LlWord*>(mapped);
                opened_.push_back(mapped);
            }
        }
    }

    void release_inboxes() {
        for (void* mapped : opened_) cudaIpcCloseMemHandle(mapped);
        opened_.clear();
        if (own_inbox_ != nullptr) cudaFree(own_inbox_);
        own_inbox_ = nullptr;
        slot_words_ = 0;
    }

    template <class T>
    void gather(std::span<T* const> axes, const BlockDecomposition& decomposition, void* stream) {
        require_ranks(decomposition, size_, "a peer all-gather");
        const unsigned long long capacity = decomposition.block_capacity();
        if (axes.empty() || capacity == 0 || size_ == 1) return;
        if (axes.size() > static_cast<std::size_t>(kMaxAxes))
            throw std::logic_error("a peer all-gather of " + std::to_string(axes.size()) + " axes; at most " + std::to_string(kMaxAxes));
        const auto launch_stream = static_cast<cudaStream_t>(stream);
        const unsigned long long axis_words = capacity * kWordsPerElement<T>;
        const unsigned long long slot_words = static_cast<unsigned long long>(size_) * axes.size() * axis_words;
        if (slot_words > slot_words_) {
            cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
            NBODY_CUDA_CHECK(cudaStreamIsCapturing(launch_stream, &capturing));
            if (capturing != cudaStreamCaptureStatusNone)
                throw std::logic_error("a captured peer all-gather larger than every all-gather before the capture");
            grow_inboxes(slot_words);
        }
        PeerGather<T> g{};
        for (std::size_t a = 0; a < axes.size(); ++a) g.axis[a] = axes[a];
        for (int q = 0; q < size_; ++q) g.inbox[q] = inbox_at_[q];
        g.calls = calls_;
        g.capacity = capacity;
        g.slot_words = slot_words_;
        g.axis_words = axis_words;
        g.axes = static_cast<int>(axes.size());
        g.ranks = size_;
        g.rank = rank_;
        peer_allgather<T><<<kGatherBlocks, kGatherThreads, 0, launch_stream>>>(g);
        NBODY_CUDA_CHECK_LAUNCH();
    }

    Communicator& host_;
    unsigned long long* calls_ = nullptr;
    LlWord* own_inbox_ = nullptr;
    unsigned long long slot_words_ = 0;
    LlWord* inbox_at_[kMaxRanks] = {};
    std::vector<void*> opened_;  // the other processes' inboxes mapped here
    std::vector<std::int32_t> staged_counts_;
};

}  // namespace

std::unique_ptr<DeviceCommunicator> make_peer_communicator(Communicator& host) {
    return std::make_unique<PeerCommunicator>(host);
}

}  // namespace nbody::cuda
