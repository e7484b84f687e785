#pragma once
// Runs one configuration of one variant and times it the way SPEC §3 says.
#include <cstddef>
#include <functional>
#include <vector>

#include "nbody/variant.hpp"

namespace nbody {

struct Measurement {
    double upload_s = 0.0;         // initial state to wherever the variant keeps it
    double time_per_step_s = 0.0;  // wall time of the timed steps / steps, device synchronised
    double download_s = 0.0;       // state and map back to the host
    HostState final_state;         // after exactly `steps` steps from the initial state, in its precision
    std::vector<float> activity_map;
};

// Called right before the timed steps start and right after they end (device synchronised), so a
// benchmark library's own clocks can cover exactly that phase.
struct TimedPhaseHooks {
    std::function<void()> on_start;
    std::function<void()> on_stop;
};

// Upload (timed), `warmup` steps, upload again (so the result is `steps` steps from `initial`),
// `steps` timed steps, synchronise, download (timed).
Measurement measure_variant(Simulation& simulation, const HostState& initial, int warmup, int steps,
                            const TimedPhaseHooks& hooks = {});

// Interactions per second of a problem of n bodies (N^2 per step, SPEC §3).
double interactions_per_second(std::size_t n, double time_per_step_s);

}  // namespace nbody
