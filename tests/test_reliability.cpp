// The readers of user files against the committed fuzz corpora (fuzz/corpus/expected.tsv says what
// each file must give), the inputs that once crashed a fuzzer (fuzz/regressions/), and the pieces
// behind refusals, progress and interruption (docs/estimates.md, docs/reliability.md).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "io/io.hpp"
#include "matrix/estimate.hpp"
#include "matrix/matrix.hpp"
#include "matrix/matrix_runner.hpp"
#include "nbody/errors.hpp"
#include "nbody/generator.hpp"
#include "nbody/registry.hpp"
#include "platform/measure.hpp"
#include "results/json_input.hpp"
#include "results/results.hpp"
#include "run/progress.hpp"
#include "test_support.hpp"

namespace nbody {
namespace {

namespace fs = std::filesystem;

const fs::path kFuzzDir = fs::path(__FILE__).parent_path().parent_path() / "fuzz";

struct CorpusRow {
    std::string reader, file, options, outcome, message, what;
    fs::path path() const { return kFuzzDir / "corpus" / reader / file; }
};

std::vector<CorpusRow> corpus_rows() {
    std::ifstream in(kFuzzDir / "corpus" / "expected.tsv");
    std::vector<CorpusRow> rows;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line.front() == '#') continue;
        std::vector<std::string> f;
        std::size_t start = 0;
        for (std::size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1) f.push_back(line.substr(start, tab - start));
        f.push_back(line.substr(start));
        if (f.size() != 6) throw std::runtime_error("expected.tsv: not 6 fields: " + line);
        rows.push_back({f[0], f[1], f[2], f[3], f[4], f[5]});
    }
    return rows;
}

// The options column of a state_csv row: dim=2|3, fp64, n=N.
struct CsvOptions {
    int dim = 2;
    bool fp64 = false;
    std::optional<std::size_t> n;
};
CsvOptions csv_options(const std::string& text) {
    CsvOptions o;
    std::istringstream words(text);
    for (std::string w; words >> w;) {
        if (w == "dim=3") o.dim = 3;
        if (w == "fp64") o.fp64 = true;
        if (w.rfind("n=", 0) == 0) o.n = std::stoul(w.substr(2));
    }
    return o;
}

template <class Real>
void expect_sound_state(const BodiesT<Real>& b, int dim, const std::string& what) {
    ASSERT_GT(b.size(), 0u) << what;
    EXPECT_EQ(b.dim, dim) << what;
    for (std::size_t i = 0; i < b.size(); ++i) {
        EXPECT_TRUE(b.m[i] > 0 && std::isfinite(b.m[i])) << what << " body " << i;
        for (int axis = 0; axis < dim; ++axis)
            EXPECT_TRUE(std::isfinite(b.position(axis)[i]) && std::isfinite(b.velocity(axis)[i])) << what << " body " << i;
    }
}

struct Outcome {
    std::vector<std::string> problems;  // empty: accepted
    bool error = false;                 // the reader threw (one message), rather than listing problems
};

// Reads `path` the way the reader named `reader` does: the problems found (a UsageError's message,
// or check_results' list), none when the file is accepted.
Outcome read_with(const std::string& reader, const fs::path& path, const std::string& options) {
    try {
        if (reader == "state_csv") {
            const CsvOptions o = csv_options(options);
            if (o.fp64)
                expect_sound_state(read_bodies_csv_of<double>(path.string(), o.n, 42, o.dim), o.dim, path.string());
            else
                expect_sound_state(read_bodies_csv_of<float>(path.string(), o.n, 42, o.dim), o.dim, path.string());
        } else if (reader == "matrix") {
            const MatrixSpec spec = load_matrix(path.string());
            const MatrixExpansion plan = expand_matrix(spec, builtin_registry(), true);
            EXPECT_LE(plan.configurations.size(), kMaxMatrixConfigurations);
            for (const auto& c : estimate_configurations(builtin_registry(), spec, plan.configurations, CostLimits{}, false))
                EXPECT_TRUE(c.cost.seconds >= 0 && std::isfinite(c.cost.seconds)) << path;
        } else if (reader == "results") {
            return {check_results(read_json_file(path.string())), false};
        } else {
            ADD_FAILURE() << "no reader " << reader;
        }
    } catch (const UsageError& e) {
        return {{e.what()}, true};
    }
    return {};
}

