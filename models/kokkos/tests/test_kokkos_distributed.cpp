// kokkos.team_tiled's `exchange` tuning (docs/scaling.md, "Overlapped exchange"). Every space lists
// it with cuda.sliced's values, default and wording, and refuses any other value naming them. On the
// host spaces either value gathers the positions before the pull: over forked ranks on Serial (as
// test_kokkos's distributed test) both hand back the single-rank state bit for bit with the same
// all-gathers. On the CUDA space, over thread-ranks sharing the GPU through host-staged collectives
// (as test_cuda_distributed): the overlapped step (owned block first, the others once gathered)
// stays within the verification thresholds of the single run with every workload, uneven blocks and
// an empty trailing block; the all-gather step with one slice equals the single run bit for bit;
// one rank is unchanged by the tuning; the per-step breakdown is reported with the exchange exposed
// or hidden. Without a GPU the CUDA tests skip, saying why.
#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "forked_ranks.hpp"
#include "nbody/communicator.hpp"
#include "nbody/errors.hpp"
#include "nbody/generator.hpp"
#include "nbody/reference.hpp"
#include "nbody/registry.hpp"
#include "test_support.hpp"
#include "thread_ranks.hpp"

namespace nbody {
namespace {

const TuningParameter* tuning_named(const VariantDescriptor& v, const std::string& name) {
    const auto it = std::find_if(v.tunings.begin(), v.tunings.end(), [&](const TuningParameter& t) { return t.name == name; });
    return it == v.tunings.end() ? nullptr : &*it;
}

std::vector<const VariantDescriptor*> team_tiled_spaces() {
    std::vector<const VariantDescriptor*> found;
    for (const VariantDescriptor& v : builtin_registry().all())
        if (v.id.rfind("kokkos.team_tiled@", 0) == 0) found.push_back(&v);
    return found;
}

struct Outcome {
    HostState state;
    std::vector<float> map;
};

Problem problem_of(const Workload& workload, std::size_t n, int d, Distribution distribution = {}) {
    return Problem{.n = n, .d = d, .constants = {}, .workload = workload, .distribution = distribution};
}

// `steps` steps of `initial`: one, then the others (leapfrog carries its first half kick across
// advance() calls, and Euler overlapped carries the pull of the new positions).
Outcome simulate(const VariantDescriptor& v, const Problem& problem, const TuningValues& tuning, const HostState& initial,
                 int steps) {
    auto sim = v.create(problem, Registry::resolve_tuning(v, tuning));
    sim->upload(initial);
    sim->advance(1);
    sim->advance(steps - 1);
    sim->synchronize();
    Outcome out{empty_state(problem.workload, problem.n), {}};
    sim->download(out.state, out.map);
    return out;
}

std::string described(const VariantDescriptor& v, const Workload& w, std::size_t n, int ranks, const TuningValues& tuning) {
    std::string what = v.id + " " + to_string(w) + " N=" + std::to_string(n) + " over " + std::to_string(ranks) + " ranks";
    for (const auto& [name, value] : tuning) what += " " + name + "=" + value;
    return what;
}

TEST(KokkosDistributed, TeamTiledListsTheExchangeTuningOnEverySpaceAsCudaSlicedDoes) {
    const auto spaces = team_tiled_spaces();
    ASSERT_FALSE(spaces.empty()) << "kokkos.team_tiled is registered on every space of this build's Kokkos";
    const VariantDescriptor* sliced = builtin_registry().find("cuda.sliced");
    const TuningParameter* sliced_exchange = sliced != nullptr ? tuning_named(*sliced, "exchange") : nullptr;
    for (const VariantDescriptor* v : spaces) {
        const TuningParameter* exchange = tuning_named(*v, "exchange");
        ASSERT_NE(exchange, nullptr) << v->id;
        EXPECT_EQ(exchange->default_value, "overlap") << v->id;
        EXPECT_EQ(exchange->allowed_values, (std::vector<std::string>{"overlap", "allgather"})) << v->id;
        EXPECT_TRUE(v->distributed) << v->id;
        if (v->runs_on_gpu) {
            if (sliced_exchange != nullptr) {
                EXPECT_EQ(exchange->description, sliced_exchange->description) << v->id;
            }
            EXPECT_NE(exchange->description.find("one rank: no effect"), std::string::npos) << exchange->description;
        } else {
            // The host spaces gather before the pull either way, and say so.
            EXPECT_NE(exchange->description.find("on the CUDA space"), std::string::npos) << exchange->description;
            EXPECT_NE(exchange->description.find("this host space"), std::string::npos) << exchange->description;
            EXPECT_NE(exchange->description.find("no effect"), std::string::npos) << exchange->description;
        }
    }
}

TEST(KokkosDistributed, AnExchangeOtherThanOverlapOrAllgatherIsAUsageErrorNamingBoth) {
    int checked = 0;
    for (const VariantDescriptor* v : team_tiled_spaces()) {
        if (!v->availability().available) continue;
        // Through the registry, as the command line passes it.
        try {
            Registry::resolve_tuning(*v, {{"exchange", "overlapped"}});
            ADD_FAILURE() << v->id << ": exchange=overlapped resolved";
        } catch (const UsageError& e) {
            EXPECT_NE(std::string(e.what()).find("overlap|allgather"), std::string::npos) << e.what();
        }
        // Straight to the variant, past the registry's check.
        TuningValues values = Registry::resolve_tuning(*v, {});
        values["exchange"] = "overlapped";
        try {
            v->create(problem_of(Workload{}, 64, 4), values);
            ADD_FAILURE() << v->id << ": created with exchange=overlapped";
        } catch (const UsageError& e) {
            EXPECT_NE(std::string(e.what()).find("allgather or overlap"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("'overlapped'"), std::string::npos) << e.what();
        }
        for (const char* exchange : {"overlap", "allgather"})
            EXPECT_NO_THROW(v->create(problem_of(Workload{}, 64, 4), Registry::resolve_tuning(*v, {{"exchange", exchange}})))
                << v->id << " exchange=" << exchange;
        ++checked;
    }
    if (checked == 0) GTEST_SKIP() << "no kokkos.team_tiled space can run here";
}

// ---- Host spaces: forked ranks on Serial (forked_ranks.hpp).
constexpr int kForkedSteps = 5;

// Rank `rank`'s run (child process), its state written to its result.
void run_forked_rank(ForkedArea& area, int rank, int ranks, const VariantDescriptor& v, const TuningValues& tuning,
                     const Workload& workload, const HostState& initial) {
    ForkedRankResult& out = area.result[rank];
    try {
        ForkedCommunicator communicator(area, rank, ranks);
        const std::size_t n = std::visit([](const auto& b) { return b.size(); }, initial);
        const Outcome got = simulate(v, problem_of(workload, n, kForkedMapSize, {.host = &communicator, .device = nullptr}),
                                     tuning, initial, kForkedSteps);
        std::visit(
            [&](const auto& b) {
                for (int k = 0; k < b.dim; ++k)
                    for (std::size_t i = 0; i < b.size(); ++i) {
                        out.position[k][i] = b.position(k)[i];
                        out.velocity[k][i] = b.velocity(k)[i];
                    }
            },
            got.state);
        std::copy(got.map.begin(), got.map.end(), out.map);
        out.finished = 1;
    } catch (const std::exception& e) {
        std::snprintf(out.error, sizeof(out.error), "%s", e.what());
    }
}

// `ranks` forked ranks of v against the single-rank run: every position and the map equal on every
// rank, the velocities of its own block equal, and exactly the plain step's all-gathers (positions
// and masses at upload, the positions once a step).
void expect_forked_ranks_equal_single_rank(const VariantDescriptor& v, const TuningValues& tuning,
                                           const Workload& workload, std::size_t n, int ranks) {
    const std::string what = described(v, workload, n, ranks, tuning);
    ASSERT_LE(n, kMaxForkedBodies);
    ASSERT_LE(ranks, kMaxForkedRanks);
    const HostState initial = generate_state(workload, n, 21);
    // The single-rank run first: Kokkos is then started before the fork, in this process.
    const Outcome single = simulate(v, problem_of(workload, n, kForkedMapSize), tuning, initial, kForkedSteps);

    SharedForkedArea shared_area(ranks);
    ForkedArea* const area = &shared_area.area();
    const std::size_t running =
        run_forked_ranks(ranks, [&](int r) { run_forked_rank(*area, r, ranks, v, tuning, workload, initial); });
    EXPECT_EQ(running, 0u) << what << ": ranks still running after 60 s";

    const int dim = workload.dim;
    const BlockDecomposition decomposition(n, ranks);
    for (int r = 0; r < ranks; ++r) {
        const ForkedRankResult& got = area->result[r];
        const std::string rank = what + ", rank " + std::to_string(r);
        if (!got.finished) {
            ADD_FAILURE() << rank << " did not finish: " << got.error;
            continue;
        }
        EXPECT_EQ(got.gathers, (dim + 1) + kForkedSteps * dim) << rank;
        const BodyBlock own = decomposition.block(r);
        std::visit(
            [&](const auto& expected) {
                for (int k = 0; k < dim; ++k)
                    for (std::size_t i = 0; i < n; ++i) {
                        // The same pulls in the same order as on one rank: equal to the last bit.
                        EXPECT_EQ(got.position[k][i], static_cast<double>(expected.position(k)[i]))
                            << rank << " axis " << k << " body " << i;
                        if (i >= own.first && i < own.first + own.count) {
                            EXPECT_EQ(got.velocity[k][i], static_cast<double>(expected.velocity(k)[i]))
                                << rank << " velocity axis " << k << " body " << i;
                        }
                    }
            },
            single.state);
        EXPECT_TRUE(std::equal(single.map.begin(), single.map.end(), got.map)) << rank << ": activity map";
    }
}

TEST(KokkosDistributed, HostSpacesGatherBeforeThePullWithEitherExchange) {
    if (const std::string missing = forked_team_tiled_missing(); !missing.empty()) GTEST_SKIP() << missing;
    const VariantDescriptor* v = builtin_registry().find("kokkos.team_tiled@serial");
    // (N, ranks): even blocks; uneven (34, 34, 32); blocks of 2, 2, 1 and an empty one. Tiles of 32
    // make the blocks start inside a tile; two slices add their partial pulls.
    const std::pair<std::size_t, int> shapes[] = {{100, 2}, {100, 3}, {5, 4}};
    for (const Workload& workload : all_workloads())
        for (const auto& [n, ranks] : shapes)
            for (const char* exchange : {"overlap", "allgather"})
                for (const char* slices : {"1", "2"})
                    expect_forked_ranks_equal_single_rank(
                        *v, {{"tile", "32"}, {"slices", slices}, {"exchange", exchange}}, workload, n, ranks);
}

// ---- The CUDA space: thread-ranks of one process sharing its GPU (and Kokkos' instance), the
// device collectives host-staged (NCCL cannot put two ranks on one GPU).

// Why the CUDA-space checks cannot run here; empty when they can.
std::string cuda_space_missing() {
    const VariantDescriptor* v = builtin_registry().find("kokkos.team_tiled@cuda");
    if (v == nullptr) return "this build's Kokkos has no CUDA space (no kokkos.team_tiled@cuda)";
    if (const Availability a = v->availability(); !a.available) return "kokkos.team_tiled@cuda cannot run here: " + a.reason;
    if (builtin_registry().device_communicator_factory() == nullptr)
        return "this build has no device collectives (the CUDA model makes them)";
    return {};
}

using testing::LocalRanks;
using testing::ThreadCommunicator;
using testing::ThreadRanks;
using testing::on_thread_ranks;

constexpr int kMapSize = 16;
constexpr int kSteps = 3;

struct RankRun {
    Outcome outcome;
    std::optional<Simulation::StepBreakdown> breakdown;
};

// Each rank's run of `ranks` thread-ranks over host-staged device collectives; with
// `breakdown_steps` > 0 each then times that many further steps (after its download).
std::vector<RankRun> run_on_thread_ranks(const VariantDescriptor& v, int ranks, const Workload& workload,
                                         const HostState& initial, const TuningValues& tuning, int breakdown_steps = 0) {
    const std::size_t n = std::visit([](const auto& b) { return b.size(); }, initial);
    std::vector<RankRun> runs(static_cast<std::size_t>(ranks));
    on_thread_ranks(ranks, [&](ThreadRanks& shared, int r) {
        ThreadCommunicator host(shared, r, LocalRanks::all_on_rank_zero);
        auto devices = (*builtin_registry().device_communicator_factory())(host, DeviceCollectives::host_staged);
        const Problem problem = problem_of(workload, n, kMapSize, {.host = &host, .device = devices.get()});
        auto sim = v.create(problem, Registry::resolve_tuning(v, tuning));
        sim->upload(initial);
        sim->advance(1);
        sim->advance(kSteps - 1);
        sim->synchronize();
        RankRun& run = runs[static_cast<std::size_t>(r)];
        run.outcome = Outcome{empty_state(workload, n), {}};
        sim->download(run.outcome.state, run.outcome.map);
        if (breakdown_steps > 0) run.breakdown = sim->step_breakdown(breakdown_steps);
    });
    return runs;
}

Outcome run_single(const VariantDescriptor& v, const Workload& workload, const HostState& initial, const TuningValues& tuning) {
    const std::size_t n = std::visit([](const auto& b) { return b.size(); }, initial);
    return simulate(v, problem_of(workload, n, kMapSize), tuning, initial, kSteps);
}

// Largest |difference| of positions, and of the owned block's velocities.
std::pair<double, double> largest_differences(const HostState& got, const HostState& single, const BodyBlock& own) {
    return std::visit(
        [&](const auto& g) {
            const auto& s = std::get<std::decay_t<decltype(g)>>(single);
            double position = 0, velocity = 0;
            for (int axis = 0; axis < g.dim; ++axis)
                for (std::size_t i = 0; i < g.size(); ++i) {
                    position = std::max(position, std::abs(static_cast<double>(g.position(axis)[i] - s.position(axis)[i])));
                    if (i >= own.first && i < own.first + own.count)
                        velocity = std::max(velocity, std::abs(static_cast<double>(g.velocity(axis)[i] - s.velocity(axis)[i])));
                }
            return std::pair{position, velocity};
        },
        got);
}

// Every position and mass, the owned block's velocities and the map, to the last bit.
void expect_identical(const Outcome& got, const Outcome& single, const BodyBlock& own, const std::string& where) {
    std::visit(
        [&](const auto& g) {
            const auto& s = std::get<std::decay_t<decltype(g)>>(single.state);
            for (int axis = 0; axis < g.dim; ++axis) {
                EXPECT_EQ(g.position(axis), s.position(axis)) << where << ", position axis " << axis;
                for (std::size_t i = own.first; i < own.first + own.count; ++i)
                    ASSERT_EQ(g.velocity(axis)[i], s.velocity(axis)[i]) << where << ", velocity axis " << axis << " body " << i;
            }
            EXPECT_EQ(g.m, s.m) << where;
        },
        got.state);
    EXPECT_EQ(got.map, single.map) << where;
}

std::vector<float> host_map(const HostState& state) {
    return std::visit([](const auto& b) { return normalised_map(host_cell_counts(b, kMapSize), b.size(), kMapSize); }, state);
}

TEST(KokkosDistributed, CudaOverlappedExchangeStaysWithinTheThresholdsOfTheSingleRun) {
    if (const std::string missing = cuda_space_missing(); !missing.empty()) GTEST_SKIP() << missing;
    const VariantDescriptor& v = testing::registered_variant("kokkos.team_tiled@cuda");
    struct Case {
        std::size_t n;
        int ranks;
    };
    // 4099 (prime): every split uneven, several tiles per block; 5 over 4: blocks of 2, 2, 1 and an
    // empty one, whose rank pulls nothing but still gathers.
    for (const Case c : {Case{4099, 2}, Case{4099, 3}, Case{5, 4}})
        for (const Workload& w : all_workloads()) {
            const HostState initial = generate_state(w, c.n);
            const Outcome single = run_single(v, w, initial, {});
            const BlockDecomposition decomposition(c.n, c.ranks);
            for (const char* exchange : {"overlap", "allgather"}) {
                const TuningValues tuning{{"exchange", exchange}};
                const std::vector<RankRun> runs = run_on_thread_ranks(v, c.ranks, w, initial, tuning);
                // docs/verification.md's thresholds (as test_cuda_distributed's): float32 1e-4 / 1e-6, float64 1e-12.
                const bool fp32 = w.precision == Precision::fp32;
                const double position_limit = fp32 ? 1e-4 : 1e-12, velocity_limit = fp32 ? 1e-6 : 1e-12;
                for (int r = 0; r < c.ranks; ++r) {
                    const Outcome& got = runs[static_cast<std::size_t>(r)].outcome;
                    const std::string where = described(v, w, c.n, c.ranks, tuning) + ", rank " + std::to_string(r);
                    const auto [position, velocity] = largest_differences(got.state, single.state, decomposition.block(r));
                    EXPECT_LE(position, position_limit) << where;
                    EXPECT_LE(velocity, velocity_limit) << where;
                    // Every rank counts every body, its own and the gathered ones.
                    EXPECT_EQ(got.map, host_map(got.state)) << where;
                }
            }
        }
}

TEST(KokkosDistributed, CudaAllGatherWithOneSliceEqualsTheSingleRunBitForBitAndOneRankIgnoresTheExchange) {
    if (const std::string missing = cuda_space_missing(); !missing.empty()) GTEST_SKIP() << missing;
    const VariantDescriptor& v = testing::registered_variant("kokkos.team_tiled@cuda");
    struct Case {
        std::size_t n;
        int ranks;
    };
    for (const Case c : {Case{1001, 2}, Case{1001, 3}, Case{4, 3}})
        for (const Workload& w : all_workloads()) {
            const HostState initial = generate_state(w, c.n);
            const TuningValues one_slice{{"slices", "1"}, {"exchange", "allgather"}};
            const Outcome single = run_single(v, w, initial, one_slice);
            // One rank: the tuning changes nothing.
            expect_identical(run_single(v, w, initial, {{"slices", "1"}, {"exchange", "overlap"}}), single, BodyBlock{0, c.n},
                             described(v, w, c.n, 1, {{"exchange", "overlap"}}));
            const std::vector<RankRun> runs = run_on_thread_ranks(v, c.ranks, w, initial, one_slice);
            const BlockDecomposition decomposition(c.n, c.ranks);
            for (int r = 0; r < c.ranks; ++r)
                expect_identical(runs[static_cast<std::size_t>(r)].outcome, single, decomposition.block(r),
                                 described(v, w, c.n, c.ranks, one_slice) + ", rank " + std::to_string(r));
        }
}

TEST(KokkosDistributed, CudaStepBreakdownShowsTheAllgatherAndNoneWhenOverlapped) {
    if (const std::string missing = cuda_space_missing(); !missing.empty()) GTEST_SKIP() << missing;
    const VariantDescriptor& v = testing::registered_variant("kokkos.team_tiled@cuda");
    constexpr int kBreakdownSteps = 4;
    const Workload w{};
    constexpr std::size_t kN = 4099;
    const HostState initial = generate_state(w, kN);
    // One rank: the steps timed, nothing exchanged.
    {
        auto sim = v.create(problem_of(w, kN, kMapSize), Registry::resolve_tuning(v, {}));
        sim->upload(initial);
        sim->advance(2);
        const std::optional<Simulation::StepBreakdown> one = sim->step_breakdown(kBreakdownSteps);
        ASSERT_TRUE(one.has_value()) << v.id << " reports no breakdown on one rank";
        EXPECT_EQ(one->steps, kBreakdownSteps);
        EXPECT_GT(one->step_s, 0.0);
        EXPECT_EQ(one->exposed_communication_s, 0.0);
    }
    // The all-gather (device -> host, host exchange, host -> device) holds up the step.
    for (const RankRun& run : run_on_thread_ranks(v, 2, w, initial, {{"exchange", "allgather"}}, kBreakdownSteps)) {
        ASSERT_TRUE(run.breakdown.has_value());
        const Simulation::StepBreakdown& b = *run.breakdown;
        EXPECT_EQ(b.steps, kBreakdownSteps);
        EXPECT_GT(b.step_s, 0.0);
        EXPECT_GT(b.exposed_communication_s, 0.0);
        EXPECT_LE(b.exposed_communication_s, b.step_s);
    }
    // Overlapped, the exchange shares the GPU with the pull: no split is reported.
    for (const RankRun& run : run_on_thread_ranks(v, 2, w, initial, {{"exchange", "overlap"}}, kBreakdownSteps))
        EXPECT_FALSE(run.breakdown.has_value());
}

TEST(KokkosDistributed, HostSpacesReportNoStepBreakdown) {
    // The harness then prints none and records none for them (their gathers block the host).
    int checked = 0;
    for (const VariantDescriptor* v : team_tiled_spaces()) {
        if (v->runs_on_gpu || !v->availability().available) continue;
        auto sim = v->create(problem_of(Workload{}, 64, 4), Registry::resolve_tuning(*v, {}));
        sim->upload(generate_state(Workload{}, 64));
        EXPECT_FALSE(sim->step_breakdown(1).has_value()) << v->id;
        ++checked;
    }
    if (checked == 0) GTEST_SKIP() << "no host space of kokkos.team_tiled can run here";
}

}  // namespace
}  // namespace nbody
