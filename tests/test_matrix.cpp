// The matrix runner: results that satisfy the schema, failures recorded while the rest completes,
// resume, and a SIGKILL that loses no finished configuration.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "matrix/matrix.hpp"
#include "matrix/matrix_record.hpp"
#include "matrix/matrix_runner.hpp"
#include "nbody/errors.hpp"
#include "nbody/model_registration.hpp"
#include "platform/host_info.hpp"
#include "results/results.hpp"

namespace nbody {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Wraps another variant's simulation (in either precision), changing one behaviour.
class Wrapped : public Simulation {
public:
    using Simulation::download;
    using Simulation::upload;
    explicit Wrapped(std::unique_ptr<Simulation> inner) : inner_(std::move(inner)) {}
    void upload(const BodiesT<float>& b) override { inner_->upload(b); }
    void upload(const BodiesT<double>& b) override { inner_->upload(b); }
    void advance(int steps) override { inner_->advance(steps); }
    void download(BodiesT<float>& s, std::vector<float>& m) override { inner_->download(s, m); }
    void download(BodiesT<double>& s, std::vector<float>& m) override { inner_->download(s, m); }

protected:
    std::unique_ptr<Simulation> inner_;
};

// Moves every body a little after downloading: timings fine, verification fails.
class Drifting final : public Wrapped {
public:
    using Wrapped::download;
    using Wrapped::Wrapped;
    void download(BodiesT<float>& s, std::vector<float>& m) override {
        inner_->download(s, m);
        for (auto& x : s.x) x += 1e-3f;
    }
};

// Verifies (its first advance works) and then throws in the timed steps.
class FailsWhenTimed final : public Wrapped {
public:
    using Wrapped::Wrapped;
    void advance(int steps) override {
        if (++calls_ > 1) throw std::runtime_error("deliberate failure in the timed steps");
        inner_->advance(steps);
    }

private:
    int calls_ = 0;
};

// Sleeps in every advance: the configuration a SIGKILL interrupts.
class Sleepy final : public Wrapped {
public:
    using Wrapped::Wrapped;
    void advance(int steps) override {
        std::this_thread::sleep_for(std::chrono::seconds(20));
        inner_->advance(steps);
    }
};

using Factory = std::function<std::unique_ptr<Simulation>(const Problem&, const TuningValues&)>;

VariantDescriptor test_variant(const std::string& id, Factory create) {
    VariantDescriptor v;
    v.id = id;
    v.backend = "test";
    v.execution_space = "host";
    v.description = "test-only variant";
    v.create = std::move(create);
    return v;
}

// Declares serial.reference's workloads unless told otherwise.
template <class Behaviour>
VariantDescriptor wrapped_variant(const Registry& base, const std::string& id,
                                  std::optional<WorkloadSupport> workloads = std::nullopt) {
    const VariantDescriptor& serial = *base.find("serial.reference");
    VariantDescriptor v = test_variant(id, [create = serial.create](const Problem& p, const TuningValues& t) -> std::unique_ptr<Simulation> {
        return std::make_unique<Behaviour>(create(p, t));
    });
    v.workloads = workloads.value_or(serial.workloads);
    return v;
}

Factory throwing(const std::string& message) {
    return [message](const Problem&, const TuningValues&) -> std::unique_ptr<Simulation> { throw std::runtime_error(message); };
}

// serial.reference plus variants registered only by this test binary.
Registry test_registry(bool sleepy_sleeps = true) {
    Registry r;
    register_serial_variants(r);
    r.add(test_variant("test.throws_on_create", throwing("deliberate failure on create")));
    r.add(wrapped_variant<Drifting>(r, "test.drifting"));
    r.add(wrapped_variant<FailsWhenTimed>(r, "test.fails_when_timed"));
    if (sleepy_sleeps)
        r.add(wrapped_variant<Sleepy>(r, "test.sleepy"));
    else
        r.add(wrapped_variant<Wrapped>(r, "test.sleepy"));
    VariantDescriptor unavailable = test_variant("test.unavailable", throwing("never created"));
    unavailable.runs_on_gpu = true;
    unavailable.availability = [] { return Availability{false, "no such device in tests"}; };
    r.add(unavailable);
    r.add(wrapped_variant<Wrapped>(r, "test.two_d_only", WorkloadSupport{}));  // the default: 2d/fp32/euler
    // The models it knows: cuda and Kokkos' cuda space left out, as a build without them would.
    r.declare({.model = "serial", .space = "", .in_build = true, .why_absent = ""});
    r.declare({.model = "test", .space = "", .in_build = true, .why_absent = ""});
    r.declare({.model = "cuda", .space = "", .in_build = false, .why_absent = "left out of the test registry"});
    r.declare({.model = "kokkos", .space = "", .in_build = true, .why_absent = ""});
    r.declare({.model = "kokkos", .space = "cuda", .in_build = false, .why_absent = "its Kokkos has no such space"});
    return r;
}

MatrixSpec spec_from(const std::string& text) { return parse_matrix(json::parse(text), "test-matrix.json"); }

json read_json(const fs::path& path) {
    std::ifstream in(path);
    return json::parse(in);
}

// Names of configurations in a results file (each once).
std::set<std::string> run_names(const json& doc) {
    std::set<std::string> names;
    for (const auto& b : doc["benchmarks"]) names.insert(b["run_name"].get<std::string>());
    return names;
}

class MatrixRun : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("nbody_test_matrix_" + std::to_string(::getpid()) + "_" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    MatrixRunOptions options(const std::string& file) {
        MatrixRunOptions o;
        o.out_path = (dir_ / file).string();
        o.log = &log_;
        return o;
    }

    fs::path dir_;
    std::ostringstream log_;
};

const char* kTwoSizes = R"({"name": "two-sizes", "steps": 2, "warmup_steps": 1, "repetitions": 2,
    "groups": [{"variants": ["serial.reference"], "n": [64, 100], "d": [8]}]})";

TEST_F(MatrixRun, TwoSizesOfSerialReferenceSatisfyTheSchema) {
    const Registry registry = test_registry();
    const auto o = options("two.json");
    const MatrixRunSummary s = run_matrix(registry, spec_from(kTwoSizes), o);
    EXPECT_EQ(s.planned, 2u);
    EXPECT_EQ(s.finished, 2u);
    EXPECT_EQ(s.failed, 0u);
    const json doc = read_json(o.out_path);
    const auto problems = check_results(doc);
    EXPECT_TRUE(problems.empty()) << problems.front();
    // Two configurations x (2 repetitions + mean, median, stddev, cv).
    ASSERT_EQ(doc["benchmarks"].size(), 12u);
    EXPECT_EQ(run_names(doc), (std::set<std::string>{"serial.reference/n:64/d:8/steps:2/map:recount", "serial.reference/n:100/d:8/steps:2/map:recount"}));
    const json& first = doc["benchmarks"][0];
    EXPECT_EQ(first["name"], "serial.reference/n:64/d:8/steps:2/map:recount");
    EXPECT_EQ(first["variant"], "serial.reference");
    EXPECT_EQ(first["n"], 64);
    EXPECT_EQ(first["cores_used"], 1);
    EXPECT_TRUE(first["verified"].get<bool>());
    EXPECT_GT(first["interactions_per_second"].get<double>(), 0.0);
    std::set<std::string> aggregates;
    for (const auto& b : doc["benchmarks"])
        if (b["run_type"] == "aggregate") aggregates.insert(b["aggregate_name"].get<std::string>());
    EXPECT_EQ(aggregates, (std::set<std::string>{"mean", "median", "stddev", "cv"}));
    EXPECT_EQ(doc["context"]["matrix"]["name"], "two-sizes");
    EXPECT_EQ(doc["context"]["gpu"], nullptr);
    // Progress: plain log lines, configuration k of n.
    EXPECT_NE(log_.str().find("[1/2] serial.reference/n:64/d:8/steps:2"), std::string::npos);
    EXPECT_NE(log_.str().find("[2/2]"), std::string::npos);
    EXPECT_NE(log_.str().find("remaining"), std::string::npos);
}

