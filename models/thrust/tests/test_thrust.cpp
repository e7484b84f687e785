// The Thrust variants' own promises: on every backend this build has, each variant is listed for
// every workload (GPU ones as GPU variants, available exactly when a CUDA device is found), and
// each available one computes the reference's answer on every workload with each map counting, at
// a size that is not a multiple of any group of bodies (each `bodies` of thrust.packed too), the
// map exactly. (Several ranks are refused by the harness: the variants are not `distributed`.)
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "nbody/generator.hpp"
#include "nbody/registry.hpp"
#include "reference_check.hpp"
#include "verify/verification.hpp"

namespace nbody {
namespace {

constexpr std::size_t kBodies = 301;
constexpr int kMapSize = 16;
constexpr int kSteps = 3;

std::vector<const VariantDescriptor*> thrust_variants() {
    std::vector<const VariantDescriptor*> out;
    for (const auto& v : builtin_registry().all())
        if (v.backend == "thrust") out.push_back(&v);
    return out;
}

std::set<std::string> backends_in_build() {
    const std::string text = builtin_registry().build_facts().at("thrust_backends");
    std::set<std::string> out;
    for (const std::string& part : Registry::pattern_parts(text)) out.insert(part);
    return out;
}

TEST(Thrust, EachBackendListsBothVariantsForEveryWorkload) {
    std::set<std::string> listed;
    for (const VariantDescriptor* v : thrust_variants()) {
        listed.insert(v->id);
        EXPECT_EQ(v->runs_on_gpu, v->execution_space == "cuda") << v->id;
        EXPECT_FALSE(v->distributed) << v->id;
        EXPECT_GT(v->expected_efficiency, 0.0) << v->id;
        for (const Workload& w : all_workloads()) EXPECT_TRUE(v->workloads.supports(w)) << v->id;
        if (!v->runs_on_gpu) EXPECT_TRUE(v->availability().available) << v->id;
    }
    std::set<std::string> expected;
    for (const std::string& space : backends_in_build())
        for (const char* variant : {"naive", "packed"}) expected.insert(std::string("thrust.") + variant + "@" + space);
    EXPECT_EQ(listed, expected);
    EXPECT_EQ(builtin_registry().build_facts().count("thrust_version"), 1u);
}

struct Case {
    std::string id;
    TuningValues tuning;
    Workload workload;
    std::string name;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::string workload_name(const Workload& w) {
    return std::to_string(w.dim) + "d_" + to_string(w.precision) + "_" + to_string(w.integrator);
}

std::vector<Case> cases() {
    std::vector<Case> out;
    for (const VariantDescriptor* v : thrust_variants()) {
        for (const Workload& w : all_workloads())
            for (const char* map : {"atomic", "sort"})
                out.push_back({v->id, {{"map", map}}, w, v->id + "/map=" + map + "/" + workload_name(w)});
        if (v->id.rfind("thrust.packed@", 0) == 0)
            for (const char* bodies : {"1", "2", "8"})
                for (const Workload& w : {Workload{}, Workload{.dim = 3, .precision = Precision::fp64,
                                                                 .integrator = Integrator::leapfrog}})
                    out.push_back({v->id, {{"bodies", bodies}}, w,
                                   v->id + "/bodies=" + bodies + "/" + workload_name(w)});
    }
    return out;
}

class EveryWorkload : public ::testing::TestWithParam<Case> {};

TEST_P(EveryWorkload, AgreesWithTheReference) {
    const Case& c = GetParam();
    const VariantDescriptor& v = *builtin_registry().find(c.id);
    if (const Availability a = v.availability(); !a.available) GTEST_SKIP() << a.reason;
    const Problem problem{.n = kBodies, .d = kMapSize, .constants = {}, .workload = c.workload, .distribution = {}};
    auto sim = v.create(problem, Registry::resolve_tuning(v, c.tuning));
    testing::expect_agrees_with_reference(*sim, c.workload, kBodies, kSteps, kMapSize, c.name, false);
}

INSTANTIATE_TEST_SUITE_P(Thrust, EveryWorkload, ::testing::ValuesIn(cases()), [](const auto& info) {
    std::string name = info.param.name;
    for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return name;
});

}  // namespace
}  // namespace nbody
