// `nbody-bench run`: one variant on one problem; prints the timings, writes state and map on request.
// `nbody-bench compare`: several variants on one problem, timed in alternation in one process.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <vector>

#include "cli/commands.hpp"
#include "cli/problem_options.hpp"
#include "io/io.hpp"
#include "matrix/estimate.hpp"
#include "nbody/errors.hpp"
#include "nbody/registry.hpp"
#include "platform/distributed.hpp"
#include "platform/energy.hpp"
#include "platform/host_info.hpp"
#include "platform/measure.hpp"
#include "run/progress.hpp"

namespace nbody {

namespace {

struct RunOptions {
    std::string variant;
    std::size_t n = 0;  // 0: from --input, else 1024
    int d = 10;
    int steps = 10;
    int warmup = 1;
    double min_time = 0.0;  // seconds; 0: exactly `steps` timed steps
    std::string state_out, map_out;
    ProblemOptions problem;
    CostOptions cost;
    DistributionOptions distribution;
    EnergyOptions energy;
};

// The first body whose position or velocity is not finite, as "body I: NAME = VALUE"; "" when none.
template <class Real>
std::string first_non_finite(const BodiesT<Real>& b) {
    for (std::size_t i = 0; i < b.size(); ++i)
        for (int axis = 0; axis < b.dim; ++axis) {
            if (!std::isfinite(b.position(axis)[i])) return fmt::format("body {}: position {} = {}", i, "xyz"[axis], b.position(axis)[i]);
            if (!std::isfinite(b.velocity(axis)[i])) return fmt::format("body {}: velocity {} = {}", i, "xyz"[axis], b.velocity(axis)[i]);
        }
    return "";
}

// Time and memory of the run before anything large is allocated; refused above the limits.
Cost checked_cost(const VariantDescriptor& variant, const TuningValues& tuning, const RunOptions& o, std::size_t n,
                  const char* command = "run") {
    const Workload& workload = o.problem.workload;
    const CostLimits limits = o.cost.limits();
    const double steps = static_cast<double>(o.warmup) + o.steps;
    Rate rate = modelled_rate(variant, tuning, workload, builtin_registry(), n);
    // --min-time can only lengthen the timed phase, by at most its value.
    Cost cost{.seconds = steps_seconds(variant, tuning, workload, n, o.d, steps, rate.interactions_per_second) + o.min_time,
              .host_bytes = host_bytes(variant, workload, n, o.d, 0),
              .device_bytes = device_bytes(variant, workload, n, o.d),
              .rate_source = rate.source};
    if (cost.seconds > limits.max_seconds && !limits.allow)
        if (const auto measured = measured_rate(variant, tuning, workload, o.problem.constants, n)) {
            cost.seconds = steps_seconds(variant, tuning, workload, n, o.d, steps, measured->interactions_per_second) + o.min_time;
            cost.rate_source = measured->source;
        }
    if (const std::string why = excess(cost, limits); !why.empty() && !limits.allow)
        refuse_costly(fmt::format("{} {} N={} D={} steps={} warm-up={} ({})", command, variant.id, n, o.d, o.steps, o.warmup,
                                  to_string(workload)),
                      why);
    return cost;
}

// "name=value ..." in name order; "-" when the variant has no tunings.
std::string tuning_text(const TuningValues& tuning) {
    std::string text;
    for (const auto& [name, value] : tuning) text += fmt::format("{}{}={}", text.empty() ? "" : " ", name, value);
    return text.empty() ? "-" : text;
}

void require_max_n(const VariantDescriptor& variant, std::size_t n) {
    if (variant.max_n != 0 && n > variant.max_n)
        throw UsageError(fmt::format("variant {} accepts N <= {}, got {}", variant.id, variant.max_n, n));
}

// The variant `id` if it can run `workload` here at n bodies (0: not known yet); UsageError if not.
// Checked before anything is read or created: a variant never falls back to another.
const VariantDescriptor& runnable_variant(const std::string& id, const Workload& workload, std::size_t n) {
    const VariantDescriptor* variant = builtin_registry().find(id);
    if (variant == nullptr) throw UsageError("unknown variant '" + id + "' (see `nbody-bench list`)");
    const Availability availability = variant->availability();
    if (!availability.available) throw UsageError("variant " + variant->id + " cannot run here: " + availability.reason);
    require_workload(*variant, workload);
    require_max_n(*variant, n);
    return *variant;
}

// The files a run writes, checked before any work: each writable, none the same as another or as
// the input (a write would replace it with the result).
void require_usable_outputs(const RunOptions& o) {
    const std::vector<std::pair<const char*, const std::string*>> outputs = {{"--state-out", &o.state_out},
                                                                             {"--map-out", &o.map_out}};
    for (const auto& [option, path] : outputs) {
        if (path->empty()) continue;
        if (!o.problem.input_path.empty() && same_file(*path, o.problem.input_path))
            throw UsageError(fmt::format("{} {} is the --input file: the run would replace its own input", option,
                                         display_path(*path)));
        check_writable(*path);
    }
    // Both into one character device (/dev/null) loses nothing: each is written into it in turn.
    if (!o.state_out.empty() && !o.map_out.empty() && same_file(o.state_out, o.map_out) &&
        output_node(o.state_out) != OutputNode::character_device)
        throw UsageError(fmt::format("--state-out {} and --map-out {} are the same file: one would replace the other",
                                     display_path(o.state_out), display_path(o.map_out)));
}

// The estimate on stderr: for a run long enough to show progress, and whenever --allow-long is given
// (it may run what the limits refuse).
void print_estimate(const char* command, const Cost& cost, const CostOptions& options) {
    const std::string why = excess(cost, options.limits());
    if (why.rfind("estimated", 0) == 0)  // the time is above the limit: `why` holds the estimate
        fmt::print(stderr, "{}: {}; about {} of host memory: run anyway (--allow-long)\n", command, why, bytes_text(cost.host_bytes));
    else
        fmt::print(stderr, "{}: estimated {} ({}), about {} of host memory{}\n", command, duration_text(cost.seconds),
                   cost.rate_source, bytes_text(cost.host_bytes), why.empty() ? "" : "; " + why + ": run anyway (--allow-long)");
}

// The energy lines of `run`: the ranks' total (and each rank's over several), the clock held and the
// efficiency at it; or why the energy was not read.
void print_energy(const std::vector<EnergyReading>& readings, const std::optional<GpuInfo>& gpu, const Problem& problem,
                  const Measurement& m) {
    const EnergyReading total = total_over_ranks(readings);
    if (!total.available) {
        fmt::print("energy           not available ({}): {}\n", total.meter, total.reason);
        return;
    }
    const EnergyFigures f = energy_figures(total, problem.n, m.steps);
    fmt::print("energy           {:.4e} J over {:.3e} s ({:.4e} J/step), mean power {:.1f} W, {:.4e} interactions/J ({} {})\n",
               f.energy_j, total.window_s, f.energy_per_step_j, f.mean_power_w, f.interactions_per_joule, total.meter,
               total.device);
    if (readings.size() > 1)
        for (std::size_t r = 0; r < readings.size(); ++r)
            fmt::print("energy rank {:<4} {:.4e} J, mean power {:.1f} W{}\n", r, readings[r].energy_j, readings[r].mean_power_w(),
                       readings[r].clock_samples > 0 ? fmt::format(", SM clock {:.0f} MHz", readings[r].mean_sm_clock_mhz) : "");
    if (f.mean_sm_clock_mhz <= 0) return;
    const double ips = interactions_per_second(problem.n, m.time_per_step_s);
    const GpuLimitInputs inputs = gpu ? gpu_limit_inputs(*gpu, problem.workload) : GpuLimitInputs{};
    const double limit = gpu_interaction_limit(inputs) * problem.distribution.ranks();
    const double at_clock = efficiency_at_clock(ips, limit, inputs.sm_clock_hz, f.mean_sm_clock_mhz);
    fmt::print("SM clock         {:.0f} MHz (mean of {} samples over the timed phase){}\n", f.mean_sm_clock_mhz, total.clock_samples,
               at_clock > 0 ? fmt::format("; efficiency {:.1f}% of the limit at {:.0f} MHz, {:.1f}% at the clock held", 100 * ips / limit,
                                          inputs.sm_clock_hz * 1e-6, 100 * at_clock)
                            : "");
}

void run(const RunOptions& o, DistributedRun& ranks) {
    const bool from_file = !o.problem.input_path.empty();
    const std::size_t asked_n = o.n != 0 || from_file ? o.n : 1024;
    const VariantDescriptor* variant = &runnable_variant(o.variant, o.problem.workload, asked_n);
    const TuningValues tuning = Registry::resolve_tuning(*variant, o.problem.tuning_overrides());
    o.problem.require_usable_constants(o.problem.workload.precision);
    if (ranks.writes_output()) require_usable_outputs(o);

    // With -n the cost is known before the state exists; from a file, once it is read (the reader
    // holds no more than the largest N).
    std::optional<Cost> cost;
    if (!from_file) cost = checked_cost(*variant, tuning, o, asked_n);
    const HostState initial = o.problem.initial_state(asked_n);
    Problem problem{.n = state_size(initial), .d = o.d, .constants = o.problem.constants, .workload = o.problem.workload,
                    .distribution = {}};
    require_max_n(*variant, problem.n);
    if (!cost) cost = checked_cost(*variant, tuning, o, problem.n);
    // Every rank builds this same problem; each integrates its block (docs/scaling.md).
    ProblemDistributions distributions(ranks, builtin_registry(), o.distribution.device_collectives);
    distributions.prepare({variant});
    problem.distribution = distributions.of(*variant);

    const bool long_run = cost->seconds > kProgressAfterSeconds && ranks.writes_output();
    std::optional<StepProgress> progress;
    TimedPhaseHooks hooks;
    if ((long_run || o.cost.allow_long) && ranks.writes_output()) print_estimate("run", *cost, o.cost);
    if (long_run) {
        progress.emplace(std::cerr, stderr_is_terminal(), variant->id, problem.n);
        hooks.progress.on_steps = [&progress](int done, int total, bool timed) { progress->update(done, total, timed); };
    }
    hooks.min_timed_seconds = o.min_time;
    // The ranks start the timed steps together: rank 0's clock then times the slowest rank's steps.
    if (problem.distribution.spans_ranks()) {
        hooks.on_start = [&ranks] { ranks.communicator().barrier(); };
        hooks.agreed_steps = [&ranks](int more) { return rank0_value(ranks.communicator(), more); };
    }
    const auto gpu = variant->runs_on_gpu ? builtin_registry().gpu() : std::nullopt;
    const std::unique_ptr<EnergyMeter> meter = make_device_meter(variant->runs_on_gpu, gpu ? gpu->pci_bus_id : "", o.energy.read);
    hooks.energy_meter = meter.get();
    auto simulation = variant->create(problem, tuning);
    Measurement m = measure_variant(*simulation, initial, o.warmup, o.steps, hooks);
    progress.reset();
    gather_velocities(m.final_state, problem.distribution);
    // After the download: the breakdown's steps change nothing written.
    const std::optional<StepBreakdownOverRanks> breakdown =
        step_breakdown_over_ranks(*simulation, ranks.communicator(), m.time_per_step_s);
    const std::vector<std::string> rank_devices =
        problem.distribution.device != nullptr
            ? allgather_strings(ranks.communicator(), problem.distribution.device->device_description())
            : std::vector<std::string>{};
    const std::vector<EnergyReading> energy = gather_energy_readings(ranks.communicator(), *m.energy);

    fmt::print("variant          {}\n", variant->id);
    fmt::print("tuning           {}\n", tuning_text(tuning));
    fmt::print("workload         {}\n", to_string(problem.workload));
    fmt::print("problem          N={} D={} steps={} warm-up={} G={} dt={} eps={} seed={}{}\n", problem.n, problem.d, m.steps,
               o.warmup, problem.constants.G, problem.constants.dt, problem.constants.softening, o.problem.seed,
               from_file ? " (empty fields of --input)" : "");
    fmt::print("ranks            {} ({})\n", problem.distribution.ranks(), ranks.communicator().describe());
    for (std::size_t r = 0; r < rank_devices.size(); ++r) fmt::print("rank {:<11} {}\n", r, rank_devices[r]);
    fmt::print("upload           {:.6e} s\n", m.upload_s);
    fmt::print("time per step    {:.6e} s ({:.3f} us over {:.3e} s timed)\n", m.time_per_step_s, m.time_per_step_s * 1e6,
               m.time_per_step_s * m.steps);
    fmt::print("interactions/s   {:.4e}\n", interactions_per_second(problem.n, m.time_per_step_s));
    fmt::print("download         {:.6e} s\n", m.download_s);
    print_energy(energy, gpu, problem, m);
    if (breakdown)
        fmt::print("step breakdown   compute {:.3f} us, exposed communication {:.3f} us, imbalance {:.3f} us of {:.3f} us "
                   "(device events, mean of {} further steps, each begun by every rank together)\n",
                   breakdown->compute_s * 1e6, breakdown->exposed_communication_s * 1e6, breakdown->imbalance_s * 1e6,
                   breakdown->step_s * 1e6, breakdown->steps);
    else if (const auto exchange = tuning.find("exchange");
             variant->runs_on_gpu && problem.distribution.spans_ranks() && exchange != tuning.end() &&
             exchange->second == "overlap")
        fmt::print("step breakdown   none: the overlapped exchange shares the GPU with the pull, so its wait is not its "
                   "cost (docs/scaling.md); --tuning exchange=allgather has one\n");
    std::fflush(stdout);

    // A state that overflowed is a failed run, not a result: nothing is written.
    if (const std::string bad = std::visit([](const auto& b) { return first_non_finite(b); }, m.final_state); !bad.empty())
        throw std::runtime_error(fmt::format("the state is not finite after {} steps ({}): nothing written", m.steps, bad));

    if (!ranks.writes_output()) return;  // rank 0 writes the files
    if (!o.state_out.empty()) {
        write_state_csv(o.state_out, m.final_state,
                        fmt::format("nbody {} state after {} steps of {} (N={}, D={})", to_string(problem.workload), m.steps,
                                    variant->id, problem.n, problem.d));
        fmt::print("state written    {}\n", display_path(o.state_out));
    }
    if (!o.map_out.empty()) {
        write_activity_map(o.map_out, m.activity_map, problem.d);
        fmt::print("map written      {}\n", display_path(o.map_out));
    }
}

// `compare`: several variants on one problem in one process, timed in alternation, so that each
// round's times meet the same load from outside the process (a shared host's other guests come and
// go faster than one run after another can follow: docs/performance-kokkos.md).
struct CompareOptions {
    RunOptions run;  // its steps: per variant per round
    std::vector<std::string> variants;
    int rounds = 20;
};

// The q-quantile (0..1) of `values`, interpolated between order statistics.
double quantile(std::vector<double> values, double q) {
    std::sort(values.begin(), values.end());
    const double at = q * static_cast<double>(values.size() - 1);
    const std::size_t below = static_cast<std::size_t>(at);
    const std::size_t above = std::min(below + 1, values.size() - 1);
    return values[below] + (at - static_cast<double>(below)) * (values[above] - values[below]);
}

void compare(const CompareOptions& c) {
    const RunOptions& o = c.run;
    if (c.variants.size() < 2) throw UsageError("compare needs at least two --variant");
    if (static_cast<double>(c.rounds) * o.steps * static_cast<double>(c.variants.size()) > (1 << 30))
        throw UsageError(fmt::format("compare: --rounds x --steps x variants must be at most 2^30, got {} x {} x {}", c.rounds,
                                     o.steps, c.variants.size()));
    const bool from_file = !o.problem.input_path.empty();
    const std::size_t asked_n = o.n != 0 || from_file ? o.n : 1024;
    RunOptions whole = o;  // the cost of every round's steps
    whole.steps = o.steps * c.rounds;
    std::vector<const VariantDescriptor*> variants;
    std::vector<TuningValues> tunings;
    for (const std::string& id : c.variants) {
        variants.push_back(&runnable_variant(id, o.problem.workload, asked_n));
        tunings.push_back(Registry::resolve_tuning(*variants.back(), {}));
    }
    o.problem.require_usable_constants(o.problem.workload.precision);
    const HostState initial = o.problem.initial_state(asked_n);
    const Problem problem{.n = state_size(initial), .d = o.d, .constants = o.problem.constants, .workload = o.problem.workload,
                          .distribution = {}};  // one process
    Cost total;
    std::string rate_sources;  // each variant's, as run prints its one
    for (std::size_t v = 0; v < variants.size(); ++v) {
        require_max_n(*variants[v], problem.n);
        const Cost cost = checked_cost(*variants[v], tunings[v], whole, problem.n, "compare");
        total.seconds += cost.seconds;
        total.host_bytes += cost.host_bytes;
        total.device_bytes += cost.device_bytes;  // every simulation stays allocated
        rate_sources += fmt::format("{}{}: {}", rate_sources.empty() ? "" : "; ", variants[v]->id, cost.rate_source);
    }
    if (const std::string why = excess(total, o.cost.limits()); !why.empty() && !o.cost.limits().allow)
        refuse_costly(fmt::format("compare of {} variants N={} D={} rounds={} steps={}", variants.size(), problem.n, o.d,
                                  c.rounds, o.steps),
                      why);
    std::optional<StepProgress> progress;  // of every variant's timed steps together
    total.rate_source = rate_sources;
    if (total.seconds > kProgressAfterSeconds || o.cost.allow_long) print_estimate("compare", total, o.cost);
    if (total.seconds > kProgressAfterSeconds) {
        progress.emplace(std::cerr, stderr_is_terminal(), "compare", problem.n);
    }

    std::vector<std::unique_ptr<Simulation>> simulations;
    for (std::size_t v = 0; v < variants.size(); ++v) {
        simulations.push_back(variants[v]->create(problem, tunings[v]));
        simulations.back()->upload(initial);
        if (o.warmup > 0) simulations.back()->advance(o.warmup);
        simulations.back()->synchronize();
    }
    // seconds[v][r]: variant v's time per step in round r; the order is reversed every other round.
    std::vector<std::vector<double>> seconds(variants.size());
    for (int round = 0; round < c.rounds; ++round)
        for (std::size_t k = 0; k < variants.size(); ++k) {
            const std::size_t v = round % 2 == 0 ? k : variants.size() - 1 - k;
            const auto start = std::chrono::steady_clock::now();
            simulations[v]->advance(o.steps);
            simulations[v]->synchronize();
            seconds[v].push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / o.steps);
            if (progress)
                progress->update(static_cast<int>((round * variants.size() + k + 1) * o.steps),
                                 static_cast<int>(c.rounds * variants.size() * o.steps), true);
        }
    progress.reset();