// min_time_s: each repetition times more steps than `steps` until its phase lasts that long; the
// results say how many, and the name (the resume key) keeps `steps`.
TEST_F(MatrixRun, MinTimeTimesMoreStepsAndRecordsThem) {
    const Registry registry = test_registry();
    const auto o = options("min-time.json");
    run_matrix(registry, spec_from(R"({"name": "m", "steps": 2, "warmup_steps": 1, "repetitions": 1, "min_time_s": 0.02,
        "groups": [{"variants": ["serial.reference"], "n": [32], "d": [4]}]})"),
               o);
    const json doc = read_json(o.out_path);
    const auto problems = check_results(doc);
    EXPECT_TRUE(problems.empty()) << problems.front();
    const json& run = doc["benchmarks"][0];
    EXPECT_EQ(run["name"], "serial.reference/n:32/d:4/steps:2/map:recount");
    EXPECT_EQ(run["min_time_s"], 0.02);
    EXPECT_GT(run["timed_steps"].get<double>(), 2.0);  // 32 bodies take microseconds a step
    EXPECT_GE(run["time_per_step_s"].get<double>() * run["timed_steps"].get<double>(), 0.02);
}

TEST_F(MatrixRun, FailingVariantsAreRecordedAndTheRestCompletes) {
    const Registry registry = test_registry();
    const auto o = options("failing.json");
    const MatrixRunSummary s = run_matrix(registry, spec_from(R"({"name": "failing", "steps": 1, "warmup_steps": 0,
        "repetitions": 2, "groups": [{"variants": ["test.throws_on_create", "serial.reference", "test.fails_when_timed",
        "test.drifting", "test.unavailable"], "n": [40, 70], "d": [4]}]})"), o);
    EXPECT_EQ(s.planned, 8u);
    EXPECT_EQ(s.finished, 2u);
    EXPECT_EQ(s.failed, 6u);
    const json doc = read_json(o.out_path);
    EXPECT_TRUE(check_results(doc).empty()) << check_results(doc).front();
    std::map<std::string, std::vector<json>> by_variant;
    for (const auto& b : doc["benchmarks"]) by_variant[b["variant"]].push_back(b);
    ASSERT_EQ(by_variant["test.throws_on_create"].size(), 2u);  // one error entry per configuration
    for (const auto& e : by_variant["test.throws_on_create"]) {
        EXPECT_TRUE(e["error_occurred"].get<bool>());
        EXPECT_EQ(e["error"], "deliberate failure on create");
        EXPECT_FALSE(e.contains("real_time"));
    }
    ASSERT_EQ(by_variant["test.fails_when_timed"].size(), 2u);
    EXPECT_EQ(by_variant["test.fails_when_timed"][0]["error"], "deliberate failure in the timed steps");
    EXPECT_TRUE(by_variant["test.fails_when_timed"][0]["max_pos_err"].is_number());  // verified before it failed
    ASSERT_EQ(by_variant["test.drifting"].size(), 12u);  // timed, not verified
    for (const auto& e : by_variant["test.drifting"]) {
        EXPECT_FALSE(e["verified"].get<bool>());
        EXPECT_NE(e["error"].get<std::string>().find("max_pos_err"), std::string::npos);
    }
    ASSERT_EQ(by_variant["serial.reference"].size(), 12u);
    for (const auto& e : by_variant["serial.reference"]) EXPECT_TRUE(e["verified"].get<bool>());
    EXPECT_EQ(by_variant.count("test.unavailable"), 0u);
    EXPECT_NE(log_.str().find("skipped test.unavailable: no such device in tests"), std::string::npos);
}

TEST_F(MatrixRun, ResumeRunsOnlyWhatIsMissingAndKeepsWhatIsThere) {
    const Registry registry = test_registry();
    const auto o = options("resume.json");
    // The first call runs one group of the matrix (--groups); the resume completes the matrix.
    const MatrixSpec bigger = spec_from(R"({"name": "r", "steps": 1, "repetitions": 2,
        "groups": [{"name": "small", "variants": ["serial.reference"], "n": [50], "d": [4]},
                   {"name": "large", "variants": ["serial.reference"], "n": [80], "d": [4]}]})");
    MatrixSpec first = bigger;
    select_groups(first, {"small"});
    run_matrix(registry, first, o);
    const json before = read_json(o.out_path);

    EXPECT_THROW(run_matrix(registry, bigger, o), UsageError);  // exists: neither --resume nor --overwrite
    auto resume = o;
    resume.resume = true;
    const MatrixRunSummary s = run_matrix(registry, bigger, resume);
    EXPECT_EQ(s.already_done, 1u);
    EXPECT_EQ(s.finished, 1u);
    const json after = read_json(o.out_path);
    EXPECT_TRUE(check_results(after).empty());
    ASSERT_EQ(after["benchmarks"].size(), 12u);
    for (std::size_t i = 0; i < before["benchmarks"].size(); ++i) EXPECT_EQ(after["benchmarks"][i], before["benchmarks"][i]);
    EXPECT_EQ(after["context"]["resumed"].size(), 1u);

    const MatrixRunSummary again = run_matrix(registry, bigger, resume);  // nothing left
    EXPECT_EQ(again.already_done, 2u);
    EXPECT_EQ(again.finished + again.failed, 0u);

    MatrixSpec other_seed = bigger;
    other_seed.seed = 7;
    EXPECT_THROW(run_matrix(registry, other_seed, resume), UsageError);
}

