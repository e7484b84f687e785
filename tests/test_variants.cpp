// Every variant this build can run here, with every listed tuning value, agrees with the float64
// reference on a small problem whose size is not a multiple of any block or tile.
#include <gtest/gtest.h>

#include <cmath>

#include "nbody/errors.hpp"
#include "nbody/generator.hpp"
#include "nbody/reference.hpp"
#include "nbody/registry.hpp"

namespace nbody {
namespace {

constexpr std::size_t kBodies = 301;
constexpr int kMapSize = 16;
constexpr int kSteps = 3;

struct Case {
    const VariantDescriptor* variant;
    TuningValues tuning;
    std::string name;
};

// Test names (and ctest's) show the case's name rather than its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

// The defaults, then each listed value of each choice tuning and both ends of each integer range.
std::vector<Case> cases() {
    std::vector<Case> out;
    for (const auto& v : builtin_registry().all()) {
        if (!v.availability().available) continue;
        if (v.max_n != 0 && v.max_n < kBodies) continue;
        out.push_back({&v, {}, v.id + "/defaults"});
        for (const auto& t : v.tunings) {
            std::vector<std::string> values = t.allowed_values;
            if (values.empty()) values = {std::to_string(t.min_value), std::to_string(t.max_value)};
            for (const auto& value : values)
                if (value != t.default_value) out.push_back({&v, {{t.name, value}}, v.id + "/" + t.name + "=" + value});
        }
    }
    return out;
}

struct Expected {
    BodiesT<double> state;
    std::vector<std::int64_t> counts;
};

const Expected& reference() {
    static const Expected expected = [] {
        Expected e{BodiesT<double>::converted_from(generate_bodies(kBodies, 42)), {}};
        reference_advance(e.state, PhysicsConstants{}, Integrator::euler, kSteps);
        e.counts = host_cell_counts(e.state, kMapSize);
        return e;
    }();
    return expected;
}

class EveryVariant : public ::testing::TestWithParam<Case> {};

TEST_P(EveryVariant, AgreesWithTheFloat64Reference) {
    const Case& c = GetParam();
    const Problem problem{.n = kBodies, .d = kMapSize, .constants = {}};
    auto sim = c.variant->create(problem, Registry::resolve_tuning(*c.variant, c.tuning));
    sim->upload(generate_bodies(kBodies, 42));
    sim->advance(kSteps);
    sim->synchronize();
    Bodies state;
    std::vector<float> map;
    sim->download(state, map);

    const Expected& ref = reference();
    ASSERT_EQ(state.size(), kBodies);
    ASSERT_EQ(map.size(), static_cast<std::size_t>(kMapSize * kMapSize));
    double max_pos = 0, max_vel = 0;
    for (std::size_t i = 0; i < kBodies; ++i) {
        max_pos = std::max({max_pos, std::abs(state.x[i] - ref.state.x[i]), std::abs(state.y[i] - ref.state.y[i])});
        max_vel = std::max({max_vel, std::abs(state.vx[i] - ref.state.vx[i]), std::abs(state.vy[i] - ref.state.vy[i])});
        ASSERT_EQ(state.m[i], 1.0f / kBodies) << "mass changed at " << i;
    }
    EXPECT_LT(max_pos, 1e-5) << c.name;
    EXPECT_LT(max_vel, 1e-4) << c.name;
    // The map holds count * D/N: recover counts and compare cell by cell.
    const double per_body = static_cast<double>(kMapSize) / kBodies;
    std::int64_t differing = 0, total = 0;
    for (std::size_t cell = 0; cell < map.size(); ++cell) {
        const double count = map[cell] / per_body;
        ASSERT_NEAR(count, std::round(count), 1e-3) << "cell " << cell << " is not a whole count * D/N";
        differing += std::llabs(std::llround(count) - ref.counts[cell]);
        total += std::llround(count);
    }
    EXPECT_LE(differing, 2) << c.name << ": bodies counted in other cells";
    EXPECT_EQ(total, static_cast<std::int64_t>(kBodies)) << "after 3 small steps every body is still inside";
}

INSTANTIATE_TEST_SUITE_P(Available, EveryVariant, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                             std::string name = info.param.name;
                             for (char& ch : name)
                                 if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                             return name;
                         });

TEST(Registry, EveryVariantIsListedWithAvailabilityAndValidDefaults) {
    ASSERT_NE(builtin_registry().find("serial.reference"), nullptr);
    for (const auto& v : builtin_registry().all()) {
        const Availability a = v.availability();
        if (!a.available) {
            EXPECT_FALSE(a.reason.empty()) << v.id << " is unavailable without a reason";
        }
        EXPECT_NO_THROW(Registry::resolve_tuning(v, {})) << v.id;
        EXPECT_EQ(v.id.rfind(v.backend + ".", 0), 0u) << v.id << " does not start with its backend";
    }
}

TEST(Registry, UnknownOrInvalidTuningsAreUsageErrors) {
    const VariantDescriptor* serial = builtin_registry().find("serial.reference");
    ASSERT_NE(serial, nullptr);
    EXPECT_THROW(Registry::resolve_tuning(*serial, {{"block", "64"}}), UsageError);
    VariantDescriptor tuned;
    tuned.id = "test.tuned";
    tuned.backend = "test";
    tuned.tunings = {{.name = "block", .description = "", .default_value = "64", .allowed_values = {"32", "64"}},
                     {.name = "threads", .description = "", .default_value = "1", .allowed_values = {}, .min_value = 1, .max_value = 4}};
    EXPECT_EQ(Registry::resolve_tuning(tuned, {{"block", "32"}}).at("block"), "32");
    EXPECT_THROW(Registry::resolve_tuning(tuned, {{"block", "48"}}), UsageError);
    EXPECT_EQ(Registry::resolve_tuning(tuned, {{"threads", "4"}}).at("threads"), "4");
    EXPECT_THROW(Registry::resolve_tuning(tuned, {{"threads", "5"}}), UsageError);
    EXPECT_THROW(Registry::resolve_tuning(tuned, {{"threads", "two"}}), UsageError);
}

TEST(Registry, GlobPatterns) {
    EXPECT_TRUE(glob_match("omp.*", "omp.static"));
    EXPECT_TRUE(glob_match("kokkos.*@cuda", "kokkos.team_tiled@cuda"));
    EXPECT_FALSE(glob_match("kokkos.*@cuda", "kokkos.team_tiled@openmp"));
    EXPECT_TRUE(glob_match("cuda.tiled?", "cuda.tiled2"));
    EXPECT_FALSE(glob_match("cuda.tiled", "cuda.tiled2d"));
    EXPECT_EQ(builtin_registry().match("serial.*,nothing.*").size(), 1u);
}

}  // namespace
}  // namespace nbody