bool is_one_line(const std::string& text) { return text.find('\n') == std::string::npos && text.find('\r') == std::string::npos; }

TEST(Corpus, EveryFileIsListedWithItsOutcome) {
    std::set<std::string> listed, present;
    for (const auto& row : corpus_rows()) listed.insert(row.reader + "/" + row.file);
    for (const char* reader : {"state_csv", "matrix", "results"})
        for (const auto& entry : fs::directory_iterator(kFuzzDir / "corpus" / reader))
            present.insert(std::string(reader) + "/" + entry.path().filename().string());
    EXPECT_EQ(listed, present);
    EXPECT_GE(listed.size(), 80u);
}

// Each corpus file through its reader: accepted files give a sound result, refused ones one line
// that names the file (or a JSON pointer) and says what is wrong.
TEST(Corpus, EachFileGivesTheOutcomeExpectedTsvStates) {
    for (const auto& row : corpus_rows()) {
        SCOPED_TRACE(row.reader + "/" + row.file + " (" + row.what + ")");
        const Outcome outcome = read_with(row.reader, row.path(), row.options);
        const std::vector<std::string>& problems = outcome.problems;
        if (row.outcome == "accepted") {
            EXPECT_TRUE(problems.empty()) << problems.front();
            continue;
        }
        ASSERT_EQ(row.outcome, "refused");
        if (problems.empty()) {
            ADD_FAILURE() << "accepted";
            continue;
        }
        bool found = false;
        for (const auto& p : problems) {
            EXPECT_TRUE(is_one_line(p)) << p;
            EXPECT_LT(p.size(), 700u) << p.substr(0, 700);
            found |= p.find(row.message) != std::string::npos;
        }
        EXPECT_TRUE(found) << "no message with \"" << row.message << "\"; first: " << problems.front();
        // A reader's own error names the file; check_results' problems name the JSON pointer.
        if (outcome.error) {
            EXPECT_NE(problems.front().find(row.path().string()), std::string::npos) << problems.front();
        }
    }
}

// Every corpus file through every reader (a CSV as a matrix, a matrix as results...): a result or a
// clean error, never a crash or another exception.
TEST(Corpus, EveryFileThroughEveryReaderEndsInAResultOrOneLineError) {
    for (const auto& row : corpus_rows())
        for (const char* reader : {"state_csv", "matrix", "results"})
            for (const char* options : {"dim=2", "dim=3 fp64"}) {
                if (std::string(reader) != "state_csv" && std::string(options) != "dim=2") continue;
                SCOPED_TRACE(std::string(reader) + " reading " + row.reader + "/" + row.file);
                Outcome outcome;
                EXPECT_NO_THROW(outcome = read_with(reader, row.path(), options));
                for (const auto& p : outcome.problems) EXPECT_TRUE(is_one_line(p)) << p;
            }
}

// Inputs that made a fuzzer crash, hang or abort once (the fix is in the reader): each must now
// end in a result or a clean error.
TEST(Corpus, FuzzerFindingsStayFixed) {
    std::size_t replayed = 0;
    for (const char* reader : {"state_csv", "matrix", "results"}) {
        const fs::path dir = kFuzzDir / "regressions" / reader;
        if (!fs::is_directory(dir)) continue;
        for (const auto& entry : fs::directory_iterator(dir)) {
            SCOPED_TRACE(entry.path().string());
            for (const char* options : {"dim=2", "dim=3 fp64"}) {
                Outcome outcome;
                EXPECT_NO_THROW(outcome = read_with(reader, entry.path(), options));
                for (const auto& p : outcome.problems) EXPECT_TRUE(is_one_line(p)) << p;
            }
            ++replayed;
        }
    }
    RecordProperty("replayed", static_cast<int>(replayed));
}

TEST(JsonReader, PositionsOfSyntaxErrorsAreLineAndColumn) {
    try {
        parse_json_text("{\n  \"a\": 1,\n  \"b\": ]\n}", "f.json");
        FAIL() << "accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("f.json: not valid JSON at line 3, column 8"), std::string::npos) << e.what();
    }
}