// Entries judged by another matrix are not appended: a resume with other groups, another name or
// other thresholds is refused like another seed, saying what differs, and the file is left as it is.
TEST_F(MatrixRun, ResumeWithAnotherMatrixIsRefusedSayingWhatDiffers) {
    const Registry registry = test_registry();
    const auto o = options("other.json");
    const std::string groups = R"("groups": [{"name": "a", "variants": ["serial.reference"], "n": [40], "d": [4]},
                                          {"name": "b", "variants": ["serial.reference"], "n": [48], "d": [4]}])";
    const auto matrix = [&](const std::string& head, const std::string& body) {
        return spec_from(R"({"name": )" + head + R"(, "steps": 1, "repetitions": 1, )" + body + "}");
    };
    MatrixSpec first = matrix(R"("r")", groups);
    select_groups(first, {"a"});
    run_matrix(registry, first, o);
    const json before = read_json(o.out_path);
    auto resume = o;
    resume.resume = true;
    const auto refusal = [&](const MatrixSpec& spec) -> std::string {
        try {
            run_matrix(registry, spec, resume);
        } catch (const UsageError& e) {
            EXPECT_EQ(read_json(o.out_path), before);
            return e.what();
        }
        return "";
    };
    EXPECT_NE(refusal(matrix(R"("other")", groups)).find("cannot resume: it was run with another matrix (name: \"r\" in the file, \"other\" in the matrix)"),
              std::string::npos)
        << refusal(matrix(R"("other")", groups));
    std::string other_n = groups;
    other_n.replace(other_n.find("[48]"), 4, "[48, 56]");
    EXPECT_NE(refusal(matrix(R"("r")", other_n)).find("group_definitions: group \"b\": n: [48] in the file, [48,56] in the matrix"),
              std::string::npos)
        << refusal(matrix(R"("r")", other_n));
    const std::string thresholds = refusal(matrix(R"("r")", R"("verification": {"max_pos_err": 1e-30}, )" + groups));
    EXPECT_NE(thresholds.find("max_pos_err: null in the file, 1e-30 in the matrix"), std::string::npos) << thresholds;
    EXPECT_NE(refusal(matrix(R"("r")", R"("warmup_steps": 3, )" + groups)).find("group_definitions: group \"a\": warmup_steps: 1 in the file, 3 in the matrix"),
              std::string::npos);
    MatrixSpec other_seed = first;
    other_seed.seed = 7;
    EXPECT_NE(refusal(other_seed).find("seed: 42 in the file, 7 in the matrix"), std::string::npos);

    // The same matrix, another of its groups: resumed (the file holds both groups' definitions).
    MatrixSpec second = matrix(R"("r")", groups);
    select_groups(second, {"b"});
    EXPECT_EQ(run_matrix(registry, second, resume).finished, 1u);
    // A file written before the group definitions were recorded is compared on the rest.
    json old = read_json(o.out_path);
    old["context"]["matrix"].erase("group_definitions");
    std::ofstream(o.out_path) << old.dump();
    EXPECT_EQ(run_matrix(registry, matrix(R"("r")", groups), resume).already_done, 2u);
}

// --resume continues only a file that passes check-results: a damaged one is refused (exit 2)
// with its first problem, and left as it is.
TEST_F(MatrixRun, ResumeRefusesAFileThatIsNotAValidResultsFile) {
    const Registry registry = test_registry();
    const auto o = options("damaged.json");
    const MatrixSpec spec = spec_from(R"({"name": "r", "steps": 1, "repetitions": 1,
        "groups": [{"variants": ["serial.reference"], "n": [40], "d": [4]}]})");
    run_matrix(registry, spec, o);
    json doc = read_json(o.out_path);
    doc["benchmarks"][0]["n"] = "forty";
    std::ofstream(o.out_path) << doc.dump();
    auto resume = o;
    resume.resume = true;
    try {
        run_matrix(registry, spec, resume);
        FAIL() << "resumed a damaged file";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("cannot resume: not a valid results file (/benchmarks/0/n:"), std::string::npos)
            << e.what();
    }
    EXPECT_EQ(read_json(o.out_path), doc);
}

// A group added, removed or changed is named, with what differs in it: two long lists that agree up
// to where one stops say how many values each holds and the first extra, not two equal prefixes.
TEST_F(MatrixRun, ResumeNamesTheGroupThatDiffersAndWhatDiffersInIt) {
    const Registry registry = test_registry();
    const auto o = options("groups.json");
    std::string many_n;
    for (int n = 20; n < 60; ++n) many_n += (many_n.empty() ? "" : ", ") + std::to_string(n);
    const auto matrix = [](const std::string& groups) {
        return spec_from(R"({"name": "r", "steps": 1, "repetitions": 1, "groups": [)" + groups + "]}");
    };
    const std::string a = R"({"name": "a", "variants": ["serial.reference"], "n": [16], "d": [4]})";
    const std::string b = R"({"name": "b", "variants": ["serial.reference"], "n": [)" + many_n + R"(], "d": [4]})";
    MatrixSpec first = matrix(a + ", " + b);
    select_groups(first, {"a"});
    run_matrix(registry, first, o);
    auto resume = o;
    resume.resume = true;
    const auto refusal = [&](const MatrixSpec& spec) -> std::string {
        try {
            run_matrix(registry, spec, resume);
        } catch (const UsageError& e) {
            return e.what();
        }
        return "";
    };
    const std::string c = R"({"name": "c", "variants": ["serial.reference"], "n": [24], "d": [4]})";
    EXPECT_NE(refusal(matrix(a + ", " + b + ", " + c)).find("(group_definitions: group \"c\" in the matrix, absent from the file)"),
              std::string::npos)
        << refusal(matrix(a + ", " + b + ", " + c));
    EXPECT_NE(refusal(matrix(a)).find("(group_definitions: group \"b\" in the file, absent from the matrix)"), std::string::npos)
        << refusal(matrix(a));
    std::string longer = b;
    longer.replace(longer.find("], \"d\""), 1, ", 60]");
    EXPECT_NE(refusal(matrix(a + ", " + longer))
                  .find("(group_definitions: group \"b\": n: 40 values in the file, 41 in the matrix; the first extra, in the matrix: 60)"),
              std::string::npos)
        << refusal(matrix(a + ", " + longer));
    EXPECT_NE(refusal(matrix(b + ", " + a)).find("group_definitions: the groups in the order \"a\", \"b\" in the file, \"b\", \"a\" in the matrix"),
              std::string::npos)
        << refusal(matrix(b + ", " + a));
}

// A file timed by another build (commit, compiler, flags, a model's version) is not continued under
// its context: refused naming the key and both values, the file left as it is.
TEST_F(MatrixRun, ResumeOfAFileWrittenByAnotherBuildIsRefusedNamingTheKey) {
    const Registry registry = test_registry();
    const auto o = options("build.json");
    const MatrixSpec spec = spec_from(R"({"name": "r", "steps": 1, "repetitions": 1,
        "groups": [{"variants": ["serial.reference"], "n": [40, 48], "d": [4]}]})");
    MatrixSpec first = spec;
    run_matrix(registry, first, o);
    const json written = read_json(o.out_path);
    auto resume = o;
    resume.resume = true;
    const auto refusal = [&](const std::string& key, const json& value) -> std::string {
        json doc = written;
        json* at = &doc["context"];
        std::string rest = key;
        for (std::size_t dot; (dot = rest.find('.')) != std::string::npos; rest = rest.substr(dot + 1)) at = &(*at)[rest.substr(0, dot)];
        (*at)[rest] = value;
        std::ofstream(o.out_path) << doc.dump();
        try {
            run_matrix(registry, spec, resume);
        } catch (const UsageError& e) {
            EXPECT_EQ(read_json(o.out_path), doc);
            return e.what();
        }
        return "";
    };
    const std::string commit = written["context"]["git_commit"];
    const std::string other_commit(40, '0');
    EXPECT_NE(refusal("git_commit", other_commit)
                  .find(fmt::format("cannot resume: it was written by another build (git_commit: \"{}\" in the file, \"{}\" in this build)",
                                    other_commit, commit)),
              std::string::npos)
        << refusal("git_commit", other_commit);
    EXPECT_NE(refusal("compiler", "GNU 4.8.5").find("(compiler: \"GNU 4.8.5\" in the file, "), std::string::npos);
    EXPECT_NE(refusal("build_flags", "-O0").find("(build_flags: \"-O0\" in the file, "), std::string::npos);
    EXPECT_NE(refusal("build_facts.kokkos_version", "3.7.0").find("(build_facts.kokkos_version: \"3.7.0\" in the file, "),
              std::string::npos);
    // The same build continues it.
    std::ofstream(o.out_path) << written.dump();
    EXPECT_EQ(run_matrix(registry, spec, resume).already_done, 2u);
}

