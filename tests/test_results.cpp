// The results checker: the JSON Schema subset validator and the consistency checks beyond it.
#include <gtest/gtest.h>

#include "json_schema.hpp"
#include "matrix_runner.hpp"
#include "nbody/model_registration.hpp"
#include "results.hpp"

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
}

// A real results file from a tiny matrix, then corrupted in ways the checker must catch.
class ResultsChecker : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        Registry registry;
        register_cpu_ref_variants(registry);
        const auto path = std::filesystem::temp_directory_path() / ("nbody_test_results_" + std::to_string(::getpid()) + ".json");
        MatrixRunOptions o;
        o.out_path = path.string();
        o.overwrite = true;
        std::ostringstream log;
        o.log = &log;
        run_matrix(registry, parse_matrix(json::parse(R"({"name": "t", "steps": 1, "repetitions": 2,
            "groups": [{"variants": ["serial.reference"], "n": [40], "d": [4]}]})"), "t.json"), o);
        std::ifstream in(path);
        document_ = new json(json::parse(in));
        std::filesystem::remove(path);
    }
    static void TearDownTestSuite() { delete document_; }
    static json* document_;
};
json* ResultsChecker::document_ = nullptr;

TEST_F(ResultsChecker, AcceptsWhatTheRunnerWrites) {
    const auto problems = check_results(*document_);
    EXPECT_TRUE(problems.empty()) << problems.front();
    EXPECT_TRUE(validate_json_schema(results_schema(), *document_).empty());
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

}  // namespace
}  // namespace nbody
