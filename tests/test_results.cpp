// The results checker: the JSON Schema subset validator and the consistency checks beyond it.
#include <gtest/gtest.h>

#include "matrix/matrix_runner.hpp"
#include "matrix_results_support.hpp"
#include "nbody/model_registration.hpp"
#include "platform/host_info.hpp"
#include "results/json_schema.hpp"
#include "results/results.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace nbody {
namespace {

using nlohmann::json;

TEST(JsonSchema, ChecksTheKeywordsTheResultsSchemaUses) {
    const json schema = json::parse(R"({
        "type": "object", "required": ["a", "kind"],
        "properties": {"a": {"type": "integer", "minimum": 1}, "b": {"$ref": "#/$defs/name"},
                       "kind": {"enum": ["x", "y"]}, "list": {"type": "array", "items": {"type": ["number", "null"]}}},
        "additionalProperties": {"type": "string"},
        "allOf": [{"if": {"properties": {"kind": {"const": "x"}}}, "then": {"required": ["b"]}, "else": {"required": ["list"]}}],
        "$defs": {"name": {"type": "string", "minLength": 2, "pattern": "^[a-z]+$"}}})");
    EXPECT_TRUE(validate_json_schema(schema, json::parse(R"({"a": 2, "kind": "x", "b": "ok"})")).empty());
    EXPECT_TRUE(validate_json_schema(schema, json::parse(R"({"a": 2, "kind": "y", "list": [1.5, null], "extra": "s"})")).empty());
    const auto errors_of = [&](const char* text) { return validate_json_schema(schema, json::parse(text)); };
    EXPECT_EQ(errors_of(R"({"kind": "x", "b": "ok"})").at(0), "/: missing required field \"a\"");
    EXPECT_EQ(errors_of(R"({"a": 0, "kind": "x", "b": "ok"})").size(), 1u);
    EXPECT_EQ(errors_of(R"({"a": 1.5, "kind": "x", "b": "ok"})").size(), 1u);
    EXPECT_EQ(errors_of(R"({"a": 1, "kind": "z", "b": "ok", "list": []})").size(), 1u);
    EXPECT_EQ(errors_of(R"({"a": 1, "kind": "x"})").size(), 1u);                  // if/then
    EXPECT_EQ(errors_of(R"({"a": 1, "kind": "y"})").size(), 1u);                  // if/else
    EXPECT_EQ(errors_of(R"({"a": 1, "kind": "x", "b": "A1"})").size(), 1u);       // pattern
    EXPECT_EQ(errors_of(R"({"a": 1, "kind": "y", "list": ["s"]})").at(0).rfind("/list/0:", 0), 0u);
    EXPECT_EQ(errors_of(R"({"a": 1, "kind": "y", "list": [], "extra": 3})").size(), 1u);  // additionalProperties
    EXPECT_FALSE(validate_json_schema(json::parse(R"({"maxLength": 3})"), json("abcd")).empty());  // unsupported keyword
    // exclusiveMinimum (the results' error limits): the bound itself is refused.
    const json positive = json::parse(R"({"type": "number", "exclusiveMinimum": 0})");
    EXPECT_TRUE(validate_json_schema(positive, json(1e-6)).empty());
    EXPECT_FALSE(validate_json_schema(positive, json(0.0)).empty());
    EXPECT_FALSE(validate_json_schema(positive, json(-1.0)).empty());
}

// A real results file from a tiny matrix, then corrupted in ways the checker must catch.
class ResultsChecker : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        document_ = new json(nbody::testing::run_serial_matrix(R"({"name": "t", "steps": 1, "repetitions": 2,
            "groups": [{"variants": ["serial.reference"], "n": [40], "d": [4]}]})"));
    }
    static void TearDownTestSuite() { delete document_; }
    static json* document_;
};
json* ResultsChecker::document_ = nullptr;

// docs/reliability.md: an "integer" is a whole number a double holds exactly, and a long string is
// refused before std::regex (which recurses per character) sees it.
TEST(JsonSchema, IntegersAndPatternsAreSafeOnAnyValue) {
    const json integer = json::parse(R"({"type": "integer"})");
    EXPECT_TRUE(validate_json_schema(integer, json(3.0)).empty());
    EXPECT_TRUE(validate_json_schema(integer, json(9007199254740992.0)).empty());
    EXPECT_FALSE(validate_json_schema(integer, json(1e300)).empty());
    EXPECT_FALSE(validate_json_schema(integer, json(3.5)).empty());
    const json pattern = json::parse(R"({"type": "string", "pattern": "^[a-z]+$"})");
    EXPECT_TRUE(validate_json_schema(pattern, json(std::string(1024, 'a'))).empty());
    const auto long_one = validate_json_schema(pattern, json(std::string(100000, 'a')));
    ASSERT_EQ(long_one.size(), 1u);
    EXPECT_NE(long_one[0].find("string longer than 1024 characters"), std::string::npos) << long_one[0];
    const auto listed = validate_json_schema(json::parse(R"({"enum": [1, 2]})"), json(std::vector<int>(100000, 7)));
    ASSERT_EQ(listed.size(), 1u);
    EXPECT_LT(listed[0].size(), 200u);  // the value is shown shortened
}

