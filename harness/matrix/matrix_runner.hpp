#pragma once
// Runs a benchmark matrix with Google Benchmark driving the repetitions (one benchmark per
// configuration, manual time = time per step) and writes the results file of SPEC §6 after every
// finished configuration (temporary file renamed into place).
#include <cstddef>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "matrix/estimate.hpp"
#include "matrix/matrix.hpp"
#include "nbody/registry.hpp"
#include "platform/distributed.hpp"

namespace nbody {

struct MatrixRunOptions {
    std::string out_path;
    bool resume = false;        // keep what the file holds, run the rest
    bool retry_failed = false;  // with resume: run again what is recorded with an error
    bool overwrite = false;     // replace an existing file instead of refusing
    std::ostream* log = nullptr;  // progress and notes (nullptr: std::cout)
    bool interactive = false;     // redraw one progress line in place (a terminal)
    CostLimits limits{};          // every configuration's estimate is held to these before anything runs
    // Stop after the repetition in progress once SIGINT or SIGTERM arrives (interrupt.hpp), writing
    // every finished configuration; the one in progress is left for --resume.
    bool stop_on_signals = false;
    // The ranks every configuration runs over (docs/scaling.md); nullptr: this process alone.
    // Over several ranks every variant must be distributed, rank 0 alone writes the file and the
    // progress, and a failing configuration ends the run on every rank (--resume continues it).
    ProblemDistributions* distributions = nullptr;
    // Read each timed phase's energy (NVML on a GPU, RAPL on the host: platform/energy.hpp).
    bool read_energy = true;
};

struct MatrixRunSummary {
    std::size_t planned = 0;       // configurations in the expanded matrix
    std::size_t already_done = 0;  // found in the file by --resume
    std::size_t finished = 0;      // run now, verified
    std::size_t failed = 0;        // run now, with an error (exception or failed verification)
    int interrupted_by = 0;        // the signal that stopped the run early, 0 when it ran to the end
    std::vector<std::string> not_run;  // interrupted: the configurations left for --resume
};

// What each configuration costs (estimate.hpp): its repetitions, warm-up and verification steps, and
// the host reference when it is the first of the list to need it. `measure_when_over`: a
// configuration whose modelled time exceeds the limit is estimated again from its variant's rate
// measured here (once per variant, tuning and workload).
struct ConfigurationCost {
    Cost cost;
    bool over_limit = false;
    std::string why;  // excess(cost, limits)
};
std::vector<ConfigurationCost> estimate_configurations(const Registry& registry, const MatrixSpec& spec,
                                                       const std::vector<Configuration>& configurations,
                                                       const CostLimits& limits, bool measure_when_over,
                                                       bool read_energy = true);

// What --resume continues: the results file at `path`, its entries (less those recorded with an error
// when `retry_failed`) and the names of the configurations they hold. InputError for a file that fails
// check-results; UsageError for one run with another matrix or written by another build, naming the
// first key that differs and both values.
struct ResumedFile {
    nlohmann::ordered_json document;
    std::set<std::string> done;
};
ResumedFile read_resumed_file(const Registry& registry, const MatrixSpec& spec, const std::string& path, bool retry_failed);

// `registry` supplies the variants (tests pass their own). UsageError on a bad matrix, an output
// that exists without resume/overwrite or cannot be written, or a configuration whose estimate
// exceeds `options.limits` (the message lists them and names --allow-long).
MatrixRunSummary run_matrix(const Registry& registry, const MatrixSpec& spec, const MatrixRunOptions& options);

// The progress line's account of one results entry (time per step, interactions/s, efficiency,
// verified or the error); a null or missing number shows as "-".
std::string timing_summary(const nlohmann::ordered_json& entry);

}  // namespace nbody
