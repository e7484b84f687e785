// nbody-bench as a user runs it: list, run, written files, and exit status 2 with a one-line
// message on bad input, leaving nothing half-written.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "io/io.hpp"
#include "matrix/estimate.hpp"
#include "nbody/errors.hpp"
#include "nbody/model_registration.hpp"
#include "nbody/registry.hpp"
#include "results/results.hpp"
#include "test_support.hpp"

namespace nbody {
namespace {

using testing::TempDir;

using testing::Outcome;

// env: variable assignments put before the command ("NAME=value ...").
Outcome run_bench(const std::string& args, const TempDir& dir, const std::string& env = "") {
    return testing::run_capturing(env + std::string(NBODY_BENCH_PATH) + " " + args, dir);
}

int line_count(const std::string& text) { return static_cast<int>(std::count(text.begin(), text.end(), '\n')); }

TEST(Cli, ListShowsTheSerialReferenceAvailable) {
    TempDir dir;
    const Outcome r = run_bench("list", dir);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("serial.reference"), std::string::npos);
    const auto line = r.out.substr(r.out.find("serial.reference"));
    EXPECT_NE(line.substr(0, line.find('\n')).find("yes"), std::string::npos) << line;
}

// docs/scaling.md: which variants run one simulation over several ranks.
TEST(Cli, ListSaysWhichVariantsRunOverSeveralRanks) {
    TempDir dir;
    const Outcome r = run_bench("list --variants omp.simd,omp.edge_sharing,serial.reference", dir);
    ASSERT_EQ(r.status, 0) << r.err;
    const auto column_of = [&](const std::string& id) {
        const auto start = r.out.find(id + " ");
        EXPECT_NE(start, std::string::npos) << r.out;
        std::istringstream line(r.out.substr(start, r.out.find('\n', start) - start));
        std::string variant, available, ranks;
        line >> variant >> available >> ranks;
        return ranks;
    };
    EXPECT_NE(r.out.find(" ranks "), std::string::npos) << r.out;
    EXPECT_EQ(column_of("omp.simd"), "several");
    EXPECT_EQ(column_of("omp.edge_sharing"), "one");
    EXPECT_EQ(column_of("serial.reference"), "one");
}

TEST(Cli, RunWithoutMpirunIsOneRankAndAnUnknownDeviceCollectiveExitsTwo) {
    TempDir dir;
    const Outcome one = run_bench("run --variant serial.reference -n 64 --steps 1", dir);
    ASSERT_EQ(one.status, 0) << one.err;
    EXPECT_NE(one.out.find("ranks            1 (single process)"), std::string::npos) << one.out;
    // Every kind is accepted; a single process calls none.
    for (const char* kind : {"nccl", "host-staged", "peer"})
        EXPECT_EQ(run_bench(std::string("run --variant serial.reference -n 64 --steps 1 --device-collectives ") + kind, dir).status, 0)
            << kind;
    const Outcome bad = run_bench("run --variant omp.simd -n 64 --device-collectives nvlink --state-out " + dir.file("s.csv"), dir);
    EXPECT_EQ(bad.status, 2) << bad.err;
    EXPECT_NE(bad.err.find("--device-collectives"), std::string::npos) << bad.err;
    EXPECT_NE(bad.err.find("nccl, host-staged or peer"), std::string::npos) << bad.err;
    EXPECT_EQ(line_count(bad.err), 1) << bad.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("s.csv")));
}

TEST(Cli, ListShowsTheWorkloadsOfEachVariant) {
    TempDir dir;
    const Outcome r = run_bench("list --variants serial.reference", dir);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("workloads"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(builtin_registry().find("serial.reference")->workloads.describe()), std::string::npos) << r.out;
}

// What each model's model.cmake declares (docs/adding-a-model.md), for scripts and the plot tool: in
// `list --json` and, the same, in a results file's context.
TEST(Cli, ListJsonAndTheResultsContextGiveEachModelsDeclarations) {
    TempDir dir;
    const Outcome r = run_bench("list --json", dir);
    ASSERT_EQ(r.status, 0) << r.err;
    const nlohmann::json listed = nlohmann::json::parse(r.out);
    ASSERT_EQ(listed["models"].size(), suite_models().size()) << r.out;
    for (std::size_t i = 0; i < suite_models().size(); ++i) {
        const SuiteModel& m = suite_models()[i];
        const nlohmann::json& entry = listed["models"][i];
        EXPECT_EQ(entry["id"], m.name);
        EXPECT_EQ(entry["name"], m.title);
        EXPECT_EQ(entry["family"], m.family);
        EXPECT_EQ(entry["order"], m.report_order);
        EXPECT_EQ(entry["in_build"], m.in_build);
        EXPECT_EQ(entry["status"], m.status);
        EXPECT_EQ(entry["native_spaces"].size(), m.native_spaces.size());
    }
    const auto omp = std::find_if(listed["models"].begin(), listed["models"].end(),
                                  [](const nlohmann::json& m) { return m["id"] == "omp"; });
    ASSERT_NE(omp, listed["models"].end());
    EXPECT_EQ((*omp)["name"], "OpenMP");
    EXPECT_EQ((*omp)["family"], "hand-written");
    EXPECT_EQ((*omp)["native_spaces"], nlohmann::json::array({"openmp", "threads"}));
    std::vector<std::string> ids;
    for (const nlohmann::json& v : listed["variants"]) {
        ids.push_back(v["id"]);
        EXPECT_EQ(v["model"], ids.back().substr(0, ids.back().find('.')));
        EXPECT_EQ(v["reason"].is_null(), v["available"].get<bool>()) << v;
    }
    std::vector<std::string> registered;
    for (const VariantDescriptor* v : builtin_registry().match("*")) registered.push_back(v->id);
    EXPECT_EQ(ids, registered);

    const std::string matrix = dir.write("m.json", R"({"name": "m", "steps": 1, "repetitions": 1, "groups": [
        {"variants": ["serial.reference"], "n": [16], "d": [2]}]})");
    ASSERT_EQ(run_bench("matrix " + matrix + " --out " + dir.file("r.json"), dir).status, 0);
    EXPECT_EQ(nlohmann::json::parse(testing::read_text(dir.file("r.json")))["context"]["models"], listed["models"]);
}

TEST(Cli, RunPrintsTimingsAndWritesStateAndMap) {
    TempDir dir;
    const Outcome r = run_bench("run --variant serial.reference -n 100 -d 8 --steps 3 --state-out " + dir.file("s.csv") +
                                    " --map-out " + dir.file("m.png"),
                                dir);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("time per step"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("interactions/s"), std::string::npos) << r.out;
    EXPECT_EQ(read_bodies_csv(dir.file("s.csv"), 100, 42).size(), 100u);
    EXPECT_EQ(testing::read_text(dir.file("m.png")).substr(1, 3), "PNG");
}

// compare times its variants round by round in one process: one line per variant, the first's
// rate against itself exactly 1, the others' ratios positive.
TEST(Cli, CompareRatesEveryVariantAgainstTheFirstInTheSameRounds) {
    TempDir dir;
    const Outcome r = run_bench("compare --variant serial.reference --variant omp.static -n 64 --rounds 5 --dim 3 --precision fp64", dir);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("N=64 D=10 3d/fp64/euler, 5 rounds"), std::string::npos) << r.out;
    const std::regex line(R"((\S+) +[0-9.e+-]+ +[0-9.e+-]+ +([0-9.]+) \[([0-9.]+), ([0-9.]+)\])");
    std::vector<std::string> ids;
    for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), line); it != std::sregex_iterator(); ++it) {
        ids.push_back((*it)[1]);
        const double median = std::stod((*it)[2]), q1 = std::stod((*it)[3]), q3 = std::stod((*it)[4]);
        if (ids.size() == 1) {
            EXPECT_EQ(median, 1.0) << r.out;
        }
        EXPECT_GT(q1, 0.0) << r.out;
        EXPECT_LE(q1, median) << r.out;
        EXPECT_LE(median, q3) << r.out;
    }
    EXPECT_EQ(ids, (std::vector<std::string>{"serial.reference", "omp.static"})) << r.out;
    EXPECT_NE(r.out.find("tuning of omp.static"), std::string::npos) << r.out;  // which threads it ran on
}

