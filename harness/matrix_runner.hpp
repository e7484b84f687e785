#pragma once
// Runs a benchmark matrix with Google Benchmark driving the repetitions (one benchmark per
// configuration, manual time = time per step) and writes the results file of SPEC §6 after every
// finished configuration (temporary file renamed into place).
#include <cstddef>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "matrix.hpp"
#include "nbody/registry.hpp"

namespace nbody {

struct MatrixRunOptions {
    std::string out_path;
    bool resume = false;        // keep what the file holds, run the rest
    bool retry_failed = false;  // with resume: run again what is recorded with an error
    bool overwrite = false;     // replace an existing file instead of refusing
    std::ostream* log = nullptr;  // progress and notes (nullptr: std::cout)
    bool interactive = false;     // redraw one progress line in place (a terminal)
};

struct MatrixRunSummary {
    std::size_t planned = 0;       // configurations in the expanded matrix
    std::size_t already_done = 0;  // found in the file by --resume
    std::size_t finished = 0;      // run now, verified
    std::size_t failed = 0;        // run now, with an error (exception or failed verification)
};

// `registry` supplies the variants (tests pass their own). UsageError on a bad matrix or an output
// that exists without resume/overwrite or cannot be written.
MatrixRunSummary run_matrix(const Registry& registry, const MatrixSpec& spec, const MatrixRunOptions& options);

// The progress line's account of one results entry (time per step, interactions/s, efficiency,
// verified or the error); a null or missing number shows as "-".
std::string timing_summary(const nlohmann::ordered_json& entry);

}  // namespace nbody