// `nbody-bench ARGS` in `dir`: its exit status and what it printed (stdout, then stderr).
std::pair<int, std::string> run_bench(const std::string& args, const fs::path& dir) {
    const fs::path out = dir / "bench-output.txt";
    const int raw = std::system(fmt::format("cd {} && {} {} >{} 2>&1", dir.string(), NBODY_BENCH_PATH, args, out.string()).c_str());
    std::ifstream in(out);
    return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>())};
}

// A dry run with --resume plans what a run would: only what the file lacks, and the same refusal of
// a file it would not continue (another matrix, not a valid results file), with nothing written.
TEST_F(MatrixRun, DryRunWithResumePlansWhatRemainsAndRefusesAsARunWould) {
    std::ofstream(dir_ / "m.json") << R"({"name": "m", "steps": 1, "warmup_steps": 0, "repetitions": 1, "groups": [
        {"name": "a", "variants": ["serial.reference"], "n": [40], "d": [4]},
        {"name": "b", "variants": ["serial.reference"], "n": [48], "d": [4]}]})";
    ASSERT_EQ(run_bench("matrix m.json --out r.json --groups a", dir_).first, 0);
    const json first = read_json(dir_ / "r.json");
    const auto [status, text] = run_bench("matrix m.json --out r.json --dry-run --resume", dir_);
    EXPECT_EQ(status, 0) << text;
    EXPECT_NE(text.find("1 of 2 configurations already in r.json: planned the 1 left"), std::string::npos) << text;
    EXPECT_NE(text.find("[1/1] serial.reference/n:48/d:4/steps:1"), std::string::npos) << text;
    EXPECT_EQ(text.find("n:40"), std::string::npos) << text;
    EXPECT_EQ(read_json(dir_ / "r.json"), first);

    ASSERT_EQ(run_bench("matrix m.json --out r.json --resume", dir_).first, 0);
    const auto [complete_status, complete] = run_bench("matrix m.json --out r.json --dry-run --resume", dir_);
    EXPECT_EQ(complete_status, 0) << complete;
    EXPECT_NE(complete.find("2 of 2 configurations already in r.json: planned the 0 left"), std::string::npos) << complete;
    EXPECT_NE(complete.find("matrix m: 0 configurations to run, estimated total 0"), std::string::npos) << complete;

    std::ofstream(dir_ / "other.json") << R"({"name": "other", "groups": [{"name": "a", "variants": ["serial.reference"], "n": [40], "d": [4]}]})";
    const auto [other_status, other] = run_bench("matrix other.json --out r.json --dry-run --resume", dir_);
    EXPECT_EQ(other_status, 2) << other;
    EXPECT_NE(other.find("r.json: cannot resume: it was run with another matrix (name: \"m\" in the file, \"other\" in the matrix)"),
              std::string::npos)
        << other;
    std::ofstream(dir_ / "r.json") << "{\"context\": {}, \"benchmarks\": []}";
    const auto [corrupt_status, corrupt] = run_bench("matrix m.json --out r.json --dry-run --resume", dir_);
    EXPECT_EQ(corrupt_status, 2) << corrupt;
    EXPECT_NE(corrupt.find("r.json: cannot resume: not a valid results file"), std::string::npos) << corrupt;
    EXPECT_EQ(corrupt.find("[1/"), std::string::npos) << corrupt;
    const auto [no_out_status, no_out] = run_bench("matrix m.json --dry-run --resume", dir_);
    EXPECT_EQ(no_out_status, 2) << no_out;
    EXPECT_NE(no_out.find("--resume needs --out RESULTS.json"), std::string::npos) << no_out;
}

// A matrix whose configurations exceed the limits is refused before the results file exists.
TEST_F(MatrixRun, ConfigurationsAboveTheLimitsAreRefusedBeforeAnythingIsWritten) {
    const Registry registry = test_registry();
    auto o = options("limits.json");
    o.limits = CostLimits{.max_seconds = 1e-6, .host_bytes_available = 0, .device_bytes_available = 0, .allow = false};
    const MatrixSpec spec = spec_from(R"({"name": "big", "steps": 1, "repetitions": 1,
        "groups": [{"variants": ["serial.reference"], "n": [800], "d": [4]}]})");
    EXPECT_THROW(run_matrix(registry, spec, o), UsageError);
    EXPECT_FALSE(fs::exists(o.out_path));
    o.limits.allow = true;
    EXPECT_EQ(run_matrix(registry, spec, o).finished, 1u);
}

// The expansion is bounded before it is built: lists that multiply past the cap are refused.
TEST(MatrixSpecTest, ExpansionPastTheCapIsRefusedNamingTheGroup) {
    std::string sizes;
    for (int n = 1; n <= 400; ++n) {
        if (n > 1) sizes += ',';
        sizes += std::to_string(n);
    }
    const MatrixSpec spec = spec_from(R"({"name": "x", "groups": [{"name": "huge", "variants": ["serial.reference"], "n": [)" +
                                      sizes + R"(], "d": [)" + sizes + "]}]}");
    try {
        expand_matrix(spec, test_registry());
        FAIL() << "expanded";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("group \"huge\": 1.6e+05 combinations"), std::string::npos) << e.what();
    }
}

TEST_F(MatrixRun, RetryFailedRunsRecordedErrorsAgain) {
    const auto o = options("retry.json");
    const char* matrix = R"({"name": "retry", "steps": 1, "repetitions": 1,
        "groups": [{"variants": ["serial.reference", "test.sleepy"], "n": [30], "d": [4]}]})";
    Registry failing;
    register_serial_variants(failing);
    failing.add(test_variant("test.sleepy", throwing("out of device memory (pretend)")));
    EXPECT_EQ(run_matrix(failing, spec_from(matrix), o).failed, 1u);
    auto resume = o;
    resume.resume = true;
    resume.retry_failed = true;
    const MatrixRunSummary s = run_matrix(test_registry(false), spec_from(matrix), resume);
    EXPECT_EQ(s.already_done, 1u);
    EXPECT_EQ(s.finished, 1u);
    const json doc = read_json(o.out_path);
    for (const auto& b : doc["benchmarks"]) EXPECT_FALSE(b.contains("error")) << b.dump();
}

const char* kKillMatrix = R"({"name": "kill", "steps": 1, "warmup_steps": 0, "repetitions": 2,
    "groups": [{"variants": ["serial.reference"], "n": [32, 48], "d": [4]},
               {"variants": ["test.sleepy"], "n": [32], "d": [4]}]})";

// Run by the test below in a fresh process (fork + exec of this binary): the matrix whose third
// configuration sleeps until the parent kills it.
TEST(MatrixHelper, DISABLED_RunKillMatrix) {
    const char* out = std::getenv("NBODY_TEST_KILL_OUT");
    ASSERT_NE(out, nullptr);
    MatrixRunOptions o;
    o.out_path = out;
    std::ostringstream log;
    o.log = &log;
    run_matrix(test_registry(), spec_from(kKillMatrix), o);
}

