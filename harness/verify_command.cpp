// `nbody-bench verify`: every available variant (or those matching --variants) against the float64
// reference, for several N, D and step counts; prints a table and exits 1 when any check fails.
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
    std::size_t cpu_max_n = 16384;
    VerificationSettings settings;
    ProblemOptions problem;
};

std::string error_cell(double value) { return fmt::format("{:>12.3e}", value); }

int verify(const VerifyOptions& o) {
    const auto start = std::chrono::steady_clock::now();
    const Registry& registry = builtin_registry();
    const auto selected = registry.match(o.patterns);
    if (selected.empty()) throw UsageError("no variant matches --variants '" + o.patterns + "' (see `nbody-bench list`)");

    std::vector<std::string> skipped;
    const auto runnable = available_variants(selected, skipped);
    for (const auto& why : skipped) fmt::print("skipped {}\n", why);
    const Thresholds& t = o.settings.thresholds;
    fmt::print("{:<32} {:>7} {:>5} {:>3} {:<7} {:>12} {:>12} {:>12} {:>12}  {}\n", "variant", "N", "D", "K", "check",
               "max_pos_err", "rms_pos_err", "max_vel_err", "map_diff", "result");
    fmt::print("{:<32} {:>7} {:>5} {:>3} {:<7} {:>12} {:>12} {:>12} {:>12}\n", "  threshold (pass when <=)", "", "", "",
               "", fmt::format("{:.1e}", t.max_pos_err), fmt::format("{:.1e}", t.max_rms_pos_err),
               fmt::format("{:.1e}", t.max_vel_err), fmt::format("{:.1e}", t.max_map_diff));
    std::fflush(stdout);

    int passed = 0, failed = 0;
    std::vector<std::string> notes;
    for (std::size_t n : o.ns) {
        const Bodies initial = generate_bodies(n, o.problem.seed);
        std::optional<ReferenceSolution> reference;  // built on first use
        for (const auto* v : runnable) {
            if (v->max_n != 0 && n > v->max_n) {
                notes.push_back(fmt::format("{} not run at N={}: it accepts N <= {}", v->id, n, v->max_n));
                continue;
            }
            if (!v->runs_on_gpu && n > o.cpu_max_n) {
                notes.push_back(fmt::format("CPU variant {} not run at N={} (--cpu-max-n {})", v->id, n, o.cpu_max_n));
                continue;
            }
            if (!reference) reference.emplace(initial, o.problem.constants, o.steps, o.settings);
            for (int d : o.ds) {
                std::vector<CheckResult> results;
                std::string error;
                try {
                    const Problem problem{.n = n, .d = d, .constants = o.problem.constants};
                    auto simulation = v->create(problem, Registry::resolve_tuning(*v, {}));
                    results = verify_simulation(*simulation, initial, *reference, d, t);
                } catch (const std::exception& e) {
                    error = e.what();
                }
                if (!error.empty()) {
                    ++failed;
                    fmt::print("{:<32} {:>7} {:>5} {:>3} {:<7} {:>51}  FAIL ({})\n", v->id, n, d, "-",
                               to_string(reference->kind()), "", error);
                }
                for (const CheckResult& r : results) {
                    (r.passed ? passed : failed) += 1;
                    fmt::print("{:<32} {:>7} {:>5} {:>3} {:<7} {} {} {} {}  {}\n", v->id, n, d, r.steps,
                               to_string(r.kind), error_cell(r.errors.max_pos_err), error_cell(r.errors.rms_pos_err),
                               error_cell(r.errors.max_vel_err), error_cell(r.errors.map_diff),
                               r.passed ? "PASS" : "FAIL (" + r.failure + ")");
                }
                std::fflush(stdout);
            }
        }
        if (reference && reference->kind() == CheckKind::sampled && o.steps != std::vector<int>{1})
            notes.push_back(fmt::format("N={} > --full-reference-max-n {}: sampled check of the first step only "
                                        "({} bodies' velocities, every position and the map)",
                                        n, o.settings.full_reference_max_n,
                                        std::min(n, o.settings.sample_bodies)));
    }
    for (const auto& note : notes) fmt::print("note: {}\n", note);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("{} checks: {} passed, {} failed ({:.1f} s)\n", passed + failed, passed, failed, seconds);
    return failed == 0 ? 0 : 1;
}

}  // namespace

namespace {

void add_threshold_options(CLI::App& cmd, Thresholds& t) {
    cmd.add_option("--max-pos-err", t.max_pos_err, "largest allowed absolute position error")->capture_default_str()->check(CLI::NonNegativeNumber);
    cmd.add_option("--max-rms-pos-err", t.max_rms_pos_err, "largest allowed RMS position error")->capture_default_str()->check(CLI::NonNegativeNumber);
    cmd.add_option("--max-vel-err", t.max_vel_err, "largest allowed absolute velocity error")->capture_default_str()->check(CLI::NonNegativeNumber);
    cmd.add_option("--max-map-diff", t.max_map_diff, "largest allowed map difference (bodies in another cell / 2N)")->capture_default_str()->check(CLI::NonNegativeNumber);
}

}  // namespace

void add_verify_command(CLI::App& app, int& exit_status) {
    auto o = std::make_shared<VerifyOptions>();
    auto* cmd = app.add_subcommand("verify", "Check variants against the float64 reference and print a table of their errors");
    cmd->add_option("--variants", o->patterns, "comma-separated glob patterns of variant ids (default: every available one)")->capture_default_str();
    cmd->add_option("-n,--bodies", o->ns, "body counts N")->capture_default_str()->check(CLI::Range(std::size_t{1}, std::size_t{1} << 26));
    cmd->add_option("-d,--map-size", o->ds, "activity map sizes D")->capture_default_str()->check(CLI::Range(1, 65536));
    cmd->add_option("--steps", o->steps, "step counts K after which to compare")->capture_default_str()->check(CLI::Range(1, 100000));
    cmd->add_option("--cpu-max-n", o->cpu_max_n, "CPU variants skip larger N (the float32 run costs N^2 per step on the host)")->capture_default_str();
    cmd->add_option("--full-reference-max-n", o->settings.full_reference_max_n, "larger N get the sampled first-step check")->capture_default_str()->check(CLI::PositiveNumber);
    cmd->add_option("--sample-bodies", o->settings.sample_bodies, "bodies whose velocity the sampled check compares")->capture_default_str()->check(CLI::PositiveNumber);
    add_threshold_options(*cmd, o->settings.thresholds);
    cmd->add_option("--seed", o->problem.seed, "SplitMix64 seed of the generated initial state")->capture_default_str();
    o->problem.add_constants_to(*cmd);
    cmd->callback([o, &exit_status] { exit_status = verify(*o); });
}

}  // namespace nbody
