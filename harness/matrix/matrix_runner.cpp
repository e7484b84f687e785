#include "matrix/matrix_runner.hpp"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cmath>
#include <compare>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include "io/io.hpp"
#include "matrix/estimate.hpp"
#include "matrix/matrix_record.hpp"
#include "nbody/errors.hpp"
#include "nbody/generator.hpp"
#include "platform/energy.hpp"
#include "platform/host_info.hpp"
#include "platform/measure.hpp"
#include "results/json_input.hpp"
#include "results/results.hpp"
#include "run/interrupt.hpp"
#include "run/progress.hpp"
#include "run/refusals.hpp"
#include "verify/verification.hpp"

namespace nbody {

namespace {

using ordered_json = nlohmann::ordered_json;
using Run = benchmark::BenchmarkReporter::Run;

// Collects what Google Benchmark reports; the runner turns it into entries.
class CollectingReporter final : public benchmark::BenchmarkReporter {
public:
    std::vector<Run>* sink = nullptr;
    bool ReportContext(const Context&) override { return true; }
    void ReportRuns(const std::vector<Run>& runs) override {
        if (sink != nullptr) sink->insert(sink->end(), runs.begin(), runs.end());
    }
};

// Google Benchmark 1.8 renamed a failed run's error_occurred/error_message to skipped/skip_message.
template <class R>
bool run_failed(const R& r) {
    if constexpr (requires { r.error_occurred; })
        return r.error_occurred;
    else
        return r.skipped != 0;
}
template <class R>
std::string run_failure_message(const R& r) {
    if constexpr (requires { r.error_message; })
        return r.error_message;
    else
        return r.skip_message;
}

ordered_json json_number_or_null(double value) {
    return std::isfinite(value) ? ordered_json(value) : ordered_json(nullptr);
}

// One configuration on its way: prepared on its first repetition, written when the next begins.
struct Attempt {
    const Configuration* config = nullptr;
    std::size_t family_index = 0;
    HostState initial;
    std::unique_ptr<Simulation> simulation;
    std::optional<CheckResult> check;
    std::string error;  // an exception's message: the configuration failed
    double limit = 0;   // interactions/s of the device it runs on in this workload (0: unknown)
    ordered_json limit_inputs;  // what `limit` was computed from (null: no device facts)
    std::optional<int> cores;
    int repetitions_done = 0;
    std::vector<Run> runs;
    double estimated_seconds = 0;  // the whole configuration (estimate.hpp)
    bool interrupted = false;      // a stop signal came before it finished: not recorded
    std::unique_ptr<EnergyMeter> energy_meter;  // read over each repetition's timed phase
    double limit_clock_hz = 0;                  // the GPU clock `limit` was computed at (0: a CPU)
    std::map<int, ordered_json> energy;         // each repetition's `energy` object
};

class MatrixRunner {
public:
    MatrixRunner(const Registry& registry, const MatrixSpec& spec, const MatrixRunOptions& options)
        : registry_(registry),
          spec_(spec),
          options_(options),
          spans_ranks_(options.distributions != nullptr && options.distributions->spans_ranks()),
          writes_(options.distributions == nullptr || options.distributions->writes_output()),
          log_(!writes_ ? silent_ : options.log ? *options.log : std::cout) {}

