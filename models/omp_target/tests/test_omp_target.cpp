// The omp_target variants' own promises. Each is listed as an omp_target GPU variant for every
// workload, available exactly when libgomp finds an offload device, and without one refuses to
// run (libgomp would otherwise run the target regions on the host). Asked explicitly for the host
// (what CI can run), every variant computes the reference's answer on every workload, at a size
// that is not a multiple of any team, lane group or tile, with each tuning's other values. With a
// GPU present the same tests run on it (libgomp offloads whenever it finds a device), and one
// Euler step must leave the positions exactly where they started: the bodies start at rest and
// drift first, so any other value is device memory the kernels or copies got wrong.
#include <gtest/gtest.h>
#include <omp.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "nbody/generator.hpp"
#include "nbody/registry.hpp"
#include "omp_target.hpp"
#include "reference_check.hpp"
#include "test_support.hpp"
#include "verify/verification.hpp"

namespace nbody {
namespace {

using testing::registered_variant;

constexpr std::size_t kBodies = 301;
constexpr int kMapSize = 16;
constexpr int kSteps = 3;

const std::vector<std::string> kLadder = {"omp_target.naive", "omp_target.simd", "omp_target.simd_j",
                                          "omp_target.multi_i", "omp_target.tiled"};

TEST(OmpTarget, EveryRungIsListedAsAGpuVariantOfEveryWorkload) {
    std::vector<std::string> listed;
    for (const auto& v : builtin_registry().all())
        if (v.backend == "omp_target") listed.push_back(v.id);
    EXPECT_EQ(listed, kLadder);
    for (const auto& id : kLadder) {
        const VariantDescriptor& v = registered_variant(id);
        EXPECT_TRUE(v.runs_on_gpu) << id;
        EXPECT_NE(v.description.find(builtin_registry().build_facts().at("omp_target_compiler")), std::string::npos)
            << id << ": the description names the compiler";
        for (const Workload& w : all_workloads()) EXPECT_TRUE(v.workloads.supports(w)) << id;
    }
    EXPECT_EQ(builtin_registry().build_facts().count("omp_target_compiler"), 1u);
}

TEST(OmpTarget, AvailableExactlyWhenLibgompFindsADevice) {
    const bool device = omp_get_num_devices() > 0;
    for (const auto& id : kLadder) {
        const Availability a = registered_variant(id).availability();
        EXPECT_EQ(a.available, device) << id;
        if (!device) {
            EXPECT_NE(a.reason.find("no OpenMP offload device"), std::string::npos) << a.reason;
        }
    }
}

TEST(OmpTarget, WithoutADeviceTheListedVariantRefusesTheHost) {
    if (omp_get_num_devices() > 0) GTEST_SKIP() << "an offload device is present";
    const VariantDescriptor& v = registered_variant("omp_target.simd");
    const Problem problem{.n = kBodies, .d = kMapSize, .constants = {}, .workload = {}, .distribution = {}};
    EXPECT_THROW(v.create(problem, Registry::resolve_tuning(v, {})), std::runtime_error);
}

struct Case {
    std::string id;
    TuningValues tuning;
    Workload workload;
    std::string name;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::vector<Case> cases() {
    std::vector<Case> out;
    for (const auto& id : kLadder)
        for (const Workload& w : all_workloads())
            out.push_back({id, {}, w, id + "/" + std::to_string(w.dim) + "d_" + to_string(w.precision) + "_" +
                                          to_string(w.integrator)});
    // Few teams and threads: each team takes several blocks of bodies (the distribute loops).
    for (const auto& id : {"omp_target.simd", "omp_target.simd_j", "omp_target.multi_i", "omp_target.tiled"})
        out.push_back({id, {{"teams", "3"}, {"threads", "2"}}, Workload{}, std::string(id) + "/teams=3,threads=2"});
    out.push_back({"omp_target.multi_i", {{"bodies", "2"}}, Workload{}, "omp_target.multi_i/bodies=2"});
    return out;
}

class OnTheHost : public ::testing::TestWithParam<Case> {};

TEST_P(OnTheHost, AgreesWithTheReference) {
    const Case& c = GetParam();
    const VariantDescriptor& v = registered_variant(c.id);
    const Problem problem{.n = kBodies, .d = kMapSize, .constants = {}, .workload = c.workload, .distribution = {}};
    auto sim = omp_target::create_simulation(c.id, problem, Registry::resolve_tuning(v, c.tuning),
                                             omp_target::OffloadDevice::host_fallback_allowed);
    testing::expect_agrees_with_reference(*sim, c.workload, kBodies, kSteps, kMapSize, c.name, true);
}

template <class Real>
void expect_positions_unchanged(const BodiesT<Real>& initial, const BodiesT<Real>& after, const std::string& name) {
    for (int k = 0; k < initial.dim; ++k)
        for (std::size_t i = 0; i < initial.size(); ++i) {
            ASSERT_EQ(initial.velocity(k)[i], Real(0)) << "the generator starts bodies at rest";
            ASSERT_EQ(after.position(k)[i], initial.position(k)[i]) << name << ": body " << i << " axis " << k;
        }
}

TEST_P(OnTheHost, OneEulerStepLeavesThePositionsWhereTheyStarted) {
    const Case& c = GetParam();
    if (c.workload.integrator != Integrator::euler) GTEST_SKIP() << "leapfrog kicks before the drift";
    const VariantDescriptor& v = registered_variant(c.id);
    const Problem problem{.n = kBodies, .d = kMapSize, .constants = {}, .workload = c.workload, .distribution = {}};
    auto sim = omp_target::create_simulation(c.id, problem, Registry::resolve_tuning(v, c.tuning),
                                             omp_target::OffloadDevice::host_fallback_allowed);
    const HostState initial = generate_state(c.workload, kBodies, 42);
    std::visit(
        [&](const auto& start) {
            using Bodies = std::decay_t<decltype(start)>;
            sim->upload(start);
            sim->advance(1);
            Bodies after(start.size(), start.dim);
            std::vector<float> map;
            sim->download(after, map);
            expect_positions_unchanged(start, after, c.name);
        },
        initial);
}

INSTANTIATE_TEST_SUITE_P(EveryRung, OnTheHost, ::testing::ValuesIn(cases()),
                         [](const auto& info) {
                             std::string name = info.param.name;
                             for (char& ch : name)
                                 if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                             return name;
                         });

}  // namespace
}  // namespace nbody
