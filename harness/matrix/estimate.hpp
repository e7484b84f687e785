#pragma once
// What a run will cost, known before anything is allocated (docs/estimates.md): time from a rate
// in interactions per second (N^2 per step, SPEC §3) and memory from the sizes of the state and
// the map. `run`, `verify` and `matrix` refuse (exit 2) what exceeds the limits unless --allow-long.
//
// The rate is modelled first: the device's efficiency limit (host_info.hpp) times a conservative
// efficiency: the variant's own where its descriptor declares one (what it is known to reach, with
// a margin), else one per programming model, below what every variant of that model reached at
// N >= 4096 in the committed results. When the modelled time exceeds the limit, the variant's own rate is
// measured here on a small problem (a fraction of a second) before refusing, so a refusal never
// rests on the model alone.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "matrix/matrix.hpp"
#include "nbody/registry.hpp"
#include "nbody/variant.hpp"

namespace nbody {

struct Rate {
    double interactions_per_second = 0;
    std::string source;  // "modelled: ..." or "measured here: ...", for messages
};

// The modelled rate of `variant` with `tuning` in `workload` at N bodies on this machine: the device's
// limit times the variant's declared expected efficiency (VariantDescriptor::expected_efficiency;
// on a GPU scaled down below its full_rate_bodies) or else its model's conservative one. n = 0: large N.
Rate modelled_rate(const VariantDescriptor& variant, const TuningValues& tuning, const Workload& workload,
                   const Registry& registry, std::size_t n = 0);

// The fraction of its device's efficiency limit the estimate assumes `variant` reaches at N bodies
// (n = 0: large N), the factor of modelled_rate.
double assumed_efficiency(const VariantDescriptor& variant, std::size_t n = 0);

// The variant's rate measured here on N = min(n, 1024 on the CPU, 16384 on a GPU) with a 16 x 16
// map: timed steps until about 0.2 s have passed (at most 64). Slower per interaction than a large
// problem (fixed costs weigh more), so an estimate from it errs long. std::nullopt when the variant
// fails on it.
std::optional<Rate> measured_rate(const VariantDescriptor& variant, const TuningValues& tuning, const Workload& workload,
                                  const PhysicsConstants& constants, std::size_t n);

// Seconds of `steps` steps of N bodies and a D x D map in `workload` at `rate`, over `runs` runs
// (uploads and downloads): per step N^2 / rate, a fixed cost (on a GPU the variant's step_overhead_s,
// growing with the dimension and the integrator's phases) and, where `tuning` recounts the map each
// step, every cell; per run the map's allocation, upload count and download (every cell once).
double steps_seconds(const VariantDescriptor& variant, const TuningValues& tuning, const Workload& workload, std::size_t n,
                     int d, double steps, double rate, int runs = 1);

// Seconds the host reference (verification.hpp) needs for `max_steps` steps of N bodies (full check)
// or the sampled first-step check above `full_reference_max_n`.
double reference_seconds(const Workload& workload, std::size_t n, int max_steps, std::size_t full_reference_max_n,
                         std::size_t sample_bodies);

// Bytes a run holds at its peak: on the host the initial, working and final states, the maps and
// (with `reference_step_counts` > 0) the reference's states; on the device (GPU variants) the state,
// its pulls and the map.
double host_bytes(const VariantDescriptor& variant, const Workload& workload, std::size_t n, int d,
                  int reference_step_counts);
double device_bytes(const VariantDescriptor& variant, const Workload& workload, std::size_t n, int d);

struct CostLimits {
    double max_seconds = 3600;           // --time-limit
    double host_bytes_available = 0;     // 0: unknown, not checked
    double device_bytes_available = 0;   // 0: unknown, not checked
    bool allow = false;                  // --allow-long: report, never refuse
    // Asked only when a cost needs device memory and device_bytes_available is 0 (a GPU probe
    // initialises the device: a CPU-only run should not pay for it). Returns 0 when unknown.
    std::function<double()> device_memory_probe = nullptr;
};

// This machine's limits: MemAvailable of /proc/meminfo (or NBODY_HOST_MEMORY_BYTES), the device
// memory from NBODY_DEVICE_MEMORY_BYTES or else the GPU the registry's probe finds.
CostLimits machine_limits(double max_seconds, bool allow);

struct Cost {
    double seconds = 0;
    double host_bytes = 0;
    double device_bytes = 0;
    std::string rate_source;
};

// Why `cost` exceeds `limits` ("" when it does not): which limit, by how much.
std::string excess(const Cost& cost, const CostLimits& limits);

// What each configuration costs (estimate.hpp): its repetitions, warm-up and verification steps, and
// the host reference when it is the first of the list to need it. `measure_when_over`: a
// configuration whose modelled time exceeds the limit is estimated again from its variant's rate
// measured here (once per variant, tuning and workload).
struct ConfigurationCost {
    Cost cost;
    bool over_limit = false;
    std::string why;  // excess(cost, limits)
};
std::vector<ConfigurationCost> estimate_configurations(const Registry& registry, const MatrixSpec& spec,
                                                       const std::vector<Configuration>& configurations,
                                                       const CostLimits& limits, bool measure_when_over,
                                                       bool read_energy = true);

// "0.4 s", "12 s", "3 min 20 s", "2 h 05 min", "203 days".
std::string duration_text(double seconds);
// "512 MB", "3.2 GB".
std::string bytes_text(double bytes);

}  // namespace nbody