TEST(JsonReader, RepeatedKeysAndDepthNameTheirJsonPointer) {
    try {
        parse_json_text(R"({"groups": [{"n": [1], "d": [2]}, {"n": [1], "n": [2]}]})", "f.json");
        FAIL() << "accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("\"/groups/1/n\": key \"n\" appears twice"), std::string::npos) << e.what();
    }
    const std::string deep = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
    EXPECT_NO_THROW(parse_json_text(deep, "f.json"));
    try {
        parse_json_text("[" + deep + "]", "f.json");
        FAIL() << "accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("nested deeper than 64 levels"), std::string::npos) << e.what();
    }
}

TEST(Estimate, TimeGrowsWithNSquaredAndStepsAndTheMapAddsItsCells) {
    const VariantDescriptor& serial = *builtin_registry().find("serial.reference");
    const TuningValues recount = Registry::resolve_tuning(serial, {});
    const double one = steps_seconds(serial, recount, Workload{}, 1000, 10, 1, 1e8, 0);
    EXPECT_NEAR(steps_seconds(serial, recount, Workload{}, 2000, 10, 1, 1e8, 0) / one, 4.0, 0.01);
    EXPECT_NEAR(steps_seconds(serial, recount, Workload{}, 1000, 10, 7, 1e8, 0) / one, 7.0, 1e-9);
    EXPECT_GT(steps_seconds(serial, recount, Workload{}, 1000, 4096, 1, 1e8, 0), one + 4096.0 * 4096.0 * 1e-10);
    EXPECT_NEAR(steps_seconds(serial, recount, Workload{}, 1000, 10, 1, 2e8, 0) / one, 0.5, 0.01);
}

TEST(Estimate, ModelledRateIsAFractionOfTheDeviceLimit) {
    const VariantDescriptor& serial = *builtin_registry().find("serial.reference");
    const Rate fp32 = modelled_rate(serial, {}, Workload{}, builtin_registry());
    const Rate fp64 = modelled_rate(serial, {}, Workload{3, Precision::fp64, Integrator::euler}, builtin_registry());
    EXPECT_GT(fp32.interactions_per_second, 0);
    EXPECT_LT(fp64.interactions_per_second, fp32.interactions_per_second);  // half the lanes, 12 instead of 9
    EXPECT_NE(fp32.source.find("modelled"), std::string::npos) << fp32.source;
}

TEST(Estimate, MeasuredRateComesFromTheVariantItself) {
    const VariantDescriptor& serial = *builtin_registry().find("serial.reference");
    const auto rate = measured_rate(serial, {}, Workload{}, PhysicsConstants{}, 1 << 20);
    ASSERT_TRUE(rate);
    EXPECT_GT(rate->interactions_per_second, 0);
    EXPECT_NE(rate->source.find("measured here"), std::string::npos) << rate->source;
    EXPECT_NE(rate->source.find("N=1024"), std::string::npos) << rate->source;  // CPU variants: at most 1024 bodies
}

TEST(Estimate, ExcessNamesEachLimitExceeded) {
    const CostLimits limits{.max_seconds = 3600, .host_bytes_available = 1e9, .device_bytes_available = 0, .allow = false};
    EXPECT_EQ(excess(Cost{.seconds = 10, .host_bytes = 1e6, .device_bytes = 1e12, .rate_source = "x"}, limits), "");
    const std::string both = excess(Cost{.seconds = 86400 * 200, .host_bytes = 3e9, .device_bytes = 0, .rate_source = "r"}, limits);
    EXPECT_NE(both.find("estimated 200 days (r), above the limit of 1 h 00 min"), std::string::npos) << both;
    EXPECT_NE(both.find("needs about 3.0 GB of host memory, 1.0 GB available"), std::string::npos) << both;
}

// The device's memory is asked of the probe only when a cost needs device memory, and refuses above it.
TEST(Estimate, DeviceMemoryComesFromTheProbeOnlyWhenNeeded) {
    int asked = 0;
    CostLimits limits{.max_seconds = 3600, .host_bytes_available = 0, .device_bytes_available = 0, .allow = false};
    limits.device_memory_probe = [&asked] {
        ++asked;
        return 80e9;
    };
    EXPECT_EQ(excess(Cost{.seconds = 1, .host_bytes = 0, .device_bytes = 0, .rate_source = "x"}, limits), "");
    EXPECT_EQ(asked, 0);  // a CPU run never initialises a GPU for its estimate
    EXPECT_EQ(excess(Cost{.seconds = 1, .host_bytes = 0, .device_bytes = 1e9, .rate_source = "x"}, limits), "");
    const std::string why = excess(Cost{.seconds = 1, .host_bytes = 0, .device_bytes = 1e11, .rate_source = "x"}, limits);
    EXPECT_NE(why.find("needs about 100.0 GB of device memory, 80.0 GB available"), std::string::npos) << why;
    EXPECT_EQ(asked, 2);
}

