// The verifier against planted bugs (tests/mutant_variants.hpp): each FAILs by the rounding rule,
// whose constants are pinned here (docs/verification.md measures them), on the generated state and
// on two hard inputs. Also the "workload not supported" refusal of `run`, through a
// test-only variant that declares the canonical workload only.
#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "mutant_variants.hpp"
#include "nbody/errors.hpp"
#include "nbody/generator.hpp"
#include "nbody/stress.hpp"
#include "test_support.hpp"
#include "verify/verification.hpp"

namespace nbody {
namespace {

using testing::Mutation;

// verify's defaults: N = 1000, D = 10, after 1 and 10 steps.
constexpr std::size_t kBodies = 1000;
constexpr int kMapSize = 10;

// The inputs every mutant is checked on: the generated state and two hard inputs.
struct Input {
    const char* name;
    std::optional<StressKind> hard;
};
const Input kInputs[] = {{"generated", std::nullopt}, {"mixed", StressKind::mixed}, {"outside", StressKind::outside}};

// One input of one workload and its reference, computed once and shared by every mutant.
struct Case {
    HostState initial;
    PhysicsConstants constants;
    ReferenceSolution reference;
};

Case make_case(const Workload& workload, const Input& input) {
    HostState initial;
    PhysicsConstants constants;
    if (input.hard) {
        StressCase stress = stress_state(*input.hard, kBodies, workload.dim, workload.precision);
        initial = std::move(stress.state);
        constants = stress.constants;
    } else {
        initial = generate_state(workload, kBodies);
    }
    ReferenceSolution reference(initial, constants, workload.integrator, {1, 10}, VerificationSettings{});
    return {std::move(initial), constants, std::move(reference)};
}

std::vector<CheckResult> verify_mutant(Mutation mutation, const Workload& workload, const Case& c) {
    auto sim = testing::create_mutant(
        Problem{.n = kBodies, .d = kMapSize, .constants = c.constants, .workload = workload, .distribution = {}}, mutation);
    return verify_simulation(*sim, c.initial, c.reference, kMapSize);
}

std::vector<CheckResult> verify_mutant(Mutation mutation, const Workload& workload, const Input& input = kInputs[0]) {
    return verify_mutant(mutation, workload, make_case(workload, input));
}

// The failures of the checks, "" when every check passed.
std::string failures(const std::vector<CheckResult>& results) {
    std::string text;
    for (const CheckResult& r : results)
        if (!r.passed) text += fmt::format("K={} {}: {}; ", r.steps, to_string(r.verdict), r.failure);
    return text;
}

TEST(RoundingRule, ConstantsArePinned) {
    EXPECT_EQ(kRoundingMultiple, 16);
    EXPECT_EQ(kValueUlps, 4);
    EXPECT_EQ(kInconclusiveAmplification, 1e4);
    // compare_states' fixed limits (a distributed result against one rank's).
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
    EXPECT_FALSE(VerificationSettings{}.overrides.max_vel_err.has_value());  // the rule decides by default
}

TEST(Mutants, TheControlPassesEveryWorkloadAndInput) {
    for (const Input& input : kInputs)
        for (const Workload& w : testing::workloads_under_test())
            EXPECT_EQ(failures(verify_mutant(Mutation::none, w, input)), "") << input.name << " " << to_string(w);
}

// Where a mutation changes anything: Euler's update order and the in-place race exist under Euler
// only (leapfrog's second half moves no position); a float32 stage only in float64 workloads.
bool applies(Mutation mutation, const Workload& w) {
    switch (mutation) {
        case Mutation::in_place_race:
        case Mutation::velocity_first: return w.integrator == Integrator::euler;
        case Mutation::float32_stage: return w.precision == Precision::fp64;
        default: return true;
    }
}

// Every planted bug FAILs at least one check (not INCONCLUSIVE) of every workload it applies to,
// on the generated state and on both hard inputs. Each input's reference is computed once for
// every mutant; the sanitizer and Clang stages narrow the workloads (NBODY_TEST_WORKLOADS).
TEST(Mutants, EveryMutantFailsOnEveryInput) {
    for (const Input& input : kInputs)
        for (const Workload& w : testing::workloads_under_test()) {
            const Case c = make_case(w, input);
            for (const auto& [id, mutation] : testing::kMutants) {
                if (!applies(mutation, w)) continue;
                const auto results = verify_mutant(mutation, w, c);
                const bool failed = std::any_of(results.begin(), results.end(),
                                                [](const CheckResult& r) { return r.verdict == Verdict::fail; });
                EXPECT_TRUE(failed) << id << " on " << input.name << " " << to_string(w) << ": "
                                    << (failures(results).empty() ? "every check passed" : failures(results));
            }
        }
}

// The in-place race errs in velocity by a few 1e-6 after 10 steps (docs/verification.md): far
// beyond the rule's multiple of the shadows' rounding; after one step from rest it changes nothing.
TEST(Mutants, InPlaceRaceIsCaughtByTheVelocities) {
    const auto results = verify_mutant(Mutation::in_place_race, Workload{});
    ASSERT_EQ(results.size(), 2u);
    EXPECT_TRUE(results[0].passed) << "bodies start at rest: the first step moves no position";
    EXPECT_EQ(results[1].verdict, Verdict::fail);
    EXPECT_NE(results[1].failure.find("max_vel_err"), std::string::npos) << results[1].failure;
    EXPECT_GT(results[1].errors.vel_rounding_multiple, kRoundingMultiple);
}

TEST(Mutants, VelocityBeforePositionIsCaught) {
    const std::string why = failures(verify_mutant(Mutation::velocity_first, Workload{}));
    EXPECT_NE(why.find("max_pos_err"), std::string::npos) << why;
}

TEST(Mutants, DroppedJTileIsCaughtAfterOneStep) {
    for (const Workload& w : testing::workloads_under_test()) {
        const auto results = verify_mutant(Mutation::dropped_j_tile, w);
        EXPECT_EQ(results.front().verdict, Verdict::fail) << to_string(w) << ": caught after one step";
        EXPECT_NE(failures(results).find("max_vel_err"), std::string::npos) << to_string(w);
    }
}

// A lost map update: positions and velocities exact, the map alone fails.
TEST(Mutants, LostMapUpdateIsCaughtByTheMap) {
    for (const CheckResult& r : verify_mutant(Mutation::lost_map_update, Workload{})) {
        EXPECT_EQ(r.verdict, Verdict::fail);
        EXPECT_NE(r.failure.find("map:"), std::string::npos) << r.failure;
    }
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