    MatrixRunSummary run() {
        MatrixExpansion plan = expand_matrix(spec_, registry_);
        require_configurations(spec_, plan);
        summary_.planned = plan.configurations.size();
        if (options_.distributions != nullptr) {
            std::vector<const VariantDescriptor*> variants;
            for (const Configuration& c : plan.configurations) variants.push_back(c.variant);
            options_.distributions->prepare(variants);
        }
        open_document();
        if (writes_) check_writable(options_.out_path);  // before any rate is measured
        std::vector<std::size_t> todo;
        std::vector<Configuration> todo_configurations;
        for (std::size_t k = 0; k < plan.configurations.size(); ++k)
            if (!done_.count(plan.configurations[k].name)) {
                todo.push_back(k);
                todo_configurations.push_back(plan.configurations[k]);
            }
        summary_.already_done = summary_.planned - todo.size();

        // Nothing is written or run when a configuration exceeds the limits.
        const auto costs = estimate_configurations(registry_, spec_, todo_configurations, options_.limits, !options_.limits.allow,
                                                  options_.read_energy);
        std::vector<std::string> over;
        double total_seconds = 0;
        for (std::size_t slot = 0; slot < costs.size(); ++slot) {
            total_seconds += costs[slot].cost.seconds;
            if (costs[slot].over_limit) over.push_back(todo_configurations[slot].name + ": " + costs[slot].why);
        }
        if (!over.empty() && !options_.limits.allow) {
            std::string listed;
            for (std::size_t i = 0; i < over.size() && i < 5; ++i) listed += (i ? "; " : "") + over[i];
            if (over.size() > 5) listed += fmt::format("; and {} more", over.size() - 5);
            refuse_costly(fmt::format("matrix {}", spec_.name),
                          fmt::format("{} of {} configurations above the limits ({})", over.size(), todo.size(), listed));
        }
        // Every rank has read the file (--resume) before rank 0 first rewrites it.
        if (spans_ranks_) options_.distributions->host().barrier();
        write_document();  // a valid file from the start: a kill before the first result leaves it empty, not absent

        std::vector<double> work;
        std::vector<bool> on_gpu;
        for (std::size_t k : todo) {
            const Configuration& c = plan.configurations[k];
            const double nn = static_cast<double>(c.n) * static_cast<double>(c.n);
            work.push_back(nn * (c.repetitions * (c.warmup_steps + c.steps) + c.verify_steps));
            on_gpu.push_back(c.variant->runs_on_gpu);
        }
        progress_.emplace(log_, options_.interactive && writes_, work, on_gpu);
        for (const auto& note : plan.notes) progress_->note("note: " + note);
        progress_->note(fmt::format("matrix {}: {} configurations, {} already in {}, {} to run (estimated {})", spec_.name,
                                    summary_.planned, summary_.already_done, options_.out_path, todo.size(),
                                    duration_text(total_seconds)));
        if (todo.empty()) return summary_;

        std::optional<InterruptGuard> interrupts;
        if (options_.stop_on_signals) {
            clear_interrupt_signal();
            interrupts.emplace();
        }
        attempts_.resize(todo.size());
        for (std::size_t slot = 0; slot < todo.size(); ++slot) attempts_[slot].estimated_seconds = costs[slot].cost.seconds;
        benchmark::ClearRegisteredBenchmarks();
        for (std::size_t slot = 0; slot < todo.size(); ++slot) {
            Attempt& a = attempts_[slot];
            a.config = &plan.configurations[todo[slot]];
            a.family_index = todo[slot];
            benchmark::RegisterBenchmark(a.config->name.c_str(), [this, slot](benchmark::State& state) { repetition(slot, state); })
                ->UseManualTime()
                ->MeasureProcessCPUTime()
                ->Iterations(1)
                ->Repetitions(a.config->repetitions)
                ->Unit(benchmark::kMicrosecond);
        }
        CollectingReporter reporter;
        reporter_ = &reporter;
        try {
            benchmark::RunSpecifiedBenchmarks(&reporter, ".");
        } catch (...) {
            benchmark::ClearRegisteredBenchmarks();
            throw;
        }
        benchmark::ClearRegisteredBenchmarks();
        finish_current();
        for (const Attempt& a : attempts_)
            if (a.interrupted) summary_.not_run.push_back(a.config->name);
        if (!summary_.not_run.empty()) summary_.interrupted_by = agreed_stop_signal_;
        return summary_;
    }

private:
    void open_document() {
        namespace fs = std::filesystem;
        const std::string& path = options_.out_path;
        if (fs::exists(path) && options_.resume) {
            ResumedFile resumed = read_resumed_file(registry_, spec_, path, options_.retry_failed);
            document_ = std::move(resumed.document);
            done_ = std::move(resumed.done);
            document_["context"]["resumed"].push_back(iso8601_now());
            if (document_["context"].value("distribution", nlohmann::json::object()).value("ranks", 1) != ranks())
                throw UsageError(fmt::format("{}: cannot resume: it was run over {} ranks, this run has {}", path,
                                             document_["context"].value("distribution", nlohmann::json::object()).value("ranks", 1),
                                             ranks()));
        } else {
            // Rank 0 alone creates the file; the others would find it.
            if (!writes_) {
                document_ = {{"context", results_context(registry_, matrix_context(spec_))}, {"benchmarks", ordered_json::array()}};
                add_distribution_fields();
                return;
            }
            if (fs::exists(path) && !options_.overwrite)
                throw UsageError(path + " exists: pass --resume to continue it or --overwrite to replace it");
            document_ = {{"context", results_context(registry_, matrix_context(spec_))}, {"benchmarks", ordered_json::array()}};
            add_distribution_fields();
            const fs::path parent = fs::path(path).parent_path();
            if (!parent.empty()) fs::create_directories(parent);
        }
    }

