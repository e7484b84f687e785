// The CUDA variants' own promises. Without a GPU: every ladder step is listed as a CUDA variant,
// unavailable with a reason, and tunings that cannot fit the problem are usage errors before any
// device call. With a GPU: the probe reads the device, every activity-map strategy counts the
// same cells, and the deterministic variants repeat bit for bit. (Agreement of every variant and
// tuning value with the float64 reference is test_variants'.)
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "nbody/errors.hpp"
#include "nbody/generator.hpp"
#include "nbody/reference.hpp"
#include "nbody/registry.hpp"

namespace nbody {
namespace {

const std::vector<std::string> kLadder = {"cuda.baseline_aos", "cuda.rsqrt",        "cuda.soa_ldg", "cuda.tiled",
                                          "cuda.nxn_atomic",   "cuda.force_matrix", "cuda.tiled2d", "cuda.float4",
                                          "cuda.unrolled",     "cuda.fastmath",     "cuda.sliced"};

const VariantDescriptor& variant(const std::string& id) {
    const VariantDescriptor* v = builtin_registry().find(id);
    if (v == nullptr) throw std::logic_error(id + " is not registered");
    return *v;
}

bool gpu_present() { return variant("cuda.tiled").availability().available; }

std::unique_ptr<Simulation> create(const std::string& id, const TuningValues& tuning, std::size_t n, int d) {
    const VariantDescriptor& v = variant(id);
    return v.create(Problem{.n = n, .d = d, .constants = {}}, Registry::resolve_tuning(v, tuning));
}

struct Outcome {
    Bodies state;
    std::vector<float> map;
};

Outcome simulate(const std::string& id, const TuningValues& tuning, std::size_t n, int d, int steps) {
    auto sim = create(id, tuning, n, d);
    sim->upload(generate_bodies(n));
    sim->advance(steps);
    sim->synchronize();
    Outcome out;
    sim->download(out.state, out.map);
    return out;
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
    EXPECT_NE(variant("cuda.force_matrix").max_n, 0u) << "the N x N matrix needs a cap";
}

TEST(CudaRegistry, AvailabilityMatchesTheProbe) {
    const Availability a = variant("cuda.tiled").availability();
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

TEST(CudaTunings, MapsThatDoNotFitAreUsageErrorsBeforeAnyDeviceCall) {
    // 111 * 111 * 4 bytes > 48 KiB of shared memory; 110 * 110 * 4 fits.
    EXPECT_THROW(create("cuda.tiled", {{"map", "shared"}}, 64, 111), UsageError);
    EXPECT_THROW(create("cuda.baseline_aos", {{"map", "shared"}}, 64, 1000), UsageError);
    EXPECT_THROW(create("cuda.tiled2d", {{"width", "512"}, {"length", "4"}}, 64, 10), UsageError);
    EXPECT_THROW(create("cuda.unrolled", {{"unroll", "3"}}, 64, 10), UsageError);
}

TEST(CudaMap, EveryStrategyCountsTheSameCells) {
    if (!gpu_present()) GTEST_SKIP() << variant("cuda.tiled").availability().reason;
    const std::size_t n = 1000;  // not a multiple of any block
    const int d = 37;
    const Outcome atomics = simulate("cuda.tiled", {{"map", "atomic"}}, n, d, 2);
    for (const char* strategy : {"shared", "cub"}) {
        const Outcome other = simulate("cuda.tiled", {{"map", strategy}}, n, d, 2);
        EXPECT_EQ(other.state.x, atomics.state.x) << strategy;
        EXPECT_EQ(other.map, atomics.map) << strategy;
    }
    // And the same as the host count of the variant's own positions.
    const std::vector<float> host = normalised_map(host_cell_counts(atomics.state, d), n, d);
    EXPECT_EQ(atomics.map, host);
}

TEST(CudaDeterminism, VariantsWithoutAtomicsRepeatBitForBit) {
    if (!gpu_present()) GTEST_SKIP() << variant("cuda.tiled").availability().reason;
    for (const char* id : {"cuda.tiled", "cuda.tiled2d", "cuda.fastmath", "cuda.unrolled"}) {
        const Outcome first = simulate(id, {}, 777, 8, 3);
        const Outcome second = simulate(id, {}, 777, 8, 3);
        EXPECT_EQ(first.state.x, second.state.x) << id;
        EXPECT_EQ(first.state.vy, second.state.vy) << id;
        EXPECT_EQ(first.map, second.map) << id;
    }
}

TEST(CudaTiling, TileRemaindersMatchTheUntiledKernel) {
    if (!gpu_present()) GTEST_SKIP() << variant("cuda.tiled").availability().reason;
    // N = 1025: the last tile holds one real body. Tiled (zero-mass padding) and untiled sum the
    // same terms, so they agree to rounding.
    const Outcome untiled = simulate("cuda.soa_ldg", {}, 1025, 10, 1);
    for (const char* block : {"32", "256", "1024"}) {
        const Outcome tiled = simulate("cuda.tiled", {{"block_size", block}}, 1025, 10, 1);
        for (std::size_t i = 0; i < 1025; ++i) ASSERT_NEAR(tiled.state.vx[i], untiled.state.vx[i], 1e-6) << block << " body " << i;
    }
}

}  // namespace
}  // namespace nbody
