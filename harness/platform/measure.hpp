#pragma once
// Runs one configuration of one variant and times it the way SPEC §3 says.
#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "nbody/variant.hpp"
#include "platform/energy.hpp"

namespace nbody {

struct Measurement {
    double upload_s = 0.0;         // initial state to wherever the variant keeps it
    int steps = 0;                 // timed steps done (more than asked when a minimum timed phase asked for them)
    double time_per_step_s = 0.0;  // wall time of the timed steps / steps, device synchronised
    double download_s = 0.0;       // state and map back to the host
    HostState final_state;         // after exactly `steps` steps from the initial state, in its precision
    std::vector<float> activity_map;
    std::optional<EnergyReading> energy;  // over the timed phase, when the hooks held a meter
};

// Told the steps done so far (warm-up and timed steps counted together), so a long run can show
// progress. When set, the steps are advanced in chunks of about `chunk_seconds` each (the first
// chunk is one step) with the device synchronised after each; the timed phase is still one clock
// from its first step to its last synchronisation. Leave it unset for short runs: every chunk
// adds a synchronisation.
struct StepProgressHook {
    std::function<void(int done, int total, bool timed)> on_steps;
    double chunk_seconds = 1.0;
};

// Called right before the timed steps start and right after they end (device synchronised), so a
// benchmark library's own clocks can cover exactly that phase.
struct TimedPhaseHooks {
    std::function<void()> on_start;
    std::function<void()> on_stop;
    StepProgressHook progress;
    // When > 0, the timed phase goes on with more steps (at the rate measured so far) until it lasts
    // this long: at small N one launch and a few synchronisations then stay a small fraction of it.
    double min_timed_seconds = 0.0;
    // Over several ranks every rank must take the same steps: given this rank's count of further
    // steps (0: the phase is long enough), returns the count every rank takes (rank 0's).
    std::function<int(int)> agreed_steps;
    // Read over the timed phase: started before on_start (the meter may wait for its counter), and
    // stopped right after the last synchronisation, before on_stop.
    EnergyMeter* energy_meter = nullptr;
};

// Advances `steps` steps: at once without a hook, otherwise in chunks reported to the hook with
// `done_before` steps already done of `total`.
void advance_reporting(Simulation& simulation, int steps, const StepProgressHook& hook, int done_before, int total,
                       bool timed);

// Upload (timed), `warmup` steps, upload again (so the result is `steps` steps from `initial`),
// `steps` timed steps (or more, see min_timed_seconds), synchronise, download (timed).
Measurement measure_variant(Simulation& simulation, const HostState& initial, int warmup, int steps,
                            const TimedPhaseHooks& hooks = {});

// The timed steps that make a phase of at least `min_seconds` at `seconds_per_step`: never fewer
// than `steps`, at most 2^30.
int steps_for_min_time(int steps, double seconds_per_step, double min_seconds);

// A state of `like`'s size, dimension and precision (what download() fills in that precision).
HostState empty_state_like(const HostState& like);

// Interactions per second of a problem of n bodies (N^2 per step, SPEC §3).
double interactions_per_second(std::size_t n, double time_per_step_s);

}  // namespace nbody
