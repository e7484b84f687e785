// SPEC §1 initial conditions: SplitMix64, x then y per body, exact floats in [0, 1).
#include <gtest/gtest.h>

#include "nbody/generator.hpp"
#include "nbody/stress.hpp"
#include "nbody/variant.hpp"

namespace nbody {
namespace {

// Values computed independently (Python, arbitrary-precision integers) from the SplitMix64
// definition with seed 42.
TEST(Generator, FirstDrawsArePinned) {
    SplitMix64 rng(42);
    EXPECT_EQ(rng.next(), 0xbdd732262feb6e95ull);
    EXPECT_EQ(rng.next(), 0x28efe333b266f103ull);
    EXPECT_EQ(rng.next(), 0x47526757130f9f52ull);
    EXPECT_EQ(rng.next(), 0x581ce1ff0e4ae394ull);
}

TEST(Generator, FirstBodiesArePinned) {
    const Bodies b = generate_bodies(3, 42);
    EXPECT_EQ(b.x[0], 0x1.7bae64p-1f);  // 12441394 * 2^-24
    EXPECT_EQ(b.y[0], 0x1.477f18p-3f);  // 2682851 * 2^-24
    EXPECT_EQ(b.x[1], 0x1.1d499cp-2f);
    EXPECT_EQ(b.y[1], 0x1.607384p-2f);
    EXPECT_EQ(b.x[2], 0x1.378bp-5f);
    EXPECT_EQ(b.y[2], 0x1.bc8862p-1f);
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(b.vx[i], 0.0f);
        EXPECT_EQ(b.vy[i], 0.0f);
        EXPECT_EQ(b.m[i], 1.0f / 3.0f);
    }
}

TEST(Generator, SameSeedSameBodiesOtherSeedOtherBodies) {
    const Bodies a = generate_bodies(1000, 7), b = generate_bodies(1000, 7), c = generate_bodies(1000, 8);
    EXPECT_EQ(a.x, b.x);
    EXPECT_EQ(a.y, b.y);
    EXPECT_NE(a.x, c.x);
}

TEST(Generator, PositionsAreInTheUnitSquare) {
    const Bodies b = generate_bodies(10000, 42);
    for (std::size_t i = 0; i < b.size(); ++i) {
        ASSERT_GE(b.x[i], 0.0f);
        ASSERT_LT(b.x[i], 1.0f);
        ASSERT_GE(b.y[i], 0.0f);
        ASSERT_LT(b.y[i], 1.0f);
    }
}

TEST(Generator, PositionOfOneBodyMatchesTheSequence) {
    for (int dim : {2, 3}) {
        const Bodies b = generate_bodies_of<float>(500, dim, 99);
        for (std::size_t i : {0u, 1u, 17u, 499u})
            for (int axis = 0; axis < dim; ++axis)
                EXPECT_EQ(generated_coordinate(99, i, dim, axis), b.position(axis)[i]) << dim << "D body " << i;
    }
}

// SPEC §2: in 3D body i takes draws 3i, 3i+1, 3i+2 (x, y, z) of the one stream.
TEST(Generator, ThreeDimensionsDrawXYZPerBodyFromOneStream) {
    const Bodies b = generate_bodies_of<float>(64, 3, 7);
    SplitMix64 rng(7);
    for (std::size_t i = 0; i < b.size(); ++i) {
        EXPECT_EQ(b.x[i], unit_float_from(rng.next())) << i;
        EXPECT_EQ(b.y[i], unit_float_from(rng.next())) << i;
        EXPECT_EQ(b.z[i], unit_float_from(rng.next())) << i;
        EXPECT_EQ(b.vz[i], 0.0f);
    }
}

// Positions are exact in both precisions; the mass is 1/N in the workload's precision.
TEST(Generator, Float64StateHasTheSamePositionsAndA64BitMass) {
    const auto single = generate_bodies_of<float>(1000, 3, 5);
    const auto wide = generate_bodies_of<double>(1000, 3, 5);
    for (std::size_t i = 0; i < single.size(); ++i) {
        EXPECT_EQ(static_cast<double>(single.x[i]), wide.x[i]);
        EXPECT_EQ(static_cast<double>(single.z[i]), wide.z[i]);
    }
    EXPECT_EQ(wide.m[0], 1.0 / 1000.0);
    EXPECT_EQ(single.m[0], 1.0f / 1000.0f);
    EXPECT_NE(static_cast<double>(single.m[0]), wide.m[0]);
}

// Every state a workload asks for is in its precision and dimension: the generated one, the empty
// one a variant downloads into, a hard input, and a state rounded or widened to the precision (the
// mass 1/N rounded to float32 once, widened exactly).
TEST(Generator, EveryWorkloadsStateIsInItsPrecisionAndDimension) {
    for (const Workload& w : all_workloads()) {
        const std::string what = to_string(w);
        for (const HostState& state : {generate_state(w, 7, 5), empty_state(w, 7),
                                       stress_state(StressKind::masses, 7, w.dim, w.precision, 5).state,
                                       state_in_precision(generate_bodies_of<double>(7, w.dim, 5), w.precision)}) {
            EXPECT_EQ(state_precision(state), w.precision) << what;
            EXPECT_EQ(state_dim(state), w.dim) << what;
            EXPECT_EQ(state_size(state), 7u) << what;
        }
        const HostState rounded = state_in_precision(generate_bodies_of<double>(7, w.dim, 5), w.precision);
        const double mass = std::visit([](const auto& b) { return static_cast<double>(b.m[0]); }, rounded);
        EXPECT_EQ(mass, w.precision == Precision::fp32 ? static_cast<double>(static_cast<float>(1.0 / 7.0)) : 1.0 / 7.0) << what;
    }
}

}  // namespace
}  // namespace nbody
