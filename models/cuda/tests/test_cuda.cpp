// The CUDA variants' own promises. Without a GPU: every ladder step is listed as a CUDA variant,
// unavailable with a reason; the variants from cuda.tiled up claim every workload and the early
// rungs only 2d/fp32/euler; a workload or tuning value a variant does not run is a usage error
// before any device call. With a GPU: every variant on every workload it claims against the
// host reference (positions and velocities; double for float32 workloads, long double for
// float64), maps equal to the host's count of the returned positions, every kernel compiled for
// the other workloads runs, the probe reads the device, every activity-map strategy counts the
// same cells, and the deterministic variants repeat bit for bit. The rule of slices=auto, host code.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <unordered_map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

#include "activity_map.cuh"
#include "slice_count.hpp"
#include "nbody/errors.hpp"
#include "nbody/generator.hpp"
#include "nbody/reference.hpp"
#include "nbody/registry.hpp"
#include "test_support.hpp"

namespace nbody {
namespace {

using testing::registered_variant;

const std::vector<std::string> kLadder = {"cuda.baseline_aos", "cuda.rsqrt",        "cuda.soa_ldg", "cuda.tiled",
                                          "cuda.nxn_atomic",   "cuda.force_matrix", "cuda.tiled2d", "cuda.float4",
                                          "cuda.unrolled",     "cuda.fastmath",     "cuda.sliced",
                                          "cuda.persistent"};
// The rungs that run every workload; the others run 2d/fp32/euler only.
const std::vector<std::string> kEveryWorkload = {"cuda.tiled",    "cuda.float4",  "cuda.unrolled",
                                                 "cuda.fastmath", "cuda.sliced",  "cuda.tiled2d",
                                                 "cuda.persistent"};
const std::vector<std::string> kCanonicalOnly = {"cuda.baseline_aos", "cuda.rsqrt", "cuda.soa_ldg", "cuda.nxn_atomic",
                                                 "cuda.force_matrix"};

constexpr Workload kCanonical{};

bool gpu_present() { return registered_variant("cuda.tiled").availability().available; }

std::unique_ptr<Simulation> create(const std::string& id, const TuningValues& tuning, std::size_t n, int d,
                                   const Workload& workload = kCanonical) {
    const VariantDescriptor& v = registered_variant(id);
    return v.create(Problem{.n = n, .d = d, .constants = {}, .workload = workload, .distribution = {}}, Registry::resolve_tuning(v, tuning));
}

struct Outcome {
    HostState state;
    std::vector<float> map;
};

Outcome simulate(const std::string& id, const TuningValues& tuning, std::size_t n, int d, int steps,
                 const Workload& workload = kCanonical) {
    auto sim = create(id, tuning, n, d, workload);
    sim->upload(generate_state(workload, n));
    sim->advance(steps);
    sim->synchronize();
    Outcome out{empty_state(workload, n), {}};
    sim->download(out.state, out.map);
    return out;
}

const Bodies& fp32(const Outcome& o) { return std::get<Bodies>(o.state); }

// Every field of two states equal, bit for bit.
bool identical(const HostState& a, const HostState& b) {
    if (a.index() != b.index()) return false;
    return std::visit(
        [&b](const auto& first) {
            const auto& second = std::get<std::decay_t<decltype(first)>>(b);
            return first.dim == second.dim && first.x == second.x && first.y == second.y && first.z == second.z &&
                   first.vx == second.vx && first.vy == second.vy && first.vz == second.vz && first.m == second.m;
        },
        a);
}

// The largest |q - q_ref| over every axis of every body, in long double, for q = position(axis)
// or velocity(axis).
template <class Real, class Ref, class Field>
long double max_error(const BodiesT<Real>& state, const BodiesT<Ref>& reference, Field field) {
    long double worst = 0;
    for (int axis = 0; axis < state.dim; ++axis)
        for (std::size_t i = 0; i < state.size(); ++i)
            worst = std::max(worst, std::abs(static_cast<long double>(field(state, axis)[i]) -
                                             static_cast<long double>(field(reference, axis)[i])));
    return worst;
}

struct Errors {
    long double position = 0, velocity = 0;
};

// The host's map of a state's own positions.
std::vector<float> host_map(const HostState& state, int d) {
    return std::visit([d](const auto& b) { return normalised_map(host_cell_counts(b, d), b.size(), d); }, state);
}

// Thresholds (SPEC §5, docs/verification.md): float32 as the float32 tests use; float64 far below
// any float32 rounding on the way and far above the float64 sums' rounding (the measured errors
// are in docs/performance-cuda.md). Velocities too: after one Euler step from rest the positions
// have not moved yet.
Errors thresholds(Precision precision) {
    if (precision == Precision::fp32) return {.position = 1e-4, .velocity = 1e-6};
    return {.position = 1e-12, .velocity = 1e-12};
}

// The reference of the generated state after `steps` steps, in double (float32 workloads) or
// long double (float64), computed once per workload, N and step count.
template <class Ref>
const BodiesT<Ref>& reference_after(const Workload& w, std::size_t n, int steps) {
    static std::map<std::tuple<Workload, std::size_t, int>, BodiesT<Ref>> cache;
    const auto key = std::make_tuple(w, n, steps);
    auto it = cache.find(key);
    if (it == cache.end()) {
        BodiesT<Ref> state = std::visit([](const auto& b) { return BodiesT<Ref>::converted_from(b); }, generate_state(w, n));
        reference_advance(state, PhysicsConstants{}, w.integrator, steps);
        it = cache.emplace(key, std::move(state)).first;
    }
    return it->second;
}

template <class Real, class Ref>
Errors errors_of(const BodiesT<Real>& state, const BodiesT<Ref>& reference) {
    return {.position = max_error(state, reference, [](const auto& b, int axis) -> const auto& { return b.position(axis); }),
            .velocity = max_error(state, reference, [](const auto& b, int axis) -> const auto& { return b.velocity(axis); })};
}

// Worst errors of a downloaded state against the reference of its workload.
Errors errors_against_reference(const HostState& state, const Workload& w, int steps) {
    if (w.precision == Precision::fp32)
        return errors_of(std::get<Bodies>(state), reference_after<double>(w, state_size(state), steps));
    return errors_of(std::get<BodiesT<double>>(state), reference_after<long double>(w, state_size(state), steps));
}

void expect_within_thresholds(const HostState& state, const Workload& w, int steps, Errors* worst = nullptr) {
    const Errors e = errors_against_reference(state, w, steps), limit = thresholds(w.precision);
    EXPECT_LE(e.position, limit.position) << "position error after " << steps << " steps";
    EXPECT_LE(e.velocity, limit.velocity) << "velocity error after " << steps << " steps";
    if (worst != nullptr) {
        worst->position = std::max(worst->position, e.position);
        worst->velocity = std::max(worst->velocity, e.velocity);
    }
}

// The H100's and H200's grid (132 SMs) with 2 resident blocks (3D float64, 4 bodies per thread) or
// 5 (2D float32): 32 waves are 8448 or 21120 blocks. One GPU at N = 262144 in 2D float32 ran 1.2 %
// faster with the 128 slices these give than with the 32 of eight waves (docs/performance-cuda.md).
TEST(CudaSliceCount, ThirtyTwoWavesInAPowerOfTwoAtMostOnePerTile) {
    using cuda::slice_count;
    EXPECT_EQ(slice_count(256, 1024, 132, 5), 128u);  // 2D float32 at 262144: 82.5 for 32 waves
    EXPECT_EQ(slice_count(256, 1024, 132, 2), 64u);   // 3D float64 at 262144: 33
    EXPECT_EQ(slice_count(1024, 4096, 132, 5), 32u);  // 2^20: 20.6
    EXPECT_EQ(slice_count(4096, 16384, 132, 2), 4u);  // 2^22 in 3D float64: 2.1
    EXPECT_EQ(slice_count(16384, 65536, 132, 2), 1u);  // more body blocks than 32 waves need
    // Few body blocks (a rank of 4 GPUs): up to one slice per tile of bodies j.
    EXPECT_EQ(slice_count(64, 256, 132, 2), 256u);  // N = 65536: 132 for 32 waves, 256 tiles
    EXPECT_EQ(slice_count(16, 64, 132, 5), 64u);    // a rank of 4096 of 16384 bodies
    EXPECT_EQ(slice_count(64, 1024, 132, 5), 512u);  // a rank of 65536 of 262144 bodies: 330
    EXPECT_EQ(slice_count(1, 1, 132, 2), 1u);
    EXPECT_EQ(slice_count(0, 0, 132, 0), 1u);
}

// 4 bodies per thread from 8192 bodies i (8 blocks of 1024), 1 below: a rank of 4 GPUs at N = 16384
// holds 4096 (docs/scaling.md).
TEST(CudaBodiesPerThread, FourFromEightBlocksOfBodiesOneBelow) {
    EXPECT_EQ(cuda::auto_bodies_per_thread(4096), 1);
    EXPECT_EQ(cuda::auto_bodies_per_thread(8191), 1);
    EXPECT_EQ(cuda::auto_bodies_per_thread(8192), 4);
    EXPECT_EQ(cuda::auto_bodies_per_thread(std::size_t{1} << 22), 4);
    EXPECT_EQ(Registry::resolve_tuning(registered_variant("cuda.sliced"), {}).at("bodies_per_thread"), "auto");
}

// The owned block's pull over ranks: 64-thread blocks with one body per thread, the tuned block
// with more (docs/scaling.md).
TEST(CudaOwnedPartBlock, SixtyFourThreadsWithOneBodyPerThreadElseTheTunedBlock) {
    EXPECT_EQ(cuda::owned_part_block(256, 1), 64u);
    EXPECT_EQ(cuda::owned_part_block(1024, 1), 64u);
    EXPECT_EQ(cuda::owned_part_block(32, 1), 32u);
    EXPECT_EQ(cuda::owned_part_block(256, 2), 256u);
    EXPECT_EQ(cuda::owned_part_block(256, 4), 256u);
}

TEST(CudaRegistry, EveryLadderStepIsACudaVariant) {
    for (const auto& id : kLadder) {
        const VariantDescriptor* v = builtin_registry().find(id);
        ASSERT_NE(v, nullptr) << id;
        EXPECT_EQ(v->backend, "cuda") << id;
        EXPECT_EQ(v->execution_space, "cuda") << id;
        EXPECT_TRUE(v->runs_on_gpu) << id;
        EXPECT_TRUE(std::any_of(v->tunings.begin(), v->tunings.end(), [](const TuningParameter& t) { return t.name == "map"; }))
            << id << " has no activity-map tuning";
    }
    EXPECT_NE(registered_variant("cuda.force_matrix").max_n, 0u) << "the N x N matrix needs a cap";
}

TEST(CudaRegistry, AvailabilityMatchesTheProbe) {
    const Availability a = registered_variant("cuda.tiled").availability();
    const auto gpu = builtin_registry().gpu();
    if (!a.available) {
        EXPECT_EQ(a.reason.rfind("no CUDA device", 0), 0u) << a.reason;
        EXPECT_FALSE(gpu.has_value());
        return;
    }
    ASSERT_TRUE(gpu.has_value());
    EXPECT_FALSE(gpu->name.empty());
    EXPECT_GT(gpu->sm_count, 0);
    EXPECT_GT(gpu->sm_clock_hz, 1e8);
    EXPECT_GE(gpu->fp32_lanes_per_sm, 64);
    if (gpu->compute_capability == "9.0") {
        EXPECT_EQ(gpu->fp32_lanes_per_sm, 128);
    }
    EXPECT_EQ(builtin_registry().build_facts().count("cuda_runtime"), 1u);
}

TEST(CudaWorkloads, TiledRungsClaimEveryWorkloadAndEarlyRungsTheCanonicalOne) {
    ASSERT_EQ(kEveryWorkload.size() + kCanonicalOnly.size(), kLadder.size());
    for (const auto& id : kEveryWorkload)
        for (const Workload& w : all_workloads()) EXPECT_TRUE(registered_variant(id).workloads.supports(w)) << id << " " << to_string(w);
    for (const auto& id : kCanonicalOnly)
        for (const Workload& w : all_workloads())
            EXPECT_EQ(registered_variant(id).workloads.supports(w), w == kCanonical) << id << " " << to_string(w);
}

TEST(CudaWorkloads, AnUnsupportedWorkloadIsAUsageErrorBeforeAnyDeviceCall) {
    for (const auto& id : kCanonicalOnly) {
        for (const Workload& w : all_workloads()) {
            if (w == kCanonical) continue;
            EXPECT_THROW(require_workload(registered_variant(id), w), UsageError) << id << " " << to_string(w);
            // create itself refuses too (no GPU needed: nothing reaches the device).
            try {
                create(id, {}, 64, 10, w);
                ADD_FAILURE() << id << " created a simulation of " << to_string(w);
            } catch (const UsageError& e) {
                const std::string message = e.what();
                EXPECT_NE(message.find(id), std::string::npos) << message;
                EXPECT_NE(message.find(to_string(w)), std::string::npos) << message;
            }
        }
    }
}

TEST(CudaTunings, MapsThatDoNotFitAreUsageErrorsBeforeAnyDeviceCall) {
    // 111 * 111 * 4 bytes > 48 KiB of shared memory; 110 * 110 * 4 fits.
    EXPECT_THROW(create("cuda.tiled", {{"map", "shared"}}, 64, 111), UsageError);
    EXPECT_THROW(create("cuda.baseline_aos", {{"map", "shared"}}, 64, 1000), UsageError);
    EXPECT_THROW(create("cuda.tiled2d", {{"width", "512"}, {"length", "4"}}, 64, 10), UsageError);
    EXPECT_THROW(create("cuda.unrolled", {{"unroll", "3"}}, 64, 10), UsageError);
}

TEST(CudaTunings, KernelTuningsNotCompiledForAWorkloadAreUsageErrorsBeforeAnyDeviceCall) {
    const Workload three_d{.dim = 3};
    const Workload fp64_leapfrog{.dim = 2, .precision = Precision::fp64, .integrator = Integrator::leapfrog};
    for (const char* id : {"cuda.unrolled", "cuda.fastmath", "cuda.sliced"}) {
        for (const Workload& w : {three_d, fp64_leapfrog}) {
            try {
                create(id, {{"unroll", "2"}}, 64, 10, w);
                ADD_FAILURE() << id << " accepted unroll=2 for " << to_string(w);
            } catch (const UsageError& e) {
                const std::string message = e.what();
                EXPECT_NE(message.find("unroll=2"), std::string::npos) << message;
                EXPECT_NE(message.find(to_string(w)), std::string::npos) << message;
                EXPECT_NE(message.find("8|16"), std::string::npos) << message;
            }
        }
    }
    EXPECT_THROW(create("cuda.tiled2d", {{"unroll", "8"}}, 64, 10, three_d), UsageError);
    EXPECT_THROW(create("cuda.tiled2d", {{"unroll", "2"}}, 64, 10, fp64_leapfrog), UsageError);
}

// Every variant on every workload it claims: N = 1000 and 4099 (not multiples of any block, tile
// or chunk), D = 10 and 257, after 1 and 10 steps of one simulation.
class CudaAgainstReference : public ::testing::TestWithParam<std::tuple<std::string, Workload>> {};

TEST_P(CudaAgainstReference, PositionsAndMaps) {
    if (!gpu_present()) GTEST_SKIP() << registered_variant("cuda.tiled").availability().reason;
    const auto& [id, w] = GetParam();
    Errors worst[2];  // after 1 and after 10 steps
    for (std::size_t n : {1000u, 4099u}) {
        for (int d : {10, 257}) {
            SCOPED_TRACE(id + " " + to_string(w) + " N=" + std::to_string(n) + " D=" + std::to_string(d));
            auto sim = create(id, {}, n, d, w);
            sim->upload(generate_state(w, n));
            int done = 0;
            for (int steps : {1, 10}) {
                sim->advance(steps - done);
                done = steps;
                HostState state = empty_state(w, n);
                std::vector<float> map;
                sim->download(state, map);
                ASSERT_EQ(state_dim(state), w.dim);
                expect_within_thresholds(state, w, steps, &worst[steps == 1 ? 0 : 1]);
                EXPECT_EQ(map, host_map(state, d)) << "after " << steps << " steps";
            }
        }
    }
    // The measured errors, for docs/performance-cuda.md.
    std::printf("[ error    ] %-17s %-17s position %.2Le %.2Le velocity %.2Le %.2Le (1, 10 steps)\n", id.c_str(),
                to_string(w).c_str(), worst[0].position, worst[1].position, worst[0].velocity, worst[1].velocity);
}

std::vector<std::tuple<std::string, Workload>> claimed_workloads() {
    std::vector<std::tuple<std::string, Workload>> out;
    for (const auto& id : kLadder)
        for (const Workload& w : all_workloads())
            if (registered_variant(id).workloads.supports(w)) out.emplace_back(id, w);
    return out;
}

std::string test_name(const ::testing::TestParamInfo<std::tuple<std::string, Workload>>& info) {
    std::string name = std::get<0>(info.param).substr(5) + "_" + to_string(std::get<1>(info.param));
    std::replace(name.begin(), name.end(), '/', '_');
    return name;
}

INSTANTIATE_TEST_SUITE_P(EveryClaimedWorkload, CudaAgainstReference, ::testing::ValuesIn(claimed_workloads()), test_name);

// Each kernel compiled for a workload other than 2d/fp32 runs and agrees with the reference:
// every offered unroll x bodies_per_thread, tiled2d's unroll values and library reduction, the
// slices, the block sizes of the one-body-per-thread kernels. N = 300: a partial last tile for
// every block size, small enough for compute-sanitizer (one workload per test).
class CudaKernelsOfOtherWorkloads : public ::testing::TestWithParam<Workload> {};

TEST_P(CudaKernelsOfOtherWorkloads, EveryCompiledKernelRuns) {
    if (!gpu_present()) GTEST_SKIP() << registered_variant("cuda.tiled").availability().reason;
    const Workload w = GetParam();
    const std::size_t n = 300;
    const int steps = 2;
    std::vector<std::pair<std::string, TuningValues>> runs;
    for (const char* id : {"cuda.unrolled", "cuda.fastmath", "cuda.sliced"})
        for (const char* unroll : {"8", "16"})
            for (const char* bodies : {"1", "2", "4"})
                runs.push_back({id, {{"unroll", unroll}, {"bodies_per_thread", bodies}}});
    runs.push_back({"cuda.sliced", {{"slices", "4"}, {"map", "shared"}}});
    runs.push_back({"cuda.unrolled", {{"slices", "auto"}, {"map", "cub"}}});
    for (const char* unroll : {"1", "4"}) runs.push_back({"cuda.tiled2d", {{"unroll", unroll}, {"chunk", "256"}}});
    runs.push_back({"cuda.tiled2d", {{"reduction", "cub"}, {"width", "32"}, {"length", "8"}}});
    runs.push_back({"cuda.tiled2d", {{"chunk", "4096"}, {"width", "256"}, {"length", "4"}}});
    // 512: float64 needs up to 80 registers per thread, too many for 1024-thread blocks.
    for (const char* block : {"32", "512"}) runs.push_back({"cuda.persistent", {{"block_size", block}}});
    for (const char* block : {"32", "1024"}) {
        runs.push_back({"cuda.tiled", {{"block_size", block}}});
        runs.push_back({"cuda.float4", {{"block_size", block}}});
    }
    for (const auto& [id, tuning] : runs) {
        std::string label = id;
        for (const auto& [name, value] : tuning) label += " " + name + "=" + value;
        SCOPED_TRACE(label);
        const Outcome out = simulate(id, tuning, n, 16, steps, w);
        expect_within_thresholds(out.state, w, steps);
        EXPECT_EQ(out.map, host_map(out.state, 16));
    }
}

INSTANTIATE_TEST_SUITE_P(
    Workloads, CudaKernelsOfOtherWorkloads,
    ::testing::Values(Workload{.dim = 3, .precision = Precision::fp32, .integrator = Integrator::euler},
                      Workload{.dim = 2, .precision = Precision::fp64, .integrator = Integrator::leapfrog},
                      Workload{.dim = 3, .precision = Precision::fp64, .integrator = Integrator::leapfrog}),
    [](const ::testing::TestParamInfo<Workload>& info) {
        std::string name = to_string(info.param);
        std::replace(name.begin(), name.end(), '/', '_');
        return name;
    });

// Four bodies per thread in 3D float64 need more registers than 1024-thread blocks allow on
// some GPUs: then the variant refuses the block size (UsageError naming the registers), it
// never fails at launch.
TEST(CudaWorkloads, ABlockTooLargeForTheKernelsRegistersIsAUsageError) {
    if (!gpu_present()) GTEST_SKIP() << registered_variant("cuda.tiled").availability().reason;
    const Workload w{.dim = 3, .precision = Precision::fp64, .integrator = Integrator::euler};
    try {
        const Outcome out = simulate("cuda.sliced", {{"block_size", "1024"}}, 1100, 10, 1, w);
        expect_within_thresholds(out.state, w, 1);
        std::printf("[ note     ] cuda.sliced 3d/fp64 runs 1024-thread blocks with 4 bodies per thread\n");
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("registers"), std::string::npos) << e.what();
        std::printf("[ note     ] %s\n", e.what());
    }
}

TEST(CudaMap, EveryStrategyCountsTheSameCells) {
    if (!gpu_present()) GTEST_SKIP() << registered_variant("cuda.tiled").availability().reason;
    const std::size_t n = 1000;  // not a multiple of any block
    const int d = 37;
    const Outcome atomics = simulate("cuda.tiled", {{"map", "atomic"}}, n, d, 2);
    for (const char* strategy : {"shared", "cub", "incremental"}) {
        const Outcome other = simulate("cuda.tiled", {{"map", strategy}}, n, d, 2);
        EXPECT_EQ(fp32(other).x, fp32(atomics).x) << strategy;
        EXPECT_EQ(other.map, atomics.map) << strategy;
    }
    // And the same as the host count of the variant's own positions.
    EXPECT_EQ(atomics.map, host_map(atomics.state, d));
}

// Bodies on random walks over [-0.25, 1.25) x [y_low, y_high) (so that they leave the unit square
// and come back), some jumping far, some standing still; each step's cells as the kernels compute them.
class CellWalk {
public:
    CellWalk(std::size_t n, int d, float y_low, float y_high, unsigned seed)
        : d_(d), y_low_(y_low), y_high_(y_high), random_(seed), x_(n), y_(n), cells_(n) {
        std::uniform_real_distribution<float> start(0.0f, 1.0f);
        for (std::size_t i = 0; i < n; ++i) {
            x_[i] = start(random_);
            y_[i] = y_low + (y_high - y_low) * start(random_);
        }
        update_cells();
    }
    void step() {
        std::uniform_real_distribution<float> unit(0.0f, 1.0f);
        std::normal_distribution<float> small(0.0f, 1.0f / static_cast<float>(4 * d_));
        for (std::size_t i = 0; i < x_.size(); ++i) {
            const float kind = unit(random_);
            if (kind < 0.3f) continue;  // stays
            if (kind < 0.35f) {         // jumps anywhere, inside or out
                x_[i] = -0.25f + 1.5f * unit(random_);
                y_[i] = y_low_ + (y_high_ - y_low_) * unit(random_);
                continue;
            }
            x_[i] = wrap(x_[i] + small(random_), -0.25f, 1.25f);
            y_[i] = wrap(y_[i] + small(random_), y_low_, y_high_);
        }
        update_cells();
    }
    const std::vector<int>& cells() const { return cells_; }

private:
    static float wrap(float v, float low, float high) { return v < low ? high - (low - v) : v >= high ? low + (v - high) : v; }
    void update_cells() {
        for (std::size_t i = 0; i < x_.size(); ++i) cells_[i] = activity_cell(x_[i], y_[i], d_);
    }
    int d_;
    float y_low_, y_high_;
    std::mt19937 random_;
    std::vector<float> x_, y_;
    std::vector<int> cells_;
};

Problem map_problem(std::size_t n, int d) { return Problem{.n = n, .d = d, .constants = {}, .workload = kCanonical, .distribution = {}}; }

// The incremental map against a full recount of the same cells on the device (map=atomic) and
// the host's count, bit for bit, after every one of many steps.
TEST(CudaMap, IncrementalEqualsAFullRecountBitForBitOnRandomWalks) {
    if (!gpu_present()) GTEST_SKIP() << registered_variant("cuda.tiled").availability().reason;
    for (const auto& [n, d] : {std::pair<std::size_t, int>{3001, 1}, {3001, 7}, {20000, 300}, {1000, 4099}}) {
        SCOPED_TRACE("N=" + std::to_string(n) + " D=" + std::to_string(d));
        CellWalk walk(n, d, -0.25f, 1.25f, static_cast<unsigned>(n + d));
        cuda::ActivityMap incremental(map_problem(n, d), "incremental"), recount(map_problem(n, d), "atomic");
        cuda::DeviceBuffer<int> cells(n);
        cells.copy_from_host(walk.cells().data());
        incremental.reset(cells.data());
        std::vector<float> got, want;
        const int steps = d > 1000 ? 40 : 300;  // a D = 4099 map is 67 MB a copy
        for (int step = 1; step <= steps; ++step) {
            walk.step();
            cells.copy_from_host(walk.cells().data());
            incremental.build(cells.data(), cudaStreamPerThread);
            recount.build(cells.data(), cudaStreamPerThread);
            incremental.copy_to_host(got);
            recount.copy_to_host(want);
            ASSERT_EQ(got, want) << "step " << step;
            std::vector<std::int64_t> counts(static_cast<std::size_t>(d) * d, 0);
            for (int c : walk.cells())
                if (c >= 0) ++counts[static_cast<std::size_t>(c)];
            ASSERT_EQ(got, normalised_map(counts, n, d)) << "step " << step;
        }
    }
}

// The largest D the suite accepts (kMaxMapSize: 2.1e9 cells, 8.6 GB of counts and 8.6 GB of map),
// the walk over the whole square and out of it, so the last rows' indices are near 2^31.
TEST(CudaMap, IncrementalEqualsTheHostCountAtTheLargestD) {
    if (!gpu_present()) GTEST_SKIP() << registered_variant("cuda.tiled").availability().reason;
    const std::size_t n = 4000;
    const int d = kMaxMapSize;
    CellWalk walk(n, d, -0.1f, 1.1f, 14);
    cuda::ActivityMap incremental(map_problem(n, d), "incremental");
    cuda::DeviceBuffer<int> cells(n);
    cells.copy_from_host(walk.cells().data());
    incremental.reset(cells.data());
    for (int step = 0; step < 200; ++step) {
        walk.step();
        cells.copy_from_host(walk.cells().data());
        incremental.build(cells.data(), cudaStreamPerThread);
    }
    std::unordered_map<int, std::int64_t> counts;
    for (int c : walk.cells())
        if (c >= 0) ++counts[c];
    const float scale = activity_scale(n, d);
    std::vector<float> got;
    incremental.copy_to_host(got);
    ASSERT_EQ(got.size(), static_cast<std::size_t>(d) * static_cast<std::size_t>(d));
    std::size_t wrong = 0, occupied = 0;
    for (std::size_t c = 0; c < got.size(); ++c) {
        if (got[c] == 0.0f) continue;
        const auto it = counts.find(static_cast<int>(c));
        if (it == counts.end() || got[c] != static_cast<float>(it->second) * scale) ++wrong;
        ++occupied;
    }
    EXPECT_EQ(wrong, 0u);
    EXPECT_EQ(occupied, counts.size());
}

TEST(CudaDeterminism, VariantsWithoutAtomicsRepeatBitForBit) {
    if (!gpu_present()) GTEST_SKIP() << registered_variant("cuda.tiled").availability().reason;
    const Workload three_d_fp64_leapfrog{.dim = 3, .precision = Precision::fp64, .integrator = Integrator::leapfrog};
    for (const Workload& w : {kCanonical, three_d_fp64_leapfrog}) {
        for (const char* id : {"cuda.tiled", "cuda.tiled2d", "cuda.fastmath", "cuda.unrolled", "cuda.persistent"}) {
            const Outcome first = simulate(id, {}, 777, 8, 3, w);
            const Outcome second = simulate(id, {}, 777, 8, 3, w);
            EXPECT_TRUE(identical(first.state, second.state)) << id << " " << to_string(w);
            EXPECT_EQ(first.map, second.map) << id << " " << to_string(w);
        }
    }
}

// advance(k) replays graphs of several steps, and one-step graphs for the rest; k one-step calls
// replay the one-step graph k times. Both are the same kernels on the same buffers.
TEST(CudaGraphs, ManyStepsInOneCallEqualOneStepAtATimeBitForBit) {
    if (!gpu_present()) GTEST_SKIP() << registered_variant("cuda.tiled").availability().reason;
    const Workload three_d_fp64_leapfrog{.dim = 3, .precision = Precision::fp64, .integrator = Integrator::leapfrog};
    constexpr int kSteps = 35;  // two graphs of 16 steps and three of one
    for (const Workload& w : {kCanonical, three_d_fp64_leapfrog}) {
        for (const char* id : {"cuda.tiled", "cuda.fastmath"}) {
            const Outcome together = simulate(id, {}, 777, 8, kSteps, w);
            auto sim = create(id, {}, 777, 8, w);
            sim->upload(generate_state(w, 777));
            for (int s = 0; s < kSteps; ++s) sim->advance(1);
            Outcome one_by_one{empty_state(w, 777), {}};
            sim->download(one_by_one.state, one_by_one.map);
            EXPECT_TRUE(identical(together.state, one_by_one.state)) << id << " " << to_string(w);
            EXPECT_EQ(together.map, one_by_one.map) << id << " " << to_string(w);
        }
    }
}

// step_breakdown runs steps of the simulation from a graph of its own (the one with timing
// events): the state after it is that of as many more steps, and each step is timed.
TEST(CudaGraphs, TheBreakdownsTimedStepsAreStepsOfTheSimulation) {
    if (!gpu_present()) GTEST_SKIP() << registered_variant("cuda.tiled").availability().reason;
    const Outcome plain = simulate("cuda.tiled", {}, 777, 8, 8);
    auto sim = create("cuda.tiled", {}, 777, 8);
    sim->upload(generate_state(kCanonical, 777));
    sim->advance(5);
    const std::optional<Simulation::StepBreakdown> breakdown = sim->step_breakdown(3);
    ASSERT_TRUE(breakdown.has_value());
    EXPECT_EQ(breakdown->steps, 3);
    EXPECT_GT(breakdown->step_s, 0.0);
    Outcome timed{empty_state(kCanonical, 777), {}};
    sim->download(timed.state, timed.map);
    EXPECT_TRUE(identical(plain.state, timed.state));
    EXPECT_EQ(plain.map, timed.map);
}

TEST(CudaTiling, TileRemaindersMatchTheUntiledKernel) {
    if (!gpu_present()) GTEST_SKIP() << registered_variant("cuda.tiled").availability().reason;
    // N = 1025: the last tile holds one real body. Tiled (zero-mass padding) and untiled sum the
    // same terms, so they agree to rounding.
    const Outcome untiled = simulate("cuda.soa_ldg", {}, 1025, 10, 1);
    for (const char* block : {"32", "256", "1024"}) {
        const Outcome tiled = simulate("cuda.tiled", {{"block_size", block}}, 1025, 10, 1);
        for (std::size_t i = 0; i < 1025; ++i)
            ASSERT_NEAR(fp32(tiled).vx[i], fp32(untiled).vx[i], 1e-6) << block << " body " << i;
    }
}

}  // namespace
}  // namespace nbody