    int ranks() const { return spans_ranks_ ? options_.distributions->host().size() : 1; }

    // The ranks, nodes, GPUs and interconnect of this run (a collective: every rank calls it).
    void add_distribution_fields() {
        document_["context"]["distribution"] =
            options_.distributions != nullptr ? options_.distributions->result_fields()
                                              : DistributedRun::single_process().result_fields(nullptr);
    }

    void write_document() {
        if (writes_) write_file_atomically(options_.out_path, document_.dump(1) + "\n");
    }

    // Over several ranks a failure ends every rank: the peers may wait for this one in a collective.
    void end_ranks_on_failure(const Configuration& c, const std::string& what) {
        if (spans_ranks_) options_.distributions->run().fail(1, fmt::format("matrix configuration {}: {}", c.name, what));
    }

    // A stop signal seen by any rank stops every rank at the same repetition.
    int agreed_interrupt_signal() {
        const int signal = interrupt_signal();
        if (!spans_ranks_) return signal;
        // Every rank names the same signal (SIGTERM when any rank saw one), so their exit statuses agree.
        std::int32_t seen[] = {signal == SIGINT, signal == SIGTERM};
        options_.distributions->host().allreduce_sum(std::span<std::int32_t>(seen));
        return seen[1] != 0 ? SIGTERM : seen[0] != 0 ? SIGINT : 0;
    }

