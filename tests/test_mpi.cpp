// The distributed mode (docs/scaling.md): the block decomposition, the single-process
// communicators, the launcher detection, and under mpirun (where the build has MPI) the host
// collectives against the single-process answer, the fault cases ending every rank in bounded
// time, and the real nbody-bench: every distributed CPU variant's state over 2 and 3 ranks equal
// to its single-rank state, verify under mpirun, a failing or killed rank, a refused variant.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "io/io.hpp"
#include "nbody/communicator.hpp"
#include "nbody/errors.hpp"
#include "nbody/registry.hpp"
#include "platform/distributed.hpp"
#include "results/results.hpp"
#include "test_support.hpp"
#include "verify/verification.hpp"

namespace {

using nbody::BlockDecomposition;
using nbody::BodyBlock;

TEST(BlockDecomposition, EvenSplitGivesEqualContiguousBlocks) {
    const BlockDecomposition d(12, 3);
    EXPECT_EQ(d.block_capacity(), 4u);
    EXPECT_EQ(d.gather_capacity(), 12u);
    EXPECT_EQ(d.block(0), (BodyBlock{0, 4}));
    EXPECT_EQ(d.block(1), (BodyBlock{4, 4}));
    EXPECT_EQ(d.block(2), (BodyBlock{8, 4}));
}

TEST(BlockDecomposition, UnevenSplitPutsTheRemainderLastAndNoBlockExceedsTheCeiling) {
    const BlockDecomposition d(10, 4);
    EXPECT_EQ(d.block_capacity(), 3u);
    EXPECT_EQ(d.gather_capacity(), 12u);
    EXPECT_EQ(d.block(0), (BodyBlock{0, 3}));
    EXPECT_EQ(d.block(2), (BodyBlock{6, 3}));
    EXPECT_EQ(d.block(3), (BodyBlock{9, 1}));
}

TEST(BlockDecomposition, BlocksTileEveryBodyOnceForManySizes) {
    for (int ranks : {1, 2, 3, 7, 8, 64}) {
        for (std::size_t n : {0u, 1u, 2u, 5u, 63u, 64u, 65u, 1000u, 1023u, 4099u}) {
            const BlockDecomposition d(n, ranks);
            std::size_t next = 0;
            for (int r = 0; r < ranks; ++r) {
                const BodyBlock b = d.block(r);
                EXPECT_LE(b.count, d.block_capacity());
                if (b.count != 0) {
                    EXPECT_EQ(b.first, next) << "n " << n << " ranks " << ranks << " rank " << r;
                    EXPECT_EQ(b.first, d.block_capacity() * static_cast<std::size_t>(r));  // where NCCL's equal blocks land
                }
                next += b.count;
            }
            EXPECT_EQ(next, n) << "n " << n << " ranks " << ranks;
            EXPECT_GE(d.gather_capacity(), n);
            EXPECT_LT(d.gather_capacity() - n, static_cast<std::size_t>(ranks));
        }
    }
}

TEST(BlockDecomposition, FewerBodiesThanRanksLeavesTrailingBlocksEmpty) {
    const BlockDecomposition d(2, 3);
    EXPECT_EQ(d.block(0), (BodyBlock{0, 1}));
    EXPECT_EQ(d.block(1), (BodyBlock{1, 1}));
    EXPECT_EQ(d.block(2).count, 0u);
}

TEST(BlockDecomposition, RejectsNoRanksAndRanksOutside) {
    EXPECT_THROW(BlockDecomposition(10, 0), nbody::UsageError);
    const BlockDecomposition d(10, 2);
    EXPECT_THROW(d.block(2), nbody::UsageError);
    EXPECT_THROW(d.block(-1), nbody::UsageError);
}

TEST(SingleProcessCommunicator, IsTheIdentityAndChecksItsArguments) {
    nbody::SingleProcessCommunicator c;
    EXPECT_EQ(c.rank(), 0);
    EXPECT_EQ(c.size(), 1);
    std::vector<float> x{1.0f, 2.0f, 3.0f};
    c.allgather_in_place(std::span<float>(x), BlockDecomposition(3, 1));
    EXPECT_EQ(x, (std::vector<float>{1.0f, 2.0f, 3.0f}));
    std::vector<std::int32_t> counts{4, 5};
    c.allreduce_sum(std::span<std::int32_t>(counts));
    EXPECT_EQ(counts, (std::vector<std::int32_t>{4, 5}));
    EXPECT_THROW(c.allgather_in_place(std::span<float>(x), BlockDecomposition(4, 1)), nbody::UsageError);
    EXPECT_THROW(c.allgather_in_place(std::span<float>(x), BlockDecomposition(3, 2)), nbody::UsageError);
    EXPECT_EQ(nbody::allgather_strings(c, "only"), (std::vector<std::string>{"only"}));
}

TEST(SingleProcessCommunicator, AbortAllExitsNonZeroNamingTheRank) {
    EXPECT_EXIT(nbody::SingleProcessCommunicator{}.abort_all(3, "planted"), testing::ExitedWithCode(3), "rank 0 of 1: planted");
}

TEST(LaunchEnvironment, ReadsOpenMpiPmiAndPmixVariables) {
    auto with = [](std::map<std::string, std::string> variables) {
        return nbody::launch_environment([variables](const char* name) -> const char* {
            const auto found = variables.find(name);
            return found == variables.end() ? nullptr : found->second.c_str();
        });
    };
    EXPECT_FALSE(with({}).under_launcher);
    const auto open_mpi = with({{"OMPI_COMM_WORLD_SIZE", "3"}, {"PMIX_RANK", "1"}});
    EXPECT_TRUE(open_mpi.under_launcher);
    EXPECT_EQ(open_mpi.world_size, 3);
    EXPECT_EQ(open_mpi.evidence, "OMPI_COMM_WORLD_SIZE=3");
    EXPECT_EQ(with({{"PMI_SIZE", "2"}}).world_size, 2);
    const auto pmix = with({{"PMIX_RANK", "0"}});
    EXPECT_TRUE(pmix.under_launcher);
    EXPECT_EQ(pmix.world_size, 0);
}

TEST(CommandLineDifference, NamesTheFirstOptionThatDiffersWithBothValues) {
    using nbody::command_line_difference;
    const std::vector<std::string> rank0{"run", "--variant", "omp.simd", "--seed", "42", "-n", "100"};
    EXPECT_EQ(command_line_difference(rank0, rank0, 1), "");
    EXPECT_EQ(command_line_difference(rank0, {"run", "--variant", "omp.simd", "--seed", "7", "-n", "100"}, 1),
              "rank 1 was started with --seed 7, rank 0 with --seed 42");
    EXPECT_EQ(command_line_difference(rank0, {"run", "--variant", "omp.simd", "--dt", "0.1", "-n", "100"}, 2),
              "rank 2 was started with --dt 0.1, rank 0 with --seed 42");
    EXPECT_EQ(command_line_difference({"run", "--input", "a b.csv"}, {"run", "--input", "a\nb.csv"}, 1),
              "rank 1 was started with --input 'a\\x0ab.csv', rank 0 with --input 'a b.csv'");
    EXPECT_EQ(command_line_difference(rank0, {"verify", "--variant", "omp.simd"}, 1),
              "rank 1 was started with 'verify', rank 0 with 'run'");
    auto longer = rank0;
    longer.push_back("--allow-long");
    EXPECT_EQ(command_line_difference(rank0, longer, 1), "rank 1 was started with --allow-long, rank 0 without it");
    EXPECT_EQ(command_line_difference(longer, rank0, 1), "rank 1 was started without --allow-long, rank 0 with it");
    EXPECT_EQ(command_line_difference({"run", "--seed=42"}, {"run", "--seed=7"}, 1),
              "rank 1 was started with --seed=7, rank 0 with --seed=42");
}

// ---- under mpirun ---------------------------------------------------------------------------

struct Finished {
    bool timed_out = false;
    int exit_status = -1;  // the exit code, or 128 + signal
    std::string output;    // stdout and stderr together
    double seconds = 0.0;
};

// Runs `arguments` in its own process group, kills that group after `limit_seconds`.
Finished run_with_limit(const std::vector<std::string>& arguments, double limit_seconds) {
    int pipe_ends[2];
    if (pipe(pipe_ends) != 0) throw std::runtime_error("pipe failed");
    const auto start = std::chrono::steady_clock::now();
    const pid_t child = fork();
    if (child < 0) throw std::runtime_error("fork failed");
    if (child == 0) {
        setpgid(0, 0);
        dup2(pipe_ends[1], STDOUT_FILENO);
        dup2(pipe_ends[1], STDERR_FILENO);
        close(pipe_ends[0]);
        close(pipe_ends[1]);
        std::vector<char*> argv;
        for (const std::string& a : arguments) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        execv(argv[0], argv.data());
        _exit(127);
    }
    setpgid(child, child);
    close(pipe_ends[1]);
    Finished finished;
    char buffer[4096];
    for (;;) {
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (elapsed > limit_seconds) {
            finished.timed_out = true;
            kill(-child, SIGKILL);
            break;
        }
        pollfd readable{pipe_ends[0], POLLIN, 0};
        if (poll(&readable, 1, 200) > 0) {
            const ssize_t got = read(pipe_ends[0], buffer, sizeof buffer);
            if (got <= 0) break;  // every writer closed: the job ended
            finished.output.append(buffer, static_cast<std::size_t>(got));
        }
    }
    close(pipe_ends[0]);
    int status = 0;
    waitpid(child, &status, 0);
    finished.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    finished.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return finished;
}

#if defined(NBODY_WITH_MPI)
constexpr bool built_with_mpi = true;
#else
constexpr bool built_with_mpi = false;
#endif

std::vector<std::string> mpirun(int ranks, const std::string& scenario, const std::string& argument) {
    // As root Open MPI refuses to start without --allow-run-as-root; CI machines have 2 cores.
    return {NBODY_MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-np", std::to_string(ranks),
            NBODY_MPI_RANK_CHECKS_PATH, scenario, argument};
}

#define SKIP_WITHOUT_MPIRUN()                                                                                  \
    do {                                                                                                       \
        if (!built_with_mpi || std::string(NBODY_MPIEXEC).empty())                                             \
            GTEST_SKIP() << "this build has no MPI or no mpirun (docs/scaling.md; apt-get install libopenmpi-dev " \
                            "openmpi-bin)";                                                                    \
    } while (0)

// A collective job on an idle machine ends in about a second; a hang is what the limit catches.
constexpr double job_limit_seconds = 60.0;
// The fault must end every rank "within seconds": mpirun's own teardown included.
constexpr double fault_limit_seconds = 20.0;

TEST(SingleRank, RankChecksPassWithoutMpirun) {
    const Finished f = run_with_limit({NBODY_MPI_RANK_CHECKS_PATH, "collectives", "1001"}, job_limit_seconds);
    ASSERT_FALSE(f.timed_out) << f.output;
    EXPECT_EQ(f.exit_status, 0) << f.output;
    EXPECT_NE(f.output.find("collectives over 1 ranks (single process)"), std::string::npos) << f.output;
}

// Without mpirun no device data moves between ranks: the option is accepted and said to do nothing.
TEST(SingleRank, DeviceCollectivesWithoutMpirunIsNotedToHaveNoEffect) {
    for (const char* kind : {"nccl", "host-staged", "peer"}) {
        const Finished f = run_with_limit({NBODY_BENCH_PATH, "run", "--variant", "omp.simd", "-n", "64", "--steps", "1",
                                           "--device-collectives", kind},
                                          job_limit_seconds);
        ASSERT_FALSE(f.timed_out) << f.output;
        EXPECT_EQ(f.exit_status, 0) << f.output;
        EXPECT_NE(f.output.find(std::string("note: --device-collectives ") + kind + " has no effect in a single process"),
                  std::string::npos)
            << f.output;
    }
    const Finished plain = run_with_limit({NBODY_BENCH_PATH, "run", "--variant", "omp.simd", "-n", "64", "--steps", "1"},
                                          job_limit_seconds);
    EXPECT_EQ(plain.exit_status, 0) << plain.output;
    EXPECT_EQ(plain.output.find("--device-collectives"), std::string::npos) << plain.output;
}

class UnderMpirun : public testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(UnderMpirun, HostCollectivesGiveTheSingleProcessAnswer) {
    SKIP_WITHOUT_MPIRUN();
    const auto [ranks, n] = GetParam();
    const Finished f = run_with_limit(mpirun(ranks, "collectives", std::to_string(n)), job_limit_seconds);
    ASSERT_FALSE(f.timed_out) << "mpirun -np " << ranks << " still running after " << job_limit_seconds << " s:\n" << f.output;
    EXPECT_EQ(f.exit_status, 0) << f.output;
    EXPECT_NE(f.output.find("collectives over " + std::to_string(ranks) + " ranks (MPI"), std::string::npos) << f.output;
}

// N: fewer bodies than ranks, uneven remainders, even splits, and a size past one page per rank.
INSTANTIATE_TEST_SUITE_P(RanksAndSizes, UnderMpirun,
                         testing::Combine(testing::Values(2, 3), testing::Values(1, 2, 7, 1000, 1001, 100003)));

class FaultUnderMpirun : public testing::TestWithParam<std::string> {};

TEST_P(FaultUnderMpirun, OneFailingRankEndsEveryRankNonZeroInBoundedTime) {
    SKIP_WITHOUT_MPIRUN();
    const std::string scenario = GetParam();
    const Finished f = run_with_limit(mpirun(3, scenario, "1"), fault_limit_seconds);
    ASSERT_FALSE(f.timed_out) << "a '" << scenario << "' on rank 1 left mpirun running past " << fault_limit_seconds << " s:\n"
                              << f.output;
    EXPECT_NE(f.exit_status, 0) << f.output;
    EXPECT_EQ(f.output.find("passed a barrier"), std::string::npos) << f.output;
    // Our message (exception, failure) or Open MPI's (killed rank) names rank 1.
    EXPECT_NE(f.output.find("rank 1"), std::string::npos) << f.output;
}

INSTANTIATE_TEST_SUITE_P(Faults, FaultUnderMpirun, testing::Values("throw", "fail", "kill"));

TEST(UnderMpirunRefusals, NonDistributedVariantsAndGpuVariantsWithoutDeviceCommunicatorAreRefused) {
    SKIP_WITHOUT_MPIRUN();
    const Finished f = run_with_limit(mpirun(2, "refusals", "0"), job_limit_seconds);
    ASSERT_FALSE(f.timed_out) << f.output;
    EXPECT_EQ(f.exit_status, 0) << f.output;
    EXPECT_NE(f.output.find("refused as expected"), std::string::npos) << f.output;
}

// ---- nbody-bench under mpirun ---------------------------------------------------------------

std::vector<std::string> bench(const std::vector<std::string>& arguments) {
    std::vector<std::string> command{NBODY_BENCH_PATH};
    command.insert(command.end(), arguments.begin(), arguments.end());
    return command;
}

std::vector<std::string> mpirun_bench(int ranks, const std::vector<std::string>& arguments) {
    std::vector<std::string> command{NBODY_MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-np", std::to_string(ranks)};
    const auto rest = bench(arguments);
    command.insert(command.end(), rest.begin(), rest.end());
    return command;
}

// The map CSV (D rows of D values) as the flat vector a Simulation downloads.
std::vector<float> read_map_csv(const std::string& path) {
    std::ifstream in(path);
    std::vector<float> map;
    std::string line, field;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        while (std::getline(fields, field, ',')) map.push_back(std::stof(field));
    }
    return map;
}

// The CPU variants of this build that run over several ranks (kokkos.team_tiled on Serial once
// its model marks it): each is checked, none is named here.
std::vector<const nbody::VariantDescriptor*> distributed_cpu_variants() {
    std::vector<const nbody::VariantDescriptor*> out;
    for (const auto& v : nbody::builtin_registry().all())
        if (v.distributed && !v.runs_on_gpu && v.availability().available) out.push_back(&v);
    return out;
}

struct WorkloadCase {
    const char* dim;
    const char* precision;
    const char* integrator;
};

void PrintTo(const WorkloadCase& w, std::ostream* out) { *out << w.dim << "d/" << w.precision << "/" << w.integrator; }

class DistributedRunMatchesOneRank : public testing::TestWithParam<WorkloadCase> {};

// N = 1001 splits unevenly over 2 and 3 ranks; the state after the steps (positions, velocities
// gathered from every rank, map) must equal the single-rank one within verify's thresholds.
TEST_P(DistributedRunMatchesOneRank, EveryDistributedCpuVariantOverTwoAndThreeRanks) {
    SKIP_WITHOUT_MPIRUN();
    const WorkloadCase w = GetParam();
    const nbody::Workload workload{std::stoi(w.dim), nbody::parse_precision(w.precision), nbody::parse_integrator(w.integrator)};
    const auto variants = distributed_cpu_variants();
    ASSERT_FALSE(variants.empty()) << "no distributed CPU variant in this build (omp.simd is one)";
    nbody::testing::TempDir dir;
    constexpr int d = 17;
    for (const nbody::VariantDescriptor* v : variants) {
        if (!v->workloads.supports(workload)) continue;
        std::vector<std::string> arguments{"run", "--variant", v->id, "-n", "1001", "-d", std::to_string(d), "--steps", "4",
                                           "--warmup", "0", "--dim", w.dim, "--precision", w.precision, "--integrator",
                                           w.integrator};
        // One thread per rank: CI has 2 cores.
        for (const auto& t : v->tunings)
            if (t.name == "threads") arguments.insert(arguments.end(), {"--tuning", "threads=1"});
        const auto with_outputs = [&](const std::string& tag) {
            auto a = arguments;
            a.insert(a.end(), {"--state-out", dir.file(tag + ".csv"), "--map-out", dir.file(tag + "-map.csv")});
            return a;
        };
        const Finished alone = run_with_limit(bench(with_outputs("alone")), job_limit_seconds);
        ASSERT_EQ(alone.exit_status, 0) << alone.output;
        const nbody::HostState expected = nbody::read_state_csv(dir.file("alone.csv"), workload, 1001, 0);
        for (int ranks : {2, 3}) {
            const std::string tag = v->id + "-" + std::to_string(ranks);
            const Finished f = run_with_limit(mpirun_bench(ranks, with_outputs(tag)), job_limit_seconds);
            ASSERT_FALSE(f.timed_out) << f.output;
            ASSERT_EQ(f.exit_status, 0) << f.output;
            EXPECT_NE(f.output.find("ranks            " + std::to_string(ranks) + " (MPI"), std::string::npos) << f.output;
            const nbody::HostState got = nbody::read_state_csv(dir.file(tag + ".csv"), workload, 1001, 0);
            const nbody::CheckResult r = nbody::compare_states(4, got, read_map_csv(dir.file(tag + "-map.csv")), expected, d,
                                                               nbody::default_thresholds(workload.precision));
            EXPECT_TRUE(r.passed) << v->id << " over " << ranks << " ranks, " << to_string(workload) << ": " << r.failure;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Workloads, DistributedRunMatchesOneRank,
                         testing::Values(WorkloadCase{"2", "fp32", "euler"}, WorkloadCase{"3", "fp32", "leapfrog"},
                                         WorkloadCase{"2", "fp64", "leapfrog"}, WorkloadCase{"3", "fp64", "euler"}),
                         [](const auto& info) {
                             return std::string("d") + info.param.dim + "_" + info.param.precision + "_" + info.param.integrator;
                         });

TEST(BenchUnderMpirun, VerifyOmpSimdOverTwoRanksPassesAgainstTheReferenceAndOneRank) {
    SKIP_WITHOUT_MPIRUN();
    const Finished f = run_with_limit(mpirun_bench(2, {"verify", "--variants", "omp.simd", "-n", "1000", "-d", "10", "-d", "257",
                                                       "--steps", "1", "--steps", "5"}),
                                      job_limit_seconds);
    ASSERT_FALSE(f.timed_out) << f.output;
    EXPECT_EQ(f.exit_status, 0) << f.output;
    EXPECT_NE(f.output.find(" 1-rank "), std::string::npos) << f.output;
    EXPECT_NE(f.output.find(" full "), std::string::npos) << f.output;
    EXPECT_NE(f.output.find("48 checks: 48 passed, 0 failed"), std::string::npos) << f.output;  // D = 10 after the first step only
}

TEST(BenchUnderMpirun, MatrixOverTwoRanksWritesOneValidFileRecordingTheRanks) {
    SKIP_WITHOUT_MPIRUN();
    nbody::testing::TempDir dir;
    const std::string matrix = dir.write("m.json", R"({"name": "ranks", "steps": 2, "warmup_steps": 1, "repetitions": 2,
        "verification": {"steps": 2},
        "groups": [{"variants": ["omp.simd"], "n": [1001], "d": [10], "dim": [2, 3], "precision": ["fp64"],
                    "integrator": ["leapfrog"], "tunings": {"threads": [1]}}]})");
    const std::string results = dir.file("r.json");
    const Finished f = run_with_limit(mpirun_bench(2, {"matrix", matrix, "--out", results, "--progress", "log"}), job_limit_seconds);
    ASSERT_FALSE(f.timed_out) << f.output;
    ASSERT_EQ(f.exit_status, 0) << f.output;
    std::ifstream in(results);
    const nlohmann::json document = nlohmann::json::parse(in);
    const auto problems = nbody::check_results(document);
    EXPECT_TRUE(problems.empty()) << problems.front();
    EXPECT_EQ(document["context"]["distribution"]["ranks"], 2);
    EXPECT_EQ(document["context"]["distribution"]["hosts"].size(), 2u);
    ASSERT_EQ(document["benchmarks"].size(), 2u * (2 + 4));  // 2 configurations: 2 repetitions + 4 aggregates each
    for (const auto& entry : document["benchmarks"]) {
        EXPECT_EQ(entry["ranks"], 2);
        EXPECT_EQ(entry["verified"], true) << entry.dump();
        EXPECT_EQ(entry["efficiency_limit_inputs"]["ranks"], 2);
    }
    // Rank 0 alone printed the summary.
    const std::string summary = "2 configurations: 0 already in the file, 2 run and verified";
    EXPECT_NE(f.output.find(summary), std::string::npos) << f.output;
    EXPECT_EQ(f.output.find(summary), f.output.rfind(summary)) << f.output;
}

// --min-time: each rank's clock would ask for its own count of further steps; rank 0's is taken by
// all (otherwise one rank waits in an all-gather its peers never enter).
TEST(BenchUnderMpirun, MinTimeStepsAreAgreedByEveryRank) {
    SKIP_WITHOUT_MPIRUN();
    const Finished f = run_with_limit(mpirun_bench(3, {"run", "--variant", "omp.simd", "-n", "1001", "--steps", "1",
                                                       "--min-time", "0.3", "--tuning", "threads=1"}),
                                      job_limit_seconds);
    ASSERT_FALSE(f.timed_out) << f.output;
    EXPECT_EQ(f.exit_status, 0) << f.output;
    EXPECT_NE(f.output.find("steps="), std::string::npos) << f.output;
}

TEST(BenchUnderMpirun, ANonDistributedVariantExitsTwoNamingItAndTheDistributedOnes) {
    SKIP_WITHOUT_MPIRUN();
    const Finished f = run_with_limit(mpirun_bench(2, {"run", "--variant", "serial.reference", "-n", "100"}), fault_limit_seconds);
    ASSERT_FALSE(f.timed_out) << f.output;
    EXPECT_EQ(f.exit_status, 2) << f.output;
    EXPECT_NE(f.output.find("serial.reference runs on one rank only"), std::string::npos) << f.output;
    EXPECT_NE(f.output.find("omp.simd"), std::string::npos) << f.output;
    // A matrix naming one is refused before anything is written.
    nbody::testing::TempDir dir;
    const std::string matrix = dir.write("m.json", R"({"name": "one", "steps": 1,
        "groups": [{"variants": ["omp.simd", "serial.reference"], "n": [100], "d": [4]}]})");
    const Finished m = run_with_limit(mpirun_bench(2, {"matrix", matrix, "--out", dir.file("r.json")}), fault_limit_seconds);
    ASSERT_FALSE(m.timed_out) << m.output;
    EXPECT_EQ(m.exit_status, 2) << m.output;
    EXPECT_NE(m.output.find("serial.reference runs on one rank only"), std::string::npos) << m.output;
    EXPECT_FALSE(std::filesystem::exists(dir.file("r.json")));
}

// A run that lasts a while, so that the healthy rank is inside the step's all-gather when its peer fails.
const std::vector<std::string> long_run{"run", "--variant", "omp.simd", "-n", "20000", "--steps", "100000", "--tuning",
                                        "threads=1", "--allow-long"};

// `first_ranks` ranks run `first`, then one rank runs `last`.
std::vector<std::string> two_programs(const std::vector<std::string>& first, const std::vector<std::string>& last,
                                      int first_ranks = 1) {
    std::vector<std::string> command{NBODY_MPIEXEC, "--allow-run-as-root", "--oversubscribe", "-np", std::to_string(first_ranks)};
    command.insert(command.end(), first.begin(), first.end());
    command.insert(command.end(), {":", "-np", "1"});
    command.insert(command.end(), last.begin(), last.end());
    return command;
}

// Every rank runs the same command line, `--input input.csv`, each in a folder of its own (as on
// nodes whose files differ): rank 1's file is malformed.
TEST(BenchUnderMpirun, BadInputOnOneRankEndsEveryRankNamingIt) {
    SKIP_WITHOUT_MPIRUN();
    nbody::testing::TempDir dir;
    std::filesystem::create_directories(dir.file("rank0"));
    std::filesystem::create_directories(dir.file("rank1"));
    dir.write("rank0/input.csv", "x,y,vx,vy,m\n0.5,0.5,0,0,1\n0.25,0.25,0,0,1\n");
    dir.write("rank1/input.csv", "x,y,vx,vy,m\n0.5,0.5,0,0,1\nnot,a,number,at,all\n");
    auto arguments = long_run;
    arguments.erase(arguments.begin() + 3, arguments.begin() + 5);  // no -n: the body count from the file
    arguments.insert(arguments.end(), {"--input", "input.csv"});
    const auto in_folder = [&](const std::string& folder) {
        std::string command = "cd " + dir.file(folder) + " && exec";
        for (const std::string& a : bench(arguments)) command += " " + a;
        return std::vector<std::string>{"/bin/sh", "-c", command};
    };
    const Finished f = run_with_limit(two_programs(in_folder("rank0"), in_folder("rank1")), fault_limit_seconds);
    ASSERT_FALSE(f.timed_out) << "bad input on rank 1 left mpirun running past " << fault_limit_seconds << " s:\n" << f.output;
    EXPECT_NE(f.exit_status, 0) << f.output;
    EXPECT_NE(f.output.find("rank 1 of 2: nbody-bench: input.csv"), std::string::npos) << f.output;
}

TEST(BenchUnderMpirun, AKilledRankEndsEveryRank) {
    SKIP_WITHOUT_MPIRUN();
    // Rank 1's shell becomes nbody-bench (exec keeps its PID), which a timer then kills mid-run.
    std::string rank1 = "(sleep 2; kill -KILL $$) & exec";
    for (const std::string& a : bench(long_run)) rank1 += " " + a;
    const Finished f = run_with_limit(two_programs(bench(long_run), {"/bin/sh", "-c", rank1}), fault_limit_seconds);
    ASSERT_FALSE(f.timed_out) << "a killed rank 1 left mpirun running past " << fault_limit_seconds << " s:\n" << f.output;
    EXPECT_NE(f.exit_status, 0) << f.output;
    EXPECT_NE(f.output.find("rank 1"), std::string::npos) << f.output;  // Open MPI's report of the signal
}

// ---- ranks started with different command lines ----------------------------------------------

struct RankDifference {
    const char* name;
    std::vector<std::string> last_rank;  // the last rank's arguments; the others run `agreed_run`
    const char* message;                 // the last rank's difference, after "rank R was started with"
};

const std::vector<std::string> agreed_run{"run", "--variant", "omp.simd", "-n", "1001", "--steps", "3", "--seed", "42",
                                          "--tuning", "threads=1"};

std::vector<std::string> agreed_run_with(const std::string& option, const std::string& value) {
    auto arguments = agreed_run;
    const auto at = std::find(arguments.begin(), arguments.end(), option);
    if (at == arguments.end()) throw std::logic_error(option + " is not in agreed_run");
    *(at + 1) = value;
    return arguments;
}

void PrintTo(const RankDifference& d, std::ostream* out) { *out << d.name; }

class RanksStartedDifferently : public testing::TestWithParam<std::tuple<RankDifference, int>> {};

// Another seed, dt or variant would run to a wrong state, another step count or subcommand would
// hang, another N would truncate a message: each is refused at start, naming the option, exit 2.
TEST_P(RanksStartedDifferently, ExitTwoNamingTheRankAndTheFirstOptionThatDiffers) {
    SKIP_WITHOUT_MPIRUN();
    const auto& [difference, ranks] = GetParam();
    const Finished f = run_with_limit(two_programs(bench(agreed_run), bench(difference.last_rank), ranks - 1), fault_limit_seconds);
    ASSERT_FALSE(f.timed_out) << "ranks started differently left mpirun running past " << fault_limit_seconds << " s:\n" << f.output;
    EXPECT_EQ(f.exit_status, 2) << f.output;
    const std::string last = std::to_string(ranks - 1);
    EXPECT_NE(f.output.find("rank " + last + " of " + std::to_string(ranks) + ": nbody-bench: rank " + last + " was started with" +
                            difference.message),
              std::string::npos)
        << f.output;
    EXPECT_EQ(f.output.find("steps="), std::string::npos) << "a rank ran: " << f.output;
}

INSTANTIATE_TEST_SUITE_P(
    Options, RanksStartedDifferently,
    testing::Combine(
        testing::Values(RankDifference{"seed", agreed_run_with("--seed", "7"), " --seed 7, rank 0 with --seed 42"},
                        RankDifference{"steps", agreed_run_with("--steps", "4"), " --steps 4, rank 0 with --steps 3"},
                        RankDifference{"n", agreed_run_with("-n", "1000"), " -n 1000, rank 0 with -n 1001"},
                        RankDifference{"variant", agreed_run_with("--variant", "kokkos.team_tiled@openmp"),
                                       " --variant kokkos.team_tiled@openmp, rank 0 with --variant omp.simd"},
                        RankDifference{"subcommand", {"verify", "--variants", "omp.simd", "-n", "1001"}, " 'verify', rank 0 with 'run'"},
                        RankDifference{"extra_option", [] {
                                           auto a = agreed_run;
                                           a.insert(a.end(), {"--dt", "0.002"});
                                           return a;
                                       }(),
                                       " --dt 0.002, rank 0 without it"}),
        testing::Values(2, 3)),
    [](const auto& info) { return std::string(std::get<0>(info.param).name) + "_" + std::to_string(std::get<1>(info.param)) + "_ranks"; });

// ---- a stop signal to one rank ---------------------------------------------------------------

// The ranks of the job `mpirun` started, by rank: its children (Open MPI starts the ranks of its
// own node itself), each one's rank read from its environment.
std::map<int, pid_t> ranks_of(pid_t mpirun) {
    std::map<int, pid_t> ranks;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const std::string name = entry.path().filename();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream stat(entry.path() / "stat");
        std::string line;
        if (!std::getline(stat, line) || line.rfind(')') == std::string::npos) continue;
        std::istringstream after_name(line.substr(line.rfind(')') + 1));
        char state = 0;
        pid_t parent = 0;
        if (!(after_name >> state >> parent) || parent != mpirun) continue;
        std::ifstream environ(entry.path() / "environ", std::ios::binary);
        for (std::string variable; std::getline(environ, variable, '\0');)
            if (variable.rfind("OMPI_COMM_WORLD_RANK=", 0) == 0) ranks[std::stoi(variable.substr(21))] = std::stoi(name);
    }
    return ranks;
}