TEST_F(MatrixRun, SigkillLosesNoFinishedConfigurationAndResumeCompletes) {
    const fs::path out = dir_ / "killed.json";
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::setenv("NBODY_TEST_KILL_OUT", out.c_str(), 1);
        ::execl("/proc/self/exe", "test_matrix", "--gtest_filter=MatrixHelper.DISABLED_RunKillMatrix",
                "--gtest_also_run_disabled_tests", static_cast<char*>(nullptr));
        ::_exit(127);
    }
    // Wait until both serial configurations are on disk (the sleepy one then sleeps 20 s).
    json seen;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (!fs::exists(out)) continue;
        seen = read_json(out);  // never half-written: the writer renames a finished temporary file
        if (run_names(seen).size() == 2) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ASSERT_EQ(::kill(child, SIGKILL), 0);
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the helper finished before it was killed";

    const json killed = read_json(out);
    EXPECT_TRUE(check_results(killed).empty());
    EXPECT_EQ(run_names(killed), (std::set<std::string>{"serial.reference/n:32/d:4/steps:1/map:recount", "serial.reference/n:48/d:4/steps:1/map:recount"}));
    EXPECT_EQ(killed["benchmarks"].size(), 12u);

    MatrixRunOptions o;
    o.out_path = out.string();
    o.resume = true;
    o.log = &log_;
    const MatrixRunSummary s = run_matrix(test_registry(false), spec_from(kKillMatrix), o);
    EXPECT_EQ(s.already_done, 2u);
    EXPECT_EQ(s.finished, 1u);
    const json done = read_json(out);
    EXPECT_TRUE(check_results(done).empty());
    EXPECT_EQ(run_names(done).size(), 3u);
    for (std::size_t i = 0; i < killed["benchmarks"].size(); ++i) EXPECT_EQ(done["benchmarks"][i], killed["benchmarks"][i]);
}

TEST(MatrixSpecTest, ExpansionSweepsTuningsAndSkipsWithNotes) {
    Registry r = test_registry();
    VariantDescriptor tunable = test_variant("test.tunable", throwing("not run by this test"));
    TuningParameter block;
    block.name = "block";
    block.default_value = "64";
    block.allowed_values = {"32", "64", "128"};
    TuningParameter threads;
    threads.name = "threads";
    threads.default_value = "1";
    threads.min_value = 1;
    threads.max_value = 2;
    threads.larger_elsewhere = true;  // as OpenMP's threads: 3 holds on a larger host
    tunable.tunings = {block, threads};
    tunable.max_n = 100;
    r.add(tunable);
    const MatrixSpec spec = spec_from(R"({"name": "x", "max_n": {"serial.*": 60},
        "groups": [{"variants": ["test.tunable", "serial.reference", "cuda.*", "test.unavailable"],
                    "n": [50, 200], "d": [4, 8], "tunings": {"block": ["32", 128], "threads": [1, 2, 3]}}]})");
    const MatrixExpansion e = expand_matrix(spec, r);
    // tunable: 2 blocks x 2 valid thread counts x N=50 only (cap 100) x 2 D; serial: N=50 (cap 60) x 2 D.
    ASSERT_EQ(e.configurations.size(), 10u);
    EXPECT_EQ(e.configurations[0].name, "test.tunable/n:50/d:4/steps:10/block:32/threads:1");
    EXPECT_EQ(e.configurations[0].tuning.at("block"), "32");
    EXPECT_EQ(e.configurations.back().name, "serial.reference/n:50/d:8/steps:10/map:recount");
    const auto has_note = [&](const std::string& part) {
        return std::any_of(e.notes.begin(), e.notes.end(), [&](const std::string& n) { return n.find(part) != std::string::npos; });
    };
    EXPECT_TRUE(has_note("pattern \"cuda.*\" skipped: model cuda is not in this build: left out of the test registry"));
    EXPECT_TRUE(has_note("skipped test.unavailable"));
    EXPECT_TRUE(has_note("threads=3"));
    EXPECT_TRUE(has_note("test.tunable not run at N=200 (cap 100)"));
    EXPECT_TRUE(has_note("serial.reference not run at N=200 (cap 60)"));
}

TEST(MatrixSpecTest, WorkloadAxesSweepEveryCombinationAndNameNonCanonicalOnes) {
    const Registry r = test_registry();
    const MatrixSpec spec = spec_from(R"({"name": "axes", "steps": 3, "integrator": "leapfrog",
        "groups": [{"name": "swept", "variants": ["serial.reference", "test.two_d_only"], "n": [16], "d": [4],
                    "dim": [2, 3], "precision": ["fp32", "fp64"]},
                   {"name": "plain", "variants": ["serial.reference"], "n": [16], "d": [4], "integrator": "euler"}]})");
    const MatrixExpansion e = expand_matrix(spec, r);
    std::vector<std::string> names;
    for (const auto& c : e.configurations) names.push_back(c.name);
    // The top-level integrator is the groups' default; a group's own value replaces it.
    EXPECT_EQ(names, (std::vector<std::string>{
                         "serial.reference/n:16/d:4/steps:3/dim:2/precision:fp32/integrator:leapfrog/map:recount",
                         "serial.reference/n:16/d:4/steps:3/dim:2/precision:fp64/integrator:leapfrog/map:recount",
                         "serial.reference/n:16/d:4/steps:3/dim:3/precision:fp32/integrator:leapfrog/map:recount",
                         "serial.reference/n:16/d:4/steps:3/dim:3/precision:fp64/integrator:leapfrog/map:recount",
                         "serial.reference/n:16/d:4/steps:3/map:recount",  // canonical: no workload part
                     }));
    EXPECT_EQ(e.configurations[3].workload, (Workload{3, Precision::fp64, Integrator::leapfrog}));
    EXPECT_EQ(e.configurations[4].workload, Workload{});
    // The 2D-only variant runs none of the swept workloads (all leapfrog): skipped with one note, no error.
    EXPECT_NE(std::find(e.notes.begin(), e.notes.end(),
                        "swept: skipped test.two_d_only for 2d/fp32/leapfrog, 2d/fp64/leapfrog, 3d/fp32/leapfrog, "
                        "3d/fp64/leapfrog: it runs dim 2, fp32, euler"),
              e.notes.end());
}

TEST(MatrixSpecTest, WorkloadAxisMistakesNameTheKey) {
    const auto message = [](const std::string& axes) -> std::string {
        try {
            spec_from(R"({"name": "x", "groups": [{"variants": ["serial.*"], "n": [8], "d": [2], )" + axes + "}]}");
        } catch (const UsageError& e) {
            return e.what();
        }
        return "";
    };
    EXPECT_NE(message(R"("dim": 4)").find("groups[0].dim: dim '4' is not one of 2|3"), std::string::npos) << message(R"("dim": 4)");
    EXPECT_NE(message(R"("dim": "3")").find("groups[0].dim"), std::string::npos);
    EXPECT_NE(message(R"("precision": ["fp32", "fp16"])").find("groups[0].precision[1]"), std::string::npos);
    EXPECT_NE(message(R"("integrator": [])").find("groups[0].integrator"), std::string::npos);
    EXPECT_NE(message(R"("precision": ["fp64", "fp64"])").find("twice"), std::string::npos);
    EXPECT_EQ(message(R"("dim": [3], "precision": "fp64", "integrator": ["euler", "leapfrog"])"), "");
}

