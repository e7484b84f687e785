#pragma once
// Runs one configuration of one variant and times it the way SPEC §3 says.
#include <cstddef>
#include <vector>

#include "nbody/variant.hpp"

namespace nbody {

struct Measurement {
    double upload_s = 0.0;         // initial state to wherever the variant keeps it
    double time_per_step_s = 0.0;  // wall time of the timed steps / steps, device synchronised
    double download_s = 0.0;       // state and map back to the host
    Bodies final_state;            // after exactly `steps` steps from the initial state
    std::vector<float> activity_map;
};

// Upload (timed), `warmup` steps, upload again (so the result is `steps` steps from `initial`),
// `steps` timed steps, synchronise, download (timed).
Measurement measure_variant(Simulation& simulation, const Bodies& initial, int warmup, int steps);

// Interactions per second of a problem of n bodies (N^2 per step, SPEC §3).
double interactions_per_second(std::size_t n, double time_per_step_s);

}  // namespace nbody
