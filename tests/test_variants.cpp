// Every variant this build can run here agrees with the host reference on a small problem whose
// size is not a multiple of any block or tile: on the canonical workload with every listed tuning
// value, and on every other workload it claims with its default tunings.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <variant>

#include "nbody/errors.hpp"
#include "nbody/generator.hpp"
#include "nbody/reference.hpp"
#include "nbody/registry.hpp"
#include "verify/verification.hpp"

namespace nbody {
namespace {

constexpr std::size_t kBodies = 301;
constexpr int kMapSize = 16;
constexpr int kSteps = 3;

struct Case {
    const VariantDescriptor* variant;
    TuningValues tuning;
    Workload workload;
    std::string name;
};

// Test names (and ctest's) show the case's name rather than its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::string workload_label(const Workload& w) {
    return std::to_string(w.dim) + "d_" + to_string(w.precision) + "_" + to_string(w.integrator);
}

// Canonical workload: the defaults, then each listed value of each choice tuning and both ends of
// each integer range. Every other workload the variant claims: its defaults.
std::vector<Case> cases() {
    std::vector<Case> out;
    for (const auto& v : builtin_registry().all()) {
        if (!v.availability().available) continue;
        if (v.max_n != 0 && v.max_n < kBodies) continue;
        for (const Workload& w : all_workloads())
            if (v.workloads.supports(w)) out.push_back({&v, {}, w, v.id + "/" + workload_label(w) + "/defaults"});
        for (const auto& t : v.tunings) {
            std::vector<std::string> values = t.allowed_values;
            if (values.empty()) values = {std::to_string(t.min_value), std::to_string(t.max_value)};
            for (const auto& value : values)
                if (value != t.default_value)
                    out.push_back({&v, {{t.name, value}}, Workload{}, v.id + "/" + t.name + "=" + value});
        }
    }
    return out;
}

// One reference per workload, shared by every variant.
const ReferenceSolution& reference_for(const Workload& w) {
    static std::map<Workload, std::unique_ptr<ReferenceSolution>> cache;
    auto& entry = cache[w];
    if (!entry)
        entry = std::make_unique<ReferenceSolution>(generate_state(w, kBodies, 42), PhysicsConstants{}, w.integrator,
                                                    std::vector<int>{kSteps}, VerificationSettings{});
    return *entry;
}

class EveryVariant : public ::testing::TestWithParam<Case> {};

TEST_P(EveryVariant, AgreesWithTheReference) {
    const Case& c = GetParam();
    const Problem problem{.n = kBodies, .d = kMapSize, .constants = {}, .workload = c.workload, .distribution = {}};
    auto sim = c.variant->create(problem, Registry::resolve_tuning(*c.variant, c.tuning));
    const HostState initial = generate_state(c.workload, kBodies, 42);
    const auto results = verify_simulation(*sim, initial, reference_for(c.workload), kMapSize);
    ASSERT_EQ(results.size(), 1u);
    // omp.simd's newton=0 in float32 takes the hardware estimate of 1/sqrt alone (12 to 14 bits): its
    // velocities are further from the truth than float32 rounding explains, so the rounding rule fails
    // them by design (docs/verification.md); positions and map still pass.
    const bool estimate_alone = c.variant->id == "omp.simd" && c.tuning.count("newton") && c.tuning.at("newton") == "0" &&
                                c.workload.precision == Precision::fp32;
    if (estimate_alone) {
        EXPECT_FALSE(results[0].passed) << c.name;
        EXPECT_EQ(results[0].failure.rfind("velocities", 0), 0u) << c.name << ": " << results[0].failure;
        EXPECT_EQ(results[0].failure.find(','), std::string::npos) << c.name << ": " << results[0].failure;
    } else {
        EXPECT_TRUE(results[0].passed) << c.name << ": " << results[0].failure;
    }
    // Tighter than verify's 10-step thresholds: these are 3 steps.
    EXPECT_LT(results[0].errors.max_pos_err, c.workload.precision == Precision::fp32 ? 1e-5 : 1e-13) << c.name;
    // After 3 small steps no body is near enough to a cell edge to be counted elsewhere.
    EXPECT_EQ(results[0].errors.map_diff, 0.0) << c.name;

    HostState state = empty_state(c.workload, 0);
    std::vector<float> map;
    sim->download(state, map);
    std::visit(
        [&](const auto& got) {
            using Real = typename std::decay_t<decltype(got)>::real_type;
            ASSERT_EQ(got.dim, c.workload.dim);
            for (std::size_t i = 0; i < kBodies; ++i)
                ASSERT_EQ(got.m[i], Real(1) / Real(kBodies)) << "mass changed at " << i;
        },
        state);
    // The map holds count * D/N: whole counts, every body inside after 3 small steps.
    const double per_body = static_cast<double>(kMapSize) / kBodies;
    std::int64_t total = 0;
    for (std::size_t cell = 0; cell < map.size(); ++cell) {
        const double count = map[cell] / per_body;
        ASSERT_NEAR(count, std::round(count), 1e-3) << "cell " << cell << " is not a whole count * D/N";
        total += std::llround(count);
    }
    EXPECT_EQ(total, static_cast<std::int64_t>(kBodies));
}

// Asking a variant for a workload it does not run is a usage error, never a fallback.
TEST(Registry, UnsupportedWorkloadIsAUsageError) {
    VariantDescriptor canonical_only;
    canonical_only.id = "test.canonical";
    EXPECT_NO_THROW(require_workload(canonical_only, Workload{}));
    try {
        require_workload(canonical_only, {3, Precision::fp64, Integrator::leapfrog});
        FAIL() << "no error";
    } catch (const UsageError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("test.canonical"), std::string::npos) << message;
        EXPECT_NE(message.find("3d/fp64/leapfrog"), std::string::npos) << message;
        EXPECT_NE(message.find("dim 2, fp32, euler"), std::string::npos) << message;
    }
    EXPECT_TRUE(builtin_registry().find("serial.reference")->workloads.supports({3, Precision::fp64, Integrator::leapfrog}));
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

// The persistent kernels' team_size / block_size = auto: the fewest per SM that cover N, capped.
TEST(Registry, PersistentGroupSizeIsTheFewestPowerOfTwoThatCoversN) {
    EXPECT_EQ(fewest_per_slot_covering(1024, 132, 32), 8);   // 8 x 132 = 1056 >= 1024
    EXPECT_EQ(fewest_per_slot_covering(1056, 132, 32), 8);
    EXPECT_EQ(fewest_per_slot_covering(1057, 132, 32), 16);
    EXPECT_EQ(fewest_per_slot_covering(4096, 132, 28), 16);  // capped below 32 by the kernel's registers
    EXPECT_EQ(fewest_per_slot_covering(65536, 132, 32), 32);
    EXPECT_EQ(fewest_per_slot_covering(1, 132, 32), 1);
    EXPECT_EQ(fewest_per_slot_covering(4096, 132, 0), 1);    // never below one
}

TEST(Registry, GlobPatterns) {
    EXPECT_TRUE(glob_match("omp.*", "omp.static"));
    EXPECT_TRUE(glob_match("kokkos.*@cuda", "kokkos.team_tiled@cuda"));
    EXPECT_FALSE(glob_match("kokkos.*@cuda", "kokkos.team_tiled@openmp"));
    EXPECT_TRUE(glob_match("cuda.tiled?", "cuda.tiled2"));
    EXPECT_FALSE(glob_match("cuda.tiled", "cuda.tiled2d"));
    EXPECT_EQ(builtin_registry().match("serial.*,nothing.*").size(), 1u);
}

// A renamed variant keeps its former id readable: find and match resolve it to the current one.
TEST(Registry, AFormerIdFindsTheRenamedVariant) {
    Registry registry;
    VariantDescriptor descriptor;
    descriptor.id = "test.renamed";
    descriptor.create = [](const Problem&, const TuningValues&) -> std::unique_ptr<Simulation> { return nullptr; };
    registry.add(descriptor);
    registry.add_alias("test.former", "test.renamed");
    ASSERT_NE(registry.find("test.former"), nullptr);
    EXPECT_EQ(registry.find("test.former")->id, "test.renamed");
    ASSERT_EQ(registry.match("test.former").size(), 1u);
    EXPECT_EQ(registry.match("test.former")[0]->id, "test.renamed");
    EXPECT_EQ(registry.match("test.*").size(), 1u);  // listed once, under its current id
    EXPECT_THROW(registry.add_alias("test.other", "test.missing"), std::logic_error);
    EXPECT_THROW(registry.add_alias("test.renamed", "test.renamed"), std::logic_error);
    descriptor.id = "test.former";
    EXPECT_THROW(registry.add(descriptor), std::logic_error);  // a former id is not free again
}

}  // namespace
}  // namespace nbody
