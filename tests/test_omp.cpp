// The OpenMP variants' own promises: omp.static equals serial.reference bit for bit; edge-sharing
// is bit-identical for a fixed thread count; both activity-map strategies count exactly like the
// reference; every instruction set of omp.simd, with and without its Newton step, stays within
// verify's thresholds; tunings are validated.
// (Agreement of every variant and tuning value with the float64 reference is test_variants'.)
#include <gtest/gtest.h>

#ifdef NBODY_WITH_OPENMP
#include <omp.h>

#include <cmath>
#include <string>

#include "nbody/errors.hpp"
#include "nbody/generator.hpp"
#include "nbody/reference.hpp"
#include "nbody/registry.hpp"
#include "test_support.hpp"

namespace nbody {
namespace {

using testing::max_position_error;

struct Outcome {
    Bodies state;
    std::vector<float> map;
};

const VariantDescriptor& variant(const std::string& id) {
    const VariantDescriptor* v = builtin_registry().find(id);
    if (v == nullptr) throw std::logic_error(id + " is not registered");
    return *v;
}

Outcome simulate(const std::string& id, const TuningValues& tuning, std::size_t n, int d, int steps) {
    const VariantDescriptor& v = variant(id);
    auto sim = v.create(Problem{.n = n, .d = d, .constants = {}}, Registry::resolve_tuning(v, tuning));
    sim->upload(generate_bodies(n));
    sim->advance(steps);
    Outcome out;
    sim->download(out.state, out.map);
    return out;
}

TEST(OmpEdgeSharing, BitIdenticalForAFixedThreadCount) {
    for (const char* threads : {"1", "2"}) {
        const Outcome first = simulate("omp.edge_sharing", {{"threads", threads}}, 523, 8, 3);
        const Outcome second = simulate("omp.edge_sharing", {{"threads", threads}}, 523, 8, 3);
        EXPECT_EQ(first.state.x, second.state.x) << threads << " threads";
        EXPECT_EQ(first.state.y, second.state.y) << threads << " threads";
        EXPECT_EQ(first.state.vx, second.state.vx) << threads << " threads";
        EXPECT_EQ(first.state.vy, second.state.vy) << threads << " threads";
        EXPECT_EQ(first.map, second.map) << threads << " threads";
    }
}

// omp.static sums each pull in the reference's order with the reference's arithmetic (vectorised
// by the compiler with exact sqrt and division, in-order sums), so it equals serial.reference.
TEST(OmpStatic, BitIdenticalToTheSerialReference) {
    const Outcome serial = simulate("serial.reference", {}, 389, 8, 3);
    for (const char* threads : {"1", "2"}) {
        const Outcome parallel = simulate("omp.static", {{"threads", threads}}, 389, 8, 3);
        EXPECT_EQ(parallel.state.x, serial.state.x) << threads << " threads";
        EXPECT_EQ(parallel.state.vy, serial.state.vy) << threads << " threads";
        EXPECT_EQ(parallel.map, serial.map) << threads << " threads";
    }
}

// N of every remainder mod 4 (rows in blocks of 4, the last N mod 4 rows and columns alone), an
// odd and an even number of blocks (the middle block pairs with itself), against float64.
TEST(OmpEdgeSharing, EveryPairCountedOnceForOddAndEvenN) {
    for (std::size_t n : {1u, 2u, 3u, 4u, 5u, 7u, 8u, 12u, 13u, 64u, 257u}) {
        BodiesT<double> reference = BodiesT<double>::converted_from(generate_bodies(n));
        reference_advance(reference, PhysicsConstants{}, Integrator::euler, 2);
        const Outcome out = simulate("omp.edge_sharing", {{"threads", "2"}}, n, 4, 2);
        EXPECT_LT(max_position_error(out.state, reference), 1e-6) << "N=" << n;
    }
}

// Private histograms and atomic counts give the reference's map of the same positions exactly,
// at a D where bodies leave and cross cells, including the map handed back before any step.
TEST(OmpActivityMap, BothStrategiesCountExactly) {
    constexpr std::size_t kBodies = 1000;
    constexpr int kMapSize = 37;
    for (const char* id : {"omp.static", "omp.edge_sharing", "omp.simd"}) {
        for (const char* map : {"private", "atomic"}) {
            for (int steps : {0, 2}) {
                const Outcome out = simulate(id, {{"map", map}, {"threads", "2"}}, kBodies, kMapSize, steps);
                EXPECT_EQ(out.map, normalised_map(host_cell_counts(out.state, kMapSize), kBodies, kMapSize))
                    << id << " map=" << map << " after " << steps << " steps";
            }
        }
    }
}

TEST(OmpSimd, EveryInstructionSetWithAndWithoutNewtonWithinVerifyThresholds) {
    constexpr std::size_t kBodies = 450;
    constexpr int kSteps = 10;
    BodiesT<double> reference = BodiesT<double>::converted_from(generate_bodies(kBodies));
    reference_advance(reference, PhysicsConstants{}, Integrator::euler, kSteps);
    const std::vector<float> reference_map = normalised_map(host_cell_counts(reference, 10), kBodies, 10);
    for (const TuningParameter& t : variant("omp.simd").tunings) {
        if (t.name != "isa") continue;
        for (const std::string& isa : t.allowed_values) {
            for (const char* newton : {"0", "1"}) {
                const Outcome out = simulate("omp.simd", {{"isa", isa}, {"newton", newton}, {"j_block", "256"}},
                                             kBodies, 10, kSteps);
                // SPEC §5's float32 default threshold after 10 steps is 1e-4.
                EXPECT_LT(max_position_error(out.state, reference), 1e-5) << "isa=" << isa << " newton=" << newton;
                EXPECT_EQ(out.map, reference_map) << "isa=" << isa << " newton=" << newton;
            }
        }
    }
}

TEST(OmpTunings, InvalidValuesAreUsageErrors) {
    const std::string procs = std::to_string(omp_get_num_procs());
    for (const char* id : {"omp.static", "omp.edge_sharing", "omp.simd"}) {
        const VariantDescriptor& v = variant(id);
        EXPECT_EQ(Registry::resolve_tuning(v, {}).at("threads"), procs) << id << ": default is every core";
        EXPECT_THROW(Registry::resolve_tuning(v, {{"threads", "0"}}), UsageError) << id;
        EXPECT_THROW(Registry::resolve_tuning(v, {{"threads", std::to_string(omp_get_num_procs() + 1)}}), UsageError)
            << id;
        EXPECT_THROW(Registry::resolve_tuning(v, {{"map", "shared"}}), UsageError) << id;
        // Per-thread histograms of a 65536 x 65536 map would need 16 GiB per thread.
        const Problem huge_map{.n = 16, .d = 65536, .constants = {}};
        EXPECT_THROW(v.create(huge_map, Registry::resolve_tuning(v, {{"map", "private"}})), UsageError) << id;
    }
    const VariantDescriptor& simd = variant("omp.simd");
    EXPECT_THROW(Registry::resolve_tuning(simd, {{"isa", "neon512"}}), UsageError);
    EXPECT_THROW(Registry::resolve_tuning(simd, {{"j_block", "100"}}), UsageError);
    EXPECT_THROW(Registry::resolve_tuning(simd, {{"newton", "2"}}), UsageError);
}

}  // namespace
}  // namespace nbody
#endif  // NBODY_WITH_OPENMP
