// `nbody-bench verify`: every available variant (or those matching --variants) against the host
// reference (double for float32 workloads, long double for float64 ones), for several N, D, step
// counts and every workload each variant runs; prints a table and exits 1 when any check fails.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>

#include "commands.hpp"
#include "matrix.hpp"
#include "nbody/errors.hpp"
#include "nbody/generator.hpp"
#include "nbody/registry.hpp"
#include "problem_options.hpp"
#include "verification.hpp"

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
    VerificationSettings settings;
    ProblemOptions problem;
};

std::string error_cell(double value) { return fmt::format("{:>12.3e}", value); }

std::vector<Workload> requested_workloads(const VerifyOptions& o) {
    std::vector<Workload> out;
    for (int dim : o.dims)
        for (const auto& precision : o.precisions)
            for (const auto& integrator : o.integrators)
                out.push_back({dim, parse_precision(precision), parse_integrator(integrator)});
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

int verify(const VerifyOptions& o) {
    const auto start = std::chrono::steady_clock::now();
    const Registry& registry = builtin_registry();
    const auto selected = registry.match(o.patterns);
    if (selected.empty()) throw UsageError("no variant matches --variants '" + o.patterns + "' (see `nbody-bench list`)");
    const std::vector<Workload> workloads = requested_workloads(o);

    std::vector<std::string> skipped;
    const auto runnable = available_variants(selected, skipped);
    for (const auto& why : skipped) fmt::print("skipped {}\n", why);
    for (const auto* v : runnable) {
        const auto unsupported = std::count_if(workloads.begin(), workloads.end(),
                                               [&](const Workload& w) { return !v->workloads.supports(w); });
        if (unsupported > 0)
            fmt::print("{} runs {} only: not checked on {} of the {} workloads asked for\n", v->id,
                       v->workloads.describe(), unsupported, workloads.size());
    }
    fmt::print("{:<32} {:<16} {:>7} {:>5} {:>3} {:<7} {:>12} {:>12} {:>12} {:>12}  {}\n", "variant", "workload", "N", "D",
               "K", "check", "max_pos_err", "rms_pos_err", "max_vel_err", "map_diff", "result");
    for (Precision precision : {Precision::fp32, Precision::fp64}) {
        if (std::none_of(workloads.begin(), workloads.end(), [&](const Workload& w) { return w.precision == precision; }))
            continue;
        const Thresholds t = o.settings.thresholds_for(precision);
        fmt::print("{:<32} {:<16} {:>7} {:>5} {:>3} {:<7} {:>12} {:>12} {:>12} {:>12}\n", "  threshold (pass when <=)",
                   fmt::format("*/{}/*", to_string(precision)), "", "", "", "", fmt::format("{:.1e}", t.max_pos_err),
                   fmt::format("{:.1e}", t.max_rms_pos_err), fmt::format("{:.1e}", t.max_vel_err),
                   fmt::format("{:.1e}", t.max_map_diff));
    }
    std::fflush(stdout);

    int passed = 0, failed = 0;
    std::vector<std::string> notes;
    for (std::size_t n : o.ns) {
        for (const Workload& workload : workloads) {
            const HostState initial = generate_state(workload, n, o.problem.seed);
            const Thresholds t = o.settings.thresholds_for(workload.precision);
            const std::string workload_name = to_string(workload);
            std::optional<ReferenceSolution> reference;  // built on first use
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
                if (!reference)
                    reference.emplace(initial, o.problem.constants, workload.integrator, o.steps, o.settings);
                for (int d : o.ds) {
                    std::vector<CheckResult> results;
                    std::string error;
                    try {
                        const Problem problem{.n = n, .d = d, .constants = o.problem.constants, .workload = workload};
                        auto simulation = v->create(problem, Registry::resolve_tuning(*v, {}));
                        results = verify_simulation(*simulation, initial, *reference, d, t);
                    } catch (const std::exception& e) {
                        error = e.what();
                    }
                    if (!error.empty()) {
                        ++failed;
                        fmt::print("{:<32} {:<16} {:>7} {:>5} {:>3} {:<7} {:>51}  FAIL ({})\n", v->id, workload_name, n,
                                   d, "-", to_string(reference->kind()), "", error);
                    }
                    for (const CheckResult& r : results) {
                        (r.passed ? passed : failed) += 1;
                        fmt::print("{:<32} {:<16} {:>7} {:>5} {:>3} {:<7} {} {} {} {}  {}\n", v->id, workload_name, n, d,
                                   r.steps, to_string(r.kind), error_cell(r.errors.max_pos_err),
                                   error_cell(r.errors.rms_pos_err), error_cell(r.errors.max_vel_err),
                                   error_cell(r.errors.map_diff), r.passed ? "PASS" : "FAIL (" + r.failure + ")");
                    }
                    std::fflush(stdout);
                }
            }
            if (reference && reference->kind() == CheckKind::sampled && o.steps != std::vector<int>{1})
                notes.push_back(fmt::format("N={} {} > --full-reference-max-n {}: sampled check of the first step only "
                                            "({} bodies' velocities, every position and the map)",
                                            n, workload_name, o.settings.full_reference_max_n,
                                            std::min(n, o.settings.sample_bodies)));
        }
    }
    for (const auto& note : notes) fmt::print("note: {}\n", note);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("{} checks: {} passed, {} failed ({:.1f} s)\n", passed + failed, passed, failed, seconds);
    return failed == 0 ? 0 : 1;
}

