#pragma once
// A validator for the part of JSON Schema (draft 2020-12) that harness/results/results.schema.json
// uses: type, enum, const, properties, required, additionalProperties, items, minimum, minLength,
// pattern, allOf, anyOf, if/then/else and local $ref ("#/$defs/..."). A schema keyword outside
// that set is reported as an error, so the schema cannot silently rely on an unchecked keyword.
// Two limits keep it safe on any document: an "integer" is a whole number of magnitude at most 2^53
// (what a double holds exactly), and a string longer than 1024 characters fails a `pattern`
// without being matched.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace nbody {

// Violations as "<JSON pointer>: <what is wrong>"; empty when `document` satisfies `schema`.
std::vector<std::string> validate_json_schema(const nlohmann::json& schema, const nlohmann::json& document,
                                              std::size_t max_errors = 20);

}  // namespace nbody