    fmt::print("compare          N={} D={} {}, {} rounds of {} step(s) per variant after {} warm-up step(s), the order "
               "reversed every other round\n",
               problem.n, problem.d, to_string(problem.workload), c.rounds, o.steps, o.warmup);
    fmt::print("{:<34} {:>16} {:>16}   {}\n", "variant", "median s/step", "interactions/s",
               "rate / first variant's in the same round: median [quartiles]");
    for (std::size_t v = 0; v < variants.size(); ++v) {
        std::vector<double> ratios;
        for (int round = 0; round < c.rounds; ++round) ratios.push_back(seconds[0][round] / seconds[v][round]);
        const double median = quantile(seconds[v], 0.5);
        fmt::print("{:<34} {:>16.6e} {:>16.4e}   {:.4f} [{:.4f}, {:.4f}]\n", variants[v]->id, median,
                   interactions_per_second(problem.n, median), quantile(ratios, 0.5), quantile(ratios, 0.25),
                   quantile(ratios, 0.75));
    }
    // Default tunings: omp.* take threads from the process's CPUs, not from OMP_NUM_THREADS.
    std::size_t id_width = 0;
    for (const VariantDescriptor* variant : variants) id_width = std::max(id_width, variant->id.size());
    for (std::size_t v = 0; v < variants.size(); ++v)
        fmt::print("tuning of {:<{}} {}\n", variants[v]->id, id_width, tuning_text(tunings[v]));
    std::fflush(stdout);
    // A variant whose state overflowed gives no comparison.
    for (std::size_t v = 0; v < variants.size(); ++v) {
        HostState state = empty_state_like(initial);
        std::vector<float> map;
        simulations[v]->download(state, map);
        if (const std::string bad = std::visit([](const auto& b) { return first_non_finite(b); }, state); !bad.empty())
            throw std::runtime_error(fmt::format("{}: the state is not finite after the rounds ({})", variants[v]->id, bad));
    }
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_status, DistributedRun& ranks) {
    auto o = std::make_shared<RunOptions>();
    auto* cmd = app.add_subcommand("run", "Run one variant on one problem and print its timings");
    cmd->add_option("--variant", o->variant, "variant id (see `list`)")->required();
    cmd->add_option("-n,--bodies", o->n, "number of bodies N (default 1024, or the count in --input)")
        ->check(integer_in(1, kMaxInputBodies));
    cmd->add_option("-d,--map-size", o->d, "activity map is D x D")->capture_default_str()->check(integer_in(1, kMaxMapSize));
    cmd->add_option("--steps", o->steps, "timed steps")->capture_default_str()->check(integer_in(1, 1 << 30));
    cmd->add_option("--warmup", o->warmup, "untimed steps before the timed ones")->capture_default_str()->check(integer_in(0, 1 << 30));
    cmd->add_option("--min-time", o->min_time,
                    "go on timing more steps until the timed phase lasts at least this many seconds (precise "
                    "per-step times at small N); the state written is after all the steps done")
        ->check(min_time_seconds());
    o->problem.add_workload_to(*cmd);
    o->problem.add_initial_state_to(*cmd);
    o->problem.add_constants_to(*cmd);
    o->problem.add_tuning_to(*cmd);
    o->cost.add_to(*cmd);
    o->distribution.add_to(*cmd);
    o->energy.add_to(*cmd);
    cmd->add_option("--state-out", o->state_out, "write the final state as CSV (the input format of its dimension)")
        ->check(non_empty_path());
    cmd->add_option("--map-out", o->map_out, "write the final activity map (.png: heat map; otherwise CSV)")
        ->check(non_empty_path());
    cmd->callback([o, &exit_status, &ranks] {
        run(*o, ranks);
        exit_status = 0;
    });
}

void add_compare_command(CLI::App& app, int& exit_status, DistributedRun& ranks) {
    auto c = std::make_shared<CompareOptions>();
    RunOptions& o = c->run;
    auto* cmd = app.add_subcommand(
        "compare", "Time several variants on one problem in one process, alternating round by round, and print each one's "
                   "rate against the first's in the same round (each variant at its default tuning)");
    cmd->add_option("--variant", c->variants, "variant id (see `list`); give two or more, the first is the reference")
        ->required();
    cmd->add_option("-n,--bodies", o.n, "number of bodies N (default 1024, or the count in --input)")
        ->check(integer_in(1, kMaxInputBodies));
    cmd->add_option("-d,--map-size", o.d, "activity map is D x D")->capture_default_str()->check(integer_in(1, kMaxMapSize));
    cmd->add_option("--rounds", c->rounds, "rounds; each times every variant once")->capture_default_str()->check(integer_in(1, 1 << 20));
    o.steps = 1;
    cmd->add_option("--steps", o.steps, "timed steps per variant per round")->capture_default_str()->check(integer_in(1, 1 << 20));
    cmd->add_option("--warmup", o.warmup, "untimed steps of each variant before the rounds")->capture_default_str()->check(integer_in(0, 1 << 20));
    o.problem.add_workload_to(*cmd);
    o.problem.add_initial_state_to(*cmd);
    o.problem.add_constants_to(*cmd);
    o.cost.add_to(*cmd);
    cmd->callback([c, &exit_status, &ranks] {
        if (ranks.distributed()) throw UsageError("compare runs in one process: start it without mpirun");
        compare(*c);
        exit_status = 0;
    });
}

}  // namespace nbody