// --min-time goes on timing steps until the timed phase lasts that long; the state written is after
// the steps actually done, which the problem line reports.
TEST(Cli, MinTimeRaisesTheTimedStepsAndTheStateFollowsThem) {
    TempDir dir;
    const Outcome r = run_bench("run --variant serial.reference -n 64 -d 4 --steps 2 --min-time 0.05 --state-out " +
                                    dir.file("s.csv"),
                                dir);
    ASSERT_EQ(r.status, 0) << r.err;
    std::smatch steps;
    ASSERT_TRUE(std::regex_search(r.out, steps, std::regex("steps=([0-9]+) ")));
    const int done = std::stoi(steps[1]);
    EXPECT_GT(done, 2) << r.out;  // 64 bodies take microseconds a step: 0.05 s needs many more than 2
    EXPECT_NE(testing::read_text(dir.file("s.csv")).find("after " + std::to_string(done) + " steps"), std::string::npos);
    const Outcome negative = run_bench("run --variant serial.reference -n 64 --min-time -1", dir);
    EXPECT_EQ(negative.status, 2) << negative.out;
}

// SPEC §2: a 3D float64 leapfrog run writes a 7-field state that --input reads back in that workload.
TEST(Cli, ThreeDimensionalFloat64LeapfrogRunWritesAStateItsInputReads) {
    TempDir dir;
    const std::string workload = " --dim 3 --precision fp64 --integrator leapfrog";
    const Outcome r = run_bench("run --variant serial.reference -n 60 -d 4 --steps 2" + workload + " --state-out " + dir.file("s.csv"), dir);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("workload         3d/fp64/leapfrog"), std::string::npos) << r.out;
    const std::string text = testing::read_text(dir.file("s.csv"));
    const std::string first_body = text.substr(text.find("\n0") + 1);
    EXPECT_EQ(std::count(first_body.begin(), first_body.begin() + first_body.find('\n'), ','), 6) << text.substr(0, 300);
    const auto state = read_bodies_csv_of<double>(dir.file("s.csv"), 60, 42, 3);
    EXPECT_TRUE(std::any_of(state.vz.begin(), state.vz.end(), [](double v) { return v != 0.0; }));

    const Outcome again = run_bench("run --variant serial.reference --steps 1" + workload + " --input " + dir.file("s.csv") +
                                        " --state-out " + dir.file("t.csv"), dir);
    ASSERT_EQ(again.status, 0) << again.err;
    EXPECT_NE(again.out.find("N=60"), std::string::npos) << again.out;
    EXPECT_EQ(read_bodies_csv_of<double>(dir.file("t.csv"), 60, 42, 3).size(), 60u);
}

TEST(Cli, BadWorkloadValuesExitTwoNamingTheOption) {
    TempDir dir;
    for (const auto& [args, option] : {std::pair{"--dim 4", "--dim"}, std::pair{"--precision fp16", "--precision"},
                                       std::pair{"--integrator rk4", "--integrator"}}) {
        const Outcome r = run_bench(std::string("run --variant serial.reference -n 8 ") + args, dir);
        EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
        EXPECT_EQ(line_count(r.err), 1) << r.err;
        EXPECT_NE(r.err.find(option), std::string::npos) << r.err;
    }
}

