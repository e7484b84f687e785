// One rank of the distributed-mode tests (test_mpi.cpp starts it under mpirun, or alone):
//   mpi_rank_checks collectives N   the block decomposition of N bodies over the ranks, the host
//                                   all-gathers and the all-reduces give the single-process answer;
//                                   exit 0, or every rank ends with a message naming the check
//   mpi_rank_checks throw R         rank R throws an exception nobody catches
//   mpi_rank_checks fail R          rank R reports a failure the way main's error path does
//   mpi_rank_checks kill R          rank R is killed (SIGKILL)
//   mpi_rank_checks refusals 0      over several ranks ProblemDistributions refuses a variant that
//                                   is not distributed and a distributed GPU variant in a build
//                                   without a device communicator (UsageError, nothing created)
// In the fault cases the other ranks wait in a barrier that rank R never reaches: only ending
// every rank lets mpirun return.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "nbody/communicator.hpp"
#include "nbody/errors.hpp"
#include "nbody/registry.hpp"
#include "platform/distributed.hpp"

namespace {

using nbody::BlockDecomposition;
using nbody::BodyBlock;
using nbody::Communicator;

// What every body holds in the single-process answer.
float position_of(std::size_t i) { return 0.25f * static_cast<float>(i) + 1.0f; }
double velocity_of(std::size_t i) { return -1.0 / static_cast<double>(i + 1); }
std::int32_t cell_of(std::size_t i) { return static_cast<std::int32_t>((i * 7919) % 13); }

template <class T, class Value>
std::string check_gather(Communicator& communicator, const BlockDecomposition& decomposition, Value value, const char* what) {
    std::vector<T> all(decomposition.bodies(), T{-7});  // other ranks' entries start wrong
    const BodyBlock own = decomposition.block(communicator.rank());
    for (std::size_t i = own.first; i < own.first + own.count; ++i) all[i] = value(i);
    communicator.allgather_in_place(std::span<T>(all), decomposition);
    for (std::size_t i = 0; i < all.size(); ++i)
        if (all[i] != value(i)) return std::string(what) + " all-gather: body " + std::to_string(i) + " wrong";
    return {};
}

std::string check_collectives(Communicator& communicator, std::size_t n) {
    const BlockDecomposition decomposition(n, communicator.size());
    // Blocks tile [0, n) in rank order.
    std::size_t next = 0;
    for (int r = 0; r < communicator.size(); ++r) {
        const BodyBlock block = decomposition.block(r);
        if (block.count != 0 && block.first != next) return "block " + std::to_string(r) + " does not start where the last ended";
        next += block.count;
    }
    if (next != n) return "blocks cover " + std::to_string(next) + " bodies, not " + std::to_string(n);

    for (const std::string& problem : {check_gather<float>(communicator, decomposition, position_of, "float"),
                                       check_gather<double>(communicator, decomposition, velocity_of, "double"),
                                       check_gather<std::int32_t>(communicator, decomposition, cell_of, "int32")})
        if (!problem.empty()) return problem;

    // Per-cell counts of each rank's own bodies, summed over the ranks, are the counts of all bodies.
    const BodyBlock own = decomposition.block(communicator.rank());
    std::vector<std::int32_t> counts(13, 0);
    std::vector<std::int64_t> wide_counts(13, 0);
    for (std::size_t i = own.first; i < own.first + own.count; ++i) {
        ++counts[static_cast<std::size_t>(cell_of(i))];
        wide_counts[static_cast<std::size_t>(cell_of(i))] += 1'000'000'000'000LL;
    }
    communicator.allreduce_sum(std::span<std::int32_t>(counts));
    communicator.allreduce_sum(std::span<std::int64_t>(wide_counts));
    std::vector<std::int32_t> expected(13, 0);
    for (std::size_t i = 0; i < n; ++i) ++expected[static_cast<std::size_t>(cell_of(i))];
    for (std::size_t c = 0; c < expected.size(); ++c) {
        if (counts[c] != expected[c]) return "int32 all-reduce: cell " + std::to_string(c) + " wrong";
        if (wide_counts[c] != expected[c] * 1'000'000'000'000LL) return "int64 all-reduce: cell " + std::to_string(c) + " wrong";
    }

    // The last rank's bytes reach every rank (how NCCL's unique id travels).
    std::vector<std::byte> bytes(128, std::byte{0});
    const int root = communicator.size() - 1;
    if (communicator.rank() == root)
        for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>(i * 3 + 1);
    communicator.broadcast(std::span<std::byte>(bytes), root);
    for (std::size_t i = 0; i < bytes.size(); ++i)
        if (bytes[i] != static_cast<std::byte>(i * 3 + 1)) return "broadcast: byte " + std::to_string(i) + " wrong";

    const std::vector<std::string> names = nbody::allgather_strings(communicator, "rank-" + std::to_string(communicator.rank()));
    for (int r = 0; r < communicator.size(); ++r)
        if (names[static_cast<std::size_t>(r)] != "rank-" + std::to_string(r)) return "string all-gather: rank " + std::to_string(r) + " wrong";
    communicator.barrier();
    return {};
}

// The UsageError's message that `prepare` of `variant` throws; empty when it throws none.
std::string refusal_of(nbody::DistributedRun& run, const nbody::Registry& registry, const std::string& variant) {
    nbody::ProblemDistributions distributions(run, registry, nbody::DeviceCollectives::nccl);
    try {
        distributions.prepare({registry.find(variant)});
    } catch (const nbody::UsageError& e) {
        return e.what();
    }
    return {};
}

std::string check_refusals(nbody::DistributedRun& run) {
    nbody::Registry registry;  // no device-communicator factory, as a build without NCCL
    const auto add = [&](const char* id, bool gpu, bool distributed) {
        registry.add({.id = id, .backend = "test", .execution_space = gpu ? "cuda" : "host", .description = "planted",
                       .tunings = {}, .max_n = 0, .runs_on_gpu = gpu, .distributed = distributed, .workloads = {},
                       .availability = [] { return nbody::Availability{}; },
                       .create = [](const nbody::Problem&, const nbody::TuningValues&) { return std::unique_ptr<nbody::Simulation>(); }});
    };
    add("test.alone", false, false);
    add("test.spread", false, true);
    add("test.gpu_spread", true, true);
    const std::string alone = refusal_of(run, registry, "test.alone");
    if (alone.find("test.alone runs on one rank only") == std::string::npos || alone.find("test.spread, test.gpu_spread") == std::string::npos)
        return "a variant that is not distributed: '" + alone + "'";
    if (const std::string spread = refusal_of(run, registry, "test.spread"); !spread.empty())
        return "a distributed CPU variant refused: " + spread;
    if (const std::string gpu = refusal_of(run, registry, "test.gpu_spread"); gpu.find("device communicator") == std::string::npos)
        return "a distributed GPU variant without a device communicator: '" + gpu + "'";
    return {};
}

}  // namespace