    // Google Benchmark calls this once per repetition of configuration `slot`.
    void repetition(std::size_t slot, benchmark::State& state) {
        Attempt& a = attempts_[slot];
        // Once agreed, the stop holds on every rank together: no further all-reduce.
        if (options_.stop_on_signals && agreed_stop_signal_ == 0) agreed_stop_signal_ = agreed_interrupt_signal();
        if (agreed_stop_signal_ != 0) {
            // Stop: what finished is written (the previous configuration, when this one had not
            // begun); this configuration, begun or not, is left for --resume.
            if (current_ != slot) finish_current();
            a.interrupted = true;
            state.SkipWithError("interrupted");
            return;
        }
        if (current_ != slot) {
            finish_current();  // the previous configuration reaches the disk before this one starts
            current_ = slot;
            reporter_->sink = &a.runs;
            progress_->begin(slot, a.config->name);
            prepare(a);
        }
        progress_->repetition(a.repetitions_done, a.config->repetitions);
        ++a.repetitions_done;
        if (!a.error.empty()) {
            state.SkipWithError(a.error.c_str());
            return;
        }
        const Configuration& c = *a.config;
        try {
            for (auto _ : state) {
                state.PauseTiming();  // Google Benchmark's CPU clock runs for the timed steps only
                TimedPhaseHooks hooks{
                    .on_start =
                        [&] {
                            // The ranks start together: rank 0's clock times the slowest rank's steps.
                            if (spans_ranks_) options_.distributions->host().barrier();
                            state.ResumeTiming();
                        },
                    .on_stop = [&] { state.PauseTiming(); },
                    .progress = {},
                    .min_timed_seconds = c.min_time_s,
                    .agreed_steps = {},
                    .energy_meter = a.energy_meter.get()};
                if (spans_ranks_)
                    hooks.agreed_steps = [this](int more) { return rank0_value(options_.distributions->host(), more); };
                const double per_repetition = a.estimated_seconds / c.repetitions;
                if (per_repetition > kProgressAfterSeconds) {
                    const auto repetition_start = std::chrono::steady_clock::now();
                    hooks.progress.on_steps = [this, repetition_start, n = static_cast<double>(c.n)](int done, int total, bool timed) {
                        const double elapsed =
                            std::chrono::duration<double>(std::chrono::steady_clock::now() - repetition_start).count();
                        const double per_step = elapsed / std::max(done, 1);
                        progress_->steps(done, total, timed, per_step > 0 ? n * n / per_step : 0, per_step * (total - done));
                    };
                }
                const Measurement m = measure_variant(*a.simulation, a.initial, c.warmup_steps, c.steps, hooks);
                const std::optional<StepBreakdownOverRanks> breakdown =
                    step_breakdown_over_ranks(*a.simulation, spans_ranks_ ? options_.distributions->host()
                                                                          : DistributedRun::single_process().communicator(),
                                              m.time_per_step_s);
                state.ResumeTiming();
                // A clock that did not move gives no rate (N^2 / 0): a failure to say, not a number to record.
                if (!(m.time_per_step_s > 0) || !std::isfinite(m.time_per_step_s))
                    throw std::runtime_error(fmt::format("the time per step could not be measured ({} s for {} steps): raise steps",
                                                         m.time_per_step_s * m.steps, m.steps));
                state.SetIterationTime(m.time_per_step_s);
                const double ips = interactions_per_second(c.n, m.time_per_step_s);
                state.counters["time_per_step_s"] = m.time_per_step_s;
                state.counters["timed_steps"] = m.steps;
                state.counters["upload_s"] = m.upload_s;
                state.counters["download_s"] = m.download_s;
                state.counters["interactions_per_second"] = ips;
                if (a.limit > 0) state.counters["efficiency"] = ips / a.limit;
                add_energy(a, m, ips, state);
                if (breakdown) {
                    state.counters["step_compute_s"] = breakdown->compute_s;
                    state.counters["step_exposed_communication_s"] = breakdown->exposed_communication_s;
                    state.counters["step_imbalance_s"] = breakdown->imbalance_s;
                    state.counters["step_breakdown_steps"] = breakdown->steps;
                }
            }
        } catch (const std::exception& e) {
            a.error = e.what();
            end_ranks_on_failure(c, a.error);
            state.SkipWithError(a.error.c_str());
        }
        if (a.repetitions_done == c.repetitions) a.simulation.reset();  // free device memory early
    }

    // One repetition's energy counters and `energy` object (a collective: every rank reads its device's).
    void add_energy(Attempt& a, const Measurement& m, double ips, benchmark::State& state) {
        if (!m.energy) return;
        const std::vector<EnergyReading> readings = gather_energy_readings(
            spans_ranks_ ? options_.distributions->host() : DistributedRun::single_process().communicator(), *m.energy);
        const EnergyReading total = total_over_ranks(readings);
        a.energy[a.repetitions_done - 1] = energy_json(total, readings);
        if (!total.available) return;
        const EnergyFigures f = energy_figures(total, a.config->n, m.steps);
        state.counters["energy_j"] = f.energy_j;
        state.counters["energy_per_step_j"] = f.energy_per_step_j;
        state.counters["mean_power_w"] = f.mean_power_w;
        state.counters["interactions_per_joule"] = f.interactions_per_joule;
        if (f.mean_sm_clock_mhz > 0) state.counters["mean_sm_clock_mhz"] = f.mean_sm_clock_mhz;
        if (const double at_clock = efficiency_at_clock(ips, a.limit, a.limit_clock_hz, f.mean_sm_clock_mhz); at_clock > 0)
            state.counters["efficiency_at_clock"] = at_clock;
    }