TEST_F(ResultsChecker, AcceptsWhatTheRunnerWrites) {
    const auto problems = check_results(*document_);
    EXPECT_TRUE(problems.empty()) << problems.front();
    EXPECT_TRUE(validate_json_schema(results_schema(), *document_).empty());
}

// docs/results-format.md: every file records its distribution, a single process as 1 rank.
TEST_F(ResultsChecker, RecordsTheSingleProcessDistribution) {
    const json& distribution = document_->at("context").at("distribution");
    EXPECT_EQ(distribution.at("ranks"), 1);
    EXPECT_EQ(distribution.at("nodes"), 1);
    EXPECT_EQ(distribution.at("communicator"), "single process");
    EXPECT_EQ(distribution.at("hosts").size(), 1u);
    EXPECT_FALSE(distribution.contains("gpus"));  // no device communicator
    for (const auto& entry : document_->at("benchmarks")) EXPECT_EQ(entry.at("ranks"), 1) << entry.dump();
}

// Over G ranks the limit is G x the product of the inputs (efficiency_limit_inputs.ranks).
TEST_F(ResultsChecker, TheLimitOverSeveralRanksIsRanksTimesTheProduct) {
    json doc = *document_;
    for (auto& entry : doc["benchmarks"]) {
        if (entry["efficiency_limit"].is_null()) continue;
        entry["efficiency_limit_inputs"]["ranks"] = 3;
        EXPECT_FALSE(check_results(doc).empty()) << "a limit that ignores ranks 3 was accepted";
        entry["efficiency_limit"] = entry["efficiency_limit"].get<double>() * 3;
        if (entry.contains("efficiency") && entry["efficiency"].is_number())
            entry["efficiency"] = entry["efficiency"].get<double>() / 3;
        entry["ranks"] = 3;
    }
    const auto problems = check_results(doc);
    EXPECT_TRUE(problems.empty()) << problems.front();
    doc["benchmarks"][0]["ranks"] = 0;
    EXPECT_FALSE(check_results(doc).empty());
}

TEST_F(ResultsChecker, RejectsMissingAndMistypedFields) {
    json doc = *document_;
    doc["benchmarks"][0].erase("interactions_per_second");
    EXPECT_FALSE(check_results(doc).empty());
    doc = *document_;
    doc["benchmarks"][1]["verified"] = "yes";
    EXPECT_FALSE(check_results(doc).empty());
    doc = *document_;
    doc["context"].erase("git_commit");
    EXPECT_FALSE(check_results(doc).empty());
    doc = *document_;
    doc["benchmarks"][0]["verified"] = false;  // unverified needs an error text
    EXPECT_FALSE(check_results(doc).empty());
    doc = *document_;
    doc["benchmarks"][0]["error_occurred"] = true;  // an error entry needs error_message and error
    EXPECT_FALSE(check_results(doc).empty());
}

TEST_F(ResultsChecker, RejectsInconsistentNumbers) {
    json doc = *document_;
    doc["benchmarks"][0]["interactions_per_second"] = doc["benchmarks"][0]["interactions_per_second"].get<double>() * 2;
    EXPECT_FALSE(check_results(doc).empty());
    doc = *document_;
    doc["benchmarks"][0]["real_time"] = doc["benchmarks"][0]["real_time"].get<double>() * 1000;
    EXPECT_FALSE(check_results(doc).empty());
    doc = *document_;
    doc["benchmarks"].erase(doc["benchmarks"].begin());  // a repetition missing
    EXPECT_FALSE(check_results(doc).empty());
    doc = *document_;
    doc["benchmarks"].push_back(doc["benchmarks"][0]);  // a repetition twice
    EXPECT_FALSE(check_results(doc).empty());
}

TEST_F(ResultsChecker, EveryEntryRecordsItsWorkload) {
    for (const auto& b : (*document_)["benchmarks"]) {
        EXPECT_EQ(b["dim"], 2);
        EXPECT_EQ(b["precision"], "fp32");
        EXPECT_EQ(b["integrator"], "euler");
    }
    json doc = *document_;
    doc["benchmarks"][0]["dim"] = 4;
    EXPECT_FALSE(check_results(doc).empty());
    doc = *document_;
    doc["benchmarks"][0]["precision"] = "fp16";
    EXPECT_FALSE(check_results(doc).empty());
    doc = *document_;
    doc["benchmarks"][0].erase("integrator");  // required from version 2 on
    EXPECT_FALSE(check_results(doc).empty());
    doc = *document_;
    doc["benchmarks"][0]["dim"] = 3;  // its name says the canonical workload
    const auto problems = check_results(doc);
    ASSERT_FALSE(problems.empty());
    EXPECT_NE(problems.front().find("does not name its fields"), std::string::npos) << problems.front();
}