// Two workloads of one N must not share a reference: a 3D, leapfrog or float64 run checked against
// the 2D Euler float32 truth would fail (or pass for the wrong reason).
TEST_F(MatrixRun, EachWorkloadIsVerifiedAgainstItsOwnReferenceAndRecorded) {
    const Registry registry = test_registry();
    const auto o = options("axes.json");
    const MatrixRunSummary s = run_matrix(registry, spec_from(R"({"name": "axes", "steps": 2, "warmup_steps": 0, "repetitions": 1,
        "groups": [{"variants": ["serial.reference", "test.two_d_only"], "n": [48], "d": [4],
                    "dim": [2, 3], "precision": ["fp32", "fp64"], "integrator": ["euler", "leapfrog"]}]})"), o);
    EXPECT_EQ(s.planned, 9u);  // 8 workloads of serial.reference, the canonical one of the 2D-only variant
    EXPECT_EQ(s.finished, 9u) << log_.str();
    EXPECT_EQ(s.failed, 0u);
    const json doc = read_json(o.out_path);
    const auto problems = check_results(doc);
    EXPECT_TRUE(problems.empty()) << problems.front();
    EXPECT_EQ(doc["context"]["nbody_results_version"], kResultsVersion);
    std::set<std::string> seen;
    for (const auto& b : doc["benchmarks"]) {
        const Workload w = entry_workload(b);
        seen.insert(to_string(w));
        EXPECT_TRUE(b["verified"].get<bool>()) << b["name"] << ": " << b.value("error", "");
        EXPECT_EQ(b["efficiency_limit_inputs"]["instructions_per_interaction"].get<double>(), w.dim == 3 ? 12.0 : 9.0);
        EXPECT_EQ(b["efficiency_limit_inputs"]["simd_lanes"].get<int>(),
                  w.precision == Precision::fp64 ? host_cpu_info().simd_fp64_lanes : host_cpu_info().simd_fp32_lanes);
        // Each entry is judged by the rounding rule and records the limit it was held to.
        EXPECT_EQ(b["verdict"], "pass") << b["name"];
        EXPECT_EQ(b["pos_limit_source"], "rounding") << b["name"];
        EXPECT_LE(b["max_pos_err"].get<double>(), b["pos_err_limit"].get<double>()) << b["name"];
    }
    EXPECT_EQ(seen.size(), 8u);
    // The fp64 workloads are held to tighter limits than the fp32 ones: the rounding of float64.
    double smallest_fp32_limit = 1, largest_fp64_limit = 0;
    for (const auto& b : doc["benchmarks"]) {
        const double limit = b["pos_err_limit"].get<double>();
        if (b["precision"] == "fp32") smallest_fp32_limit = std::min(smallest_fp32_limit, limit);
        else largest_fp64_limit = std::max(largest_fp64_limit, limit);
    }
    EXPECT_LT(largest_fp64_limit * 1e6, smallest_fp32_limit);
}

// A drifted state is caught in every workload (the check is not vacuous off the canonical one).
TEST_F(MatrixRun, DriftIsCaughtInThreeDimensionsWithLeapfrog) {
    const Registry registry = test_registry();
    const auto o = options("drift3d.json");
    const MatrixRunSummary s = run_matrix(registry, spec_from(R"({"name": "d", "steps": 1, "warmup_steps": 0, "repetitions": 1,
        "groups": [{"variants": ["test.drifting"], "n": [32], "d": [4], "dim": 3, "integrator": "leapfrog"}]})"), o);
    EXPECT_EQ(s.failed, 1u);
    const json doc = read_json(o.out_path);
    EXPECT_NE(doc["benchmarks"][0]["error"].get<std::string>().find("max_pos_err"), std::string::npos);
}

// Non-finite numbers are written as null; the progress line must read them without throwing.
TEST(MatrixSummary, NullTimingsAreShownNotDereferenced) {
    nlohmann::ordered_json entry = {{"time_per_step_s", nullptr}, {"interactions_per_second", nullptr},
                                    {"efficiency", nullptr},      {"verified", false},
                                    {"error", "verification failed: map_diff is NaN"}};
    std::string line;
    EXPECT_NO_THROW(line = timing_summary(entry));
    EXPECT_EQ(line, "- s/step, - interactions/s, verification failed: map_diff is NaN");
    entry = {{"time_per_step_s", 2e-3}, {"interactions_per_second", 5e8}, {"efficiency", 0.25}, {"verified", true}};
    EXPECT_EQ(timing_summary(entry), "2.0000e-03 s/step, 5.0000e+08 interactions/s, efficiency 25.0%, verified");
    EXPECT_EQ(timing_summary(nlohmann::ordered_json::object()), "- s/step, - interactions/s, not verified");
}

TEST(MatrixSpecTest, MistakesAreUsageErrorsNamingTheKey) {
    const Registry r = test_registry();
    const auto message = [&](const std::string& text) -> std::string {
        try {
            expand_matrix(spec_from(text), r);
        } catch (const UsageError& e) {
            return e.what();
        }
        return "";
    };
    EXPECT_NE(message(R"({"name": "x", "groups": [{"variants": ["serial.*"], "n": [8], "d": [2], "stepz": 3}]})")
                  .find("unknown key \"stepz\""), std::string::npos);
    EXPECT_NE(message(R"({"name": "x", "groups": [{"variants": ["serial.*"], "n": [0], "d": [2]}]})").find("groups[0].n[0]"),
              std::string::npos);
    EXPECT_NE(message(R"({"name": "x", "groups": [{"variants": ["serial.*"], "n": [8], "d": [2], "tunings": {"blok": [1]}}]})")
                  .find("no variant matched by this group has a tuning \"blok\""), std::string::npos);
    EXPECT_NE(message(R"({"name": "x", "groups": []})").find("groups"), std::string::npos);
    EXPECT_NE(message(R"({"name": "x", "groups": [{"variants": ["serial.*"], "n": [8], "d": [2], "min_time_s": 0}]})")
                  .find("groups[0].min_time_s"), std::string::npos);
    EXPECT_NE(message(R"({"groups": [{"variants": ["serial.*"], "n": [8], "d": [2]}]})").find("name"), std::string::npos);
}

// --groups keeps the named groups only, records them, and names the matrix's groups on a typo.
TEST(MatrixSpecTest, SelectGroupsKeepsTheNamedOnesAndRefusesUnknownNames) {
    MatrixSpec spec = spec_from(R"({"name": "x", "groups": [
        {"name": "gpu", "variants": ["serial.*"], "n": [8], "d": [2]},
        {"name": "cpu", "variants": ["serial.*"], "n": [16], "d": [2]}]})");
    MatrixSpec typo = spec;
    try {
        select_groups(typo, {"gpus"});
        ADD_FAILURE() << "an unknown group was accepted";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("no group \"gpus\" (its groups: gpu, cpu)"), std::string::npos) << e.what();
    }
    select_groups(spec, {"cpu"});
    ASSERT_EQ(spec.groups.size(), 1u);
    EXPECT_EQ(spec.groups[0].name, "cpu");
    const MatrixExpansion e = expand_matrix(spec, test_registry());
    ASSERT_EQ(e.configurations.size(), 1u);
    EXPECT_EQ(e.configurations[0].n, 16u);
    EXPECT_EQ(matrix_context(spec)["groups"], json::array({"cpu"}));
}