    void prepare(Attempt& a) {
        const Configuration& c = *a.config;
        try {
            std::string gpu_pci_bus_id;
            if (c.variant->runs_on_gpu) {
                if (const auto gpu = registry_.gpu()) {
                    const GpuLimitInputs inputs = gpu_limit_inputs(*gpu, c.workload);
                    a.limit = gpu_interaction_limit(inputs);
                    a.limit_inputs = limit_inputs_json(inputs);
                    a.limit_clock_hz = inputs.sm_clock_hz;
                    gpu_pci_bus_id = gpu->pci_bus_id;
                }
            } else {
                a.cores = cpu_cores_used(*c.variant, c.tuning);
                const CpuLimitInputs inputs = host_cpu_limit_inputs(*a.cores, c.workload);
                a.limit = cpu_interaction_limit(inputs);
                a.limit_inputs = limit_inputs_json(inputs);
            }
            if (!std::isfinite(a.limit)) a.limit = 0;  // unknown, like a missing input
            // Over several ranks the limit is that of every rank's device (or cores) together.
            if (ranks() > 1) {
                a.limit *= ranks();
                if (a.limit_inputs.is_object()) a.limit_inputs["ranks"] = ranks();
                if (a.cores) *a.cores *= ranks();
            }
            a.energy_meter = make_device_meter(c.variant->runs_on_gpu, gpu_pci_bus_id, options_.read_energy);
            a.initial = generate_state(c.workload, c.n, spec_.seed);
            const Problem problem{.n = c.n, .d = c.d, .constants = spec_.constants, .workload = c.workload,
                                  .distribution = options_.distributions ? options_.distributions->of(*c.variant) : Distribution{}};
            a.simulation = c.variant->create(problem, c.tuning);
            const std::vector<int> steps = ReferenceSolution::checked_steps(c.n, {c.verify_steps}, spec_.verification);
            const auto snapshots = snapshots_at(*a.simulation, a.initial, steps, problem.distribution);
            // Rank 0 alone holds the reference and checks (it writes the entries).
            if (writes_) {
                // One reference per initial state, integrator and step count: never shared across workloads.
                auto& reference = references_[ReferenceKey{c.n, c.verify_steps, c.workload, spec_.seed}];
                if (!reference)
                    reference = std::make_unique<ReferenceSolution>(a.initial, spec_.constants, c.workload.integrator,
                                                                    std::vector<int>{c.verify_steps}, spec_.verification);
                const Snapshot& last = snapshots.back();
                a.check = reference->check(last.steps, last.state, last.map, c.d, spec_.verification.overrides);
            }
        } catch (const std::exception& e) {
            a.error = e.what();
            end_ranks_on_failure(c, a.error);
            a.simulation.reset();
        }
    }

    ordered_json common_fields(const Attempt& a) const {
        const Configuration& c = *a.config;
        ordered_json e;
        e["variant"] = c.variant->id;
        e["backend"] = c.variant->backend;
        e["execution_space"] = c.variant->execution_space;
        e["device"] = c.variant->runs_on_gpu ? "gpu" : "cpu";
        e["reproducibility"] = to_string(c.variant->reproducibility);
        e["tuning"] = c.tuning;
        e["n"] = c.n;
        e["d"] = c.d;
        e["dim"] = c.workload.dim;
        e["precision"] = to_string(c.workload.precision);
        e["integrator"] = to_string(c.workload.integrator);
        e["steps"] = c.steps;
        e["warmup_steps"] = c.warmup_steps;
        if (c.min_time_s > 0) e["min_time_s"] = c.min_time_s;
        e["ranks"] = ranks();
        if (!c.variant->runs_on_gpu) {
            const HostThreading threading = host_threading(*c.variant, c.tuning);
            e["host_threads"] = threading.threads;
            e["thread_binding"] = threading.binding;
        }
        return e;
    }