// Each given threshold overrides the default of every precision checked.
void add_threshold_options(CLI::App& cmd, ThresholdOverrides& t) {
    auto option = [&cmd](const char* name, std::optional<double>& target, const char* what) {
        cmd.add_option_function<double>(name, [&target](double value) { target = value; },
                                        std::string(what) + " (default: per precision, see the table header)")
            ->check(CLI::NonNegativeNumber);
    };
    option("--max-pos-err", t.max_pos_err, "largest allowed absolute position error");
    option("--max-rms-pos-err", t.max_rms_pos_err, "largest allowed RMS position error");
    option("--max-vel-err", t.max_vel_err, "largest allowed absolute velocity error");
    option("--max-map-diff", t.max_map_diff, "largest allowed map difference (bodies in another cell / 2N)");
}

}  // namespace

void add_verify_command(CLI::App& app, int& exit_status) {
    auto o = std::make_shared<VerifyOptions>();
    auto* cmd = app.add_subcommand("verify", "Check variants against the host reference on every workload they run and print a table of their errors");
    cmd->add_option("--variants", o->patterns, "comma-separated glob patterns of variant ids (default: every available one)")->capture_default_str();
    cmd->add_option("-n,--bodies", o->ns, "body counts N")->capture_default_str()->check(CLI::Range(std::size_t{1}, std::size_t{1} << 26));
    cmd->add_option("-d,--map-size", o->ds, "activity map sizes D")->capture_default_str()->check(CLI::Range(1, 65536));
    cmd->add_option("--steps", o->steps, "step counts K after which to compare")->capture_default_str()->check(CLI::Range(1, 100000));
    cmd->add_option("--cpu-max-n", o->cpu_max_n, "CPU variants skip larger N (the float32 run costs N^2 per step on the host)")->capture_default_str();
    cmd->add_option("--full-reference-max-n", o->settings.full_reference_max_n, "larger N get the sampled first-step check")->capture_default_str()->check(CLI::PositiveNumber);
    cmd->add_option("--sample-bodies", o->settings.sample_bodies, "bodies whose velocity the sampled check compares")->capture_default_str()->check(CLI::PositiveNumber);
    add_threshold_options(*cmd, o->settings.overrides);
    cmd->add_option("--dim", o->dims, "dimensions to check (2, 3)")->capture_default_str()->check(CLI::IsMember({2, 3}));
    cmd->add_option("--precision", o->precisions, "precisions to check (fp32, fp64)")
        ->capture_default_str()
        ->check(CLI::IsMember({"fp32", "fp64"}));
    cmd->add_option("--integrator", o->integrators, "integrators to check (euler, leapfrog)")
        ->capture_default_str()
        ->check(CLI::IsMember({"euler", "leapfrog"}));
    cmd->add_option("--seed", o->problem.seed, "SplitMix64 seed of the generated initial state")->capture_default_str();
    o->problem.add_constants_to(*cmd);
    cmd->callback([o, &exit_status] { exit_status = verify(*o); });
}

}  // namespace nbody