TEST(Cli, FiveFieldInputUnderThreeDimensionsNamesFileLineAndCounts) {
    TempDir dir;
    const auto input = dir.write("in2d.csv", "0.1,0.2,0,0,1\n0.3,0.4,0,0,1\n");
    const auto state = dir.file("state.csv");
    const Outcome r = run_bench("run --variant serial.reference --dim 3 --input " + input + " --state-out " + state, dir);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(line_count(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(input + ":1:"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("found 5"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("expected 7"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(state));
}

// A variant asked for a workload it does not run: exit 2 naming variant, workload and what it runs.
TEST(Cli, UnsupportedWorkloadExitsTwoNamingWhatTheVariantRuns) {
    const VariantDescriptor* narrow = nullptr;
    Workload missing;
    for (const auto& v : builtin_registry().all()) {
        if (!v.availability().available) continue;
        for (const Workload& w : all_workloads())
            if (narrow == nullptr && !v.workloads.supports(w)) {
                narrow = &v;
                missing = w;
            }
    }
    if (narrow == nullptr) GTEST_SKIP() << "every available variant of this build runs all eight workloads";
    TempDir dir;
    const Outcome r = run_bench(fmt::format("run --variant {} -n 16 --dim {} --precision {} --integrator {}", narrow->id,
                                            missing.dim, to_string(missing.precision), to_string(missing.integrator)),
                                dir);
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(line_count(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(narrow->id), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(to_string(missing)), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(narrow->workloads.describe()), std::string::npos) << r.err;
}

// The check `run` makes before creating, on a descriptor that keeps the default (canonical-only) support.
TEST(Cli, RequireWorkloadAcceptsOnlyWhatTheDescriptorDeclares) {
    VariantDescriptor canonical_only;
    canonical_only.id = "test.two_d";
    EXPECT_NO_THROW(require_workload(canonical_only, Workload{}));
    for (const Workload& w : all_workloads()) {
        if (w == Workload{}) continue;
        try {
            require_workload(canonical_only, w);
            ADD_FAILURE() << to_string(w) << " accepted";
        } catch (const UsageError& e) {
            EXPECT_NE(std::string(e.what()).find(to_string(w)), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("dim 2, fp32, euler"), std::string::npos) << e.what();
        }
    }
}

TEST(Cli, EveryHelpExitsZero) {
    TempDir dir;
    for (const char* args : {"--help", "list --help", "run --help", "compare --help"}) {
        const Outcome r = run_bench(args, dir);
        EXPECT_EQ(r.status, 0) << args << ": " << r.err;
        EXPECT_NE(r.out.find("Usage"), std::string::npos) << args;
    }
}

TEST(Cli, MalformedInputIsOneLineNamingFileLineFieldAndWritesNothing) {
    TempDir dir;
    const auto input = dir.write("in.csv", "0.1,0.2,0,0,1\n0.3,zero,0,0,1\n");
    const auto state = dir.file("state.csv");
    const Outcome r = run_bench("run --variant serial.reference --input " + input + " --state-out " + state, dir);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(line_count(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(input + ":2:"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("field 2 (y)"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(state));
}

TEST(Cli, BadArgumentsExitTwoWithOneLine) {
    TempDir dir;
    for (const char* args : {"run --variant serial.reference --frobnicate", "run --variant serial.reference -n 0",
                             "run --variant serial.reference --steps x", "run --variant no.such.variant",
                             "run --variant serial.reference --tuning block=64", "run --variant serial.reference --tuning oops",
                             "run -n 5", "bogus", "run --variant serial.reference --input /no/such/file.csv",
                             "run --variant serial.reference --softening 0", "run --variant serial.reference --dt inf",
                             "run --variant serial.reference --time-limit -1", "verify --softening nan",
                             "compare --variant serial.reference", "compare --variant serial.reference --variant no.such.variant",
                             "compare --variant serial.reference --variant omp.static --rounds 0",
                             "compare --variant serial.reference --variant omp.static -n 2000000 --rounds 100000",
                             "compare --variant serial.reference --variant omp.static --rounds 1048576 --steps 1024"}) {
        const Outcome r = run_bench(args, dir);
        EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
        EXPECT_EQ(line_count(r.err), 1) << args << "\n" << r.err;
    }
}

TEST(Cli, InputFileSetsNAndMustAgreeWithN) {
    TempDir dir;
    const auto input = dir.write("in.csv", "0.1,0.2,0,0,1\n0.3,0.4,0,0,1\n,,,,\n");
    const Outcome ok = run_bench("run --variant serial.reference --steps 1 --input " + input, dir);
    EXPECT_EQ(ok.status, 0) << ok.err;
    EXPECT_NE(ok.out.find("N=3"), std::string::npos) << ok.out;
    const Outcome mismatch = run_bench("run --variant serial.reference --steps 1 -n 4 --input " + input, dir);
    EXPECT_EQ(mismatch.status, 2);
    EXPECT_NE(mismatch.err.find("holds 3 bodies"), std::string::npos) << mismatch.err;
}

TEST(Cli, ResultsCountTheProcessCpusWhenOpenMPBindsThreads) {
    // libgomp pins the main thread while it loads when OMP_PROC_BIND is set; the CPU limit must
    // still count every CPU the process was given.
    cpu_set_t set;
    CPU_ZERO(&set);
    ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
    const int given = CPU_COUNT(&set);
    const TempDir dir;
    const std::string results = dir.file("r.json");
    const std::string matrix = dir.write("m.json", R"({"name": "bind", "description": "OpenMP binding", "steps": 1,
        "warmup_steps": 0, "repetitions": 1,
        "groups": [{"name": "g", "variants": ["serial.reference"], "n": [64], "d": [4]}]})");
    for (const char* bind : {"", "OMP_PROC_BIND=spread OMP_PLACES=threads ", "OMP_PROC_BIND=close "}) {
        const Outcome r = run_bench(std::string("matrix ") + matrix + " --out " + results + " --overwrite", dir, bind);
        ASSERT_EQ(r.status, 0) << bind << r.err;
        const auto json = nlohmann::json::parse(testing::read_text(results));
        EXPECT_EQ(json["context"]["host_cpu"]["logical_cpus"].get<int>(), given) << bind;
    }
}

// --- Refusals before work (docs/estimates.md) -------------------------------------------------------

// The issue's example: about a year of work at 2^26 bodies on one core, refused at once with the
// estimate and the flag that allows it; nothing is allocated for the state.
TEST(Cli, InfeasibleRunIsRefusedWithTheEstimateAndTheFlag) {
    TempDir dir;
    const auto started = std::chrono::steady_clock::now();
    const Outcome r = run_bench("run --variant serial.reference -n 67108864 --steps 1", dir);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(line_count(r.err), 1) << r.err;
    EXPECT_TRUE(std::regex_search(r.err, std::regex("estimated [0-9]+(\\.[0-9]+)? (days|years)"))) << r.err;
    EXPECT_NE(r.err.find("above the limit of 1 h 00 min"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("measured here"), std::string::npos) << r.err;  // not the model alone
    EXPECT_NE(r.err.find("--allow-long"), std::string::npos) << r.err;
    EXPECT_LT(seconds, 60.0);  // no hang: the refusal comes before the work
    EXPECT_EQ(r.out, "");
}

TEST(Cli, AllowLongRunsWhatTheTimeLimitRefuses) {
    TempDir dir;
    const std::string run = "run --variant serial.reference -n 1500 --steps 2 --time-limit 0.0001";
    const Outcome refused = run_bench(run, dir);
    EXPECT_EQ(refused.status, 2) << refused.err;
    EXPECT_NE(refused.err.find("above the limit of 0.0001 s"), std::string::npos) << refused.err;
    const Outcome allowed = run_bench(run + " --allow-long --state-out " + dir.file("s.csv"), dir);
    EXPECT_EQ(allowed.status, 0) << allowed.err;
    EXPECT_NE(allowed.out.find("time per step"), std::string::npos) << allowed.out;
    EXPECT_EQ(read_bodies_csv(dir.file("s.csv"), 1500, 42).size(), 1500u);
}

TEST(Cli, MoreMemoryThanTheMachineHasIsRefused) {
    TempDir dir;
    const Outcome r = run_bench("run --variant serial.reference -n 100000 --steps 1", dir, "NBODY_HOST_MEMORY_BYTES=1000000 ");
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find("of host memory, 1 MB available"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--allow-long"), std::string::npos) << r.err;
}

TEST(Cli, VerifyAndMatrixAreRefusedAboveTheLimitAndWriteNothing) {
    TempDir dir;
    const Outcome verify = run_bench("verify --variants serial.reference -n 2000 --steps 1 --dim 2 --precision fp32 "
                                     "--integrator euler --time-limit 0.0001", dir);
    EXPECT_EQ(verify.status, 2) << verify.err;
    EXPECT_NE(verify.err.find("verify: 1 check above the limits, first serial.reference N=2000 2d/fp32/euler: estimated"),
              std::string::npos) << verify.err;
    const std::string matrix = dir.write("m.json", R"({"name": "limit", "steps": 2, "repetitions": 1,
        "groups": [{"variants": ["serial.reference"], "n": [4000, 16], "d": [4]}]})");
    // N = 4000 costs 62500x N = 16: one is above 0.01 s and the other below however loaded the machine.
    const Outcome refused = run_bench("matrix " + matrix + " --out " + dir.file("r.json") + " --time-limit 0.01", dir);
    EXPECT_EQ(refused.status, 2) << refused.err;
    EXPECT_NE(refused.err.find("matrix limit: 1 of 2 configurations above the limits (serial.reference/n:4000/d:4/steps:2/map:recount: estimated"),
              std::string::npos) << refused.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("r.json")));
}

// The seconds in "estimated X (Y s)" lines.
std::vector<double> estimated_seconds(const std::string& text) {
    std::vector<double> out;
    const std::regex seconds(R"(estimated [^()\n]* \(([0-9.e+-]+) s[;)])");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), seconds); it != std::sregex_iterator(); ++it)
        out.push_back(std::stod((*it)[1]));
    return out;
}

// --dry-run: an estimate per configuration (which grows as N^2 x steps) and their total.
TEST(Cli, DryRunEstimatesEveryConfigurationAndTheirTotal) {
    TempDir dir;
    const std::string matrix = dir.write("m.json", R"({"name": "plan", "steps": 10, "warmup_steps": 0, "repetitions": 1,
        "verification": {"steps": 1},
        "groups": [{"variants": ["serial.reference"], "n": [2000, 4000], "d": [4]},
                   {"variants": ["serial.reference"], "n": [2000], "d": [4], "steps": 40}]})");
    const Outcome r = run_bench("matrix " + matrix + " --dry-run", dir);
    ASSERT_EQ(r.status, 0) << r.err;
    const std::vector<double> s = estimated_seconds(r.out);
    ASSERT_EQ(s.size(), 4u) << r.out;  // three configurations and the total
    EXPECT_NEAR(s[0] + s[1] + s[2], s[3], 0.01 + 1e-3 * s[3]) << r.out;
    // 4000 bodies: 4x the interactions of 2000 (its own reference too). 40 steps: 4x the steps of
    // the first, but not its reference (the same N and verification steps share one): less than 4x.
    EXPECT_NEAR(s[1] / s[0], 4.0, 0.05) << r.out;
    EXPECT_GT(s[2], 2.0 * s[0]) << r.out;
    EXPECT_LT(s[2], 4.0 * s[0]) << r.out;
    EXPECT_NE(r.out.find("matrix plan: 3 configurations, estimated total"), std::string::npos) << r.out;
    EXPECT_FALSE(std::filesystem::exists(dir.file("r.json")));
}

// --- SIGINT and SIGTERM during a matrix --------------------------------------------------------------

// Starts nbody-bench with `args`, stdout and stderr to files in `dir`; returns the process id.
pid_t start_bench(const std::vector<std::string>& args, const TempDir& dir) {
    const pid_t child = ::fork();
    if (child == 0) {
        const int out = ::open(dir.file("stdout.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int err = ::open(dir.file("stderr.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(out, STDOUT_FILENO);
        ::dup2(err, STDERR_FILENO);
        std::vector<char*> argv{const_cast<char*>(NBODY_BENCH_PATH)};
        for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        ::execv(NBODY_BENCH_PATH, argv.data());
        ::_exit(127);
    }
    return child;
}

// Entries in the results file at `path` once it holds at least `entries` (it is written whole,
// by rename, so every read is valid JSON); empty after `timeout`.
nlohmann::json wait_for_entries(const std::string& path, std::size_t entries, std::chrono::seconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        if (!std::filesystem::exists(path)) continue;
        const auto doc = nlohmann::json::parse(testing::read_text(path));
        if (doc["benchmarks"].size() >= entries) return doc;
    }
    return {};
}

void interrupt_then_resume(int signal_number, int expected_status, const char* signal_text) {
    TempDir dir;
    std::string sizes;
    for (int n = 600; n <= 2000; n += 100) {
        if (!sizes.empty()) sizes += ", ";
        sizes += std::to_string(n);
    }
    // Two verified steps: the check's reference is most of a configuration's cost (under asan too).
    const std::string matrix = dir.write("m.json", R"({"name": "interrupted", "steps": 6, "warmup_steps": 0, "repetitions": 2,
        "verification": {"steps": 2}, "groups": [{"variants": ["serial.reference"], "n": [)" + sizes + R"(], "d": [4]}]})");
    const std::string results = dir.file("r.json");
    const pid_t child = start_bench({"matrix", matrix, "--out", results}, dir);
    ASSERT_GT(child, 0);
    // Two repetitions and four aggregates per configuration: the first one is on disk.
    ASSERT_FALSE(wait_for_entries(results, 6, std::chrono::seconds(120)).is_null());
    ASSERT_EQ(::kill(child, signal_number), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status)) << "killed instead of stopping";
    EXPECT_EQ(WEXITSTATUS(status), expected_status);

    const std::string err = testing::read_text(dir.file("stderr.txt"));
    EXPECT_NE(err.find(std::string("interrupted by ") + signal_text), std::string::npos) << err;
    EXPECT_NE(err.find("--resume"), std::string::npos) << err;
    const auto stopped = nlohmann::json::parse(testing::read_text(results));
    const auto problems = check_results(stopped);
    EXPECT_TRUE(problems.empty()) << problems.front();
    const std::size_t finished = stopped["benchmarks"].size() / 6;
    EXPECT_GE(finished, 1u);
    EXPECT_LT(finished, 15u);
    EXPECT_EQ(stopped["benchmarks"].size() % 6, 0u);  // whole configurations only
    EXPECT_NE(err.find(fmt::format("{} configurations not run", 15 - finished)), std::string::npos) << err;

    const Outcome resumed = run_bench("matrix " + matrix + " --out " + results + " --resume", dir);
    EXPECT_EQ(resumed.status, 0) << resumed.err;
    EXPECT_NE(resumed.out.find(fmt::format("{} already in the file, {} run and verified", finished, 15 - finished)),
              std::string::npos) << resumed.out;
    const auto done = nlohmann::json::parse(testing::read_text(results));
    EXPECT_TRUE(check_results(done).empty());
    EXPECT_EQ(done["benchmarks"].size(), 15u * 6u);
    for (std::size_t i = 0; i < stopped["benchmarks"].size(); ++i) EXPECT_EQ(done["benchmarks"][i], stopped["benchmarks"][i]);
}

TEST(Cli, SigintStopsAMatrixAfterTheMeasurementAndResumeCompletesIt) { interrupt_then_resume(SIGINT, 130, "SIGINT"); }

TEST(Cli, SigtermStopsAMatrixTheSameWayWithStatus143) { interrupt_then_resume(SIGTERM, 143, "SIGTERM"); }

// --- verify --input ----------------------------------------------------------------------------------

TEST(Cli, VerifyChecksEveryVariantOnTheUsersOwnState) {
    TempDir dir;
    const std::string state = dir.file("mine.csv");
    ASSERT_EQ(run_bench("run --variant serial.reference -n 333 --steps 3 --dim 3 --state-out " + state, dir).status, 0);
    const Outcome r = run_bench("verify --input " + state + " --steps 1 2 -d 7 --precision fp32 fp64 --integrator euler", dir);
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("initial state from " + state + " (N=333, 3D)"), std::string::npos) << r.out;  // N and dim from the file
    EXPECT_NE(r.out.find("serial.reference                 file       3d/fp64/euler        333     7   2 full"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("2d/"), std::string::npos) << r.out;
}

// `verify` of serial.reference on 40 bodies (2D float64 Euler) at map sizes 9 and 4, with `more`.
Outcome verify_forty_bodies(const std::string& more, const TempDir& dir) {
    return run_bench("verify --variants serial.reference -n 40 -d 9 -d 4 --dim 2 --precision fp64 --integrator euler " + more, dir);
}

// That verify passed its 3 checks, printing the row of each (input, D, K) listed as printed and
// none of those listed as not.
struct Row {
    const char* input;
    int d, k;
    bool printed;
};
void expect_three_checks(const Outcome& r, std::initializer_list<Row> rows) {
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    for (const Row& row : rows) {
        const std::string text = fmt::format("serial.reference                 {:<10} 2d/fp64/euler         40 {:>5} {:>3} full",
                                             row.input, row.d, row.k);
        EXPECT_EQ(r.out.find(text) != std::string::npos, row.printed) << text << "\n" << r.out;
    }
    EXPECT_NE(r.out.find("3 checks: 3 passed, 0 failed"), std::string::npos) << r.out;
}

// A hard input is checked at the largest map size alone; the generated state at every one.
TEST(Cli, VerifyChecksAHardInputAtTheLargestMapSizeOnly) {
    TempDir dir;
    expect_three_checks(verify_forty_bodies("--hard masses --hard-n 40 --steps 1", dir),
                        {{"generated", 4, 1, true}, {"generated", 9, 1, true}, {"masses", 9, 1, true}, {"masses", 4, 1, false}});
}

// Positions and velocities do not depend on D: the smaller map sizes are checked after the first
// step count alone, the largest after every one.
TEST(Cli, VerifyChecksSmallerMapSizesAfterTheFirstStepCountOnly) {
    TempDir dir;
    expect_three_checks(verify_forty_bodies("--steps 3 --steps 1", dir),
                        {{"generated", 9, 1, true}, {"generated", 9, 3, true}, {"generated", 4, 1, true}, {"generated", 4, 3, false}});
}

// Above --full-reference-max-n (the sampled check) the largest map size alone is checked; the run
// ends with where its time went.
TEST(Cli, VerifyChecksTheLargestMapSizeAloneAboveTheFullReferenceSize) {
    TempDir dir;
    const Outcome r = verify_forty_bodies("--steps 1 --full-reference-max-n 20", dir);
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    const auto row = [](int d) { return fmt::format("serial.reference                 generated  2d/fp64/euler         40 {:>5}   1 sampled", d); };
    EXPECT_NE(r.out.find(row(9)), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find(row(4)), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("1 checks: 1 passed, 0 failed"), std::string::npos) << r.out;
    for (const char* part : {"time spent: reference N=40 ", ", serial@host ", ", comparisons "})
        EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
}

TEST(Cli, VerifyInputThatIsMalformedOrOfAnotherSizeExitsTwo) {
    TempDir dir;
    const std::string bad = dir.write("bad.csv", "0.1,0.2,0,0,1\n0.3,0.4,0,0,nan\n");
    const Outcome malformed = run_bench("verify --input " + bad, dir);
    EXPECT_EQ(malformed.status, 2);
    EXPECT_EQ(line_count(malformed.err), 1) << malformed.err;
    EXPECT_NE(malformed.err.find(bad + ":2: field 5 (m): 'nan' is not finite"), std::string::npos) << malformed.err;
    const std::string good = dir.write("good.csv", "0.1,0.2,0,0,1\n0.3,0.4,0,0,1\n");
    for (const char* args : {" -n 3", " --dim 3", " --dim 2 3"}) {
        const Outcome r = run_bench("verify --input " + good + args, dir);
        EXPECT_EQ(r.status, 2) << args << r.err;
        EXPECT_EQ(line_count(r.err), 1) << r.err;
    }
}

// A state that overflows is a failed run (exit 1), not a result written to disk.
TEST(Cli, RunWhoseStateBecomesNonFiniteFailsAndWritesNothing) {
    TempDir dir;
    const std::string input = dir.write("far.csv", "3e38,0.5,0,0,1\n-3e38,0.5,0,0,1\n");
    const Outcome r = run_bench("run --variant serial.reference --steps 1 --input " + input + " --state-out " + dir.file("s.csv"), dir);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_NE(r.err.find("the state is not finite after 1 steps (body 0: "), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("s.csv")));
}

