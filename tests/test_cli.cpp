// nbody-bench as a user runs it: list, run, written files, and exit status 2 with a one-line
// message on bad input, leaving nothing half-written.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "nbody/errors.hpp"
#include "nbody/io.hpp"
#include "nbody/registry.hpp"
#include "test_support.hpp"

namespace nbody {
namespace {

using testing::TempDir;

struct Outcome {
    int status = -1;
    std::string out, err;
};

// env: variable assignments put before the command ("NAME=value ...").
Outcome run_bench(const std::string& args, const TempDir& dir, const std::string& env = "") {
    const std::string out = dir.file("stdout.txt"), err = dir.file("stderr.txt");
    const std::string command = env + std::string(NBODY_BENCH_PATH) + " " + args + " >" + out + " 2>" + err;
    const int raw = std::system(command.c_str());
    return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, testing::read_text(out), testing::read_text(err)};
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

TEST(Cli, ListShowsTheWorkloadsOfEachVariant) {
    TempDir dir;
    const Outcome r = run_bench("list --variants serial.reference", dir);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("workloads"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(builtin_registry().find("serial.reference")->workloads.describe()), std::string::npos) << r.out;
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
    for (const char* args : {"--help", "list --help", "run --help"}) {
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
                             "run -n 5", "bogus", "run --variant serial.reference --input /no/such/file.csv"}) {
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

}  // namespace
}  // namespace nbody
