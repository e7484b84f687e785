// `nbody-bench verify`: every available variant (or those matching --variants) against the host
// reference (double for float32 workloads, long double for float64 ones), for several N, D, step
// counts and every workload each variant runs, on the generated state and on hard inputs
// (nbody/stress.hpp); prints a table and exits 1 when any check fails (INCONCLUSIVE is no failure).
// `--input FILE` checks them on the user's own state instead (its N and dimension), by the same
// rule and, above --full-reference-max-n, the same sampled check.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>

#include "cli/commands.hpp"
#include "cli/problem_options.hpp"
#include "io/io.hpp"
#include "matrix/estimate.hpp"
#include "matrix/matrix.hpp"
#include "nbody/errors.hpp"
#include "nbody/generator.hpp"
#include "nbody/registry.hpp"
#include "nbody/stress.hpp"
#include "platform/distributed.hpp"
#include "run/progress.hpp"
#include "verify/verification.hpp"

namespace nbody {

namespace {

struct VerifyOptions {
    std::string patterns = "*";
    // 1000 and 4099 are multiples of no block or tile size; 65536 (GPU variants only by default,
    // see cpu_max_n) exercises the sampled check.
    std::vector<std::size_t> ns = {1000, 4099, 65536};
    std::vector<int> ds = {10, 257, 1000};
    std::vector<int> steps = {1, 10};
    // Every workload by default (SPEC §2): each variant is checked on each workload it runs.
    std::vector<int> dims = {2, 3};
    std::vector<std::string> precisions = {"fp32", "fp64"};
    std::vector<std::string> integrators = {"euler", "leapfrog"};
    std::size_t cpu_max_n = 16384;
    // Hard inputs run besides the generated state (with its default sizes, or when named).
    std::vector<std::string> hard = {"mixed"};
    std::size_t hard_n = 1000;
    VerificationSettings settings;
    ProblemOptions problem;
    CostOptions cost;
    DistributionOptions distribution;
    bool n_given = false, dim_given = false, variants_given = false, hard_given = false;
};

// One initial state to check every variant on: the generated one at N, a hard input, or the file.
struct InputCase {
    std::string name;  // "generated", a hard input's kind, or "file"
    std::size_t n;
    std::optional<StressKind> hard;
};

// The generated sizes, then the hard inputs: named by --hard, or verify's default one where the
// sizes are the defaults (none with --input).
std::vector<InputCase> input_cases(const VerifyOptions& o, const std::vector<std::size_t>& ns, bool from_file) {
    std::vector<InputCase> cases;
    for (std::size_t n : ns) cases.push_back({from_file ? "file" : "generated", n, std::nullopt});
    if (from_file) {
        if (o.hard_given) throw UsageError("verify: --hard and --input exclude each other (the file is the input checked)");
        return cases;
    }
    if (o.n_given && !o.hard_given) return cases;
    for (const std::string& name : o.hard) {
        if (name == "none") {
            if (o.hard.size() != 1) throw UsageError("verify --hard: 'none' stands alone");
            continue;
        }
        if (name == "all") {
            for (StressKind kind : all_stress_kinds()) cases.push_back({to_string(kind), o.hard_n, kind});
            continue;
        }
        const StressKind kind = parse_stress_kind(name);
        cases.push_back({to_string(kind), o.hard_n, kind});
    }
    return cases;
}

int largest_map_size(const VerifyOptions& o) { return *std::max_element(o.ds.begin(), o.ds.end()); }

// The map sizes a case is checked at: every one asked for on the generated state or the file up to
// --full-reference-max-n bodies; the largest alone (the smallest cells, the strictest map check) on a
// hard input, whose point is the positions' and velocities' rounding, which no map size changes,
// and above that N, where the sampled check is the pull's at scale and the map sizes' cell
// arithmetic has been checked at the smaller N.
std::vector<int> map_sizes_of(const VerifyOptions& o, const InputCase& c) {
    if (!c.hard && c.n <= o.settings.full_reference_max_n) return o.ds;
    return {largest_map_size(o)};
}

// The step counts a map size is checked at: every one at the largest map size; the first alone at
// the others. Positions and velocities do not depend on D, and a map's cell arithmetic shows after
// one step; bodies change cells most often in the smallest cells, which see every step count.
std::vector<int> steps_at_map_size(const VerifyOptions& o, int d, const std::vector<int>& checked_steps) {
    if (d == largest_map_size(o)) return checked_steps;
    return {checked_steps.front()};
}

// The case's initial state in `workload` and the constants it runs under (a hard input sets its softening).
std::pair<HostState, PhysicsConstants> initial_state_of(const VerifyOptions& o, const InputCase& c, const Workload& workload) {
    if (c.hard) {
        StressCase hard = stress_state(*c.hard, c.n, workload.dim, workload.precision, o.problem.seed);
        PhysicsConstants constants = o.problem.constants;
        constants.softening = hard.constants.softening;
        return {std::move(hard.state), constants};
    }
    if (c.name == "file") return {read_state_csv(o.problem.input_path, workload, c.n, o.problem.seed), o.problem.constants};
    return {generate_state(workload, c.n, o.problem.seed), o.problem.constants};
}

std::string error_cell(double value) { return fmt::format("{:>12.3e}", value); }

std::vector<Workload> requested_workloads(const VerifyOptions& o, const std::vector<int>& dims) {
    std::vector<Workload> out;
    for (int dim : dims)
        for (const auto& precision : o.precisions)
            for (const auto& integrator : o.integrators)
                out.push_back({dim, parse_precision(precision), parse_integrator(integrator)});
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

// With --input: the file's dimension (its field count, or the one --dim names) and its N (which
// -n, when given, must equal). The reader reports a malformed file with its line (exit 2).
void take_sizes_from_input(const VerifyOptions& o, std::vector<int>& dims, std::vector<std::size_t>& ns) {
    const std::string& path = o.problem.input_path;
    if (o.dim_given && o.dims.size() != 1) throw UsageError("verify --input: --dim names the file's one dimension (2 or 3)");
    if (o.n_given && o.ns.size() != 1) throw UsageError("verify --input: -n names the file's one body count");
    dims = {o.dim_given ? o.dims.front() : csv_state_dim(path)};
    const Workload workload{dims.front(), parse_precision(o.precisions.front()), Integrator::euler};
    ns = {state_size(read_state_csv(path, workload, o.n_given ? std::optional(o.ns.front()) : std::nullopt, o.problem.seed))};
}

struct PlannedCheck {
    const VariantDescriptor* variant;
    std::size_t input;  // index into the input cases
    Workload workload;
};

// The checks to make, each held to the cost limits (a variant's check at one N and workload is one
// run: its share of the reference and every D and step count); notes say what is left out and why.
std::vector<PlannedCheck> plan_checks(const VerifyOptions& o, const std::vector<const VariantDescriptor*>& runnable,
                                      const std::vector<InputCase>& cases, const std::vector<Workload>& workloads,
                                      std::vector<std::string>& notes, double& total_seconds) {
    const CostLimits limits = o.cost.limits();
    const int max_steps = *std::max_element(o.steps.begin(), o.steps.end());
    const int max_d = largest_map_size(o);
    std::vector<PlannedCheck> planned;
    std::vector<std::string> refused;
    total_seconds = 0;
    for (std::size_t input = 0; input < cases.size(); ++input) {
        const std::size_t n = cases[input].n;
        for (const Workload& workload : workloads) {
            const std::vector<int> checked_steps = ReferenceSolution::checked_steps(n, o.steps, o.settings);
            const double reference = reference_seconds(workload, n, max_steps, o.settings.full_reference_max_n, o.settings.sample_bodies);
            bool reference_counted = false;
            for (const auto* v : runnable) {
                if (!v->workloads.supports(workload)) continue;
                if (v->max_n != 0 && n > v->max_n) {
                    notes.push_back(fmt::format("{} not run at N={}: it accepts N <= {}", v->id, n, v->max_n));
                    continue;
                }
                if (!v->runs_on_gpu && n > o.cpu_max_n) {
                    notes.push_back(fmt::format("CPU variant {} not run at N={} (--cpu-max-n {})", v->id, n, o.cpu_max_n));
                    continue;
                }
                const TuningValues tuning = Registry::resolve_tuning(*v, {});
                const auto seconds_at = [&](double rate) {
                    double s = reference;
                    for (int d : map_sizes_of(o, cases[input]))
                        s += steps_seconds(*v, tuning, workload, n, d, steps_at_map_size(o, d, checked_steps).back(), rate);
                    return s;
                };
                Rate rate = modelled_rate(*v, tuning, workload, builtin_registry(), n);
                Cost cost{.seconds = seconds_at(rate.interactions_per_second),
                          .host_bytes = host_bytes(*v, workload, n, max_d, static_cast<int>(o.steps.size())),
                          .device_bytes = device_bytes(*v, workload, n, max_d),
                          .rate_source = rate.source};
                if (cost.seconds > limits.max_seconds && !limits.allow)
                    if (const auto measured = measured_rate(*v, tuning, workload, o.problem.constants, n)) {
                        cost.seconds = seconds_at(measured->interactions_per_second);
                        cost.rate_source = measured->source + ", host reference " + duration_text(reference);
                    }
                if (const std::string why = excess(cost, limits); !why.empty() && !limits.allow)
                    refused.push_back(fmt::format("{} N={} {}: {}", v->id, n, to_string(workload), why));
                total_seconds += cost.seconds - (reference_counted ? reference : 0.0);
                reference_counted = true;
                planned.push_back({v, input, workload});
            }
        }
    }
    if (!refused.empty())
        refuse_costly("verify", fmt::format("{} check{} above the limits, first {}", refused.size(),
                                            refused.size() == 1 ? "" : "s", refused.front()));
    return planned;
}

constexpr const char* kRowFormat = "{:<32} {:<10} {:<16} {:>7} {:>5} {:>3} {:<7} {:>12} {:>12} {:>12} {:>12} {:>7} {:>7} {:>7} {:>6} {:>6} {:>6}  {}\n";

std::string multiple_cell(double multiple, LimitSource source) {
    return source == LimitSource::absolute ? "abs" : fmt::format("{:.2g}", multiple);
}

// The verdict as the table says it: the limit a PASS met where it is not the rule's, the reason otherwise.
std::string verdict_text(const CheckResult& r, bool one_step_passed) {
    switch (r.verdict) {
        case Verdict::pass:
            if (r.pos_limit_source == LimitSource::absolute || r.vel_limit_source == LimitSource::absolute)
                return fmt::format("PASS (absolute limits: pos {:.1e}, vel {:.1e})", r.errors.pos_err_limit, r.errors.vel_err_limit);
            return "PASS";
        case Verdict::inconclusive:
            return "INCONCLUSIVE (" + r.failure + (one_step_passed ? "; the one-step check passed)" : ")");
        case Verdict::fail: break;
    }
    return "FAIL (" + r.failure + ")";
}

// One row of the table: a check of `v`'s result against the reference or, `check` "1-rank", against
// the single-rank result of the same variant.
void print_check_row(const VariantDescriptor& v, const std::string& input, const std::string& workload_name, std::size_t n,
                     int d, const CheckResult& r, const std::string& check, bool one_step_passed) {
    fmt::print(kRowFormat, v.id, input, workload_name, n, d, r.steps, check, error_cell(r.errors.max_pos_err),
               error_cell(r.errors.rms_pos_err), error_cell(r.errors.max_vel_err), error_cell(r.errors.map_diff),
               multiple_cell(r.errors.pos_rounding_multiple, r.pos_limit_source),
               multiple_cell(r.errors.vel_rounding_multiple, r.vel_limit_source),
               check == "1-rank" ? std::string("-") : fmt::format("{:.2g}", r.errors.rounding_amplification), r.errors.map_ambiguous_bodies,
               r.errors.map_explained_counts, r.errors.map_unexplained_counts, verdict_text(r, one_step_passed));
}

// The table's header: the rule each check is judged by, and any absolute limit replacing it.
void print_rule(const ThresholdOverrides& t) {
    fmt::print("rule: an error passes within {:g} x its rounding scale = max(the shadows' error on that value, their RMS "
               "over all bodies) + {:g} ulps of the value; shadows: the reference in the workload's precision, pulls "
               "summed in index and in reversed order, and from positions one ulp away (pos_x, vel_x: the worst multiple; "
               "ampl: the shadows' worst error in ulps of the largest value)\n",
               kRoundingMultiple, kValueUlps);
    fmt::print("      after K > 1 steps of an input whose shadows err by more than {:.0e} ulps of the values, a check beyond "
               "the limit but within {:g} x the shadows' largest error is INCONCLUSIVE (not a failure); the map must be "
               "explained by the variant's own positions\n",
               kInconclusiveAmplification, kRoundingMultiple);
    std::string absolute;
    const auto add = [&](const char* name, const std::optional<double>& value) {
        if (value) absolute += fmt::format("{}{} {:.3g}", absolute.empty() ? "" : ", ", name, *value);
    };
    add("--max-pos-err", t.max_pos_err);
    add("--max-rms-pos-err", t.max_rms_pos_err);
    add("--max-vel-err", t.max_vel_err);
    add("--max-map-diff", t.max_map_diff);
    if (!absolute.empty()) fmt::print("      absolute limits given (they replace the rule for what they name): {}\n", absolute);
}

// Where verify's time goes: the references with their shadows, each model's runs (creation, upload,
// steps, download), and the comparisons, in the order first timed.
class SpentSeconds {
public:
    template <class Work>
    void time(const std::string& what, Work&& work) {
        const auto start = std::chrono::steady_clock::now();
        work();
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        auto it = std::find_if(parts_.begin(), parts_.end(), [&](const auto& part) { return part.first == what; });
        if (it == parts_.end()) it = parts_.insert(parts_.end(), {what, 0.0});
        it->second += seconds;
    }
    std::string describe() const {
        std::string text;
        for (const auto& [what, seconds] : parts_) text += fmt::format("{}{} {:.1f} s", text.empty() ? "" : ", ", what, seconds);
        return text;
    }

private:
    std::vector<std::pair<std::string, double>> parts_;
};

int verify(const VerifyOptions& o, DistributedRun& ranks) {
    const auto start = std::chrono::steady_clock::now();
    const Registry& registry = builtin_registry();
    const auto selected = registry.match(o.patterns);
    if (selected.empty()) throw UsageError("no variant matches --variants '" + o.patterns + "' (see `nbody-bench list`)");
    const bool from_file = !o.problem.input_path.empty();
    std::vector<int> dims = o.dims;
    std::vector<std::size_t> ns = o.ns;
    if (from_file) take_sizes_from_input(o, dims, ns);
    const std::vector<Workload> workloads = requested_workloads(o, dims);
    for (const Workload& workload : workloads) o.problem.require_usable_constants(workload.precision);

    std::vector<std::string> skipped;
    auto runnable = available_variants(selected, skipped);
    // Over several ranks (docs/scaling.md) every variant named must be distributed; by default
    // the distributed ones are checked.
    ProblemDistributions distributions(ranks, registry, o.distribution.device_collectives);
    if (distributions.spans_ranks() && !o.variants_given) {
        std::erase_if(runnable, [&](const VariantDescriptor* v) {
            if (!v->distributed) skipped.push_back(v->id + ": runs on one rank only (under mpirun)");
            return !v->distributed;
        });
        if (runnable.empty()) throw UsageError("no variant of this build runs over several ranks");
    }
    distributions.prepare(runnable);
    for (const auto& why : skipped) fmt::print("skipped {}\n", why);
    for (const auto* v : runnable) {
        const auto unsupported = std::count_if(workloads.begin(), workloads.end(),
                                               [&](const Workload& w) { return !v->workloads.supports(w); });
        if (unsupported > 0)
            fmt::print("{} runs {} only: not checked on {} of the {} workloads asked for\n", v->id,
                       v->workloads.describe(), unsupported, workloads.size());
    }
    std::vector<std::string> notes;
    double estimated_seconds = 0;
    const std::vector<InputCase> cases = input_cases(o, ns, from_file);
    const std::vector<PlannedCheck> planned = plan_checks(o, runnable, cases, workloads, notes, estimated_seconds);
    // A verify that checks nothing is no verification: refused, as a matrix with nothing to run is.
    if (planned.empty()) {
        const std::string why = !notes.empty() ? notes.front() : !skipped.empty() ? skipped.front()
                                                                                  : "no variant selected runs the workloads asked for";
        throw UsageError(fmt::format("nothing to verify: no check of --variants '{}' runs here ({})", o.patterns, why));
    }
    if (from_file) fmt::print("initial state from {} (N={}, {}D)\n", display_path(o.problem.input_path), ns.front(), dims.front());
    if (distributions.spans_ranks())
        fmt::print("{} ranks ({}): each result is also compared with the same variant's single-rank result (check "
                   "1-rank), computed on rank 0\n",
                   ranks.communicator().size(), ranks.communicator().describe());
    if ((estimated_seconds > kProgressAfterSeconds || o.cost.allow_long) && ranks.writes_output())
        fmt::print(stderr, "verify: estimated {}\n", duration_text(estimated_seconds));
    print_rule(o.settings.overrides);
    fmt::print(kRowFormat, "variant", "input", "workload", "N", "D", "K", "check", "max_pos_err", "rms_pos_err",
               "max_vel_err", "map_diff", "pos_x", "vel_x", "ampl", "ambig", "moved", "unexpl", "result");
    std::fflush(stdout);

    const bool show_progress = estimated_seconds > kProgressAfterSeconds && ranks.writes_output();
    // Rank 0 alone holds the reference and checks; every rank runs the simulation.
    const bool checks_here = ranks.writes_output();
    int passed = 0, failed = 0, inconclusive = 0;
    SpentSeconds spent;
    for (std::size_t input = 0; input < cases.size(); ++input) {
        const std::size_t n = cases[input].n;
        for (const Workload& workload : workloads) {
            const auto here = [&](const PlannedCheck& c) { return c.input == input && c.workload == workload; };
            if (std::none_of(planned.begin(), planned.end(), here)) continue;
            // The user's state, read in this workload's precision, the generated one or a hard input.
            const auto [initial, constants] = initial_state_of(o, cases[input], workload);
            const Thresholds fixed = o.settings.fixed_thresholds_for(workload.precision);
            const std::string workload_name = to_string(workload);
            std::optional<StepProgress> reference_progress;
            if (show_progress)
                reference_progress.emplace(std::cerr, stderr_is_terminal(), fmt::format("reference N={} {}", n, workload_name), n);
            std::optional<ReferenceSolution> reference;
            spent.time(fmt::format("reference N={}", n), [&] {
                if (checks_here)
                    reference.emplace(initial, constants, workload.integrator, o.steps, o.settings, [&](int done, int of) {
                        if (reference_progress) reference_progress->update(done, of, true);
                    });
            });
            reference_progress.reset();
            const std::vector<int> checked_steps = ReferenceSolution::checked_steps(n, o.steps, o.settings);
            for (const PlannedCheck& check : planned) {
                if (!here(check)) continue;
                const VariantDescriptor* v = check.variant;
                const TuningValues tuning = Registry::resolve_tuning(*v, {});
                for (int d : map_sizes_of(o, cases[input])) {
                    std::vector<CheckResult> results, against_one_rank;
                    std::string error;
                    try {
                        std::optional<StepProgress> progress;
                        StepProgressHook hook;
                        if (show_progress) {
                            progress.emplace(std::cerr, stderr_is_terminal(), fmt::format("{} N={} D={}", v->id, n, d), n);
                            hook.on_steps = [&progress](int done, int total, bool timed) { progress->update(done, total, timed); };
                        }
                        const Problem problem{.n = n, .d = d, .constants = constants, .workload = workload,
                                              .distribution = distributions.of(*v)};
                        const std::vector<int> steps = steps_at_map_size(o, d, checked_steps);
                        std::vector<Snapshot> snapshots;
                        spent.time(v->backend + "@" + v->execution_space, [&] {
                            auto simulation = v->create(problem, tuning);
                            snapshots = snapshots_at(*simulation, initial, steps, problem.distribution, hook);
                        });
                        spent.time("comparisons", [&] {
                            if (checks_here)
                                for (const Snapshot& s : snapshots)
                                    results.push_back(reference->check(s.steps, s.state, s.map, d, o.settings.overrides));
                        });
                        if (checks_here && distributions.spans_ranks()) {
                            // The same variant in this process alone, from the same initial state.
                            const Problem alone{.n = n, .d = d, .constants = constants, .workload = workload,
                                                .distribution = {}};
                            auto single = v->create(alone, tuning);
                            const auto expected = snapshots_at(*single, initial, steps);
                            for (std::size_t k = 0; k < snapshots.size(); ++k)
                                against_one_rank.push_back(compare_states(snapshots[k].steps, snapshots[k].state,
                                                                          snapshots[k].map, expected[k].state, d, fixed));
                        }
                    } catch (const std::exception& e) {
                        // Over several ranks the peers may wait for this one in a collective: end them all.
                        if (distributions.spans_ranks()) throw;
                        error = e.what();
                    }
                    if (!error.empty()) {
                        ++failed;
                        fmt::print("{:<32} {:<10} {:<16} {:>7} {:>5} {:>3} {:<7} {:>102}  FAIL ({})\n", v->id,
                                   cases[input].name, workload_name, n, d, "-", to_string(reference->kind()), "", error);
                    }
                    const auto count = [&](const CheckResult& r) {
                        (r.verdict == Verdict::pass ? passed : r.verdict == Verdict::fail ? failed : inconclusive) += 1;
                    };
                    const bool one_step_passed =
                        std::any_of(results.begin(), results.end(), [](const CheckResult& r) { return r.steps == 1 && r.passed; });
                    for (std::size_t k = 0; k < results.size(); ++k) {
                        count(results[k]);
                        print_check_row(*v, cases[input].name, workload_name, n, d, results[k], to_string(results[k].kind),
                                        one_step_passed);
                        if (k < against_one_rank.size()) {
                            count(against_one_rank[k]);
                            print_check_row(*v, cases[input].name, workload_name, n, d, against_one_rank[k], "1-rank", false);
                        }
                    }
                    std::fflush(stdout);
                }
            }
            if (n > o.settings.full_reference_max_n && o.steps != std::vector<int>{1})
                notes.push_back(fmt::format("N={} {} > --full-reference-max-n {}: sampled check of the first step only "
                                            "({} bodies' velocities, every position and the map)",
                                            n, workload_name, o.settings.full_reference_max_n,
                                            std::min(n, o.settings.sample_bodies)));
        }
    }
    for (const auto& note : notes) fmt::print("note: {}\n", note);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("{} checks: {} passed, {} failed, {} inconclusive ({:.1f} s)\n", passed + failed + inconclusive, passed, failed,
               inconclusive, seconds);
    fmt::print("time spent: {}\n", spent.describe());
    // Rank 0 made the checks: every rank exits with its verdict.
    std::int32_t failures[] = {failed};
    ranks.communicator().allreduce_sum(std::span<std::int32_t>(failures));
    return failures[0] == 0 ? 0 : 1;
}

// Each given threshold replaces the rounding rule by an absolute limit for every precision checked.
void add_threshold_options(CLI::App& cmd, ThresholdOverrides& t) {
    auto option = [&cmd](const char* name, std::optional<double>& target, const char* what) {
        cmd.add_option_function<double>(name, [&target](double value) { target = value; },
                                        std::string(what) + " (default: the rounding rule, see the table header)")
            ->check(non_negative_finite());
    };
    option("--max-pos-err", t.max_pos_err, "largest allowed absolute position error");
    option("--max-rms-pos-err", t.max_rms_pos_err, "largest allowed RMS position error");
    option("--max-vel-err", t.max_vel_err, "largest allowed absolute velocity error");
    option("--max-map-diff", t.max_map_diff,
           "lax map check: pass when the plain map difference (bodies in another cell / 2N) is at most this, "
           "instead of requiring every count to be explained by the variant's own positions");
}

}  // namespace

void add_verify_command(CLI::App& app, int& exit_status, DistributedRun& ranks) {
    auto o = std::make_shared<VerifyOptions>();
    auto* cmd = app.add_subcommand("verify", "Check variants against the host reference on every workload they run and print a table of their errors");
    auto* variants_option = cmd->add_option("--variants", o->patterns, "comma-separated glob patterns of variant ids (default: every available one)")->capture_default_str();
    auto* n_option = cmd->add_option("-n,--bodies", o->ns, "body counts N (with --input: the file's, which -n must equal)")
                         ->capture_default_str()
                         ->check(integer_in(1, kMaxInputBodies));
    cmd->add_option("-d,--map-size", o->ds, "activity map sizes D (the largest checked after every K; the others after the first K, up to --full-reference-max-n bodies)")
        ->capture_default_str()
        ->check(integer_in(1, kMaxMapSize));
    cmd->add_option("--steps", o->steps, "step counts K after which to compare")->capture_default_str()->check(integer_in(1, 100000));
    constexpr std::uint64_t largest_count = std::numeric_limits<std::size_t>::max();
    cmd->add_option("--cpu-max-n", o->cpu_max_n, "CPU variants skip larger N (the float32 run costs N^2 per step on the host)")->capture_default_str()->check(integer_in(0, largest_count));
    cmd->add_option("--full-reference-max-n", o->settings.full_reference_max_n, "larger N get the sampled first-step check")->capture_default_str()->check(integer_in(1, largest_count));
    cmd->add_option("--sample-bodies", o->settings.sample_bodies, "bodies whose velocity the sampled check compares")->capture_default_str()->check(integer_in(1, largest_count));
    add_threshold_options(*cmd, o->settings.overrides);
    auto* hard_option =
        cmd->add_option("--hard", o->hard,
                        "hard inputs checked besides the generated state: masses, cluster, drift, fast_drift, binary, "
                        "outside, mixed, all or none (default: mixed, run with the default sizes; with -n only when named); "
                        "each at the largest map size -d gives")
            ->capture_default_str();
    cmd->add_option("--hard-n", o->hard_n, "bodies of each hard input")->capture_default_str()->check(integer_in(4, kMaxInputBodies));
    auto* dim_option = cmd->add_option("--dim", o->dims, "dimensions to check (2, 3; with --input: the file's, from its field count)")
                           ->capture_default_str()
                           ->check(CLI::IsMember({2, 3}));
    cmd->add_option("--precision", o->precisions, "precisions to check (fp32, fp64)")
        ->capture_default_str()
        ->check(CLI::IsMember({"fp32", "fp64"}));
    cmd->add_option("--integrator", o->integrators, "integrators to check (euler, leapfrog)")
        ->capture_default_str()
        ->check(CLI::IsMember({"euler", "leapfrog"}));
    o->problem.add_initial_state_to(*cmd);
    o->problem.add_constants_to(*cmd);
    o->cost.add_to(*cmd);
    o->distribution.add_to(*cmd);
    cmd->callback([o, n_option, dim_option, variants_option, hard_option, &exit_status, &ranks] {
        o->n_given = n_option->count() > 0;
        o->hard_given = hard_option->count() > 0;
        o->dim_given = dim_option->count() > 0;
        o->variants_given = variants_option->count() > 0;
        exit_status = verify(*o, ranks);
    });
}

}  // namespace nbody
