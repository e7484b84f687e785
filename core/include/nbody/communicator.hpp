#pragma once
// One simulation over several processes (docs/scaling.md): each rank owns a contiguous block of
// bodies, all-gathers the positions, computes the pull on its own block against all N and
// integrates its block. The communicators below move the data; a single process is the identity,
// so a model written against them runs unchanged without mpirun.
//
// The step a model runs with them (physics.hpp's split of a step):
//   advance_before_force(own block)        leapfrog: half kick + drift; Euler: nothing
//   [leapfrog] allgather positions         every rank now holds p_{k+1} of all N
//   pull(own block against all N)
//   advance_after_force(own block)         leapfrog: half kick; Euler: drift, then kick
//   [Euler]    allgather positions         every rank now holds p_{k+1} of all N
//   activity map of all N, on every rank   no count reduction: see docs/scaling.md
// The positions are gathered once per step, right after the drift, wherever the integrator puts
// it; before the first step the positions and the masses are gathered once.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace nbody {

// The bodies [first, first + count) that one rank owns.
struct BodyBlock {
    std::size_t first = 0;
    std::size_t count = 0;
    bool operator==(const BodyBlock&) const = default;
};

// n bodies over `ranks` ranks: every block holds block_capacity() = ceil(n / ranks) bodies except
// the trailing ones (the last non-empty block holds the remainder; with n < ranks * capacity some
// trailing blocks may be empty). Rank r's block starts at r * capacity, so an all-gather of equal
// blocks (NCCL's) into a buffer of gather_capacity() elements leaves bodies 0..n-1 in order at the
// front. The slowest rank holds ceil(n / ranks) bodies, as with any split, so no step is slower
// than with a balanced split.
class BlockDecomposition {
public:
    // Throws UsageError when ranks < 1.
    BlockDecomposition(std::size_t bodies, int ranks);

    std::size_t bodies() const { return bodies_; }
    int ranks() const { return ranks_; }
    std::size_t block_capacity() const { return capacity_; }
    std::size_t gather_capacity() const { return capacity_ * static_cast<std::size_t>(ranks_); }
    // Throws UsageError when rank is outside [0, ranks).
    BodyBlock block(int rank) const;

private:
    std::size_t bodies_;
    int ranks_;
    std::size_t capacity_;
};

// Host-side collectives over the ranks of one simulation. Every rank calls each collective in the
// same order with the same decomposition; a failure throws std::runtime_error naming the call and
// the rank (the harness then ends every rank through abort_all).
class Communicator {
public:
    virtual ~Communicator() = default;

    virtual int rank() const = 0;
    virtual int size() const = 0;
    // Rank among the processes of this node (picks this rank's GPU), and how many share the node.
    virtual int local_rank() const = 0;
    virtual int local_size() const = 0;
    // Distinct nodes the ranks run on.
    virtual int nodes() const = 0;
    // "single process" or the MPI library and its thread level, for results and messages.
    virtual std::string describe() const = 0;

    // `all` holds decomposition.bodies() values, this rank's block already in place; on return every
    // rank's block is. Throws UsageError when all.size() differs from the decomposition's bodies.
    virtual void allgather_in_place(std::span<float> all, const BlockDecomposition& decomposition) = 0;
    virtual void allgather_in_place(std::span<double> all, const BlockDecomposition& decomposition) = 0;
    virtual void allgather_in_place(std::span<std::int32_t> all, const BlockDecomposition& decomposition) = 0;
    // Element-wise sum over the ranks, in place, every rank receiving the result.
    virtual void allreduce_sum(std::span<std::int32_t> values) = 0;
    virtual void allreduce_sum(std::span<std::int64_t> values) = 0;
    // Root's bytes to every rank (bootstraps NCCL with rank 0's unique id).
    virtual void broadcast(std::span<std::byte> bytes, int root) = 0;
    virtual void barrier() = 0;

    // Prints "rank r of G: message" to stderr and ends every rank of the simulation with a non-zero
    // status (MPI_Abort), so no rank waits for a peer that is gone.
    [[noreturn]] virtual void abort_all(int exit_status, std::string_view message) = 0;
};

// One process holding every body: the collectives have nothing to move.
class SingleProcessCommunicator final : public Communicator {
public:
    int rank() const override { return 0; }
    int size() const override { return 1; }
    int local_rank() const override { return 0; }
    int local_size() const override { return 1; }
    int nodes() const override { return 1; }
    std::string describe() const override { return "single process"; }
    void allgather_in_place(std::span<float> all, const BlockDecomposition& decomposition) override;
    void allgather_in_place(std::span<double> all, const BlockDecomposition& decomposition) override;
    void allgather_in_place(std::span<std::int32_t> all, const BlockDecomposition& decomposition) override;
    void allreduce_sum(std::span<std::int32_t>) override {}
    void allreduce_sum(std::span<std::int64_t>) override {}
    void broadcast(std::span<std::byte>, int root) override;
    void barrier() override {}
    [[noreturn]] void abort_all(int exit_status, std::string_view message) override;
};

// Device-side collectives (NCCL on GPUs) on buffers in device memory, enqueued on `stream`
// (a cudaStream_t; void* keeps this header free of CUDA). Each axis buffer holds
// decomposition.gather_capacity() elements with this rank's block at decomposition.block(rank).first;
// the gather writes every block in place. The axes of one call travel in one fused group.
class DeviceCommunicator {
public:
    virtual ~DeviceCommunicator() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    // The device this rank uses (cudaSetDevice ordinal), -1 for the identity.
    virtual int device() const = 0;
    // This rank's device, e.g. "NVIDIA H200, PCI 0000:1b:00.0"; empty for the identity.
    virtual std::string device_description() const = 0;
    // The library and what it found between the devices, e.g. the peer access between a node's GPUs.
    virtual std::string describe() const = 0;

    virtual void allgather_in_place(std::span<float* const> axes, const BlockDecomposition& decomposition, void* stream) = 0;
    virtual void allgather_in_place(std::span<double* const> axes, const BlockDecomposition& decomposition, void* stream) = 0;
    virtual void allreduce_sum(std::int32_t* values, std::size_t count, void* stream) = 0;
    // Whether allgather_in_place only queues work on its stream, so that a CUDA graph can capture it
    // in a step; false where it is a host call (host-staged).
    virtual bool allgather_can_be_captured() const { return true; }
};

// How a GPU model's ranks move device data: NCCL between GPUs (one rank per GPU, the default);
// through host memory over the host communicator (device -> host copy, host all-gather, host ->
// device copy): slower, but it runs where NCCL cannot, e.g. several ranks sharing one GPU, which
// is how the distributed GPU code is checked on a one-GPU machine; or peer: each rank's kernel
// writes into the other ranks' GPU memory directly (one node, peer access between its GPUs), the
// lowest latency for small N (docs/scaling.md).
enum class DeviceCollectives { nccl, host_staged, peer };

// One GPU holding every body.
class SingleDeviceCommunicator final : public DeviceCommunicator {
public:
    int rank() const override { return 0; }
    int size() const override { return 1; }
    int device() const override { return -1; }
    std::string device_description() const override { return {}; }
    std::string describe() const override { return "single device"; }
    void allgather_in_place(std::span<float* const>, const BlockDecomposition& decomposition, void*) override;
    void allgather_in_place(std::span<double* const>, const BlockDecomposition& decomposition, void*) override;
    void allreduce_sum(std::int32_t*, std::size_t, void*) override {}
};

}  // namespace nbody
