#pragma once
// The common variant interface (SPEC §4). A variant is a factory of Simulations plus metadata;
// each programming model only implements Simulation and registers descriptors.
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "nbody/bodies.hpp"
#include "nbody/communicator.hpp"
#include "nbody/physics.hpp"

namespace nbody {

// One simulation over several ranks (docs/scaling.md). The default is one process holding every
// body, which every variant runs; only variants whose descriptor says `distributed` accept more.
struct Distribution {
    Communicator* host = nullptr;          // the ranks; nullptr: a single process
    DeviceCommunicator* device = nullptr;  // GPU variants' device collectives (NCCL); nullptr: none
    int ranks() const { return host ? host->size() : 1; }
    int rank() const { return host ? host->rank() : 0; }
    bool spans_ranks() const { return ranks() > 1; }
};

struct Problem {
    std::size_t n = 0;
    int d = 0;
    PhysicsConstants constants;
    Workload workload;  // dimension, precision, integrator (SPEC §2)
    Distribution distribution;
};

// The blocks of `problem`'s bodies over its ranks, and the one this rank owns (all N without ranks).
BlockDecomposition decomposition_of(const Problem& problem);
BodyBlock owned_block(const Problem& problem);

// One simulation of one problem by one variant, holding its state wherever the model keeps it.
// The state crosses the interface in the problem's precision and dimension: a model implements
// the overloads of the precisions it supports (SimulationOf below does the dispatch).
//
// Over several ranks (problem.distribution.spans_ranks(), docs/scaling.md) every rank uploads the
// same whole initial state; each step a rank integrates only its owned_block(), the positions of
// all N bodies are gathered right after the drift, and every rank computes the activity map of all
// N. download() then hands back every position and mass and the owned block's velocities; the
// other blocks' velocities are unspecified (the harness gathers them over the host communicator).
class Simulation {
public:
    virtual ~Simulation() = default;
    // Takes the initial host state (the upload, timed apart from the steps).
    void upload(const HostState& initial) {
        std::visit([this](const auto& bodies) { upload(bodies); }, initial);
    }
    // Advances `steps` steps; the activity map is produced after every step.
    // May return before device work finishes: call synchronize() before reading a clock.
    virtual void advance(int steps) = 0;
    virtual void synchronize() {}
    // This rank's time per step split by device events (docs/scaling.md, "Per-step breakdown"),
    // the mean of `steps` further steps, each synchronised; nullopt where the model records none.
    // Advances the state: call it after the download of the result.
    struct StepBreakdown {
        double step_s = 0.0;                    // first to last event of the step
        double exposed_communication_s = 0.0;   // the compute stream waiting for the exchange
        int steps = 0;

        // The mean of `steps` steps, each run and timed by `measure_step`, which returns its
        // {step, exposed communication} seconds.
        template <class MeasureStep>
        static StepBreakdown mean_of(int steps, MeasureStep measure_step) {
            StepBreakdown mean;
            for (; mean.steps < steps; ++mean.steps) {
                const std::pair<double, double> step = measure_step();
                mean.step_s += step.first;
                mean.exposed_communication_s += step.second;
            }
            if (mean.steps > 0) {
                mean.step_s /= mean.steps;
                mean.exposed_communication_s /= mean.steps;
            }
            return mean;
        }
    };
    virtual std::optional<StepBreakdown> step_breakdown(int steps) {
        (void)steps;
        return std::nullopt;
    }
    // Hands back positions, velocities (masses unchanged) and the activity map (D*D floats) of
    // the current positions (after upload and before any step: of the initial positions), in the
    // precision `state` holds on entry (the problem's).
    void download(HostState& state, std::vector<float>& activity_map) {
        std::visit([&](auto& bodies) { download(bodies, activity_map); }, state);
    }

