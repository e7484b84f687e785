// The Kokkos variants: every space this Kokkos has is registered; host spaces (hardware rsqrt
// estimate + Newton, reordered sums) stay within a tenth of verify's position threshold of the
// float64 reference, repeat themselves exactly on Serial, and give the same pulls whether the j
// tiles are split over teams or not; both map strategies give the map of the handed-back
// positions; tunings outside a space's limits are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <sstream>

#include "nbody/errors.hpp"
#include "nbody/generator.hpp"
#include "nbody/reference.hpp"
#include "nbody/registry.hpp"
#include "test_support.hpp"

namespace nbody {
namespace {

using testing::max_position_error;

constexpr const char* kVariants[] = {"naive", "team_tiled", "hierarchical"};

std::vector<std::string> kokkos_spaces() {
    std::vector<std::string> spaces;
    std::stringstream list(builtin_registry().build_facts().at("kokkos_spaces"));
    for (std::string space; std::getline(list, space, ',');) spaces.push_back(space);
    return spaces;
}

struct Outcome {
    Bodies state;
    std::vector<float> map;
};

Outcome simulate(const std::string& id, const Bodies& initial, int d, int steps, const TuningValues& tuning = {}) {
    const VariantDescriptor* variant = builtin_registry().find(id);
    if (variant == nullptr) throw std::logic_error("no variant " + id);
    auto sim = variant->create({.n = initial.size(), .d = d, .constants = {}},
                               Registry::resolve_tuning(*variant, tuning));
    sim->upload(initial);
    sim->advance(steps);
    sim->synchronize();
    Outcome out;
    sim->download(out.state, out.map);
    return out;
}

// The available Kokkos variants, only the host spaces' when host_only.
std::vector<const VariantDescriptor*> available_kokkos(bool host_only) {
    std::vector<const VariantDescriptor*> out;
    for (const VariantDescriptor* v : builtin_registry().match("kokkos.*"))
        if (v->availability().available && !(host_only && v->runs_on_gpu)) out.push_back(v);
    return out;
}

TEST(Kokkos, RegistersEveryVariantForEverySpaceItHas) {
    const auto& facts = builtin_registry().build_facts();
    ASSERT_TRUE(facts.count("kokkos_version"));
    EXPECT_TRUE(std::regex_match(facts.at("kokkos_version"), std::regex(R"(\d+\.\d+\.\d+)")));
    const auto spaces = kokkos_spaces();
    ASSERT_FALSE(spaces.empty());
    for (const auto& space : spaces)
        for (const char* variant : kVariants) {
            const std::string id = std::string("kokkos.") + variant + "@" + space;
            const VariantDescriptor* v = builtin_registry().find(id);
            ASSERT_NE(v, nullptr) << id;
            EXPECT_EQ(v->backend, "kokkos");
            EXPECT_EQ(v->execution_space, space);
            EXPECT_EQ(v->runs_on_gpu, space == "cuda");
        }
    EXPECT_EQ(builtin_registry().match("kokkos.*").size(), spaces.size() * std::size(kVariants));
}

TEST(Kokkos, HostSpacesStayCloseToTheFloat64Reference) {
    // N = 37 is no multiple of any tile; 10 steps as verify's default.
    constexpr int kSteps = 10, kMapSize = 8;
    const Bodies initial = generate_bodies(37, 7);
    BodiesT<double> reference = BodiesT<double>::converted_from(initial);
    reference_advance(reference, PhysicsConstants{}, Integrator::euler, kSteps);
    const auto reference_map = normalised_map(host_cell_counts(reference, kMapSize), initial.size(), kMapSize);
    const auto variants = available_kokkos(true);
    // A CUDA-enabled Kokkos cannot start any space without a GPU (docs/kokkos.md).
    if (variants.empty()) GTEST_SKIP() << builtin_registry().match("kokkos.*").front()->availability().reason;
    for (const VariantDescriptor* v : variants) {
        const Outcome got = simulate(v->id, initial, kMapSize, kSteps);
        // SPEC §5's float32 threshold after 10 steps is 1e-4; float32 storage alone gives ~1e-7.
        EXPECT_LT(max_position_error(got.state, reference), 1e-5) << v->id;
        EXPECT_EQ(got.map, reference_map) << v->id;
        if (v->execution_space == "serial") {
            const Outcome again = simulate(v->id, initial, kMapSize, kSteps);
            EXPECT_EQ(again.state.x, got.state.x) << v->id << " repeats itself";
            EXPECT_EQ(again.state.vy, got.state.vy) << v->id << " repeats itself";
        }
    }
}

TEST(Kokkos, TeamTiledSlicesSumTheSamePulls) {
    // 100 bodies in tiles of 32: 4 tiles, split over 1, 2, 4 and 8 teams per block (8 > 4 tiles
    // leaves teams without j, which must add nothing).
    const Bodies initial = generate_bodies(100, 11);
    int checked = 0;
    for (const VariantDescriptor* v : available_kokkos(false)) {
        if (v->id.rfind("kokkos.team_tiled@", 0) != 0) continue;
        ++checked;
        const TuningValues base = {{"tile", "32"}, {"team_size", v->runs_on_gpu ? "32" : "1"}};
        auto with_slices = [&](const char* slices) {
            TuningValues t = base;
            t["slices"] = slices;
            return simulate(v->id, initial, 10, 1, t);
        };
        const Outcome whole = with_slices("1");
        for (const char* slices : {"2", "4", "8", "auto"}) {
            const Outcome split = with_slices(slices);
            for (std::size_t i = 0; i < initial.size(); ++i) {
                // Different summation order: equal to a few float32 roundings of the velocity change.
                EXPECT_NEAR(split.state.vx[i], whole.state.vx[i], 1e-6 + 1e-5 * std::abs(whole.state.vx[i]))
                    << v->id << " slices=" << slices << " body " << i;
                EXPECT_NEAR(split.state.vy[i], whole.state.vy[i], 1e-6 + 1e-5 * std::abs(whole.state.vy[i]))
                    << v->id << " slices=" << slices << " body " << i;
            }
        }
    }
    if (checked == 0) GTEST_SKIP() << "no team_tiled space can run here";
}

TEST(Kokkos, BothMapStrategiesGiveTheMapOfTheHandedBackPositions) {
    // Velocities push some bodies out of the unit square: they are simulated, not counted.
    Bodies initial = generate_bodies(200, 3);
    for (std::size_t i = 0; i < initial.size(); i += 5) initial.vx[i] = (i % 2 ? 60.0f : -60.0f);
    constexpr int kMapSize = 13;
    for (const VariantDescriptor* v : available_kokkos(false)) {
        for (const char* strategy : {"atomic", "scatter"}) {
            for (int steps : {0, 2}) {
                const Outcome got = simulate(v->id, initial, kMapSize, steps, {{"map", strategy}});
                const auto expected = normalised_map(host_cell_counts(got.state, kMapSize), initial.size(), kMapSize);
                EXPECT_EQ(got.map, expected) << v->id << " map=" << strategy << " steps=" << steps;
            }
        }
        const Outcome moved = simulate(v->id, initial, kMapSize, 2);
        std::size_t outside = 0;
        for (std::size_t i = 0; i < moved.state.size(); ++i)
            outside += activity_cell(moved.state.x[i], moved.state.y[i], kMapSize) < 0;
        EXPECT_GT(outside, 0u) << "the test should push bodies out of the unit square";
    }
}

TEST(Kokkos, RefusesTuningsBeyondTheSpaceLimits) {
    for (const auto& space : kokkos_spaces()) {
        const VariantDescriptor* tiled = builtin_registry().find("kokkos.team_tiled@" + space);
        ASSERT_NE(tiled, nullptr);
        EXPECT_THROW(Registry::resolve_tuning(*tiled, {{"tile", "96"}}), UsageError);
        EXPECT_THROW(Registry::resolve_tuning(*tiled, {{"map", "private"}}), UsageError);
        if (space != "cuda") {  // host teams are one thread, without vector lanes
            EXPECT_THROW(Registry::resolve_tuning(*tiled, {{"team_size", "2"}}), UsageError);
            EXPECT_THROW(Registry::resolve_tuning(*tiled, {{"body_mapping", "pair"}}), UsageError);
        }
    }
    // A CUDA team holds at most 1024 threads (team_size x vector lanes).
    const VariantDescriptor* hierarchical = builtin_registry().find("kokkos.hierarchical@cuda");
    const VariantDescriptor* tiled = builtin_registry().find("kokkos.team_tiled@cuda");
    if (hierarchical != nullptr && hierarchical->availability().available) {
        const Problem problem{.n = 64, .d = 4, .constants = {}};
        EXPECT_THROW(hierarchical->create(problem, Registry::resolve_tuning(
                                                       *hierarchical, {{"team_size", "128"}, {"vector_length", "32"}})),
                     UsageError);
        EXPECT_THROW(tiled->create(problem, Registry::resolve_tuning(
                                                *tiled, {{"team_size", "512"}, {"body_mapping", "lanes4"}})),
                     UsageError);
    }
}

}  // namespace
}  // namespace nbody