// --- Bad input caught before the work (docs/reliability.md's table) ------------------------------------

// A refusal: exit 2, one line on stderr holding `part`, nothing on stdout (no run happened).
void expect_refused_before_work(const Outcome& r, const std::string& part) {
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_EQ(line_count(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(part), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
}

TEST(Cli, AnUnknownSubcommandIsNamed) {
    TempDir dir;
    expect_refused_before_work(run_bench("frobnicate --steps 2", dir),
                               "unknown subcommand 'frobnicate' (the subcommands: list, run, compare, verify, matrix, check-results");
}

// Outputs are checked before the simulation: a folder that is missing, a file in a folder that takes
// no new files (with that reason, not "No such file"), a folder named as a file.
TEST(Cli, RunChecksItsOutputPathsBeforeAnyWork) {
    TempDir dir;
    const std::string run = "run --variant serial.reference -n 3000 --steps 2 ";
    expect_refused_before_work(run_bench(run + "--state-out " + dir.file("missing/x.csv"), dir),
                               dir.file("missing/x.csv") + ": cannot write: its folder " + dir.file("missing") + " does not exist");
    expect_refused_before_work(run_bench(run + "--map-out " + dir.file("missing/m.png"), dir), "does not exist");
    const Outcome proc = run_bench(run + "--state-out /proc/version", dir);
    expect_refused_before_work(proc, "/proc/version: cannot write: its folder /proc takes no new files");
    EXPECT_EQ(proc.err.find("No such file"), std::string::npos) << proc.err;
    expect_refused_before_work(run_bench(run + "--map-out " + dir.path().string(), dir), ": cannot write: is a folder");
}

// Two outputs naming one file, or an output naming the input (directly, through a link or "..") would
// lose a result or the input: refused, the input left as it was.
TEST(Cli, OutputsThatNameOneFileOrTheInputAreRefused) {
    TempDir dir;
    const std::string input = dir.write("in.csv", "0.1,0.2,0,0,1\n0.3,0.4,0,0,1\n");
    std::filesystem::create_directory(dir.file("sub"));
    std::filesystem::create_symlink("in.csv", dir.file("link.csv"));
    const std::string run = "run --variant serial.reference --steps 1 ";
    expect_refused_before_work(run_bench(run + "-n 16 --state-out a.csv --map-out ./a.csv", dir, "cd " + dir.path().string() + " && "),
                               "--state-out a.csv and --map-out ./a.csv are the same file");
    expect_refused_before_work(run_bench(run + "-n 16 --state-out " + dir.file("sub/../b.csv") + " --map-out " + dir.file("b.csv"), dir),
                               "are the same file");
    for (const std::string& same : {input, dir.file("link.csv"), dir.file("sub/../in.csv")}) {
        expect_refused_before_work(run_bench(run + "--input " + input + " --state-out " + same, dir),
                                   "--state-out " + same + " is the --input file");
        expect_refused_before_work(run_bench(run + "--input " + input + " --map-out " + same, dir), "is the --input file");
    }
    EXPECT_EQ(testing::read_text(input), "0.1,0.2,0,0,1\n0.3,0.4,0,0,1\n");
    EXPECT_TRUE(std::filesystem::is_symlink(dir.file("link.csv")));
    EXPECT_FALSE(std::filesystem::exists(dir.file("a.csv")));
    EXPECT_FALSE(std::filesystem::exists(dir.file("b.csv")));
}

// eps^2 and dt^2 must be normal and finite in the workload's precision, checked up front like eps = 0.
TEST(Cli, ConstantsWhoseSquaresLeaveThePrecisionAreRefused) {
    TempDir dir;
    const std::string run = "run --variant serial.reference -n 16 --steps 1 ";
    expect_refused_before_work(run_bench(run + "--softening 1e-20", dir), "--softening 1e-20: its square underflows in fp32");
    expect_refused_before_work(run_bench(run + "--softening 1e-200 --precision fp64", dir), "--softening 1e-200: its square underflows in fp64");
    expect_refused_before_work(run_bench(run + "--dt 1e300 --precision fp64", dir), "--dt 1e+300: its square overflows in fp64");
    expect_refused_before_work(run_bench(run + "--dt 1e20", dir), "--dt 1e+20: its square overflows in fp32");
    expect_refused_before_work(run_bench("compare --variant serial.reference --variant omp.static -n 16 --softening 1e-20", dir),
                               "its square underflows in fp32");
    expect_refused_before_work(run_bench("verify --variants serial.reference -n 16 --softening 1e-20", dir), "its square underflows in fp32");
    const Outcome fp64 = run_bench(run + "--softening 1e-20 --precision fp64", dir);  // 1e-40 is a double
    EXPECT_EQ(fp64.status, 0) << fp64.err;
}

// Seeds out of range no longer wrap to another seed; the problem line says which seed ran.
TEST(Cli, SeedsOutOfRangeAreRefusedEverywhereAndRunPrintsItsSeed) {
    TempDir dir;
    for (const char* seed : {"-1", "18446744073709551616", "1e23", "0x10"}) {
        SCOPED_TRACE(seed);
        const std::string given = std::string("--seed '") + seed + "'";
        for (const char* command : {"run --variant serial.reference -n 16 --steps 1 ", "verify --variants serial.reference -n 16 --steps 1 ",
                                    "compare --variant serial.reference --variant omp.static -n 16 "})
            expect_refused_before_work(run_bench(command + given, dir),
                                       "--seed: must be an integer in [0, 18446744073709551615], got '" + std::string(seed) + "'");
    }
    const std::string matrix = dir.write("m.json", R"({"name": "s", "seed": 1e23, "groups": [{"variants": ["serial.reference"], "n": [16], "d": [2]}]})");
    expect_refused_before_work(run_bench("matrix " + matrix + " --out " + dir.file("r.json"), dir),
                               "seed: must be an integer in [0, 18446744073709551615], got 9.99");
    EXPECT_FALSE(std::filesystem::exists(dir.file("r.json")));
    const Outcome largest = run_bench("run --variant serial.reference -n 16 --steps 1 --seed 18446744073709551615", dir);
    ASSERT_EQ(largest.status, 0) << largest.err;
    EXPECT_NE(largest.out.find("eps=2 seed=18446744073709551615\n"), std::string::npos) << largest.out;
    const Outcome plain = run_bench("run --variant serial.reference -n 16 --steps 1", dir);
    EXPECT_NE(plain.out.find(" seed=42\n"), std::string::npos) << plain.out;
}

TEST(Cli, OneTuningNameGivenTwoValuesIsRefused) {
    TempDir dir;
    expect_refused_before_work(run_bench("run --variant omp.static -n 16 --steps 1 --tuning threads=1 --tuning threads=2", dir),
                               "--tuning threads=1 and --tuning threads=2: one value per name");
    const Outcome repeated = run_bench("run --variant omp.static -n 16 --steps 1 --tuning threads=1 --tuning threads=1", dir);
    EXPECT_EQ(repeated.status, 0) << repeated.err;
    EXPECT_NE(repeated.out.find("threads=1"), std::string::npos) << repeated.out;
}

// A bad threshold is one short line, not the largest double written out in full.
TEST(Cli, BadNumbersGiveShortMessages) {
    TempDir dir;
    for (const auto& [args, part] : std::vector<std::pair<std::string, std::string>>{
             {"verify --max-pos-err -1", "finite number, got '-1'"},
             {"verify --max-vel-err nan", "finite number, got 'nan'"},
             {"verify --max-map-diff inf", "finite number, got 'inf'"},
             {"verify --full-reference-max-n 0", "must be an integer in [1, 18446744073709551615], got '0'"},
             {"verify --sample-bodies 0", "must be an integer in [1, 18446744073709551615], got '0'"}}) {
        SCOPED_TRACE(args);
        const Outcome r = run_bench(args, dir);
        expect_refused_before_work(r, part);
        EXPECT_LT(r.err.size(), 120u) << r.err;
        EXPECT_EQ(r.err.find("1797693"), std::string::npos) << r.err;
    }
}

// --allow-long prints the estimate first (docs/estimates.md), and says when it is above the limits.
TEST(Cli, AllowLongPrintsTheEstimate) {
    TempDir dir;
    const Outcome small = run_bench("run --variant serial.reference -n 64 --steps 1 --allow-long", dir);
    ASSERT_EQ(small.status, 0) << small.err;
    EXPECT_TRUE(std::regex_search(small.err, std::regex("^run: estimated [0-9.e+-]+ (s|min)"))) << small.err;
    const Outcome over = run_bench("run --variant serial.reference -n 1500 --steps 2 --time-limit 0.0001 --allow-long", dir);
    ASSERT_EQ(over.status, 0) << over.err;
    EXPECT_TRUE(std::regex_search(over.err, std::regex("above the limit of 0.0001 s; about [0-9.]+ [kMG]?B of host memory: run anyway \\(--allow-long\\)"))) << over.err;
    const Outcome verify = run_bench("verify --variants serial.reference -n 64 --steps 1 --dim 2 --precision fp32 --integrator euler --allow-long", dir);
    ASSERT_EQ(verify.status, 0) << verify.err;
    EXPECT_NE(verify.err.find("verify: estimated "), std::string::npos) << verify.err;
}

// A matrix group that expands to nothing is exit 2 naming it (a misspelt variant, every N capped, a
// duplicate value), and no results file is written; only what this build or machine lacks is skipped.
TEST(Cli, MatrixGroupsOfNothingExitTwoNamingTheGroup) {
    TempDir dir;
    const auto matrix_with = [&](const std::string& group) {
        return dir.write("m.json", R"({"name": "m", "steps": 1, "repetitions": 1, "groups": [
            {"name": "good", "variants": ["serial.reference"], "n": [16], "d": [2]}, )" + group + "]}");
    };
    const std::string out = " --out " + dir.file("r.json");
    for (const auto& [group, part] : std::vector<std::pair<std::string, std::string>>{
             {R"({"name": "typo", "variants": ["serail.reference"], "n": [16], "d": [2]})",
              "group \"typo\": variant pattern \"serail.reference\" matches no variant (no model \"serail\""},
             {R"({"name": "omp_typo", "variants": ["omp.statik"], "n": [16], "d": [2]})",
              "group \"omp_typo\": variant pattern \"omp.statik\" matches no variant (model omp has no such variant"},
             {R"({"name": "capped", "variants": ["serial.reference"], "n": [64], "d": [2], "max_n": {"serial.*": 32}})",
              "group \"capped\" expands to no configuration: serial.reference not run at N=64 (cap 32)"},
             {R"({"name": "threads", "variants": ["omp.static"], "n": [16], "d": [2], "tunings": {"threads": [1, 1]}})",
              "groups[1].tunings.threads: lists \"1\" twice"}}) {
        SCOPED_TRACE(group);
        const std::string matrix = matrix_with(group);
        const Outcome run = run_bench("matrix " + matrix + out, dir);
        EXPECT_EQ(run.status, 2) << run.err;
        EXPECT_EQ(line_count(run.err), 1) << run.err;
        EXPECT_NE(run.err.find(matrix + ": " ), std::string::npos) << run.err;
        EXPECT_NE(run.err.find(part), std::string::npos) << run.err;
        EXPECT_FALSE(std::filesystem::exists(dir.file("r.json")));
        const Outcome dry = run_bench("matrix --dry-run " + matrix, dir);
        EXPECT_EQ(dry.status, 2) << dry.err;
        EXPECT_NE(dry.err.find(part), std::string::npos) << dry.err;
    }
    // Nothing at all to run here: exit 2 too.
    const std::string nothing = dir.write("nothing.json", R"({"name": "n", "groups": [{"name": "cuda_here", "variants": ["cuda.*"], "n": [16], "d": [2]}]})");
    const bool cuda_runs_here = std::any_of(builtin_registry().all().begin(), builtin_registry().all().end(),
                                            [](const VariantDescriptor& v) { return v.backend == "cuda" && v.availability().available; });
    if (!cuda_runs_here) {
        expect_refused_before_work(run_bench("matrix " + nothing + out, dir), "no configuration to run here: every group is skipped (cuda_here: ");
        EXPECT_FALSE(std::filesystem::exists(dir.file("r.json")));
    }
    // The README's main job: patterns of models or spaces this build lacks are skipped with a reason.
    const std::filesystem::path quick = std::filesystem::path(__FILE__).parent_path().parent_path() / "matrices" / "quick.json";
    const Outcome plan = run_bench("matrix --dry-run " + quick.string(), dir);
    EXPECT_EQ(plan.status, 0) << plan.err;
    EXPECT_NE(plan.out.find("matrix quick: "), std::string::npos) << plan.out;
}

