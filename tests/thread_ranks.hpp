#pragma once
// Ranks as threads of one test process, joined by an in-process host communicator: the GPU tests of
// the distributed variants run their ranks this way on one GPU, with the host-staged device
// collectives (NCCL cannot put two ranks on one GPU).
#include <barrier>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "nbody/communicator.hpp"

namespace nbody::testing {

// What the threads of one simulation share: each rank's contribution to the collective under way.
class ThreadRanks {
public:
    explicit ThreadRanks(int ranks) : ranks_(ranks), barrier_(ranks), contributions_(static_cast<std::size_t>(ranks)) {}
    int ranks() const { return ranks_; }

    // Publishes `bytes` as `rank`'s contribution and hands every rank's to `read`, once all have
    // published; `read` runs before any rank may publish again.
    template <class Read>
    void exchange(int rank, std::span<const std::byte> bytes, Read read) {
        contributions_[static_cast<std::size_t>(rank)].assign(bytes.begin(), bytes.end());
        barrier_.arrive_and_wait();
        read(contributions_);
        barrier_.arrive_and_wait();
    }
    void wait() { barrier_.arrive_and_wait(); }
    // A rank that failed leaves every later phase, so no other rank waits for it.
    void leave() { barrier_.arrive_and_drop(); }

private:
    int ranks_;
    std::barrier<> barrier_;
    std::vector<std::vector<std::byte>> contributions_;
};

// Which GPU the host-staged collectives of a thread-rank take: each rank its own local rank (as
// mpirun's ranks, one GPU each where there are several), or local rank 0 for all, the GPU a
// runtime that is one per process (Kokkos) already runs on.
enum class LocalRanks { one_per_thread, all_on_rank_zero };

// The host communicator of one thread-rank.
class ThreadCommunicator final : public Communicator {
public:
    ThreadCommunicator(ThreadRanks& ranks, int rank, LocalRanks local = LocalRanks::one_per_thread)
        : ranks_(ranks), rank_(rank), local_(local) {}

    int rank() const override { return rank_; }
    int size() const override { return ranks_.ranks(); }
    int local_rank() const override { return local_ == LocalRanks::one_per_thread ? rank_ : 0; }
    int local_size() const override { return local_ == LocalRanks::one_per_thread ? ranks_.ranks() : 1; }
    int nodes() const override { return 1; }
    std::string describe() const override { return "threads of one test process"; }

    void allgather_in_place(std::span<float> all, const BlockDecomposition& d) override { gather(all, d); }
    void allgather_in_place(std::span<double> all, const BlockDecomposition& d) override { gather(all, d); }
    void allgather_in_place(std::span<std::int32_t> all, const BlockDecomposition& d) override { gather(all, d); }
    void allreduce_sum(std::span<std::int32_t> values) override { sum(values); }
    void allreduce_sum(std::span<std::int64_t> values) override { sum(values); }
    void broadcast(std::span<std::byte> bytes, int root) override {
        ranks_.exchange(rank_, bytes, [&](const auto& all) { copy_whole(bytes, all, root); });
    }
    void barrier() override { ranks_.wait(); }
    [[noreturn]] void abort_all(int, std::string_view message) override {
        throw std::runtime_error("rank " + std::to_string(rank_) + " aborted: " + std::string(message));
    }

private:
    template <class T>
    void gather(std::span<T> all, const BlockDecomposition& decomposition) {
        if (all.size() != decomposition.bodies()) throw UsageError("all-gather of a span that is not every body");
        const BodyBlock own = decomposition.block(rank_);
        ranks_.exchange(rank_, std::as_bytes(all.subspan(own.first, own.count)), [&](const auto& contributions) {
            for (int r = 0; r < size(); ++r) {
                const BodyBlock block = decomposition.block(r);
                copy_whole(std::as_writable_bytes(all.subspan(block.first, block.count)), contributions, r);
            }
        });
    }
    template <class T>
    void sum(std::span<T> values) {
        std::vector<T> total(values.size(), T{0});
        ranks_.exchange(rank_, std::as_bytes(values), [&](const auto& contributions) {
            for (int r = 0; r < size(); ++r) {
                std::vector<T> theirs(values.size());
                copy_whole(std::as_writable_bytes(std::span<T>(theirs)), contributions, r);
                for (std::size_t i = 0; i < values.size(); ++i) total[i] += theirs[i];
            }
        });
        std::copy(total.begin(), total.end(), values.begin());
    }
    // Rank r's contribution into `to`, which must be exactly its size (a rank that left has none).
    static void copy_whole(std::span<std::byte> to, const std::vector<std::vector<std::byte>>& contributions, int r) {
        const auto& from = contributions[static_cast<std::size_t>(r)];
        if (from.size() != to.size())
            throw std::runtime_error("rank " + std::to_string(r) + " contributed " + std::to_string(from.size()) +
                                     " bytes, expected " + std::to_string(to.size()));
        if (!to.empty()) std::memcpy(to.data(), from.data(), to.size());
    }

    ThreadRanks& ranks_;
    int rank_;
    LocalRanks local_;
};

// Runs `per_rank(shared, rank)` for each of `ranks` ranks, each on a thread of its own, and waits for
// all of them. A rank that throws leaves the later phases (so no other rank waits for it); then the
// first rank's failure is thrown again.
template <class PerRank>
void on_thread_ranks(int ranks, PerRank per_rank) {
    ThreadRanks shared(ranks);
    std::vector<std::exception_ptr> failures(static_cast<std::size_t>(ranks));
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r)
        threads.emplace_back([&, r] {
            try {
                per_rank(shared, r);
            } catch (...) {
                failures[static_cast<std::size_t>(r)] = std::current_exception();
                shared.leave();
            }
        });
    for (auto& t : threads) t.join();
    for (const auto& failure : failures)
        if (failure) std::rethrow_exception(failure);
}

}  // namespace nbody::testing
