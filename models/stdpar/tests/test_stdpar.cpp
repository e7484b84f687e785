// The stdpar variants' own promises: listed as CPU variants of every workload, each computes the
// reference's answer on every workload at a size that is not a multiple of any block (each i_block
// and item_blocks of stdpar.blocked too, past one tile of bodies j, and either inv_sqrt), the map
// exactly; and bodies so far apart that r^2 overflows pull nothing, as the plain formula's
// 1/sqrt(inf) = 0 does. (Several ranks are refused by the harness: the variants are not `distributed`.)
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nbody/generator.hpp"
#include "nbody/registry.hpp"
#include "overflow_check.hpp"
#include "reference_check.hpp"
#include "test_support.hpp"
#include "verify/verification.hpp"

namespace nbody {
namespace {

using testing::registered_variant;

constexpr std::size_t kBodies = 301;
constexpr int kMapSize = 16;
constexpr int kSteps = 3;

const std::vector<std::string> kVariants = {"stdpar.plain", "stdpar.blocked"};

TEST(Stdpar, EveryVariantIsListedAsACpuVariantOfEveryWorkload) {
    std::vector<std::string> listed;
    for (const auto& v : builtin_registry().all())
        if (v.backend == "stdpar") listed.push_back(v.id);
    EXPECT_EQ(listed, kVariants);
    for (const auto& id : kVariants) {
        const VariantDescriptor& v = registered_variant(id);
        EXPECT_FALSE(v.runs_on_gpu) << id;
        EXPECT_FALSE(v.distributed) << id;
        EXPECT_TRUE(v.availability().available) << id;
        EXPECT_GT(v.expected_efficiency, 0.0) << id;
        for (const Workload& w : all_workloads()) EXPECT_TRUE(v.workloads.supports(w)) << id;
    }
    EXPECT_EQ(builtin_registry().build_facts().count("stdpar_backend"), 1u);
}

struct Case {
    std::string id;
    TuningValues tuning;
    Workload workload;
    std::string name;
    std::size_t bodies = kBodies;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::vector<Case> cases() {
    std::vector<Case> out;
    for (const auto& id : kVariants)
        for (const Workload& w : all_workloads())
            out.push_back({id, {}, w, id + "/" + std::to_string(w.dim) + "d_" + to_string(w.precision) + "_" +
                                          to_string(w.integrator)});
    for (const char* block : {"8", "32"})
        for (const Workload& w : {Workload{}, Workload{.dim = 3, .precision = Precision::fp64, .integrator = Integrator::leapfrog}})
            out.push_back({"stdpar.blocked", {{"i_block", block}}, w,
                           std::string("stdpar.blocked/i_block=") + block + "/" + std::to_string(w.dim) + "d_" +
                               to_string(w.precision)});
    for (const Workload& w : all_workloads())
        out.push_back({"stdpar.blocked", {{"inv_sqrt", "exact"}}, w,
                       "stdpar.blocked/inv_sqrt=exact/" + std::to_string(w.dim) + "d_" + to_string(w.precision) + "_" +
                           to_string(w.integrator)});
    for (const char* item_blocks : {"1", "16"})
        out.push_back({"stdpar.blocked", {{"item_blocks", item_blocks}}, Workload{},
                       std::string("stdpar.blocked/item_blocks=") + item_blocks});
    // 4099 bodies: three tiles of 2048 bodies j, the last short, and a short last item.
    out.push_back({"stdpar.blocked", {{"item_blocks", "4"}}, Workload{.dim = 3, .precision = Precision::fp64},
                   "stdpar.blocked/item_blocks=4/3d_fp64_4099_bodies", 4099});
    return out;
}

class EveryWorkload : public ::testing::TestWithParam<Case> {};

TEST_P(EveryWorkload, AgreesWithTheReference) {
    const Case& c = GetParam();
    const VariantDescriptor& v = registered_variant(c.id);
    const Problem problem{.n = c.bodies, .d = kMapSize, .constants = {}, .workload = c.workload, .distribution = {}};
    auto sim = v.create(problem, Registry::resolve_tuning(v, c.tuning));
    testing::expect_agrees_with_reference(*sim, c.workload, c.bodies, kSteps, kMapSize, c.name, true);
}

INSTANTIATE_TEST_SUITE_P(Stdpar, EveryWorkload, ::testing::ValuesIn(cases()), [](const auto& info) {
    std::string name = info.param.name;
    for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return name;
});

// stdpar.blocked's estimate of 1/sqrt(inf) is not 0: without r^2 saturated in a step where a
// coordinate passed the bound, its pulls on such bodies are NaN.
TEST(Stdpar, PullsNothingWhereRSquaredOverflows) {
    for (const auto& id : kVariants) testing::expect_overflowing_r2_pulls_nothing(registered_variant(id), kMapSize);
}

}  // namespace
}  // namespace nbody