    void add_check_fields(const Attempt& a, ordered_json& e) const {
        if (!a.check) return;
        e["verification"] = to_string(a.check->kind);
        e["verify_steps"] = a.check->steps;
        e["max_pos_err"] = json_number_or_null(a.check->errors.max_pos_err);
        e["rms_pos_err"] = json_number_or_null(a.check->errors.rms_pos_err);
        e["max_vel_err"] = json_number_or_null(a.check->errors.max_vel_err);
        if (a.check->errors.float32_sum_vel_err > 0)  // a sampled float32 check: the index-order shadow's velocity error
            e["float32_sum_vel_err"] = a.check->errors.float32_sum_vel_err;
        // The verdict and the limits it came from (docs/verification.md, "The rounding rule").
        e["verdict"] = to_string(a.check->verdict);
        e["pos_err_limit"] = json_number_or_null(a.check->errors.pos_err_limit);
        e["vel_err_limit"] = json_number_or_null(a.check->errors.vel_err_limit);
        e["pos_limit_source"] = to_string(a.check->pos_limit_source);
        e["vel_limit_source"] = to_string(a.check->vel_limit_source);
        e["pos_rounding_multiple"] = json_number_or_null(a.check->errors.pos_rounding_multiple);
        e["vel_rounding_multiple"] = json_number_or_null(a.check->errors.vel_rounding_multiple);
        e["pos_shadow_err"] = json_number_or_null(a.check->errors.pos_shadow_err);
        e["vel_shadow_err"] = json_number_or_null(a.check->errors.vel_shadow_err);
        e["rounding_amplification"] = json_number_or_null(a.check->errors.rounding_amplification);
        e["map_diff"] = json_number_or_null(a.check->errors.map_diff);
        e["map_ambiguous_bodies"] = a.check->errors.map_ambiguous_bodies;
        e["map_explained_counts"] = a.check->errors.map_explained_counts;
        e["map_unexplained_counts"] = a.check->errors.map_unexplained_counts;
    }

