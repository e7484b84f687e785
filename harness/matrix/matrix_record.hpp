#pragma once
// What a results file records of its matrix (context.matrix), what --resume reads back from one,
// and the progress line's account of an entry.
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "matrix/matrix.hpp"
#include "nbody/registry.hpp"

namespace nbody {

// The results context's `matrix` block (results_context): name, file, seed, constants, the
// verification settings and rule, the groups chosen with --groups and every group's definition as it
// expands, which a resume compares (matrix_difference).
nlohmann::ordered_json matrix_context(const MatrixSpec& spec);

// What --resume continues: the results file at `path`, its entries (less those recorded with an error
// when `retry_failed`) and the names of the configurations they hold. InputError for a file that fails
// check-results; UsageError for one run with another matrix or written by another build, naming the
// first key that differs and both values.
struct ResumedFile {
    nlohmann::ordered_json document;
    std::set<std::string> done;
};
ResumedFile read_resumed_file(const Registry& registry, const MatrixSpec& spec, const std::string& path, bool retry_failed);

// The progress line's account of one results entry (time per step, interactions/s, efficiency,
// verified or the error); a null or missing number shows as "-".
std::string timing_summary(const nlohmann::ordered_json& entry);

}  // namespace nbody