    virtual void upload(const BodiesT<float>& initial) { wrong_precision("float32", initial.size()); }
    virtual void upload(const BodiesT<double>& initial) { wrong_precision("float64", initial.size()); }
    virtual void download(BodiesT<float>& state, std::vector<float>&) { wrong_precision("float32", state.size()); }
    virtual void download(BodiesT<double>& state, std::vector<float>&) { wrong_precision("float64", state.size()); }

private:
    [[noreturn]] static void wrong_precision(const char* precision, std::size_t) {
        throw std::logic_error(std::string("this simulation was not created for a ") + precision + " state");
    }
};

// A Simulation of one precision: implements the typed overloads of that precision only.
template <class Real>
class SimulationOf : public Simulation {
public:
    using Simulation::download;
    using Simulation::upload;
    void upload(const BodiesT<Real>& initial) override = 0;
    void download(BodiesT<Real>& state, std::vector<float>& activity_map) override = 0;
};

// A tuning parameter: either a list of allowed values or an inclusive integer range.
struct TuningParameter {
    std::string name;
    std::string description;
    std::string default_value;
    std::vector<std::string> allowed_values;  // empty: integer in [min_value, max_value]
    long min_value = 0;
    long max_value = 0;
    // Values the parameter defines that this machine cannot hold: refused here with that reason,
    // not as a misspelling (a matrix skips them with a note, and stops on a value nothing defines).
    std::vector<std::string> values_elsewhere = {};  // allowed on other machines (an instruction set this CPU lacks)
    bool larger_elsewhere = false;                   // integers above max_value hold on larger machines (threads)
};

// Whether `value` is one `parameter` defines, on this machine or another.
bool defines_value(const TuningParameter& parameter, const std::string& value);
// What `parameter` defines, for a message: "auto|private|atomic" or "an integer in [1, 2]" ("... >= 1").
std::string defined_values_text(const TuningParameter& parameter);

using TuningValues = std::map<std::string, std::string>;

struct Availability {
    bool available = true;
    std::string reason;  // why not, when unavailable
};

// How closely two runs of a variant from the same state agree (docs/results-format.md). The class
// holds whatever the variant's tunings: a tuning that can split a sum over atomics makes the
// variant run-to-run even where its default does not.
enum class Reproducibility {
    run_to_run,   // atomics or dynamic scheduling: runs differ within rounding
    order_fixed,  // same bits on one device with the same tunings and thread count
    bitwise,      // same bits every run on one device, whatever its thread count
};

// "run-to-run", "order-fixed", "bitwise": the names `list`, results files and reports use.
inline const char* to_string(Reproducibility reproducibility) {
    switch (reproducibility) {
        case Reproducibility::bitwise: return "bitwise";
        case Reproducibility::order_fixed: return "order-fixed";
        case Reproducibility::run_to_run: return "run-to-run";
    }
    return "run-to-run";
}

struct VariantDescriptor {
    std::string id;               // "<backend>.<variant>[@<space>]"
    std::string backend;          // serial, omp, cuda, kokkos
    std::string execution_space;  // host, openmp, cuda, serial ...; "device" kinds need a GPU
    std::string description;
    std::vector<TuningParameter> tunings;
    std::size_t max_n = 0;        // 0: no cap; otherwise the largest N it accepts (memory)
    bool runs_on_gpu = false;     // selects the GPU or CPU efficiency limit
    bool distributed = false;     // runs one simulation over several ranks (Problem::distribution)
    WorkloadSupport workloads;    // default: 2d/fp32/euler only
    std::function<Availability()> availability;
    std::function<std::unique_ptr<Simulation>(const Problem&, const TuningValues&)> create;
    // The fraction of its device's efficiency limit (SPEC §3) this variant is known to reach at large
    // N, conservatively (about 0.6 of the lowest its committed results show at N >= 65536): the rate
    // of the run-time estimate (harness/matrix/estimate.hpp). 0: its model's default.
    double expected_efficiency = 0;
    // On a GPU, below this many bodies its rate falls in proportion to N (too few threads or blocks
    // to fill the device); 0: the model default (65536). Fitted with expected_efficiency and
    // step_overhead_s to the GPU sweep of docs/estimates.md.
    double full_rate_bodies = 0;
    // On a GPU, the seconds a 2D Euler step costs besides its interactions (launches, synchronisation,
    // the host's share), scaled by dim / 2 and doubled for leapfrog's two phases; 0: the model default.
    double step_overhead_s = 0;
    // Declared from the code of its pull: each body's sum in a fixed order by one thread is bitwise;
    // a grouping that follows the thread count, block or device is order-fixed; float atomics or
    // dynamic scheduling are run-to-run (the default, the weakest promise).
    Reproducibility reproducibility = Reproducibility::run_to_run;
};

// The workload as a fresh state of this precision and dimension: an empty BodiesT<Real>(n, dim).
HostState empty_state(const Workload& workload, std::size_t n);

// UsageError when `variant` does not run `workload` ("... supports dim 2, fp32, euler").
void require_workload(const VariantDescriptor& variant, const Workload& workload);

// Parses an integer tuning value that resolve_tuning() already validated.
long tuning_int(const TuningValues& values, const std::string& name);

// The persistent kernels' automatic group size (cuda.persistent's warps per block, kokkos.persistent's
// threads per team): the fewest per slot, a power of two up to `most` (at least 1), so that `slots`
// slots of that many hold n bodies, one each.
inline int fewest_per_slot_covering(long n, int slots, int most) {
    int size = 1;
    while (2 * size <= most && static_cast<long>(size) * slots < n) size *= 2;
    return size;
}

}  // namespace nbody
