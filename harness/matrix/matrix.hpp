#pragma once
// Benchmark matrices (SPEC §7): a JSON file naming variants (ids or glob patterns), N and D lists,
// the workload axes (dim, precision, integrator: one value or a list to sweep), steps, warm-up steps,
// repetitions, tunings to sweep and per-variant size caps, in groups.
// The format is documented in matrices/README.md.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "nbody/registry.hpp"
#include "verify/verification.hpp"

namespace nbody {

struct MatrixGroup {
    std::string name;
    std::vector<std::string> variant_patterns;
    std::vector<std::size_t> n;
    std::vector<int> d;
    // The workload axes, swept: every combination (SPEC §2). Default: the canonical 2d/fp32/euler.
    std::vector<int> dims = {2};
    std::vector<Precision> precisions = {Precision::fp32};
    std::vector<Integrator> integrators = {Integrator::euler};
    int steps = 10;
    int warmup_steps = 1;
    double min_time_s = 0;  // > 0: each repetition times more steps until its timed phase lasts this long
    int repetitions = 3;
    int verify_steps = 10;  // full check after this many steps (the sampled check: 1)
    std::vector<std::pair<std::string, std::vector<std::string>>> tunings;  // swept: every combination
    std::vector<std::pair<std::string, std::size_t>> max_n;                 // variant pattern -> largest N
};

struct MatrixSpec {
    std::string name;
    std::string description;
    std::string file;
    std::uint64_t seed = 42;
    PhysicsConstants constants;
    int verify_steps = 10;  // the groups' default
    VerificationSettings verification;
    std::vector<MatrixGroup> groups;
    std::vector<std::string> selected_groups;  // names kept by select_groups(); empty: the whole matrix
    std::vector<MatrixGroup> all_groups;       // select_groups(): every group of the file, as a resume compares them
};

// Keeps only the groups named in `names` (matrix --groups); UsageError naming an unknown group and
// listing the matrix's groups.
void select_groups(MatrixSpec& spec, const std::vector<std::string>& names);

// InputError (a UsageError: exit 2) naming the file and the offending key on anything malformed or
// unknown; load_matrix reads the file with read_json_file (json_input.hpp), so malformed JSON, deep
// nesting and repeated keys are refused the same way.
MatrixSpec parse_matrix(const nlohmann::json& document, const std::string& file);
MatrixSpec load_matrix(const std::string& path);

// The most configurations one matrix may expand to (a group's lists multiply); more is refused
// before anything is built.
inline constexpr std::size_t kMaxMatrixConfigurations = 100000;

// One measured unit: a variant with one tuning on one problem.
struct Configuration {
    std::string name;  // configuration_name() (results.hpp): the resume key
    const VariantDescriptor* variant = nullptr;
    TuningValues tuning;  // resolved: every parameter, defaults included
    std::size_t n = 0;
    int d = 0;
    Workload workload;
    int steps = 0;
    int warmup_steps = 0;
    double min_time_s = 0;
    int repetitions = 0;
    int verify_steps = 0;
    std::string group;
};

// The variants of `matched` that can run on this machine; "<id>: <reason>" of the others in `skipped`.
std::vector<const VariantDescriptor*> available_variants(const std::vector<const VariantDescriptor*>& matched,
                                                         std::vector<std::string>& skipped);

struct MatrixExpansion {
    std::vector<Configuration> configurations;  // in run order, duplicates removed
    std::vector<std::string> notes;             // what was skipped and why
};

// Skipped with a note: a pattern naming a model or execution space this build left out (the registry
// says which), unavailable variants, workloads a variant does not run, N above a cap and tuning values
// a variant defines but cannot hold here (more threads than this host has, an instruction set the CPU
// lacks). InputError (exit 2): a pattern that matches no variant otherwise (a typo), a tuning name or
// value that no matched variant defines, a max_n pattern that caps no variant of the groups it applies
// to, and a group that expands to no configuration for a reason other than this build or machine
// (every N above the caps, no workload its variants run), naming the group and why.
// `include_unavailable`: expand variants that cannot run here too (a dry run checking a GPU matrix
// on a machine without a GPU).
MatrixExpansion expand_matrix(const MatrixSpec& spec, const Registry& registry, bool include_unavailable = false);
// InputError when the expansion holds no configuration at all (everything skipped here), with the notes' gist.
void require_configurations(const MatrixSpec& spec, const MatrixExpansion& expansion);

}  // namespace nbody