TEST(Estimate, DurationsAndSizesReadAsAPersonWouldWriteThem) {
    EXPECT_EQ(duration_text(0.4), "0.4 s");
    EXPECT_EQ(duration_text(42), "42 s");
    EXPECT_EQ(duration_text(200), "3 min 20 s");
    EXPECT_EQ(duration_text(7500), "2 h 05 min");
    EXPECT_EQ(duration_text(86400 * 203.4), "203 days");
    EXPECT_EQ(bytes_text(512e6), "512 MB");
    EXPECT_EQ(bytes_text(3.2e9), "3.2 GB");
}

TEST(Estimate, MemoryCountsTheStateInItsPrecisionAndTheMap) {
    const VariantDescriptor& serial = *builtin_registry().find("serial.reference");
    const double fp32_2d = host_bytes(serial, Workload{}, 1 << 20, 1, 0);
    EXPECT_NEAR(host_bytes(serial, Workload{2, Precision::fp64, Integrator::euler}, 1 << 20, 1, 0) / fp32_2d, 2.0, 0.01);
    EXPECT_NEAR(host_bytes(serial, Workload{3, Precision::fp32, Integrator::euler}, 1 << 20, 1, 0) / fp32_2d, 7.0 / 5.0, 0.01);
    EXPECT_GT(host_bytes(serial, Workload{}, 1 << 20, 1, 2), fp32_2d);  // the reference's states
    EXPECT_GE(host_bytes(serial, Workload{}, 16, 65536, 0), 65536.0 * 65536.0 * 4);
    EXPECT_EQ(device_bytes(serial, Workload{}, 1 << 20, 10), 0.0);  // a CPU variant
}

