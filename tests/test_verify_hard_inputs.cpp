// The rounding rule on the hard inputs (nbody/stress.hpp): every CPU variant of every model in the
// build (iterating the registry), every hard input class, both precisions, both integrators, 2D and
// 3D, after 1 and 10 steps: no check FAILs (INCONCLUSIVE is allowed after 10 steps only where the
// input amplifies rounding past a verdict; after 1 step every check is decisive and passes).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <memory>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "nbody/errors.hpp"
#include "nbody/registry.hpp"
#include "nbody/stress.hpp"
#include "verify/verification.hpp"

namespace nbody {
namespace {

constexpr std::size_t kBodies = 256;
constexpr int kMapSize = 10;

struct HardCase {
    StressKind kind;
};
void PrintTo(const HardCase& c, std::ostream* os) { *os << to_string(c.kind); }

class HardInputs : public ::testing::TestWithParam<HardCase> {};

TEST_P(HardInputs, NoCpuVariantFails) {
    const StressKind kind = GetParam().kind;
    int checks = 0;
    for (const Workload& workload : all_workloads()) {
        const StressCase input = stress_state(kind, kBodies, workload.dim, workload.precision);
        const ReferenceSolution reference(input.state, input.constants, workload.integrator, {1, 10}, VerificationSettings{});
        for (const VariantDescriptor* v : builtin_registry().match("*")) {
            if (v->runs_on_gpu || !v->availability().available || !v->workloads.supports(workload)) continue;
            if (v->max_n != 0 && kBodies > v->max_n) continue;
            const Problem problem{.n = kBodies, .d = kMapSize, .constants = input.constants, .workload = workload, .distribution = {}};
            auto simulation = v->create(problem, Registry::resolve_tuning(*v, {}));
            for (const CheckResult& r : verify_simulation(*simulation, input.state, reference, kMapSize)) {
                ++checks;
                const std::string where = fmt::format("{} {} {} K={}", v->id, to_string(kind), to_string(workload), r.steps);
                EXPECT_NE(r.verdict, Verdict::fail) << where << ": " << r.failure;
                if (r.steps == 1) {
                    EXPECT_EQ(r.verdict, Verdict::pass) << where << ": " << r.failure;
                }
                // Within the rule's multiple, or no verdict at all.
                if (r.verdict == Verdict::pass) {
                    EXPECT_LE(r.errors.pos_rounding_multiple, kRoundingMultiple) << where;
                    EXPECT_LE(r.errors.vel_rounding_multiple, kRoundingMultiple) << where;
                }
            }
        }
    }
    EXPECT_GT(checks, 0);
}

std::vector<HardCase> every_kind() {
    std::vector<HardCase> out;
    for (StressKind kind : all_stress_kinds()) out.push_back({kind});
    return out;
}

INSTANTIATE_TEST_SUITE_P(EveryClass, HardInputs, ::testing::ValuesIn(every_kind()),
                         [](const auto& info) { return std::string(to_string(info.param.kind)); });

// The generator of hard inputs: the same values in both precisions, the softening each class sets,
// and refusals of what it cannot make.
TEST(StressStates, EachClassIsWhatItSays) {
    for (StressKind kind : all_stress_kinds()) {
        const StressCase single = stress_state(kind, 100, 3, Precision::fp32);
        const StressCase twice = stress_state(kind, 100, 3, Precision::fp64);
        const auto& f = std::get<BodiesT<float>>(single.state);
        const auto& d = std::get<BodiesT<double>>(twice.state);
        ASSERT_EQ(f.size(), 100u);
        EXPECT_EQ(f.dim, 3);
        EXPECT_EQ(single.constants.softening, twice.constants.softening);
        double total_mass = 0;
        for (std::size_t i = 0; i < 100; ++i) {
            EXPECT_EQ(f.x[i], static_cast<float>(d.x[i])) << to_string(kind);
            EXPECT_EQ(f.vy[i], static_cast<float>(d.vy[i])) << to_string(kind);
            total_mass += d.m[i];
        }
        EXPECT_GT(total_mass, 0.9) << to_string(kind);
        EXPECT_LT(total_mass, 1.1) << to_string(kind);
        EXPECT_EQ(parse_stress_kind(to_string(kind)), kind);
    }
    const auto masses = std::get<BodiesT<double>>(stress_state(StressKind::masses, 1000, 2, Precision::fp64).state);
    const auto [lightest, heaviest] = std::minmax_element(masses.m.begin(), masses.m.end());
    EXPECT_GT(*heaviest / *lightest, 1e7);
    EXPECT_NEAR(std::accumulate(masses.m.begin(), masses.m.end(), 0.0), 1.0, 1e-12);
    EXPECT_EQ(stress_state(StressKind::masses, 10, 2, Precision::fp32).constants.softening, 0.01);
    EXPECT_EQ(stress_state(StressKind::cluster, 10, 2, Precision::fp32).constants.softening, 0.001);
    const auto fast = std::get<BodiesT<double>>(stress_state(StressKind::fast_drift, 10, 2, Precision::fp64).state);
    EXPECT_DOUBLE_EQ(std::hypot(fast.vx[3], fast.vy[3]), 1e5);
    EXPECT_THROW(parse_stress_kind("bogus"), UsageError);
    EXPECT_THROW(stress_state(StressKind::binary, 3, 2, Precision::fp32), UsageError);
}

}  // namespace
}  // namespace nbody
