#pragma once
// Runs a benchmark matrix with Google Benchmark driving the repetitions (one benchmark per
// configuration, manual time = time per step) and writes the results file of SPEC §6 after every
// finished configuration (temporary file renamed into place).
#include <cstddef>
#include <ostream>
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

// `registry` supplies the variants (tests pass their own). UsageError on a bad matrix, an output
// that exists without resume/overwrite or cannot be written, or a configuration whose estimate
// exceeds `options.limits` (the message lists them and names --allow-long).
MatrixRunSummary run_matrix(const Registry& registry, const MatrixSpec& spec, const MatrixRunOptions& options);

}  // namespace nbody