// The error a matrix's reading or expansion against the test registry gives; "" when it expands.
std::string expansion_error(const std::string& text) {
    try {
        expand_matrix(spec_from(text), test_registry());
    } catch (const UsageError& e) {
        return e.what();
    }
    return "";
}

// A group that expands to nothing is a mistake (exit 2) naming the group and why, beside good groups
// too; what this build or machine lacks is skipped with a note instead.
TEST(MatrixSpecTest, AGroupOfNoConfigurationIsRefusedNamingTheGroupAndWhy) {
    const auto with_good_group = [](const std::string& group) {
        return R"({"name": "x", "max_n": {"serial.*": 60}, "groups": [{"name": "good", "variants": ["serial.reference"], "n": [16], "d": [2]}, )" +
               group + "]}";
    };
    EXPECT_NE(expansion_error(with_good_group(R"({"name": "typo", "variants": ["serail.reference"], "n": [16], "d": [2]})"))
                  .find("group \"typo\": variant pattern \"serail.reference\" matches no variant (no model \"serail\"; the models: "
                        "serial, test, cuda, kokkos"),
              std::string::npos)
        << expansion_error(with_good_group(R"({"name": "typo", "variants": ["serail.reference"], "n": [16], "d": [2]})"));
    // One misspelt part of a comma-separated pattern is caught even when the other part matches.
    EXPECT_NE(expansion_error(with_good_group(R"({"name": "part", "variants": ["serial.reference,test.nope"], "n": [16], "d": [2]})"))
                  .find("group \"part\": variant pattern \"test.nope\" matches no variant (model test has no such variant"),
              std::string::npos);
    EXPECT_NE(expansion_error(with_good_group(R"({"name": "capped", "variants": ["serial.reference"], "n": [200], "d": [2]})"))
                  .find("group \"capped\" expands to no configuration: serial.reference not run at N=200 (cap 60)"),
              std::string::npos);
    EXPECT_NE(expansion_error(with_good_group(R"({"name": "filtered", "variants": ["test.two_d_only"], "n": [16], "d": [2], "dim": 3})"))
                  .find("group \"filtered\" expands to no configuration: skipped test.two_d_only for 3d/fp32/euler: it runs"),
              std::string::npos);

    // Left out of this build, or unavailable here: skipped with a note saying which and why.
    const MatrixSpec elsewhere = spec_from(with_good_group(
        R"({"name": "gpu", "variants": ["cuda.*", "kokkos.*@cuda", "test.unavailable"], "n": [16], "d": [2]})"));
    const MatrixExpansion e = expand_matrix(elsewhere, test_registry());
    ASSERT_EQ(e.configurations.size(), 1u);
    for (const char* note : {"gpu: pattern \"cuda.*\" skipped: model cuda is not in this build: left out of the test registry",
                             "gpu: pattern \"kokkos.*@cuda\" skipped: execution space cuda of model kokkos is not in this build: "
                             "its Kokkos has no such space",
                             "gpu: skipped test.unavailable: no such device in tests", "gpu: nothing of this group runs here"})
        EXPECT_NE(std::find(e.notes.begin(), e.notes.end(), note), e.notes.end()) << note;
    EXPECT_NO_THROW(require_configurations(elsewhere, e));

    // A file where nothing remains at all is refused, though each group alone is only skipped.
    const MatrixSpec nothing = spec_from(R"({"name": "x", "groups": [{"name": "gpu", "variants": ["cuda.*"], "n": [16], "d": [2]}]})");
    try {
        require_configurations(nothing, expand_matrix(nothing, test_registry()));
        ADD_FAILURE() << "an empty expansion was accepted";
    } catch (const UsageError& error) {
        EXPECT_NE(std::string(error.what()).find("test-matrix.json: no configuration to run here: every group is skipped (gpu: "
                                                 "pattern \"cuda.*\" skipped"),
                  std::string::npos)
            << error.what();
    }
}

// A tuning value that no variant of the group defines is a typo (exit 2) naming the key, the value
// and the valid ones, as a misspelt variant is; a value a variant defines but this machine cannot
// hold (an instruction set the CPU lacks, more threads than its cores) is skipped with its reason.
TEST(MatrixSpecTest, ATuningValueNoVariantDefinesIsRefusedAndOneThisMachineLacksIsSkipped) {
    EXPECT_NE(expansion_error(R"({"name": "x", "groups": [{"variants": ["serial.reference"], "n": [16], "d": [2],
                                  "tunings": {"map": ["recount", "recont"]}}]})")
                  .find("test-matrix.json: group \"group0\": tunings.map: no variant matched by this group has the value \"recont\" "
                        "(valid: recount|incremental)"),
              std::string::npos)
        << expansion_error(R"({"name": "x", "groups": [{"variants": ["serial.reference"], "n": [16], "d": [2], "tunings": {"map": ["recont"]}}]})");

    // A model this build left out may define the value: not judged here.
    EXPECT_EQ(expansion_error(R"({"name": "x", "groups": [{"variants": ["serial.reference", "cuda.*"], "n": [16], "d": [2],
                                  "tunings": {"map": ["recount", "cub"]}}]})"),
              "");

    Registry r = test_registry();
    VariantDescriptor vector_unit = test_variant("test.vector", throwing("not run by this test"));
    TuningParameter isa{.name = "isa", .description = "", .default_value = "auto", .allowed_values = {"auto", "sse2"},
                        .min_value = 0, .max_value = 0, .values_elsewhere = {"avx512"}, .larger_elsewhere = false};
    TuningParameter threads{.name = "threads", .description = "", .default_value = "1", .allowed_values = {},
                            .min_value = 1, .max_value = 2, .values_elsewhere = {}, .larger_elsewhere = true};
    vector_unit.tunings = {isa, threads};
    r.add(vector_unit);
    const auto expand = [&](const std::string& tunings) {
        return expand_matrix(spec_from(R"({"name": "x", "groups": [{"variants": ["test.vector", "serial.reference"], "n": [16], "d": [2],
                                            "tunings": )" + tunings + "}]}"),
                             r);
    };
    const auto refusal = [&](const std::string& tunings) -> std::string {
        try {
            expand(tunings);
        } catch (const InputError& e) {
            return e.what();
        }
        return "";
    };
    EXPECT_NE(refusal(R"({"isa": ["avx-512"]})").find("tunings.isa: no variant matched by this group has the value \"avx-512\" (valid: auto|sse2|avx512)"),
              std::string::npos)
        << refusal(R"({"isa": ["avx-512"]})");
    EXPECT_NE(refusal(R"({"threads": [0]})").find("tunings.threads: no variant matched by this group has the value \"0\" (valid: an integer >= 1)"),
              std::string::npos)
        << refusal(R"({"threads": [0]})");
    EXPECT_NE(refusal(R"({"threads": ["two"]})").find("has the value \"two\""), std::string::npos);
    // Defined, not holdable here: skipped with the reason; what the machine holds still runs.
    const MatrixExpansion e = expand(R"({"isa": ["sse2", "avx512"], "threads": [2, 64]})");
    EXPECT_EQ(e.configurations.size(), 2u);  // test.vector isa=sse2 threads=2, and serial.reference
    const auto has_note = [&](const std::string& part) {
        return std::any_of(e.notes.begin(), e.notes.end(), [&](const std::string& n) { return n.find(part) != std::string::npos; });
    };
    EXPECT_TRUE(has_note("tuning isa=avx512 is not available on this machine (here: auto|sse2)"));
    EXPECT_TRUE(has_note("tuning threads=64 is not an integer in [1, 2] on this machine"));
}

