// `nbody-bench matrix MATRIX.json --out RESULTS.json [--resume]` and
// `nbody-bench check-results RESULTS.json`.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>

#include "cli/commands.hpp"
#include "cli/problem_options.hpp"
#include "io/io.hpp"
#include "matrix/estimate.hpp"
#include "matrix/matrix_record.hpp"
#include "matrix/matrix_runner.hpp"
#include "nbody/errors.hpp"
#include "results/json_input.hpp"
#include "results/results.hpp"
#include "run/interrupt.hpp"

namespace nbody {

namespace {

struct MatrixOptions {
    std::string matrix_path;
    MatrixRunOptions run;
    std::string progress = "auto";
    bool dry_run = false;
    bool include_unavailable = false;
    std::vector<std::string> groups;
    CostOptions cost;
    DistributionOptions distribution;
    EnergyOptions energy;
};

// What a run would do: the configurations in order, what is skipped, and the estimated time of each
// and of all (modelled: a dry run measures nothing), without running anything. With --resume, what
// remains of the results file, after the checks a run makes of it (the same refusals).
int print_plan(const MatrixSpec& spec, const MatrixOptions& o) {
    const MatrixExpansion plan = expand_matrix(spec, builtin_registry(), o.include_unavailable);
    require_configurations(spec, plan);
    std::set<std::string> done;
    const bool resuming = o.run.resume && std::filesystem::exists(o.run.out_path);
    if (resuming) done = read_resumed_file(builtin_registry(), spec, o.run.out_path, o.run.retry_failed).done;
    std::vector<Configuration> todo;
    for (const Configuration& c : plan.configurations)
        if (!done.count(c.name)) todo.push_back(c);
    const auto costs = estimate_configurations(builtin_registry(), spec, todo, o.cost.limits(), false, o.energy.read);
    for (const auto& note : plan.notes) fmt::print("note: {}\n", note);
    if (resuming)
        fmt::print("{} of {} configurations already in {}: planned the {} left\n", plan.configurations.size() - todo.size(),
                   plan.configurations.size(), o.run.out_path, todo.size());
    double total = 0;
    std::size_t over = 0;
    for (std::size_t k = 0; k < todo.size(); ++k) {
        const Configuration& c = todo[k];
        total += costs[k].cost.seconds;
        over += costs[k].over_limit;
        fmt::print("[{}/{}] {} (warm-up {}, repetitions {}): estimated {} ({:.6g} s){}\n", k + 1, todo.size(), c.name,
                   c.warmup_steps, c.repetitions, duration_text(costs[k].cost.seconds), costs[k].cost.seconds,
                   costs[k].over_limit ? " -- ABOVE THE LIMITS: " + costs[k].why : "");
    }
    fmt::print("matrix {}: {} configurations{}, estimated total {} ({:.6g} s; modelled from what each variant is known to "
               "reach, see docs/estimates.md)\n",
               spec.name, todo.size(), resuming ? " to run" : "", duration_text(total), total);
    if (over > 0)
        fmt::print("{} configuration{} above the limits: a run measures {} rate here first, then refuses {} without "
                   "--allow-long\n",
                   over, over == 1 ? " is" : "s are", over == 1 ? "its variant's" : "their variants'", over == 1 ? "it" : "them");
    return 0;
}

// The results file, checked before the matrix is read: never the matrix itself (through links, ".."
// or hard links: the results would replace it), never a FIFO (the file is rewritten after every
// configuration: its reader would get several documents), in a folder that is or can be made.
void require_usable_out(const MatrixOptions& o) {
    const std::string& out = o.run.out_path;
    if (same_file(out, o.matrix_path))
        throw UsageError(fmt::format("--out {} is the matrix file {}: its results would replace the matrix", display_path(out),
                                     display_path(o.matrix_path)));
    if (output_node(out) == OutputNode::fifo)
        throw UsageError(fmt::format("--out {} is a FIFO: matrix rewrites its results file after every configuration; "
                                     "give a regular file",
                                     display_path(out)));
    check_writable(out, true);
}

int run_matrix_command(MatrixOptions& o, DistributedRun& ranks) {
    if (!o.dry_run && ranks.writes_output()) require_usable_out(o);
    MatrixSpec spec = load_matrix(o.matrix_path);
    if (!o.groups.empty()) select_groups(spec, o.groups);
    if (o.dry_run) return print_plan(spec, o);
    o.run.interactive = o.progress == "line" || (o.progress == "auto" && ::isatty(STDOUT_FILENO));
    o.run.limits = o.cost.limits();
    o.run.stop_on_signals = true;
    o.run.read_energy = o.energy.read;
    ProblemDistributions distributions(ranks, builtin_registry(), o.distribution.device_collectives);
    o.run.distributions = &distributions;
    const MatrixRunSummary s = run_matrix(builtin_registry(), spec, o.run);
    fmt::print("{} configurations: {} already in the file, {} run and verified, {} failed; results in {}\n", s.planned,
               s.already_done, s.finished, s.failed, display_path(o.run.out_path));
    if (s.interrupted_by != 0) {
        std::string names;
        for (std::size_t i = 0; i < s.not_run.size() && i < 10; ++i) names += (i ? ", " : "") + s.not_run[i];
        if (s.not_run.size() > 10) names += fmt::format(" and {} more", s.not_run.size() - 10);
        std::fflush(stdout);
        if (ranks.writes_output())  // every rank stopped at the same point: rank 0 says so
            fmt::print(stderr, "nbody-bench: interrupted by {}: {} configuration{} not run ({}); every finished one is in {}; "
                               "continue with: nbody-bench matrix {} --out {} --resume\n",
                       signal_name(s.interrupted_by), s.not_run.size(), s.not_run.size() == 1 ? "" : "s", names,
                       display_path(o.run.out_path), display_path(o.matrix_path), display_path(o.run.out_path));
        return 128 + s.interrupted_by;
    }
    // Rank 0 verified and recorded: every rank exits with its verdict.
    std::int32_t failed[] = {ranks.writes_output() ? static_cast<std::int32_t>(s.failed) : 0};
    ranks.communicator().allreduce_sum(std::span<std::int32_t>(failed));
    return failed[0] == 0 ? 0 : 1;
}

// A file that breaks the schema or its consistency rules is malformed input: exit 2, every problem
// on stdout with its JSON pointer, one line on stderr.
int check_results_command(const std::string& path) {
    const nlohmann::json doc = read_json_file(path);
    const auto problems = check_results(doc);
    const std::string shown = display_path(path);
    for (const auto& p : problems) fmt::print("{}: {}\n", shown, p);
    if (!problems.empty())
        throw InputError(fmt::format("{}: not a valid results file ({} problem{} listed above, first: {})", shown,
                                     problems.size(), problems.size() == 1 ? "" : "s", problems.front()));
    std::size_t errors = 0;
    for (const auto& b : doc["benchmarks"]) errors += b.contains("error") && b["run_type"] == "iteration";
    fmt::print("{}: valid results file ({} entries, {} of them failed or unverified)\n", shown, doc["benchmarks"].size(), errors);
    return 0;
}

}  // namespace

void add_matrix_command(CLI::App& app, int& exit_status, DistributedRun& ranks) {
    auto o = std::make_shared<MatrixOptions>();
    auto* cmd = app.add_subcommand("matrix", "Run a benchmark matrix (matrices/*.json) and write Google-Benchmark-format results");
    cmd->add_option("matrix", o->matrix_path, "matrix file (see matrices/README.md)")->required()->check(non_empty_path());
    auto* out = cmd->add_option("--out", o->run.out_path, "results file to write (JSON, see docs/results-format.md)")
                    ->check(non_empty_path());
    cmd->add_option("--groups", o->groups, "run only these groups of the matrix (their names, comma-separated)")
        ->delimiter(',');
    cmd->add_flag("--dry-run", o->dry_run, "print the configurations the matrix expands to here, run nothing");
    cmd->add_flag("--include-unavailable", o->include_unavailable,
                  "with --dry-run: expand variants that cannot run here too (check a GPU matrix without a GPU)");
    cmd->add_flag("--resume", o->run.resume, "continue the results file: skip configurations it already holds");
    cmd->add_flag("--retry-failed", o->run.retry_failed, "with --resume: run again the configurations recorded with an error");
    cmd->add_flag("--overwrite", o->run.overwrite, "replace an existing results file");
    o->cost.add_to(*cmd);
    o->distribution.add_to(*cmd);
    o->energy.add_to(*cmd);
    cmd->add_option("--progress", o->progress, "auto: one redrawn line on a terminal, log lines otherwise")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "line", "log"}));
    cmd->callback([o, out, &exit_status, &ranks] {
        if (!o->dry_run && out->count() == 0) throw UsageError("matrix: --out RESULTS.json is required");
        if (o->include_unavailable && !o->dry_run) throw UsageError("--include-unavailable needs --dry-run");
        if (o->run.retry_failed && !o->run.resume) throw UsageError("--retry-failed needs --resume");
        if (o->run.resume && o->run.overwrite) throw UsageError("--resume and --overwrite exclude each other");
        if (o->run.resume && out->count() == 0) throw UsageError("--resume needs --out RESULTS.json, the file it continues");
        exit_status = run_matrix_command(*o, ranks);
    });
}

void add_check_results_command(CLI::App& app, int& exit_status) {
    auto path = std::make_shared<std::string>();
    auto* cmd = app.add_subcommand("check-results", "Check a results file against harness/results/results.schema.json");
    cmd->add_option("results", *path, "results file")->required()->check(non_empty_path());
    cmd->callback([path, &exit_status] { exit_status = check_results_command(*path); });
}

}  // namespace nbody
