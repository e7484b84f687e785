// The published 2D tiling ladder (docs/references.md): cuda.pairwise (its GPU0) and cuda.tiled2d_stepwise (its GPU2
// to GPU8 as tunings). Without a GPU: the study's rules (len * luf <= 1024, luf >= wid) and ours
// are usage errors naming the rule before any device call, and every shape of the study's grid
// passes them. With a GPU: every rung with every row reduction (hand, CUB, cuBLAS), on the study's
// 3D leapfrog workload and the canonical 2D one, passes the verifier's checks (positions,
// velocities, map) after 1 and 10 steps, and so do the other partial-sum variants with
// reduction=cublas; without one, those checks are shown to catch a kernel that computes no force.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <utility>
#include <memory>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "mutant_variants.hpp"
#include "nbody/errors.hpp"
#include "nbody/generator.hpp"
#include "nbody/reference.hpp"
#include "nbody/registry.hpp"
#include "test_support.hpp"
#include "verify/verification.hpp"

namespace nbody {
namespace {

using testing::registered_variant;

const std::string kStepwise = "cuda.tiled2d_stepwise";
const Workload kThreeDLeapfrog{.dim = 3, .precision = Precision::fp32, .integrator = Integrator::leapfrog};
const Workload kCanonical{};

bool gpu_present() { return registered_variant(kStepwise).availability().available; }

std::unique_ptr<Simulation> create(const std::string& id, const TuningValues& tuning, std::size_t n,
                                   const Workload& w = kThreeDLeapfrog) {
    const VariantDescriptor& v = registered_variant(id);
    return v.create(Problem{.n = n, .d = 10, .constants = {}, .workload = w, .distribution = {}}, Registry::resolve_tuning(v, tuning));
}

// The UsageError's message, or "" when create() refused nothing before the device.
std::string usage_error_of(const std::string& id, const TuningValues& tuning, const Workload& w = kThreeDLeapfrog) {
    try {
        create(id, tuning, 1000, w);
    } catch (const UsageError& e) {
        return e.what();
    } catch (const std::runtime_error&) {
        if (gpu_present()) throw;  // without a GPU the first device call fails after the checks
    }
    return "";
}

// The rungs as the report climbs them, each on its predecessor.
struct Rung {
    std::string name;
    TuningValues tuning;
};
const std::vector<Rung>& rungs() {
    static const std::vector<Rung> all = [] {
        std::vector<Rung> out;
        TuningValues t = {{"rsqrt", "off"},        {"shared_memory", "off"},        {"register_reduction", "off"},
                          {"bank_conflict_avoidance", "off"}, {"compile_time_shape", "off"}, {"reduction", "hand"}};
        out.push_back({"GPU2", t});
        t["rsqrt"] = "on";
        out.push_back({"GPU3", t});
        t["shared_memory"] = "on";
        out.push_back({"GPU4", t});
        t["register_reduction"] = "on";
        out.push_back({"GPU5", t});
        t["bank_conflict_avoidance"] = "on";
        out.push_back({"GPU6", t});
        t["reduction"] = "cublas";
        out.push_back({"GPU7", t});
        t["compile_time_shape"] = "on";
        out.push_back({"GPU8", t});
        return out;
    }();
    return all;
}

TEST(StepwiseRules, LenTimesLufAbove1024IsRefused) {
    const std::string message = usage_error_of(kStepwise, {{"len", "2"}, {"luf", "1024"}, {"wid", "64"}});
    EXPECT_NE(message.find("len * luf <= 1024"), std::string::npos) << message;
    EXPECT_NE(message.find("len=2"), std::string::npos) << message;
}

TEST(StepwiseRules, LufBelowWidIsRefused) {
    const std::string message = usage_error_of(kStepwise, {{"wid", "512"}, {"luf", "256"}});
    EXPECT_NE(message.find("luf >= wid"), std::string::npos) << message;
}

TEST(StepwiseRules, StagingTuningsNeedSharedMemory) {
    for (const char* tuning : {"register_reduction", "bank_conflict_avoidance"}) {
        const std::string message = usage_error_of(kStepwise, {{"shared_memory", "off"}, {tuning, "on"}});
        EXPECT_NE(message.find("need shared_memory=on"), std::string::npos) << tuning << ": " << message;
    }
}

TEST(StepwiseRules, CompileTimeShapeIsCompiledOnTheGpu7KernelAndFloat32Only) {
    for (const char* off : {"rsqrt", "bank_conflict_avoidance"}) {
        const std::string message = usage_error_of(kStepwise, {{"compile_time_shape", "on"}, {off, "off"}});
        EXPECT_NE(message.find("GPU7 kernel only"), std::string::npos) << off << ": " << message;
    }
    const Workload fp64{.dim = 3, .precision = Precision::fp64, .integrator = Integrator::leapfrog};
    const std::string message = usage_error_of(kStepwise, {{"compile_time_shape", "on"}}, fp64);
    EXPECT_NE(message.find("float32 workloads only"), std::string::npos) << message;
}

TEST(StepwiseRules, ValuesOutsideTheReportsGridAreRefused) {
    EXPECT_THROW(Registry::resolve_tuning(registered_variant(kStepwise), {{"len", "8"}}), UsageError);
    EXPECT_THROW(Registry::resolve_tuning(registered_variant(kStepwise), {{"wid", "32"}}), UsageError);
    EXPECT_THROW(Registry::resolve_tuning(registered_variant(kStepwise), {{"luf", "2048"}}), UsageError);
    EXPECT_THROW(Registry::resolve_tuning(registered_variant(kStepwise), {{"reduction", "gemm"}}), UsageError);
}

TEST(StepwiseRules, EveryShapeTheReportAllowsPassesOnEveryRung) {
    int allowed = 0;
    for (int len : {1, 2, 4})
        for (int wid : {64, 128, 256, 512})
            for (int luf : {256, 512, 1024}) {
                if (len * luf > 1024 || luf < wid) continue;
                ++allowed;
                for (const Rung& rung : rungs()) {
                    TuningValues t = rung.tuning;
                    t["len"] = std::to_string(len);
                    t["wid"] = std::to_string(wid);
                    t["luf"] = std::to_string(luf);
                    EXPECT_EQ(usage_error_of(kStepwise, t), "") << rung.name << " len=" << len << " wid=" << wid << " luf=" << luf;
                }
            }
    EXPECT_EQ(allowed, 21);  // luf 256: 3 len x 3 wid; 512: 2 x 4; 1024: 1 x 4
}

TEST(StepwiseRules, Gpu0OffersTheReportsBlockSizes) {
    for (const char* block : {"16", "64", "128", "256"})
        EXPECT_NO_THROW(Registry::resolve_tuning(registered_variant("cuda.pairwise"), {{"block_size", block}})) << block;
}

// The verifier's checks, as `verify` makes them (its rounding rule:
// positions, velocities and every map count explained), after 1 and 10 steps at D = 10, from the
// generated state. A reference per N and workload, computed once.
constexpr int kMapSize = 10;
const ReferenceSolution& reference_for(std::size_t n, const Workload& w) {
    static std::map<std::pair<std::size_t, Workload>, std::unique_ptr<ReferenceSolution>> cache;
    auto& slot = cache[{n, w}];
    if (!slot) slot = std::make_unique<ReferenceSolution>(generate_state(w, n), PhysicsConstants{}, w.integrator,
                                                          std::vector<int>{1, 10}, VerificationSettings{});
    return *slot;
}

// Each failed check's reason; "" when all passed.
std::string failures_of(Simulation& sim, std::size_t n, const Workload& w) {
    std::string text;
    for (const CheckResult& r : verify_simulation(sim, generate_state(w, n), reference_for(n, w), kMapSize))
        if (!r.passed) text += "K=" + std::to_string(r.steps) + ": " + r.failure + "; ";
    return text;
}

std::string verification_failures(const std::string& id, const TuningValues& tuning, std::size_t n, const Workload& w) {
    return failures_of(*create(id, tuning, n, w), n, w);
}

// The check above catches a kernel that computes no force (it erred by only 5.1e-5 to 9.8e-5 in
// position after 2 steps, inside the 1e-4 position threshold alone), on both ladder workloads.
TEST(StepwiseLadder, TheCheckCatchesAKernelWithoutForce) {
    for (const Workload& w : {kThreeDLeapfrog, kCanonical}) {
        auto no_force = testing::create_mutant(Problem{.n = 1000, .d = kMapSize, .constants = {}, .workload = w, .distribution = {}},
                                               testing::Mutation::no_force);
        const std::string why = failures_of(*no_force, 1000, w);
        EXPECT_NE(why.find("K=1: "), std::string::npos) << to_string(w) << ": " << why;
        EXPECT_NE(why.find("K=10: "), std::string::npos) << to_string(w) << ": " << why;
        EXPECT_NE(why.find("max_vel_err"), std::string::npos) << to_string(w) << ": " << why;
        auto correct = testing::create_mutant(Problem{.n = 1000, .d = kMapSize, .constants = {}, .workload = w, .distribution = {}},
                                              testing::Mutation::none);
        EXPECT_EQ(failures_of(*correct, 1000, w), "") << to_string(w);
    }
}

TEST(StepwiseLadder, EveryRungAndReductionAgreesWithTheReference) {
    if (!gpu_present()) GTEST_SKIP() << registered_variant(kStepwise).availability().reason;
    // Shapes with 1, 2 and 4 threads per body; N not a multiple of any chunk.
    const std::vector<TuningValues> shapes = {{{"len", "1"}, {"wid", "64"}, {"luf", "256"}},
                                              {{"len", "2"}, {"wid", "256"}, {"luf", "512"}},
                                              {{"len", "4"}, {"wid", "128"}, {"luf", "256"}}};
    for (const Workload& w : {kThreeDLeapfrog, kCanonical})
        for (const Rung& rung : rungs())
            for (const char* reduction : {"hand", "cub", "cublas"})
                for (const TuningValues& shape : shapes) {
                    TuningValues t = rung.tuning;
                    t.insert(shape.begin(), shape.end());
                    t["reduction"] = reduction;
                    for (std::size_t n : {1000u, 4099u})
                        EXPECT_EQ(verification_failures(kStepwise, t, n, w), "")
                            << rung.name << " reduction=" << reduction << " len=" << t["len"] << " N=" << n << " "
                            << to_string(w);
                }
}

TEST(StepwiseLadder, Float64RunsTheRuntimeShapeRungs) {
    if (!gpu_present()) GTEST_SKIP() << registered_variant(kStepwise).availability().reason;
    const Workload fp64{.dim = 3, .precision = Precision::fp64, .integrator = Integrator::leapfrog};
    for (const Rung& rung : rungs()) {
        if (rung.tuning.at("compile_time_shape") == "on") continue;
        EXPECT_EQ(verification_failures(kStepwise, rung.tuning, 1000, fp64), "") << rung.name;
    }
}

TEST(StepwiseLadder, Gpu0AndTheOtherPartialSumVariantsWithCublas) {
    if (!gpu_present()) GTEST_SKIP() << registered_variant(kStepwise).availability().reason;
    for (const Workload& w : {kThreeDLeapfrog, kCanonical})
        for (const char* block : {"16", "128"})
            EXPECT_EQ(verification_failures("cuda.pairwise", {{"block_size", block}}, 1000, w), "") << block;
    EXPECT_EQ(verification_failures("cuda.tiled2d", {{"reduction", "cublas"}}, 4099, kThreeDLeapfrog), "");
    EXPECT_EQ(verification_failures("cuda.force_matrix", {{"reduction", "cublas"}}, 1000, kCanonical), "");
}

}  // namespace
}  // namespace nbody