// A results file behind a symbolic link is continued through the link: the link stays, the file it
// names keeps its mode and group.
TEST(Cli, MatrixResumeWritesThroughALinkAndKeepsModeAndGroup) {
    TempDir dir;
    const std::string matrix = dir.write("m.json", R"({"name": "l", "steps": 1, "repetitions": 1, "groups": [
        {"variants": ["serial.reference"], "n": [16], "d": [2]}]})");
    std::filesystem::create_directory(dir.file("store"));
    const std::string target = dir.file("store/r.json"), link = dir.file("r.json");
    ASSERT_EQ(run_bench("matrix " + matrix + " --out " + target, dir).status, 0);
    std::filesystem::create_symlink("store/r.json", link);
    ASSERT_EQ(::chmod(target.c_str(), 0640), 0);
    // A group of ours other than the primary one where allowed (root: any), to see it kept.
    struct stat before {};
    ASSERT_EQ(::stat(target.c_str(), &before), 0);
    gid_t group = before.st_gid;
    if (::geteuid() == 0) group = before.st_gid == 65534 ? 65533 : 65534;
    ASSERT_EQ(::chown(target.c_str(), static_cast<uid_t>(-1), group), 0);
    const Outcome resumed = run_bench("matrix " + matrix + " --out " + link + " --resume", dir);
    ASSERT_EQ(resumed.status, 0) << resumed.err;
    EXPECT_TRUE(std::filesystem::is_symlink(link));
    struct stat after {};
    ASSERT_EQ(::stat(target.c_str(), &after), 0);
    EXPECT_EQ(after.st_mode & 07777, 0640u);
    EXPECT_EQ(after.st_gid, group);
    EXPECT_EQ(nlohmann::json::parse(testing::read_text(target))["context"]["resumed"].size(), 1u);
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.file("store")), std::filesystem::directory_iterator()), 1);
}

