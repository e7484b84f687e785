// cuda.sliced over several ranks (docs/scaling.md), checked in one process: the ranks are threads
// joined by an in-process host communicator, sharing one GPU through the host-staged device
// collectives the registry's factory makes (NCCL cannot put two ranks on one GPU). Without a GPU:
// which variants say they are distributed, the factory's refusals, the missing device
// communicator. With a GPU: every workload over 1, 2 and 3 ranks (uneven N, an empty trailing
// block) equals the single-process run bit for bit with one slice and exchange=allgather (the
// same sums in the same order), and within the verification thresholds with the default tunings
// and either exchange (slices add partial pulls with atomics in any order; the overlapped
// exchange sums the owned block first); one rank through NCCL where the build has it (its
// collectives captured in the step's CUDA graph, on a second stream when overlapped). With a GPU
// per thread-rank, the same two checks through the peer collectives: thread-ranks sharing a GPU
// share its context, whose implicit synchronisations (cudaFree, graph instantiation) would wait
// for a peer kernel that waits for them.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "nbody/errors.hpp"
#include "nbody/generator.hpp"
#include "nbody/reference.hpp"
#include "nbody/registry.hpp"
#include "test_support.hpp"
#include "thread_ranks.hpp"

namespace nbody {
namespace {

using testing::registered_variant;

bool gpu_present() { return registered_variant("cuda.sliced").availability().available; }

using testing::ThreadCommunicator;
using testing::ThreadRanks;
using testing::on_thread_ranks;

struct Outcome {
    HostState state;
    std::vector<float> map;
};

Outcome run(const Problem& problem, const TuningValues& tuning, int steps) {
    const VariantDescriptor& sliced = registered_variant("cuda.sliced");
    auto sim = sliced.create(problem, Registry::resolve_tuning(sliced, tuning));
    sim->upload(generate_state(problem.workload, problem.n));
    sim->advance(steps);
    sim->synchronize();
    Outcome out{empty_state(problem.workload, problem.n), {}};
    sim->download(out.state, out.map);
    return out;
}

Problem problem_of(const Workload& workload, std::size_t n, Distribution distribution = {}) {
    return Problem{.n = n, .d = 16, .constants = {}, .workload = workload, .distribution = distribution};
}

std::string collectives_name(DeviceCollectives kind) { return kind == DeviceCollectives::peer ? "peer" : "host-staged"; }

int gpu_count() {
    int devices = 0;
    return cudaGetDeviceCount(&devices) == cudaSuccess ? devices : 0;
}

// Each rank's outcome of `ranks` thread-ranks over the device collectives `kind`.
std::vector<Outcome> run_on_thread_ranks(DeviceCollectives kind, int ranks, const Workload& workload, std::size_t n,
                                         const TuningValues& tuning, int steps) {
    std::vector<Outcome> outcomes(static_cast<std::size_t>(ranks));
    on_thread_ranks(ranks, [&](ThreadRanks& shared, int r) {
        ThreadCommunicator host(shared, r);
        auto devices = (*builtin_registry().device_communicator_factory())(host, kind);
        outcomes[static_cast<std::size_t>(r)] = run(problem_of(workload, n, {&host, devices.get()}), tuning, steps);
    });
    return outcomes;
}

// Bit-for-bit equality of what a rank owns after the run: every position and mass, the velocities
// of its block (the others are unspecified), and the map.
template <class Real>
void expect_identical(const BodiesT<Real>& got, const BodiesT<Real>& single, const BodyBlock& own, const std::string& where) {
    for (int axis = 0; axis < got.dim; ++axis) {
        EXPECT_EQ(got.position(axis), single.position(axis)) << where << ", position axis " << axis;
        for (std::size_t i = own.first; i < own.first + own.count; ++i)
            ASSERT_EQ(got.velocity(axis)[i], single.velocity(axis)[i]) << where << ", velocity axis " << axis << " body " << i;
    }
    EXPECT_EQ(got.m, single.m) << where;
}

void expect_identical(const Outcome& got, const Outcome& single, const BodyBlock& own, const std::string& where) {
    std::visit(
        [&](const auto& bodies) {
            using Bodies = std::decay_t<decltype(bodies)>;
            expect_identical(bodies, std::get<Bodies>(single.state), own, where);
        },
        got.state);
    EXPECT_EQ(got.map, single.map) << where;
}

// Largest |difference| of positions, and of the owned block's velocities.
template <class Real>
std::pair<double, double> largest_differences(const BodiesT<Real>& got, const BodiesT<Real>& single, const BodyBlock& own) {
    double position = 0, velocity = 0;
    for (int axis = 0; axis < got.dim; ++axis)
        for (std::size_t i = 0; i < got.size(); ++i) {
            position = std::max(position, std::abs(static_cast<double>(got.position(axis)[i] - single.position(axis)[i])));
            if (i >= own.first && i < own.first + own.count)
                velocity = std::max(velocity, std::abs(static_cast<double>(got.velocity(axis)[i] - single.velocity(axis)[i])));
        }
    return {position, velocity};
}

std::vector<float> host_map(const HostState& state, int d) {
    return std::visit([d](const auto& b) { return normalised_map(host_cell_counts(b, d), b.size(), d); }, state);
}

std::string case_name(const Workload& w, std::size_t n, int ranks, int rank) {
    return to_string(w) + ", N=" + std::to_string(n) + ", rank " + std::to_string(rank) + " of " + std::to_string(ranks);
}

TEST(CudaDistributed, CudaSlicedAloneSaysItRunsOverSeveralRanks) {
    EXPECT_TRUE(registered_variant("cuda.sliced").distributed);
    for (const VariantDescriptor& v : builtin_registry().all()) {
        if (v.backend == "cuda" && v.id != "cuda.sliced") {
            EXPECT_FALSE(v.distributed) << v.id;
        }
    }
}

TEST(CudaDistributed, TheFactoryMakesHostStagedCollectivesOnTheLocalRanksGpu) {
    const auto* factory = builtin_registry().device_communicator_factory();
    ASSERT_NE(factory, nullptr) << "the CUDA model installs the device-communicator factory";
    SingleProcessCommunicator host;
    if (!gpu_present()) {
        for (const DeviceCollectives kind : {DeviceCollectives::host_staged, DeviceCollectives::peer}) {
            try {
                (*factory)(host, kind);
                FAIL() << collectives_name(kind) << " collectives made without a GPU";
            } catch (const std::runtime_error& e) {
                EXPECT_NE(std::string(e.what()).find("rank 0"), std::string::npos) << e.what();
                EXPECT_NE(std::string(e.what()).find("need a GPU"), std::string::npos) << e.what();
            }
        }
        return;
    }
    const auto devices = (*factory)(host, DeviceCollectives::host_staged);
    EXPECT_EQ(devices->rank(), 0);
    EXPECT_EQ(devices->size(), 1);
    EXPECT_EQ(devices->device(), 0);
    EXPECT_NE(devices->device_description().find(", PCI "), std::string::npos) << devices->device_description();
    EXPECT_NE(devices->describe().find("host-staged"), std::string::npos) << devices->describe();
}

TEST(CudaDistributed, SeveralRanksWithoutADeviceCommunicatorIsAUsageErrorBeforeAnyDeviceCall) {
    ThreadRanks shared(2);
    ThreadCommunicator host(shared, 0);
    const VariantDescriptor& sliced = registered_variant("cuda.sliced");
    EXPECT_THROW(sliced.create(problem_of(Workload{}, 100, {&host, nullptr}), Registry::resolve_tuning(sliced, {})),
                 UsageError);
}

// A rank's bodies j arrive by axis: the packed copy of one process is refused over a device
// communicator, before any device call; the axes are cuda.sliced's default.
TEST(CudaDistributed, APackedSourceLayoutWithADeviceCommunicatorIsAUsageErrorBeforeAnyDeviceCall) {
    ThreadRanks shared(1);
    ThreadCommunicator host(shared, 0);
    SingleDeviceCommunicator device;
    const VariantDescriptor& sliced = registered_variant("cuda.sliced");
    EXPECT_EQ(Registry::resolve_tuning(sliced, {}).at("source_layout"), "axes");
    const Problem problem = problem_of(Workload{}, 100, {&host, &device});
    try {
        sliced.create(problem, Registry::resolve_tuning(sliced, {{"source_layout", "packed"}}));
        ADD_FAILURE() << "source_layout=packed was accepted with a device communicator";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("source_layout=packed"), std::string::npos) << e.what();
    }
}

// Every workload over 1, 2 and 3 thread-ranks through `kind`, bit for bit with one slice.
void expect_thread_ranks_equal_the_single_run_bit_for_bit(DeviceCollectives kind) {
    const TuningValues one_slice{{"slices", "1"}, {"exchange", "allgather"}};
    constexpr int kSteps = 3;
    struct Case {
        std::size_t n;
        int ranks;
    };
    // 1001 over 3: blocks of 334, 334, 333; 4 over 3: blocks of 2, 2 and an empty one.
    for (const Case c : {Case{1001, 1}, Case{1001, 2}, Case{1001, 3}, Case{4, 3}})
        for (const Workload& w : all_workloads()) {
            const Outcome single = run(problem_of(w, c.n), one_slice, kSteps);
            const std::vector<Outcome> ranks = run_on_thread_ranks(kind, c.ranks, w, c.n, one_slice, kSteps);
            const BlockDecomposition decomposition(c.n, c.ranks);
            for (int r = 0; r < c.ranks; ++r)
                expect_identical(ranks[static_cast<std::size_t>(r)], single, decomposition.block(r),
                                 case_name(w, c.n, c.ranks, r) + " over " + collectives_name(kind));
        }
}

// Every workload over 2 and 3 thread-ranks through `kind` with the default tunings and either
// exchange, within the thresholds of the single run.
void expect_thread_ranks_within_the_thresholds(DeviceCollectives kind) {
    constexpr int kSteps = 3;
    constexpr std::size_t kN = 4099;  // prime: every split uneven
    for (const char* exchange : {"overlap", "allgather"})
    for (int ranks : {2, 3})
        for (const Workload& w : all_workloads()) {
            const TuningValues tuning{{"exchange", exchange}};
            const Outcome single = run(problem_of(w, kN), {}, kSteps);
            const std::vector<Outcome> outcomes = run_on_thread_ranks(kind, ranks, w, kN, tuning, kSteps);
            const BlockDecomposition decomposition(kN, ranks);
            // docs/verification.md's thresholds (as test_cuda's): float32 1e-4 / 1e-6, float64 1e-12.
            const bool fp32 = w.precision == Precision::fp32;
            const double position_limit = fp32 ? 1e-4 : 1e-12, velocity_limit = fp32 ? 1e-6 : 1e-12;
            for (int r = 0; r < ranks; ++r) {
                const Outcome& got = outcomes[static_cast<std::size_t>(r)];
                const std::string where = case_name(w, kN, ranks, r) + " exchange=" + exchange + " over " + collectives_name(kind);
                const auto [position, velocity] = std::visit(
                    [&](const auto& bodies) {
                        using Bodies = std::decay_t<decltype(bodies)>;
                        return largest_differences(bodies, std::get<Bodies>(single.state), decomposition.block(r));
                    },
                    got.state);
                EXPECT_LE(position, position_limit) << where;
                EXPECT_LE(velocity, velocity_limit) << where;
                // Every rank counts every body, its own and the gathered ones.
                EXPECT_EQ(got.map, host_map(got.state, 16)) << where;
            }
        }
}

TEST(CudaDistributed, ThreadRanksEqualTheSingleRunBitForBitWithOneSlice) {
    if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
    expect_thread_ranks_equal_the_single_run_bit_for_bit(DeviceCollectives::host_staged);
}

TEST(CudaDistributed, ThreadRanksWithTheDefaultTuningsStayWithinTheThresholdsOfTheSingleRun) {
    if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
    expect_thread_ranks_within_the_thresholds(DeviceCollectives::host_staged);
}

TEST(CudaDistributed, ThreadRanksOnTheirOwnGpusThroughPeerCollectivesMatchTheSingleRun) {
    if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
    if (gpu_count() < 3) GTEST_SKIP() << "peer collectives between thread-ranks need a GPU per rank (3), this machine has " << gpu_count();
    expect_thread_ranks_equal_the_single_run_bit_for_bit(DeviceCollectives::peer);
    expect_thread_ranks_within_the_thresholds(DeviceCollectives::peer);
}

TEST(CudaDistributed, OneRankThroughNcclEqualsTheSingleRunBitForBit) {
    if (!gpu_present()) GTEST_SKIP() << "no CUDA device";
    SingleProcessCommunicator host;
    std::unique_ptr<DeviceCommunicator> nccl;
    try {
        nccl = (*builtin_registry().device_communicator_factory())(host, DeviceCollectives::nccl);
    } catch (const UsageError& e) {
        GTEST_SKIP() << e.what();
    }
    const TuningValues one_slice{{"slices", "1"}};
    constexpr std::size_t kN = 1001;
    constexpr int kSteps = 3;
    for (const Workload& w : all_workloads()) {
        const Outcome single = run(problem_of(w, kN), one_slice, kSteps);
        const Outcome got = run(problem_of(w, kN, {&host, nccl.get()}), one_slice, kSteps);
        expect_identical(got, single, BodyBlock{0, kN}, case_name(w, kN, 1, 0) + " through NCCL");
    }
}

}  // namespace
}  // namespace nbody