// measure_variant with a progress hook: every step reported once, in order, the last one the total.
TEST(Progress, ChunkedStepsReportEveryStepDoneAndKeepTheResult) {
    const VariantDescriptor& serial = *builtin_registry().find("serial.reference");
    const Problem problem{.n = 300, .d = 8, .constants = {}, .workload = {}, .distribution = {}};
    const HostState initial = generate_state(problem.workload, problem.n, 42);
    auto plain = serial.create(problem, {});
    const Measurement expected = measure_variant(*plain, initial, 2, 5);

    std::vector<int> seen;
    std::vector<bool> timed;
    TimedPhaseHooks hooks;
    hooks.progress.chunk_seconds = 1e-9;  // one step per chunk
    hooks.progress.on_steps = [&](int done, int total, bool is_timed) {
        EXPECT_EQ(total, 7);
        seen.push_back(done);
        timed.push_back(is_timed);
    };
    auto chunked = serial.create(problem, {});
    const Measurement m = measure_variant(*chunked, initial, 2, 5, hooks);
    EXPECT_EQ(seen, (std::vector<int>{1, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(timed, (std::vector<bool>{false, false, true, true, true, true, true}));
    EXPECT_EQ(std::get<Bodies>(m.final_state).x, std::get<Bodies>(expected.final_state).x);
    EXPECT_EQ(m.activity_map, expected.activity_map);
}

// The steps a minimum timed phase asks for: never fewer than asked, enough at the measured rate, capped.
TEST(Measure, StepsForMinTimeRaiseButNeverLowerTheSteps) {
    EXPECT_EQ(steps_for_min_time(10, 1e-3, 0.5), 500);
    EXPECT_EQ(steps_for_min_time(1000, 1e-3, 0.5), 1000);
    EXPECT_EQ(steps_for_min_time(10, 0.0, 0.5), 10);  // an unmeasurable warm-up leaves the steps alone
    EXPECT_EQ(steps_for_min_time(10, 1e-12, 3600), 1 << 30);
    EXPECT_EQ(steps_for_min_time(10, 1e-3, 0.0), 10);
}

TEST(Progress, TerminalLineIsRedrawnAndLogLinesAreSparse) {
    std::ostringstream terminal, log;
    {
        StepProgress line(terminal, true, "serial.reference", 1000);
        line.update(5, 10, true);
        line.update(6, 10, true);
    }
    const std::string drawn = terminal.str();
    EXPECT_EQ(std::count(drawn.begin(), drawn.end(), '\r'), 3) << drawn;  // two draws and the clear
    EXPECT_NE(drawn.find("serial.reference: steps 6/10, "), std::string::npos) << drawn;
    EXPECT_NE(drawn.find("interactions/s"), std::string::npos);
    {
        StepProgress plain(log, false, "x", 1000);
        for (int k = 1; k <= 100; ++k) plain.update(k, 100, true);  // all within kLogProgressEverySeconds
    }
    EXPECT_EQ(log.str(), "");
    EXPECT_EQ(StepProgress::line(3, 10, false, 2.5e9, 65), "steps 3/10 (warm-up), 2.50e+09 interactions/s, 1:05 left");
}

TEST(AtomicWrite, ReplacesTheFileAndLeavesNoTemporary) {
    testing::TempDir dir;
    const std::string path = dir.write("out.json", "old contents");
    write_file_atomically(path, "new contents");
    EXPECT_EQ(testing::read_text(path), "new contents");
    std::size_t files = 0;
    for (const auto& entry : fs::directory_iterator(dir.path())) files += entry.is_regular_file();
    EXPECT_EQ(files, 1u);
    EXPECT_THROW(write_file_atomically((dir.path() / "no-such-folder" / "x.json").string(), "x"), UsageError);
}

// The one helper every message prints a path with: unchanged unless it holds a control character.
TEST(Messages, PathsWithControlCharactersAreQuotedAndEscaped) {
    EXPECT_EQ(display_path("results/r.json"), "results/r.json");
    EXPECT_EQ(display_path("caf\xc3\xa9 r.json"), "caf\xc3\xa9 r.json");
    EXPECT_EQ(display_path("a\nb.json"), "'a\\x0ab.json'");
    EXPECT_EQ(display_path("\x1b[2J'x\\y"), "'\\x1b[2J\\x27x\\x5cy'");
    EXPECT_EQ(one_line("line\none\r\x7f"), "line\\x0aone\\x0d\\x7f");
}

TEST(Messages, DecimalIntegersAreDigitsInTheirRange) {
    constexpr std::uint64_t largest = std::numeric_limits<std::uint64_t>::max();
    EXPECT_EQ(parse_decimal("0", 0, largest), 0u);
    EXPECT_EQ(parse_decimal("18446744073709551615", 0, largest), largest);
    EXPECT_EQ(parse_decimal("007", 1, 10), 7u);
    for (const char* text : {"", "-1", "+1", " 1", "1 ", "1e3", "0x10", "1.0", "18446744073709551616", "99999999999999999999999"})
        EXPECT_FALSE(parse_decimal(text, 0, largest)) << text;
    EXPECT_FALSE(parse_decimal("0", 1, 10));
    EXPECT_FALSE(parse_decimal("11", 1, 10));
}

// An output whose folders the writer makes (matrix --out): missing folders are fine, a file where a
// folder must be is not.
TEST(AtomicWrite, MissingFoldersAreCheckedUpToTheNearestOneThatExists) {
    testing::TempDir dir;
    const std::string file = dir.write("f", "x");
    EXPECT_NO_THROW(check_writable(dir.file("new/deeper/r.json"), true));
    EXPECT_THROW(check_writable(dir.file("new/deeper/r.json")), UsageError);
    for (const std::string& path : {dir.file("f/r.json"), dir.file("f/sub/r.json")}) {
        try {
            check_writable(path, true);
            ADD_FAILURE() << path << " accepted";
        } catch (const UsageError& e) {
            EXPECT_EQ(std::string(e.what()), path + ": cannot write: " + file + " is not a folder");
        }
    }
    EXPECT_THROW(check_writable(""), UsageError);
    EXPECT_THROW(write_file_atomically("", "x"), UsageError);
    EXPECT_FALSE(fs::exists(dir.file("new")));
}

}  // namespace
}  // namespace nbody
