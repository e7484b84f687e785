// The Thrust variants' own promises: on every backend this build has, each variant is listed for
// every workload (GPU ones as GPU variants, available exactly when a CUDA device is found), and
// each available one computes the reference's answer on every workload with each map counting, at
// a size that is not a multiple of any group of bodies (each `bodies` of thrust.packed and
// thrust.split_j too, and chunk counts that split the bodies j unevenly), the map exactly.
// thrust.split_j refuses at upload the masses its m^-1/2 scaling cannot keep finite. (Several ranks
// are refused by the harness: the variants are not `distributed`.)
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "nbody/errors.hpp"
#include "nbody/generator.hpp"
#include "nbody/registry.hpp"
#include "overflow_check.hpp"
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

TEST(Thrust, EachBackendListsEveryVariantForEveryWorkload) {
    std::set<std::string> listed;
    for (const VariantDescriptor* v : thrust_variants()) {
        listed.insert(v->id);
        EXPECT_EQ(v->runs_on_gpu, v->execution_space == "cuda") << v->id;
        EXPECT_FALSE(v->distributed) << v->id;
        EXPECT_GT(v->expected_efficiency, 0.0) << v->id;
        for (const Workload& w : all_workloads()) EXPECT_TRUE(v->workloads.supports(w)) << v->id;
        if (!v->runs_on_gpu) {
            EXPECT_TRUE(v->availability().available) << v->id;
        }
    }
    std::set<std::string> expected;
    for (const std::string& space : backends_in_build())
        for (const char* variant : {"naive", "packed", "split_j"}) expected.insert(std::string("thrust.") + variant + "@" + space);
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
        const bool split_j = v->id.rfind("thrust.split_j@", 0) == 0;
        if (v->id.rfind("thrust.packed@", 0) == 0 || split_j)
            for (const char* bodies : {"1", "2", "8"})
                for (const Workload& w : {Workload{}, Workload{.dim = 3, .precision = Precision::fp64,
                                                                 .integrator = Integrator::leapfrog}})
                    out.push_back({v->id, {{"bodies", bodies}}, w,
                                   v->id + "/bodies=" + bodies + "/" + workload_name(w)});
        // 2 and 6 chunks: a last chunk shorter than the others (151 + 150, 5 x 51 + 46); 301:
        // one body j each. Each with one and with 4 bodies i per item.
        if (split_j)
            for (const char* chunks : {"2", "6", "301"})
                for (const char* bodies : {"1", "4"})
                    for (const Workload& w : {Workload{.dim = 3, .precision = Precision::fp32},
                                              Workload{.dim = 2, .precision = Precision::fp64,
                                                       .integrator = Integrator::leapfrog}})
                        out.push_back({v->id, {{"chunks", chunks}, {"bodies", bodies}}, w,
                                       v->id + "/chunks=" + chunks + "/bodies=" + bodies + "/" + workload_name(w)});
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

// Body 3 of a 2D state of `Real` with mass `mass`, uploaded to `v`: whether the upload refused it,
// the message naming the variant, the body and its mass.
template <class Real>
bool upload_refuses_mass(const VariantDescriptor& v, double mass) {
    const Workload workload{.dim = 2, .precision = std::is_same_v<Real, float> ? Precision::fp32 : Precision::fp64};
    const Problem problem{.n = 10, .d = kMapSize, .constants = {}, .workload = workload, .distribution = {}};
    HostState state = generate_state(workload, problem.n);
    std::get<BodiesT<Real>>(state).m[3] = static_cast<Real>(mass);
    auto sim = v.create(problem, Registry::resolve_tuning(v, {}));
    try {
        sim->upload(state);
    } catch (const UsageError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find(v.id), std::string::npos) << message;
        EXPECT_NE(message.find("body 3's mass"), std::string::npos) << message;
        return true;
    }
    return false;
}

// thrust.split_j folds each mass into its body's coordinates (s = m^-1/2, eps^2 s^2): a mass for
// which eps^2/m or the largest weight (m/eps^2)^1.5 (softening 2) leaves 1e-30..1e30 in float32 or
// 1e-300..1e300 in float64 (foldable_masses.hpp) is refused at upload, before any step.
TEST(Thrust, SplitJRefusesMassesItsScalingCannotKeepFinite) {
    for (const VariantDescriptor* v : thrust_variants()) {
        if (v->id.rfind("thrust.split_j@", 0) != 0 || !v->availability().available) continue;
        EXPECT_FALSE(upload_refuses_mass<float>(*v, 1e-15)) << v->id;
        EXPECT_FALSE(upload_refuses_mass<float>(*v, 1e15)) << v->id;
        EXPECT_TRUE(upload_refuses_mass<float>(*v, 1e-20)) << v->id;  // (m/eps^2)^1.5 = 1.25e-31
        EXPECT_TRUE(upload_refuses_mass<float>(*v, 1e21)) << v->id;   // (m/eps^2)^1.5 = 3.95e30
        EXPECT_TRUE(upload_refuses_mass<float>(*v, 0.0)) << v->id;
        EXPECT_TRUE(upload_refuses_mass<float>(*v, -1.0)) << v->id;
        EXPECT_FALSE(upload_refuses_mass<double>(*v, 1e-20)) << v->id;
        EXPECT_TRUE(upload_refuses_mass<double>(*v, 1e-301)) << v->id;  // eps^2/m = 4e301
        EXPECT_TRUE(upload_refuses_mass<double>(*v, 1e201)) << v->id;   // (m/eps^2)^1.5 = 3.95e300
    }
}

// A pair of bodies at rest 1 apart and a third so far along x that its r2' with them exceeds the
// largest Real: on the host, thrust.split_j's portable 1/sqrt takes r2' saturated in such a step
// (its estimate of 1/sqrt(inf) is not 0). After one Euler step the pair's velocities are dt G times
// their pull on each other, and after four every value is still finite.
TEST(Thrust, SplitJPullsNothingWhereRSquaredOverflows) {
    for (const VariantDescriptor* v : thrust_variants())
        if (v->id.rfind("thrust.split_j@", 0) == 0 && v->availability().available)
            testing::expect_overflowing_r2_pulls_nothing(*v, kMapSize);
}

}  // namespace
}  // namespace nbody