int main(int argc, char** argv) {
    nbody::DistributedRun run(argc, argv);
    Communicator& communicator = run.communicator();
    if (argc != 3) run.fail(2, "usage: mpi_rank_checks collectives N | throw R | fail R | kill R");
    const std::string scenario = argv[1];
    const long argument = std::strtol(argv[2], nullptr, 10);

    if (scenario == "collectives") {
        const std::string problem = check_collectives(communicator, static_cast<std::size_t>(argument));
        if (!problem.empty()) run.fail(1, problem);
        if (run.writes_output())
            std::printf("collectives over %d ranks (%s), N = %ld: single-process answer\n", communicator.size(),
                        communicator.describe().c_str(), argument);
        return 0;
    }
    if (scenario == "refusals") {
        if (communicator.size() < 2) run.fail(2, "refusals needs several ranks");
        if (const std::string problem = check_refusals(run); !problem.empty()) run.fail(1, problem);
        communicator.barrier();
        if (run.writes_output()) std::printf("refused as expected over %d ranks\n", communicator.size());
        return 0;
    }
    const bool faulty = communicator.rank() == argument;
    if (scenario == "throw") {
        if (faulty) throw std::runtime_error("planted exception");
    } else if (scenario == "fail") {
        if (faulty) run.fail(3, "planted failure");
    } else if (scenario == "kill") {
        if (faulty) std::raise(SIGKILL);
    } else {
        run.fail(2, "unknown scenario " + scenario);
    }
    communicator.barrier();  // the faulty rank never arrives
    std::printf("rank %d passed a barrier that the faulty rank never reached\n", communicator.rank());
    return 0;
}