// An empty path named no file: the run generated its default problem, or wrote nothing, and exited 0.
TEST(Cli, EmptyPathsAreRefusedNamingTheOption) {
    TempDir dir;
    const std::string matrix = dir.write("m.json", R"({"name": "e", "groups": [{"variants": ["serial.reference"], "n": [16], "d": [2]}]})");
    for (const auto& [args, option] : std::vector<std::pair<std::string, std::string>>{
             {"run --variant serial.reference -n 16 --steps 1 --input ''", "--input"},
             {"run --variant serial.reference -n 16 --steps 1 --state-out ''", "--state-out"},
             {"run --variant serial.reference -n 16 --steps 1 --map-out ''", "--map-out"},
             {"compare --variant serial.reference --variant omp.static -n 16 --input ''", "--input"},
             {"verify --variants serial.reference -n 16 --steps 1 --input ''", "--input"},
             {"matrix " + matrix + " --out ''", "--out"},
             {"matrix '' --out " + dir.file("r.json"), "matrix"},
             {"check-results ''", "results"}}) {
        SCOPED_TRACE(args);
        expect_refused_before_work(run_bench(args, dir), option + ": empty path");
    }
    EXPECT_FALSE(std::filesystem::exists(dir.file("r.json")));
}

// Every integer option takes decimal digits of a value in its range: -1 and 2^64 wrapped or saturated
// (--cpu-max-n -1 was 2^64 - 1), and --min-time nan was accepted where every other float refuses NaN.
TEST(Cli, IntegersOutOfRangeAndNanAreRefusedNamingOptionAndValue) {
    TempDir dir;
    const std::string largest = "18446744073709551615", too_large = "18446744073709551616";
    for (const auto& [args, part] : std::vector<std::pair<std::string, std::string>>{
             {"verify --cpu-max-n -1", "--cpu-max-n: must be an integer in [0, " + largest + "], got '-1'"},
             {"verify --cpu-max-n " + too_large, "--cpu-max-n: must be an integer in [0, " + largest + "], got '" + too_large + "'"},
             {"verify --full-reference-max-n " + too_large, "--full-reference-max-n: must be an integer in [1, " + largest + "], got '" + too_large + "'"},
             {"verify --sample-bodies " + too_large, "--sample-bodies: must be an integer in [1, " + largest + "], got '" + too_large + "'"},
             {"verify --sample-bodies 1e3", "--sample-bodies: must be an integer in [1, " + largest + "], got '1e3'"},
             {"verify -n -1", "--bodies: must be an integer in [1, 67108864], got '-1'"},
             {"verify --steps " + too_large, "--steps: must be an integer in [1, 100000], got '" + too_large + "'"},
             {"run --variant serial.reference -n " + too_large, "--bodies: must be an integer in [1, 67108864], got '" + too_large + "'"},
             {"run --variant serial.reference --steps -1", "--steps: must be an integer in [1, 1073741824], got '-1'"},
             {"run --variant serial.reference --warmup " + too_large, "--warmup: must be an integer in [0, 1073741824], got '" + too_large + "'"},
             {"run --variant serial.reference -d 4294967298", "--map-size: must be an integer in [1, "},
             {"compare --variant serial.reference --variant omp.static --rounds -1", "--rounds: must be an integer in [1, 1048576], got '-1'"},
             {"run --variant serial.reference --min-time nan", "--min-time: must be a number of seconds in [0, 3600], got 'nan'"},
             {"run --variant serial.reference --min-time 3601", "--min-time: must be a number of seconds in [0, 3600], got '3601'"}}) {
        SCOPED_TRACE(args);
        expect_refused_before_work(run_bench(args, dir), part);
    }
    // The bounds themselves are accepted: the largest count runs every CPU variant at any N.
    const Outcome top = run_bench("verify --variants serial.reference -n 16 --steps 1 -d 2 --dim 2 --precision fp32 --integrator "
                                  "euler --cpu-max-n " + largest + " --full-reference-max-n " + largest,
                                  dir);
    EXPECT_EQ(top.status, 0) << top.err;
    EXPECT_NE(top.out.find("1 checks: 1 passed, 0 failed"), std::string::npos) << top.out;
}