// A file written before the workload axes (version 1): no workload fields, no limit inputs. It stays
// valid, its entries read as 2d/fp32/euler.
TEST_F(ResultsChecker, VersionOneFilesWithoutWorkloadFieldsStayValid) {
    json doc = *document_;
    doc["context"]["nbody_results_version"] = 1;
    for (auto& b : doc["benchmarks"])
        for (const char* key : {"dim", "precision", "integrator", "efficiency_limit_inputs"}) b.erase(key);
    const auto problems = check_results(doc);
    EXPECT_TRUE(problems.empty()) << problems.front();
    EXPECT_EQ(entry_workload(doc["benchmarks"][0]), Workload{});
    doc["context"]["nbody_results_version"] = 2;
    EXPECT_FALSE(check_results(doc).empty());
    doc["context"]["nbody_results_version"] = 3;
    EXPECT_FALSE(check_results(doc).empty());
}

TEST_F(ResultsChecker, EfficiencyLimitMustBeTheProductOfItsInputs) {
    const json& first = (*document_)["benchmarks"][0];
    ASSERT_TRUE(first["efficiency_limit_inputs"].is_object());
    EXPECT_EQ(first["efficiency_limit_inputs"]["cores"], first["cores_used"]);
    json doc = *document_;
    doc["benchmarks"][0]["efficiency_limit_inputs"]["instructions_per_interaction"] = 12;  // a 3D count on a 2D entry
    EXPECT_FALSE(check_results(doc).empty());
    doc = *document_;
    doc["benchmarks"][0]["efficiency_limit_inputs"]["simd_lanes"] = 1000;
    EXPECT_FALSE(check_results(doc).empty());
}

// SPEC §3: the limit divides by the workload's instruction count and counts its precision's lanes.
TEST(HostInfo, CpuLimitPerWorkload) {
    const CpuLimitInputs in{.cores = 4, .clock_hz = 3e9, .simd_lanes = 8, .fma_pipes = 2, .instructions_per_interaction = 9};
    EXPECT_DOUBLE_EQ(cpu_interaction_limit(in), 4 * 3e9 * 8 * 2 / 9.0);
    EXPECT_EQ(simd_fp64_lanes_of(16), 8);
    EXPECT_EQ(simd_fp64_lanes_of(4), 2);
    EXPECT_EQ(simd_fp64_lanes_of(1), 1);
    const CpuInfo& host = host_cpu_info();
    EXPECT_EQ(host.simd_fp64_lanes, simd_fp64_lanes_of(host.simd_fp32_lanes));
    const Workload fp64_3d{.dim = 3, .precision = Precision::fp64};
    const CpuLimitInputs canonical = host_cpu_limit_inputs(1, Workload{}), wide = host_cpu_limit_inputs(1, fp64_3d);
    EXPECT_EQ(canonical.instructions_per_interaction, 9);
    EXPECT_EQ(wide.instructions_per_interaction, 12);
    EXPECT_EQ(canonical.simd_lanes, host.simd_fp32_lanes);
    EXPECT_EQ(wide.simd_lanes, host.simd_fp64_lanes);
    EXPECT_EQ(host_cpu_limit_inputs(1000, Workload{}).cores, host.physical_cores);
}

TEST(HostInfo, GpuLimitUsesFp64LanesOfTheComputeCapability) {
    std::string source;
    EXPECT_EQ(fp64_lanes_per_sm("9.0", source), 64);
    EXPECT_NE(source.find("9.0"), std::string::npos);
    EXPECT_EQ(fp64_lanes_per_sm("8.0", source), 32);
    EXPECT_EQ(fp64_lanes_per_sm("8.6", source), 2);
    EXPECT_EQ(fp64_lanes_per_sm("8.9", source), 2);
    EXPECT_EQ(fp64_lanes_per_sm("42.0", source), 0);
    EXPECT_NE(source.find("unknown"), std::string::npos);
    GpuInfo h100;
    h100.compute_capability = "9.0";
    h100.sm_count = 132;
    h100.sm_clock_hz = 1.98e9;
    h100.fp32_lanes_per_sm = 128;
    EXPECT_DOUBLE_EQ(gpu_interaction_limit(gpu_limit_inputs(h100, Workload{})), 132 * 1.98e9 * 128 / 9.0);
    EXPECT_DOUBLE_EQ(gpu_interaction_limit(gpu_limit_inputs(h100, Workload{.dim = 3})), 132 * 1.98e9 * 128 / 12.0);
    EXPECT_DOUBLE_EQ(gpu_interaction_limit(gpu_limit_inputs(h100, Workload{.precision = Precision::fp64})), 132 * 1.98e9 * 64 / 9.0);
    GpuInfo unknown = h100;
    unknown.compute_capability = "42.0";
    EXPECT_EQ(gpu_interaction_limit(gpu_limit_inputs(unknown, Workload{.precision = Precision::fp64})), 0.0);
}

}  // namespace
}  // namespace nbody