// A size cap that caps nothing is a typo (exit 2) naming the pattern, at the top level or in a group;
// a cap for a model this build left out is kept for the build that has it.
TEST(MatrixSpecTest, AMaxNPatternThatCapsNoVariantIsRefusedNamingThePattern) {
    const std::string group = R"("groups": [{"name": "cpu", "variants": ["serial.reference"], "n": [16], "d": [2]}])";
    EXPECT_NE(expansion_error(R"({"name": "x", "max_n": {"serail.*": 100}, )" + group + "}")
                  .find("test-matrix.json: max_n: pattern \"serail.*\" caps no variant of the matrix (no model \"serail\"; the models: "
                        "serial, test, cuda, kokkos; see `nbody-bench list`)"),
              std::string::npos)
        << expansion_error(R"({"name": "x", "max_n": {"serail.*": 100}, )" + group + "}");
    EXPECT_NE(expansion_error(R"({"name": "x", "groups": [{"variants": ["serial.reference"], "n": [16], "d": [2], "max_n": {"test.drifting": 8}}]})")
                  .find("max_n: pattern \"test.drifting\" caps no variant of the matrix (it matches none of the variants its groups list)"),
              std::string::npos);
    EXPECT_EQ(expansion_error(R"({"name": "x", "max_n": {"cuda.*": 100, "serial.*": 100}, )" + group + "}"), "");
    // A top-level cap serves a group that --groups left out.
    MatrixSpec selected = spec_from(R"({"name": "x", "max_n": {"test.drifting": 8}, "groups": [
        {"name": "cpu", "variants": ["serial.reference"], "n": [16], "d": [2]},
        {"name": "drift", "variants": ["test.drifting"], "n": [8], "d": [2]}]})");
    select_groups(selected, {"cpu"});
    EXPECT_EQ(expand_matrix(selected, test_registry()).configurations.size(), 1u);
}

// One rule for every list of a matrix: each value once (matrices/README.md).
TEST(MatrixSpecTest, AValueListedTwiceInAnyListIsRefusedNamingTheKeyAndTheValue) {
    const auto error = [](const std::string& group_keys, const std::string& top_keys = "") {
        return expansion_error(R"({"name": "x", )" + top_keys + R"("groups": [{"variants": ["serial.reference"], "d": [2], )" + group_keys + "}]}");
    };
    EXPECT_NE(error(R"("n": [16, 32, 16])").find("groups[0].n: lists 16 twice"), std::string::npos) << error(R"("n": [16, 32, 16])");
    EXPECT_NE(expansion_error(R"({"name": "x", "groups": [{"variants": ["serial.reference"], "n": [16], "d": [4, 2, 4]}]})")
                  .find("groups[0].d: lists 4 twice"),
              std::string::npos);
    EXPECT_NE(error(R"("n": [16], "tunings": {"map": ["recount", "recount"]})").find("groups[0].tunings.map: lists \"recount\" twice"),
              std::string::npos);
    EXPECT_NE(expansion_error(R"({"name": "x", "groups": [{"variants": ["serial.reference", "serial.reference"], "n": [16], "d": [2]}]})")
                  .find("groups[0].variants: lists \"serial.reference\" twice"),
              std::string::npos);
    EXPECT_NE(error(R"("n": [16], "precision": ["fp64", "fp32", "fp64"])").find("groups[0].precision: lists \"fp64\" twice"), std::string::npos);
    EXPECT_NE(error(R"("n": [16])", R"("dim": [3, 3], )").find("dim: lists 3 twice"), std::string::npos);
    EXPECT_EQ(error(R"("n": [16, 32], "precision": ["fp64", "fp32"])"), "");
}

// Seeds are the integers of 64 bits without sign, as `--seed` takes them: nothing wraps or rounds.
TEST(MatrixSpecTest, SeedsAreTheSixtyFourBitIntegersAndNothingElse) {
    const auto with_seed = [](const std::string& seed) {
        return R"({"name": "x", "seed": )" + seed + R"(, "groups": [{"variants": ["serial.reference"], "n": [16], "d": [2]}]})";
    };
    EXPECT_EQ(spec_from(with_seed("18446744073709551615")).seed, 18446744073709551615u);
    EXPECT_EQ(spec_from(with_seed("0")).seed, 0u);
    for (const char* seed : {"-1", "18446744073709551616", "1e23", "1.5", "\"7\""})
        EXPECT_NE(expansion_error(with_seed(seed)).find("seed: must be an integer in [0, 18446744073709551615], got"), std::string::npos)
            << seed << ": " << expansion_error(with_seed(seed));
}

// Constants whose squares leave a group's precision end its runs in a non-finite state: refused
// when the matrix is read, naming the group's precision.
TEST(MatrixSpecTest, ConstantsWhoseSquaresLeaveAGroupsPrecisionAreRefused) {
    const auto with = [](const std::string& constants, const std::string& precision) {
        return R"({"name": "x", "constants": )" + constants + R"(, "groups": [{"variants": ["serial.reference"], "n": [16], "d": [2], "precision": )" +
               precision + "}]}";
    };
    EXPECT_NE(expansion_error(with(R"({"softening": 1e-20})", R"(["fp64", "fp32"])"))
                  .find("groups[0].precision: constants.softening 1e-20: its square underflows in fp32"),
              std::string::npos)
        << expansion_error(with(R"({"softening": 1e-20})", R"(["fp64", "fp32"])"));
    EXPECT_EQ(expansion_error(with(R"({"softening": 1e-20})", R"("fp64")")), "");
    EXPECT_NE(expansion_error(with(R"({"softening": 1e-200})", R"("fp64")")).find("constants.softening 1e-200: its square underflows in fp64"),
              std::string::npos);
    EXPECT_NE(expansion_error(with(R"({"dt": 1e200})", R"("fp64")")).find("constants.dt 1e+200: its square overflows in fp64"),
              std::string::npos);
    EXPECT_NE(expansion_error(with(R"({"dt": 1e20})", R"("fp32")")).find("constants.dt 1e+20: its square overflows in fp32"),
              std::string::npos);
}

// Every matrix in the repository parses and expands against this build.
TEST(MatrixSpecTest, RepositoryMatricesAreValid) {
    const fs::path dir = fs::path(__FILE__).parent_path().parent_path() / "matrices";
    ASSERT_TRUE(fs::is_directory(dir)) << dir;
    std::size_t count = 0;
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.path().extension() != ".json") continue;
        ++count;
        SCOPED_TRACE(entry.path().string());
        const MatrixSpec spec = load_matrix(entry.path().string());
        EXPECT_NO_THROW(expand_matrix(spec, builtin_registry()));
    }
    EXPECT_GE(count, 6u);
}

}  // namespace
}  // namespace nbody