// A verify that checks nothing exits 2, as a matrix with nothing to run does; it printed "0 checks"
// and exit 0.
TEST(Cli, VerifyThatChecksNothingExitsTwo) {
    TempDir dir;
    const Outcome none = run_bench("verify --variants serial.reference -n 16 --steps 1 --cpu-max-n 0", dir);
    EXPECT_EQ(none.status, 2) << none.err;
    EXPECT_EQ(line_count(none.err), 1) << none.err;
    EXPECT_NE(none.err.find("nothing to verify: no check of --variants 'serial.reference' runs here (CPU variant "
                            "serial.reference not run at N=16 (--cpu-max-n 0))"),
              std::string::npos)
        << none.err;
    EXPECT_EQ(none.out.find("checks:"), std::string::npos) << none.out;
    // A build with CUDA variants on a machine without a GPU.
    const auto& all = builtin_registry().all();
    const bool cuda_built = std::any_of(all.begin(), all.end(), [](const VariantDescriptor& v) { return v.backend == "cuda"; });
    const bool cuda_runs_here = std::any_of(all.begin(), all.end(),
                                            [](const VariantDescriptor& v) { return v.backend == "cuda" && v.availability().available; });
    if (cuda_built && !cuda_runs_here) {
        const Outcome cuda = run_bench("verify --variants 'cuda.*' -n 16 --steps 1", dir);
        EXPECT_EQ(cuda.status, 2) << cuda.err;
        EXPECT_NE(cuda.err.find("nothing to verify: no check of --variants 'cuda.*' runs here ("), std::string::npos) << cuda.err;
    }
}

// A path with a newline or an escape character is printed escaped, quoted, on one line, in every
// message: an error (stderr) and a report line (stdout).
TEST(Cli, PathsWithControlCharactersArePrintedEscapedOnOneLine) {
    TempDir dir;
    const std::string input = dir.write("in\nput\x1b[31m.csv", "0.1,0.2,0,0,1\n0.3,zero,0,0,1\n");
    const std::string shown = "'" + dir.file("in\\x0aput\\x1b[31m.csv") + "'";
    const Outcome bad = run_bench("run --variant serial.reference --input '" + input + "'", dir);
    EXPECT_EQ(bad.status, 2);
    EXPECT_EQ(line_count(bad.err), 1) << bad.err;
    EXPECT_NE(bad.err.find(shown + ":2: field 2 (y)"), std::string::npos) << bad.err;
    EXPECT_EQ(bad.err.find('\x1b'), std::string::npos) << bad.err;
    const std::string missing = dir.file("new\nfolder/x.csv");
    const Outcome unwritable = run_bench("run --variant serial.reference -n 16 --steps 1 --state-out '" + missing + "'", dir);
    EXPECT_EQ(unwritable.status, 2);
    EXPECT_EQ(line_count(unwritable.err), 1) << unwritable.err;
    EXPECT_NE(unwritable.err.find("'" + dir.file("new\\x0afolder/x.csv") + "': cannot write: its folder '" +
                                  dir.file("new\\x0afolder") + "' does not exist"),
              std::string::npos)
        << unwritable.err;
    const std::string state = dir.file("state\n.csv");
    const Outcome written = run_bench("run --variant serial.reference -n 16 --steps 1 --state-out '" + state + "'", dir);
    ASSERT_EQ(written.status, 0) << written.err;
    EXPECT_NE(written.out.find("state written    '" + dir.file("state\\x0a.csv") + "'\n"), std::string::npos) << written.out;
    EXPECT_TRUE(std::filesystem::exists(state));
    // A message that quotes a path from another reader (a matrix file) is made one line too.
    const std::string matrix = dir.write("m\n.json", "{");
    const Outcome json = run_bench("matrix --dry-run '" + matrix + "'", dir);
    EXPECT_EQ(json.status, 2);
    EXPECT_EQ(line_count(json.err), 1) << json.err;
    EXPECT_NE(json.err.find(dir.file("m\\x0a.json")), std::string::npos) << json.err;
}

