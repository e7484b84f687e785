// The verifier against planted bugs (tests/mutant_variants.hpp): each is caught at the default
// thresholds, which are pinned here (docs/verification.md justifies each value by a measured
// error and by the bug it catches). Also the "workload not supported" refusal of `run`, through a
// test-only variant that declares the canonical workload only.
#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "mutant_variants.hpp"
#include "nbody/errors.hpp"
#include "nbody/generator.hpp"
#include "test_support.hpp"
#include "verify/verification.hpp"

namespace nbody {
namespace {

using testing::Mutation;

// verify's defaults: N = 1000, D = 10, after 1 and 10 steps.
constexpr std::size_t kBodies = 1000;
constexpr int kMapSize = 10;

std::vector<CheckResult> verify_mutant(Mutation mutation, const Workload& workload) {
    const HostState initial = generate_state(workload, kBodies);
    const VerificationSettings settings;
    const ReferenceSolution reference(initial, {}, workload.integrator, {1, 10}, settings);
    auto sim = testing::create_mutant(Problem{.n = kBodies, .d = kMapSize, .constants = {}, .workload = workload}, mutation);
    return verify_simulation(*sim, initial, reference, kMapSize, settings.thresholds_for(workload.precision));
}

// The failures of the checks, "" when every check passed.
std::string failures(const std::vector<CheckResult>& results) {
    std::string text;
    for (const CheckResult& r : results)
        if (!r.passed) text += fmt::format("K={}: {}; ", r.steps, r.failure);
    return text;
}

TEST(DefaultThresholds, ArePinned) {
    const Thresholds fp32 = default_thresholds(Precision::fp32);
    EXPECT_EQ(fp32.max_pos_err, 1e-4);
    EXPECT_EQ(fp32.max_rms_pos_err, 1e-5);
    EXPECT_EQ(fp32.max_vel_err, 1e-6);
    EXPECT_FALSE(fp32.max_map_diff.has_value());  // every map count must be explained
    const Thresholds fp64 = default_thresholds(Precision::fp64);
    EXPECT_EQ(fp64.max_pos_err, 1e-12);
    EXPECT_EQ(fp64.max_rms_pos_err, 1e-13);
    EXPECT_EQ(fp64.max_vel_err, 1e-12);
    EXPECT_FALSE(fp64.max_map_diff.has_value());
    EXPECT_EQ(VerificationSettings{}.thresholds_for(Precision::fp32).max_vel_err, 1e-6);
}

TEST(Mutants, TheControlPassesEveryWorkload) {
    for (const Workload& w : all_workloads()) EXPECT_EQ(failures(verify_mutant(Mutation::none, w)), "") << to_string(w);
}

// The in-place race errs in velocity by a few 1e-6 after 10 steps (docs/verification.md: 4.4e-6):
// caught by max_vel_err = 1e-6, not by 1e-4.
TEST(Mutants, InPlaceRaceIsCaughtByTheVelocityThreshold) {
    const auto results = verify_mutant(Mutation::in_place_race, Workload{});
    ASSERT_EQ(results.size(), 2u);
    EXPECT_TRUE(results[0].passed) << "bodies start at rest: the first step moves no position";
    EXPECT_FALSE(results[1].passed);
    EXPECT_NE(results[1].failure.find("max_vel_err"), std::string::npos) << results[1].failure;
    EXPECT_GT(results[1].errors.max_vel_err, 1e-6);
    EXPECT_LT(results[1].errors.max_vel_err, 1e-4);
}

TEST(Mutants, VelocityBeforePositionIsCaught) {
    const std::string why = failures(verify_mutant(Mutation::velocity_first, Workload{}));
    EXPECT_NE(why.find("max_pos_err"), std::string::npos) << why;
}

TEST(Mutants, DroppedJTileIsCaught) {
    for (const Workload& w : all_workloads()) {
        const auto results = verify_mutant(Mutation::dropped_j_tile, w);
        EXPECT_FALSE(results.front().passed) << to_string(w) << ": caught after one step";
        EXPECT_NE(failures(results).find("max_vel_err"), std::string::npos) << to_string(w);
    }
}

// A kernel that computes no force: caught after 1 and after 10 steps in every workload.
TEST(Mutants, NoForceIsCaughtAtEveryCheck) {
    for (const Workload& w : all_workloads())
        for (const CheckResult& r : verify_mutant(Mutation::no_force, w))
            EXPECT_FALSE(r.passed) << to_string(w) << " K=" << r.steps;
}

// Test-only variants never reach nbody-bench's list.
TEST(Mutants, NbodyBenchNeverListsThem) {
    testing::TempDir dir;
    const std::string out = dir.file("list.txt");
    const int raw = std::system(fmt::format("{} list >{} 2>&1", NBODY_BENCH_PATH, out).c_str());
    ASSERT_TRUE(WIFEXITED(raw) && WEXITSTATUS(raw) == 0) << testing::read_text(out);
    const std::string listed = testing::read_text(out);
    EXPECT_NE(listed.find("serial.reference"), std::string::npos) << listed;
    EXPECT_EQ(listed.find("mutant."), std::string::npos) << listed;
    EXPECT_EQ(listed.find("testonly."), std::string::npos) << listed;
}

// `run` as main() runs it (a UsageError is exit status 2), in this process, where the test-only
// variant that runs the canonical workload only is registered.
std::optional<std::string> usage_error_of_run(const std::vector<std::string>& args, int& exit_status) {
    static const bool registered = [] {
        builtin_registry().add(testing::two_d_only_descriptor());
        return true;
    }();
    (void)registered;
    CLI::App app;
    app.require_subcommand(1);
    add_run_command(app, exit_status);
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    try {
        app.parse(reversed);
    } catch (const UsageError& e) {
        return std::string(e.what());
    }
    return std::nullopt;
}

TEST(UnsupportedWorkload, RunRefusesItNamingWhatTheVariantRuns) {
    int exit_status = 0;
    const auto refused = usage_error_of_run({"run", "--variant", "testonly.two_d_only", "-n", "16", "--dim", "3"}, exit_status);
    ASSERT_TRUE(refused.has_value()) << "3D accepted by a variant that declares 2D only";
    EXPECT_NE(refused->find("testonly.two_d_only"), std::string::npos) << *refused;
    EXPECT_NE(refused->find("3d/fp32/euler"), std::string::npos) << *refused;
    EXPECT_NE(refused->find("dim 2, fp32, euler"), std::string::npos) << *refused;
    EXPECT_EQ(refused->find('\n'), std::string::npos) << *refused;
    // The workload it declares runs.
    const auto accepted = usage_error_of_run({"run", "--variant", "testonly.two_d_only", "-n", "16", "--steps", "2"}, exit_status);
    EXPECT_FALSE(accepted.has_value()) << *accepted;
    EXPECT_EQ(exit_status, 0);
}

}  // namespace
}  // namespace nbody
