#pragma once
// The results file (SPEC §6, docs/results-format.md): its context block and its checker.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "matrix.hpp"
#include "nbody/registry.hpp"

namespace nbody {

// Google Benchmark's context fields plus ours: host CPU and its limit inputs, GPU, model versions,
// compiler, build flags, git commit, date, and the matrix's seed, constants and verification settings.
nlohmann::ordered_json results_context(const Registry& registry, const MatrixSpec& spec);

// Local time as ISO 8601 with the UTC offset, the way Google Benchmark writes `date`.
std::string iso8601_now();

// results/schema/results.schema.json, compiled in.
const nlohmann::json& results_schema();

// Violations of the schema, then of what the schema cannot say (interactions/s = N^2 / time per step,
// efficiency = interactions/s / limit, real_time = time per step, one entry per repetition, unique names).
std::vector<std::string> check_results(const nlohmann::json& document);

}  // namespace nbody
