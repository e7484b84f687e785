#include <gtest/gtest.h>

#include "nbody/generator.hpp"

namespace nbody {
TEST(Generator, Placeholder) { EXPECT_EQ(generate_bodies(3).size(), 3u); }
}
