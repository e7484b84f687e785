// The OpenACC variants' own promises. Each variant is listed twice: as a GPU variant, available
// exactly when the build has the offload compiler and libgomp finds an NVIDIA device, refusing to
// start otherwise, and as @host, always available. Both code paths compute the
// reference's answer on every workload at a size that is not a multiple of any vector or group of
// bodies, the map exactly: @host with its `if` clauses false, the GPU path on the GPU where there
// is one and otherwise through libgomp's host fallback (what CI can run).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "nbody/generator.hpp"
#include "nbody/registry.hpp"
#include "openacc.hpp"
#include "reference_check.hpp"
#include "verify/verification.hpp"

namespace nbody {
namespace {

constexpr std::size_t kBodies = 301;
constexpr int kMapSize = 16;
constexpr int kSteps = 3;

const std::vector<std::string> kNames = {"naive", "multi_i"};

bool build_offloads() {
    return builtin_registry().build_facts().at("openacc_compiler").find("nvptx-none") != std::string::npos;
}

TEST(Openacc, EachVariantIsListedForTheHostAndForTheGpu) {
    std::set<std::string> listed, expected;
    for (const auto& v : builtin_registry().all())
        if (v.backend == "openacc") listed.insert(v.id);
    for (const auto& name : kNames) {
        expected.insert("openacc." + name + "@host");
        expected.insert("openacc." + name);
    }
    EXPECT_EQ(listed, expected);
    for (const auto& id : listed) {
        const VariantDescriptor& v = *builtin_registry().find(id);
        const bool host = id.ends_with("@host");
        EXPECT_EQ(v.runs_on_gpu, !host) << id;
        EXPECT_FALSE(v.distributed) << id;
        EXPECT_GT(v.expected_efficiency, 0.0) << id;
        for (const Workload& w : all_workloads()) EXPECT_TRUE(v.workloads.supports(w)) << id;
        if (host) {
            EXPECT_TRUE(v.availability().available) << id;
        }
    }
    EXPECT_EQ(builtin_registry().build_facts().count("openacc_compiler"), 1u);
}

TEST(Openacc, TheGpuVariantsAreAvailableExactlyWhenTheBuildOffloadsAndLibgompFindsADevice) {
    const bool device = build_offloads() && openacc::nvidia_devices() > 0;
    for (const auto& name : kNames) {
        const VariantDescriptor& v = *builtin_registry().find("openacc." + name);
        const Availability a = v.availability();
        EXPECT_EQ(a.available, device) << v.id;
        if (!device) {
            EXPECT_NE(a.reason.find(build_offloads() ? "no OpenACC device" : "no OpenACC offload compiler"),
                      std::string::npos)
                << a.reason;
            const Problem problem{.n = kBodies, .d = kMapSize, .constants = {}, .workload = {}, .distribution = {}};
            EXPECT_THROW(v.create(problem, Registry::resolve_tuning(v, {})), std::runtime_error) << v.id;
        }
    }
}

struct Case {
    std::string name;  // the variant's name
    openacc::Target target;
    TuningValues tuning;
    Workload workload;
    std::string label;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.label; }

std::vector<Case> cases() {
    std::vector<Case> out;
    for (const auto& name : kNames)
        for (const auto target : {openacc::Target::host, openacc::Target::gpu_or_host_fallback})
            for (const Workload& w : all_workloads())
                out.push_back({name, target, {}, w,
                               name + (target == openacc::Target::host ? "/host/" : "/gpu_path/") +
                                   std::to_string(w.dim) + "d_" + to_string(w.precision) + "_" + to_string(w.integrator)});
    for (const char* bodies : {"1", "2"})
        out.push_back({"multi_i", openacc::Target::host, {{"bodies", bodies}}, Workload{},
                       std::string("multi_i/host/bodies=") + bodies});
    return out;
}

class EveryWorkload : public ::testing::TestWithParam<Case> {};

TEST_P(EveryWorkload, AgreesWithTheReference) {
    const Case& c = GetParam();
    const VariantDescriptor& v = *builtin_registry().find("openacc." + c.name + "@host");  // the tunings
    const Problem problem{.n = kBodies, .d = kMapSize, .constants = {}, .workload = c.workload, .distribution = {}};
    auto sim = openacc::create_simulation(c.name, problem, Registry::resolve_tuning(v, c.tuning), c.target);
    testing::expect_agrees_with_reference(*sim, c.workload, kBodies, kSteps, kMapSize, c.label, false);
}

INSTANTIATE_TEST_SUITE_P(Openacc, EveryWorkload, ::testing::ValuesIn(cases()), [](const auto& info) {
    std::string name = info.param.label;
    for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return name;
});

}  // namespace
}  // namespace nbody
