// SPEC §1 initial conditions: SplitMix64, x then y per body, exact floats in [0, 1).
#include <gtest/gtest.h>

#include "nbody/generator.hpp"

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
    const Bodies b = generate_bodies(500, 99);
    for (std::size_t i : {0u, 1u, 17u, 499u}) {
        float x = -1, y = -1;
        generated_position(99, i, x, y);
        EXPECT_EQ(x, b.x[i]) << i;
        EXPECT_EQ(y, b.y[i]) << i;
    }
}

}  // namespace
}  // namespace nbody
