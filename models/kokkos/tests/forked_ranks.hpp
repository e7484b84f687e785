#pragma once
// Ranks as forked processes for the Kokkos tests: the collectives through shared memory behind a
// process-shared barrier (what MPI does between ranks), so that a Serial build checks the
// distributed step without MPI. Sizes are the tests', small.
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <new>
#include <thread>
#include <vector>

#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>

#include "nbody/communicator.hpp"
#include "nbody/errors.hpp"
#include "nbody/registry.hpp"

namespace nbody {

// Why ranks cannot be forked here, "" when they can. They run kokkos.team_tiled@serial (a space
// without threads of its own), and CUDA does not survive fork(): where Kokkos started its CUDA space
// in this process, a forked rank cannot use Kokkos at all (cudaSetDevice fails with an
// initialization error).
inline std::string forked_team_tiled_missing() {
    const VariantDescriptor* serial = builtin_registry().find("kokkos.team_tiled@serial");
    if (serial == nullptr || !serial->availability().available) return "no kokkos.team_tiled@serial here";
    if (const VariantDescriptor* gpu = builtin_registry().find("kokkos.team_tiled@cuda"); gpu && gpu->availability().available)
        return "Kokkos started CUDA in this process, which forked ranks cannot share";
    return "";
}

inline constexpr std::size_t kMaxForkedBodies = 128;
inline constexpr int kMaxForkedRanks = 4;
inline constexpr int kForkedMapSize = 6;

// What a rank hands back, in double (exact for float32 states too).
struct ForkedRankResult {
    int finished;  // 1 once written
    int gathers;   // all-gather calls (one per axis and gather)
    char error[256];
    double position[3][kMaxForkedBodies];
    double velocity[3][kMaxForkedBodies];
    float map[kForkedMapSize * kForkedMapSize];
};

struct ForkedArea {
    pthread_barrier_t barrier;
    alignas(16) unsigned char exchange[kMaxForkedRanks * kMaxForkedBodies * sizeof(double)];
    ForkedRankResult result[kMaxForkedRanks];
};

class ForkedCommunicator final : public Communicator {
public:
    ForkedCommunicator(ForkedArea& area, int rank, int size) : area_(area), rank_(rank), size_(size) {}
    int rank() const override { return rank_; }
    int size() const override { return size_; }
    int local_rank() const override { return rank_; }
    int local_size() const override { return size_; }
    int nodes() const override { return 1; }
    std::string describe() const override { return "forked processes (test)"; }
    void allgather_in_place(std::span<float> all, const BlockDecomposition& d) override { gather(all, d); }
    void allgather_in_place(std::span<double> all, const BlockDecomposition& d) override { gather(all, d); }
    void allgather_in_place(std::span<std::int32_t> all, const BlockDecomposition& d) override { gather(all, d); }
    void allreduce_sum(std::span<std::int32_t> values) override { reduce(values); }
    void allreduce_sum(std::span<std::int64_t> values) override { reduce(values); }
    void broadcast(std::span<std::byte> bytes, int root) override {
        fits(bytes.size_bytes());
        wait();
        if (rank_ == root) std::memcpy(area_.exchange, bytes.data(), bytes.size_bytes());
        wait();
        std::memcpy(bytes.data(), area_.exchange, bytes.size_bytes());
    }
    void barrier() override { wait(); }
    [[noreturn]] void abort_all(int exit_status, std::string_view message) override {
        std::fprintf(stderr, "rank %d of %d: %.*s\n", rank_, size_, static_cast<int>(message.size()), message.data());
        ::_exit(exit_status == 0 ? 1 : exit_status);
    }

private:
    void wait() { pthread_barrier_wait(&area_.barrier); }
    void fits(std::size_t bytes) const {
        if (bytes > sizeof(area_.exchange)) throw std::logic_error("the forked exchange holds fewer bytes");
    }
    // Each rank writes its block into the shared array, then copies every block back. The first
    // barrier keeps a rank from writing while another still reads the previous exchange.
    template <class T>
    void gather(std::span<T> all, const BlockDecomposition& d) {
        if (all.size() != d.bodies()) throw UsageError("all-gather of a span that is not the decomposition's bodies");
        fits(all.size_bytes());
        T* shared = reinterpret_cast<T*>(area_.exchange);
        const BodyBlock own = d.block(rank_);
        ++area_.result[rank_].gathers;
        wait();
        std::copy(all.begin() + own.first, all.begin() + own.first + own.count, shared + own.first);
        wait();
        std::copy(shared, shared + all.size(), all.begin());
    }
    template <class T>
    void reduce(std::span<T> values) {
        fits(values.size_bytes() * size_);
        T* shared = reinterpret_cast<T*>(area_.exchange);
        wait();
        std::copy(values.begin(), values.end(), shared + rank_ * values.size());
        wait();
        for (std::size_t i = 0; i < values.size(); ++i) {
            T sum = 0;
            for (int r = 0; r < size_; ++r) sum += shared[r * values.size() + i];
            values[i] = sum;
        }
    }

    ForkedArea& area_;
    int rank_, size_;
};

// The area the ranks share: mapped shared across fork(), its barrier process-shared for `ranks`;
// destroyed and unmapped with this object (in the parent; the children _exit()).
class SharedForkedArea {
public:
    explicit SharedForkedArea(int ranks) {
        memory_ = ::mmap(nullptr, sizeof(ForkedArea), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (memory_ == MAP_FAILED) throw std::runtime_error("mmap of the forked ranks' shared area failed");
        area_ = new (memory_) ForkedArea{};
        pthread_barrierattr_t shared;
        pthread_barrierattr_init(&shared);
        pthread_barrierattr_setpshared(&shared, PTHREAD_PROCESS_SHARED);
        if (pthread_barrier_init(&area_->barrier, &shared, static_cast<unsigned>(ranks)) != 0) {
            ::munmap(memory_, sizeof(ForkedArea));
            throw std::runtime_error("pthread_barrier_init for the forked ranks failed");
        }
    }
    SharedForkedArea(const SharedForkedArea&) = delete;
    SharedForkedArea& operator=(const SharedForkedArea&) = delete;
    ~SharedForkedArea() {
        pthread_barrier_destroy(&area_->barrier);
        ::munmap(memory_, sizeof(ForkedArea));
    }
    ForkedArea& area() { return *area_; }

private:
    void* memory_ = nullptr;
    ForkedArea* area_ = nullptr;
};

// Forks `ranks` processes, rank r running run_rank(r) and exiting; waits for them at most 60 s (a
// rank that fails leaves the others in a barrier), ends those still running and returns how many
// that was.
template <class RunRank>
std::size_t run_forked_ranks(int ranks, RunRank run_rank) {
    std::vector<pid_t> children;
    for (int r = 0; r < ranks; ++r) {
        const pid_t pid = ::fork();
        if (pid == 0) {
            run_rank(r);
            ::_exit(0);
        }
        if (pid < 0) {
            for (pid_t child : children) {
                ::kill(child, SIGKILL);
                ::waitpid(child, nullptr, 0);
            }
            throw std::runtime_error("fork of a rank failed");
        }
        children.push_back(pid);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    std::size_t running = children.size();
    while (running > 0 && std::chrono::steady_clock::now() < deadline) {
        for (pid_t& pid : children)
            if (pid > 0 && ::waitpid(pid, nullptr, WNOHANG) == pid) {
                pid = 0;
                --running;
            }
        if (running > 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    for (pid_t pid : children)
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
    return running;
}

}  // namespace nbody