// --out under a regular file: exit 2 and a plain message; it was exit 1 and a raw "filesystem error"
// from creating the folders.
TEST(Cli, MatrixOutUnderAFileIsRefusedPlainly) {
    TempDir dir;
    const std::string matrix = dir.write("m.json", R"({"name": "f", "steps": 1, "repetitions": 1, "groups": [
        {"variants": ["serial.reference"], "n": [16], "d": [2]}]})");
    const std::string file = dir.write("f", "a file\n");
    for (const std::string out : {"f/r.json", "f/sub/r.json"}) {
        SCOPED_TRACE(out);
        const Outcome r = run_bench("matrix " + matrix + " --out " + dir.file(out), dir);
        expect_refused_before_work(r, dir.file(out) + ": cannot write: " + file + " is not a folder");
        EXPECT_EQ(r.err.find("filesystem error"), std::string::npos) << r.err;
    }
    EXPECT_EQ(testing::read_text(file), "a file\n");
    // Folders that do not exist are still made.
    const Outcome made = run_bench("matrix " + matrix + " --out " + dir.file("new/deeper/r.json"), dir);
    EXPECT_EQ(made.status, 0) << made.err;
    EXPECT_TRUE(std::filesystem::is_regular_file(dir.file("new/deeper/r.json")));
}

// matrix m.json --out m.json --overwrite replaced the matrix with its results: refused, by the file's
// identity (the same path, another spelling, a symbolic link, a hard link), the matrix left as it was.
TEST(Cli, MatrixRefusesToWriteItsResultsOverItsOwnMatrix) {
    TempDir dir;
    const std::string text = R"({"name": "s", "steps": 1, "repetitions": 1, "groups": [{"variants": ["serial.reference"], "n": [16], "d": [2]}]})";
    const std::string matrix = dir.write("m.json", text);
    std::filesystem::create_directory(dir.file("sub"));
    std::filesystem::create_symlink("m.json", dir.file("link.json"));
    std::filesystem::create_hard_link(matrix, dir.file("hard.json"));
    for (const std::string& out : {matrix, dir.file("sub/../m.json"), dir.file("link.json"), dir.file("hard.json")}) {
        SCOPED_TRACE(out);
        expect_refused_before_work(run_bench("matrix " + matrix + " --out " + out + " --overwrite", dir),
                                   "--out " + out + " is the matrix file " + matrix + ": its results would replace the matrix");
        expect_refused_before_work(run_bench("matrix " + matrix + " --out " + out + " --resume", dir), "is the matrix file");
    }
    expect_refused_before_work(run_bench("matrix m.json --out ./m.json --overwrite", dir, "cd " + dir.path().string() + " && "),
                               "--out ./m.json is the matrix file m.json");
    EXPECT_EQ(testing::read_text(matrix), text);
    EXPECT_TRUE(std::filesystem::is_symlink(dir.file("link.json")));
}

// A memory size in the environment that is not a positive whole number of bytes was ignored silently.
TEST(Cli, ABadMemorySizeInTheEnvironmentIsRefusedNamingTheVariable) {
    TempDir dir;
    for (const char* value : {"abc", "0", "-5", "1e30", "", "18446744073709551616", "12 GB"}) {
        SCOPED_TRACE(value);
        for (const char* variable : {"NBODY_HOST_MEMORY_BYTES", "NBODY_DEVICE_MEMORY_BYTES"})
            expect_refused_before_work(
                run_bench("run --variant serial.reference -n 16 --steps 1", dir, std::string(variable) + "='" + value + "' "),
                std::string(variable) + ": must be a whole number of bytes in [1, 18446744073709551615], got '" + value + "'");
    }
    const Outcome plenty = run_bench("run --variant serial.reference -n 16 --steps 1", dir, "NBODY_HOST_MEMORY_BYTES=1000000000 ");
    EXPECT_EQ(plenty.status, 0) << plenty.err;
}

// A measured time per step of 0 made every rate infinite: check-results accepted it (its consistency
// checks compare with infinity) and the plot tool divided by it. The schema requires it above 0.
TEST(Cli, CheckResultsRefusesAZeroTimePerStep) {
    TempDir dir;
    const std::filesystem::path fixture =
        std::filesystem::path(__FILE__).parent_path().parent_path() / "plot" / "tests" / "fixture" / "real_cpu.json";
    auto document = nlohmann::json::parse(testing::read_text(fixture.string()));
    ASSERT_EQ(run_bench("check-results " + fixture.string(), dir).status, 0);
    std::size_t index = 0;
    while (document["benchmarks"][index]["run_type"] != "iteration" || !document["benchmarks"][index].contains("time_per_step_s"))
        ++index;
    document["benchmarks"][index]["time_per_step_s"] = 0;
    const std::string zero = dir.write("zero.json", document.dump());
    const Outcome r = run_bench("check-results " + zero, dir);
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(line_count(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(fmt::format("/benchmarks/{}/time_per_step_s: 0 is not above 0", index)), std::string::npos) << r.err;
}

// --- Every refused corpus file through the command that reads it: exit 2, one line ---------------------

TEST(Cli, EveryRefusedCorpusFileExitsTwoWithOneLineNamingIt) {
    const std::filesystem::path fuzz = std::filesystem::path(__FILE__).parent_path().parent_path() / "fuzz";
    std::ifstream tsv(fuzz / "corpus" / "expected.tsv");
    TempDir dir;
    std::string line;
    int checked = 0;
    while (std::getline(tsv, line)) {
        std::vector<std::string> f;
        std::stringstream fields(line);
        for (std::string field; std::getline(fields, field, '\t');) f.push_back(field);
        if (f.size() < 5 || f[0].front() == '#' || f[3] != "refused") continue;
        const std::string path = (fuzz / "corpus" / f[0] / f[1]).string();
        std::string args;
        if (f[0] == "state_csv") {
            args = "run --variant serial.reference --steps 1 --state-out " + dir.file("s.csv") + " --input " + path;
            if (f[2].find("dim=3") != std::string::npos) args += " --dim 3";
            if (f[2].find("fp64") != std::string::npos) args += " --precision fp64";
            if (const auto n = f[2].find("n="); n != std::string::npos) args += " -n " + f[2].substr(n + 2);
        } else if (f[0] == "matrix") {
            args = "matrix --dry-run " + path;
        } else {
            args = "check-results " + path;
        }
        SCOPED_TRACE(args);
        const Outcome r = run_bench(args, dir);
        EXPECT_EQ(r.status, 2) << r.err;
        EXPECT_EQ(line_count(r.err), 1) << r.err;
        EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
        EXPECT_NE((r.err + r.out).find(f[4]), std::string::npos) << r.err;
        EXPECT_FALSE(std::filesystem::exists(dir.file("s.csv")));
        ++checked;
    }
    EXPECT_GE(checked, 60);
}

}  // namespace
}  // namespace nbody