// A process that exists and is no zombie (an ended rank may wait for a reaper).
bool running(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line) || line.rfind(')') == std::string::npos) return false;
    std::istringstream after_name(line.substr(line.rfind(')') + 1));
    char state = 0;
    return after_name >> state && state != 'Z' && state != 'X';
}

class SignalToOneRank : public testing::TestWithParam<std::tuple<int, int>> {};

// docs/scaling.md: a stop signal to any rank stops every rank after the measurement in progress,
// with the finished configurations in the results file and the signal's status (130, 143).
TEST_P(SignalToOneRank, EveryRankStopsWithTheSignalsStatus) {
    SKIP_WITHOUT_MPIRUN();
    const auto [signal_number, signalled_rank] = GetParam();
    nbody::testing::TempDir dir;
    const std::string matrix = dir.write("m.json", R"({"name": "stopped", "steps": 20, "warmup_steps": 0, "repetitions": 2,
        "groups": [{"variants": ["omp.simd"], "n": [1000, 1100, 1200, 1300, 1400, 1500, 1600, 1700, 1800, 1900, 2000,
                    2100, 2200, 2300, 2400, 2500], "d": [4], "tunings": {"threads": [1]}}]})");
    const std::string results = dir.file("r.json");
    const std::string log = dir.file("log.txt");
    const auto command = mpirun_bench(2, {"matrix", matrix, "--out", results, "--progress", "log"});
    const pid_t mpirun = fork();
    ASSERT_GE(mpirun, 0);
    if (mpirun == 0) {
        setpgid(0, 0);
        const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(out, STDOUT_FILENO);
        dup2(out, STDERR_FILENO);
        std::vector<char*> argv;
        for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        execv(argv[0], argv.data());
        _exit(127);
    }
    setpgid(mpirun, mpirun);
    std::map<int, pid_t> ranks;
    const auto end_job = [&] {  // the ranks too: Open MPI may start them in groups of their own
        for (const auto& [rank, pid] : ranks) kill(pid, SIGKILL);
        kill(-mpirun, SIGKILL);
        waitpid(mpirun, nullptr, 0);
    };
    // Running: the first configuration (2 repetitions and 4 aggregates) is in the file.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    std::size_t entries = 0;
    while (entries < 6 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        std::ifstream in(results);
        const nlohmann::json document = nlohmann::json::parse(in, nullptr, false);
        if (!document.is_discarded()) entries = document["benchmarks"].size();
    }
    if (entries < 6) end_job();
    ASSERT_GE(entries, 6u) << nbody::testing::read_text(log);
    ranks = ranks_of(mpirun);
    if (ranks.size() != 2) end_job();
    ASSERT_EQ(ranks.size(), 2u) << "mpirun's children with a rank";
    ASSERT_EQ(kill(ranks.at(signalled_rank), signal_number), 0);

    int status = 0;
    pid_t ended = 0;
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(static_cast<int>(fault_limit_seconds));
    while ((ended = waitpid(mpirun, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < limit)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (ended == 0) end_job();
    const std::string output = nbody::testing::read_text(log);
    ASSERT_EQ(ended, mpirun) << "a signal to rank " << signalled_rank << " left mpirun running past " << fault_limit_seconds
                             << " s:\n" << output;
    ASSERT_TRUE(WIFEXITED(status)) << output;
    EXPECT_EQ(WEXITSTATUS(status), 128 + signal_number) << output;
    for (const auto& [rank, pid] : ranks) EXPECT_FALSE(running(pid)) << "rank " << rank << " still runs";
    EXPECT_NE(output.find(std::string("interrupted by ") + (signal_number == SIGINT ? "SIGINT" : "SIGTERM")), std::string::npos)
        << output;
    std::ifstream in(results);
    const nlohmann::json stopped = nlohmann::json::parse(in);
    EXPECT_TRUE(nbody::check_results(stopped).empty());
    EXPECT_GE(stopped["benchmarks"].size(), 6u);
    EXPECT_LT(stopped["benchmarks"].size(), 16u * 6u);
}

INSTANTIATE_TEST_SUITE_P(SignalsAndRanks, SignalToOneRank, testing::Combine(testing::Values(SIGTERM, SIGINT), testing::Values(0, 1)),
                         [](const auto& info) {
                             return std::string(std::get<0>(info.param) == SIGINT ? "SIGINT" : "SIGTERM") + "_to_rank_" +
                                    std::to_string(std::get<1>(info.param));
                         });

}  // namespace