    // The entries of the configuration in progress, appended and written; then its summary line.
    void finish_current() {
        if (current_ == kNone) return;
        Attempt& a = attempts_[current_];
        const Configuration& c = *a.config;
        current_ = kNone;
        reporter_->sink = nullptr;
        if (a.interrupted) {  // some repetitions missing: nothing recorded, --resume runs it again
            a.runs.clear();
            a.simulation.reset();
            a.initial = HostState{};
            progress_->end("interrupted: not recorded");
            return;
        }
        bool failed_run = !a.error.empty();
        for (const Run& r : a.runs) failed_run |= run_failed(r);
        if (failed_run && a.error.empty())
            for (const Run& r : a.runs)
                if (run_failed(r)) a.error = run_failure_message(r);

        auto& out = document_["benchmarks"];
        std::string outcome;
        if (failed_run) {
            ordered_json e;
            e["name"] = c.name;
            e["family_index"] = a.family_index;
            e["per_family_instance_index"] = 0;
            e["run_name"] = c.name;
            e["run_type"] = "iteration";
            e["repetitions"] = c.repetitions;
            e["repetition_index"] = 0;
            e["threads"] = 1;
            e["iterations"] = 0;
            e["error_occurred"] = true;
            e["error_message"] = a.error;
            e.update(common_fields(a));
            add_check_fields(a, e);
            e["verified"] = false;
            e["error"] = a.error;
            out.push_back(e);
            ++summary_.failed;
            outcome = "FAILED: " + a.error;
        } else {
            const bool verified = a.check && a.check->passed;
            const std::string verification_error =
                !a.check ? ""
                : a.check->verdict == Verdict::inconclusive ? "verification inconclusive: " + a.check->failure
                                                             : "verification failed: " + a.check->failure;
            ordered_json summary_entry;  // the median (or the one repetition): what the progress line shows
            for (const Run& r : a.runs) {
                const bool aggregate = r.run_type == Run::RT_Aggregate;
                const bool ratio = aggregate && r.aggregate_unit == benchmark::kPercentage;
                ordered_json e;
                e["name"] = aggregate ? c.name + "_" + r.aggregate_name : c.name;
                e["family_index"] = a.family_index;
                e["per_family_instance_index"] = 0;
                e["run_name"] = c.name;
                e["run_type"] = aggregate ? "aggregate" : "iteration";
                e["repetitions"] = c.repetitions;
                if (!aggregate) e["repetition_index"] = r.repetition_index;
                e["threads"] = 1;
                e["iterations"] = static_cast<long>(r.iterations);
                if (aggregate) {
                    e["aggregate_name"] = r.aggregate_name;
                    e["aggregate_unit"] = ratio ? "percentage" : "time";
                }
                // As Google Benchmark writes them: a ratio unscaled, times in time_unit (CPU time per step).
                const auto counter = [&](const char* name) {
                    const auto it = r.counters.find(name);
                    return it == r.counters.end() ? ordered_json(nullptr) : json_number_or_null(it->second.value);
                };
                const auto timed = r.counters.find("timed_steps");  // more than c.steps under min_time_s
                const double timed_steps = timed == r.counters.end() || !(timed->second.value > 0) ? c.steps : timed->second.value;
                e["real_time"] = ratio ? r.real_accumulated_time : r.GetAdjustedRealTime();
                e["cpu_time"] = ratio ? r.cpu_accumulated_time : r.GetAdjustedCPUTime() / timed_steps;
                e["time_unit"] = "us";
                e.update(common_fields(a));
                for (const char* name : {"time_per_step_s", "timed_steps", "upload_s", "download_s", "interactions_per_second", "efficiency"})
                    e[name] = counter(name);
                // The per-step breakdown where the model records one (docs/scaling.md); optional fields,
                // left out where undefined (the cv aggregate of a breakdown that is 0 in every run).
                for (const char* name : {"step_compute_s", "step_exposed_communication_s", "step_imbalance_s", "step_breakdown_steps"})
                    if (r.counters.count(name))
                        if (ordered_json value = counter(name); !value.is_null()) e[name] = value;
                // Energy (docs/results-format.md): the figures where the meter read, the meter's account per repetition.
                for (const char* name : {"energy_j", "energy_per_step_j", "mean_power_w", "interactions_per_joule",
                                         "mean_sm_clock_mhz", "efficiency_at_clock"})
                    if (r.counters.count(name))
                        if (ordered_json value = counter(name); !value.is_null()) e[name] = value;
                if (const auto energy = a.energy.find(static_cast<int>(r.repetition_index)); !aggregate && energy != a.energy.end())
                    e["energy"] = energy->second;
                e["efficiency_limit"] = a.limit > 0 ? json_number_or_null(a.limit) : ordered_json(nullptr);
                e["efficiency_limit_inputs"] = a.limit_inputs;
                e["cores_used"] = a.cores ? ordered_json(*a.cores) : ordered_json(nullptr);
                add_check_fields(a, e);
                e["verified"] = verified;
                if (!verified) e["error"] = verification_error;
                if ((aggregate && r.aggregate_name == "median") || (!aggregate && c.repetitions == 1)) summary_entry = e;
                out.push_back(e);
            }
            verified ? ++summary_.finished : ++summary_.failed;
            outcome = timing_summary(summary_entry);
        }
        a.runs.clear();
        a.simulation.reset();
        a.initial = HostState{};  // a long matrix keeps no state of finished configurations
        write_document();
        progress_->end(outcome);
    }

    static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
    const Registry& registry_;
    const MatrixSpec& spec_;
    const MatrixRunOptions& options_;
    bool spans_ranks_;
    bool writes_;          // rank 0 (or the single process): the file and the progress
    std::ostream silent_{nullptr};  // the other ranks' progress goes nowhere
    std::ostream& log_;
    ordered_json document_;
    std::set<std::string> done_;
    std::vector<Attempt> attempts_;
    struct ReferenceKey {
        std::size_t n;
        int steps;
        Workload workload;
        std::uint64_t seed;
        auto operator<=>(const ReferenceKey&) const = default;
    };
    std::map<ReferenceKey, std::unique_ptr<ReferenceSolution>> references_;
    std::optional<Progress> progress_;
    CollectingReporter* reporter_ = nullptr;
    std::size_t current_ = kNone;
    int agreed_stop_signal_ = 0;  // the stop signal every rank agreed on, 0 while none
    MatrixRunSummary summary_;
};

}  // namespace

MatrixRunSummary run_matrix(const Registry& registry, const MatrixSpec& spec, const MatrixRunOptions& options) {
    return MatrixRunner(registry, spec, options).run();
}

}  // namespace nbody
