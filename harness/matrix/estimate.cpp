#include "matrix/estimate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "io/io.hpp"
#include "nbody/errors.hpp"
#include "nbody/generator.hpp"
#include "platform/energy.hpp"
#include "platform/host_info.hpp"
#include "platform/measure.hpp"

namespace nbody {

namespace {

// A GPU variant that declares no full_rate_bodies fills the device from about this many bodies on;
// below it its rate falls with N (fewer blocks than the SMs hold), so its efficiency is scaled by
// N / this.
constexpr double kGpuFullRateBodies = 65536;

// When the device's facts are unknown (a GPU variant without a GPU, a CPU clock not found): a limit
// below that of any machine the suite was measured on, so the estimate errs long.
constexpr double kUnknownGpuLimit = 1e12;      // interactions/s, fp32; fp64 a quarter of it
constexpr double kUnknownCpuCoreLimit = 2e9;   // interactions/s per core, fp32; fp64 half of it

// Per step besides the N^2 interactions: on a GPU launches and synchronisation, the variant's
// declared step_overhead_s (2D Euler), more kernels or calls in 3D and in leapfrog's two phases; on
// the CPU the fork and join of its threads, longer with more of them (measured: docs/estimates.md).
double fixed_step_seconds(const VariantDescriptor& variant, const TuningValues& tuning, const Workload& workload) {
    if (variant.runs_on_gpu) {
        const double overhead = variant.step_overhead_s > 0 ? variant.step_overhead_s : 2e-5;
        return overhead * workload.dim / 2.0 * (workload.integrator == Integrator::leapfrog ? 2.0 : 1.0);
    }
    return 5e-6 + 2e-6 * cpu_cores_used(variant, tuning);
}

// Whether a step recounts every cell of the map (clears, counts, scales): a variant without a `map`
// tuning, or one asked for a recount strategy. An incremental map (`incremental`, OpenMP's `auto`)
// rewrites only the cells that bodies left or entered.
bool recounts_map(const TuningValues& tuning) {
    const auto it = tuning.find("map");
    return it == tuning.end() || (it->second != "incremental" && it->second != "auto");
}

// Seconds per map cell (docs/estimates.md has the measurements). A recount each step: on the
// host about 1 ns a cell (clear, count, scale), 7 ns in serial.reference's reference code; on a GPU
// at its memory's speed. Once per run, where the map's buffers are allocated and first touched,
// counted at the upload, downloaded and copied: about 10 ns a cell on the host, 20 in
// serial.reference; a GPU variant's host side, a few, unless it has no map strategies (the
// directive models), whose counts and map are host arrays mapped to the device: about 10 ns.
double recount_seconds_per_cell(const VariantDescriptor& variant) {
    if (variant.runs_on_gpu) return 1e-11;
    return variant.backend == "serial" ? 7e-9 : 1e-9;
}
double once_seconds_per_cell(const VariantDescriptor& variant) {
    if (variant.runs_on_gpu) {
        const bool map_strategies = std::any_of(variant.tunings.begin(), variant.tunings.end(),
                                                [](const TuningParameter& t) { return t.name == "map"; });
        return map_strategies ? 4e-9 : 1.2e-8;
    }
    return variant.backend == "serial" ? 2e-8 : 1e-8;
}

// The host reference's rate (interactions/s): double for fp32 workloads, long double (x87, no SIMD)
// for fp64 ones, on every core of this host.
double reference_rate(const Workload& workload) {
    const CpuLimitInputs inputs = host_cpu_limit_inputs(host_cpu_info().physical_cores, {workload.dim, Precision::fp64, workload.integrator});
    double limit = cpu_interaction_limit(inputs);
    if (!(limit > 0) || !std::isfinite(limit)) limit = kUnknownCpuCoreLimit / 2 * host_cpu_info().physical_cores;
    // Measured on a 2-core AVX-512 host, one thread: 0.078 (double) and 0.020 (long double) of a core's limit.
    return limit * (workload.precision == Precision::fp32 ? 0.06 : 0.018);
}

double fields(const Workload& workload) { return 2.0 * workload.dim + 1.0; }
double real_bytes(const Workload& workload) { return workload.precision == Precision::fp32 ? 4.0 : 8.0; }

// A memory size from the environment, 0 when unset; a value that is set but is no positive whole
// number of bytes is refused (ignoring it would check against other memory than the user said).
double env_bytes(const char* name) {
    const char* text = std::getenv(name);
    if (text == nullptr) return 0;
    constexpr std::uint64_t largest = std::numeric_limits<std::uint64_t>::max();
    const auto value = parse_decimal(text, 1, largest);
    if (!value)
        throw UsageError(fmt::format("{}: must be a whole number of bytes in [1, {}], got {}", name, largest, quoted_excerpt(text)));
    return static_cast<double>(*value);
}

}  // namespace

// The one its descriptor declares (VariantDescriptor::expected_efficiency), else its model's
// (docs/estimates.md has the table).
double assumed_efficiency(const VariantDescriptor& variant, std::size_t n) {
    if (variant.expected_efficiency > 0) {
        const double full = variant.full_rate_bodies > 0 ? variant.full_rate_bodies : kGpuFullRateBodies;
        const double fill = variant.runs_on_gpu && n > 0 ? std::min(1.0, static_cast<double>(n) / full) : 1.0;
        return variant.expected_efficiency * fill;
    }
    if (variant.backend == "serial") return 0.035;  // serial.reference reached 0.033 (N = 4096, 16-core host), 0.043 (2-core)
    if (variant.backend == "cuda") return 0.003;
    return 0.01;  // omp, kokkos, anything else
}

Rate modelled_rate(const VariantDescriptor& variant, const TuningValues& tuning, const Workload& workload,
                   const Registry& registry, std::size_t n) {
    const double efficiency = assumed_efficiency(variant, n);
    double limit = 0;
    std::string device;
    if (variant.runs_on_gpu) {
        if (const auto gpu = registry.gpu()) {
            limit = gpu_interaction_limit(gpu_limit_inputs(*gpu, workload));
            device = gpu->name;
        }
        if (!(limit > 0) || !std::isfinite(limit)) {
            limit = kUnknownGpuLimit * (workload.precision == Precision::fp32 ? 1.0 : 0.25) * 9.0 / flops_per_interaction(workload);
            device = "an assumed GPU";
        }
    } else {
        const int cores = cpu_cores_used(variant, tuning);
        limit = cpu_interaction_limit(host_cpu_limit_inputs(cores, workload));
        device = fmt::format("{} core{} of this CPU", cores, cores == 1 ? "" : "s");
        if (!(limit > 0) || !std::isfinite(limit)) {
            limit = kUnknownCpuCoreLimit * cores * (workload.precision == Precision::fp32 ? 1.0 : 0.5) * 9.0 /
                    flops_per_interaction(workload);
            device += " (clock unknown)";
        }
    }
    const double rate = limit * efficiency;
    return {rate, fmt::format("modelled: {:.2g} interactions/s, {:g}% of the limit of {}", rate, 100 * efficiency, device)};
}

std::optional<Rate> measured_rate(const VariantDescriptor& variant, const TuningValues& tuning, const Workload& workload,
                                  const PhysicsConstants& constants, std::size_t n) {
    const std::size_t n_small = std::min<std::size_t>(n, variant.runs_on_gpu ? 16384 : 1024);
    const int d_small = 16;
    try {
        const HostState initial = generate_state(workload, n_small, kDefaultSeed);
        auto simulation = variant.create(
            Problem{.n = n_small, .d = d_small, .constants = constants, .workload = workload, .distribution = {}}, tuning);
        Measurement m = measure_variant(*simulation, initial, 1, 1);
        int steps = 1;
        if (m.time_per_step_s < 0.05) {  // repeat until the clock has seen about 0.2 s
            steps = static_cast<int>(std::clamp(0.2 / std::max(m.time_per_step_s, 1e-7), 1.0, 64.0));
            m = measure_variant(*simulation, initial, 0, steps);
        }
        if (!(m.time_per_step_s > 0) || !std::isfinite(m.time_per_step_s)) return std::nullopt;
        const double nn = static_cast<double>(n_small) * static_cast<double>(n_small);
        const double rate = nn / m.time_per_step_s;
        return Rate{rate, fmt::format("measured here: {:.2g} interactions/s at N={} ({} step{})", rate, n_small, steps,
                                      steps == 1 ? "" : "s")};
    } catch (const std::exception&) {
        return std::nullopt;  // the run itself will report the failure
    }
}

double steps_seconds(const VariantDescriptor& variant, const TuningValues& tuning, const Workload& workload, std::size_t n,
                     int d, double steps, double rate, int runs) {
    const double nn = static_cast<double>(n) * static_cast<double>(n);
    const double cells = static_cast<double>(d) * static_cast<double>(d);
    const double map_per_step = recounts_map(tuning) ? cells * recount_seconds_per_cell(variant) : 0.0;
    return steps * (nn / rate + fixed_step_seconds(variant, tuning, workload) + map_per_step) +
           runs * cells * once_seconds_per_cell(variant);
}

double reference_seconds(const Workload& workload, std::size_t n, int max_steps, std::size_t full_reference_max_n,
                         std::size_t sample_bodies) {
    const double nn = static_cast<double>(n) * static_cast<double>(n);
    double interactions = 0;
    if (n <= full_reference_max_n) {
        interactions = nn * max_steps + (workload.integrator == Integrator::leapfrog ? nn : 0.0);
    } else {
        interactions = static_cast<double>(std::min(n, sample_bodies)) * static_cast<double>(n) +
                       (workload.integrator == Integrator::leapfrog ? nn : 0.0);
    }
    return interactions / reference_rate(workload);
}

double host_bytes(const VariantDescriptor& variant, const Workload& workload, std::size_t n, int d,
                  int reference_step_counts) {
    const double state = static_cast<double>(n) * fields(workload) * real_bytes(workload);
    const double cells = static_cast<double>(d) * static_cast<double>(d);
    // Initial, final and generated states; a CPU variant also keeps its working state and pulls.
    double bytes = state * (variant.runs_on_gpu ? 3.0 : 5.0) + cells * (variant.runs_on_gpu ? 8.0 : 16.0);
    if (reference_step_counts > 0)  // long double states, one per step count, plus the working one
        bytes += static_cast<double>(n) * fields(workload) * 16.0 * (reference_step_counts + 2);
    return bytes;
}

double device_bytes(const VariantDescriptor& variant, const Workload& workload, std::size_t n, int d) {
    if (!variant.runs_on_gpu) return 0;
    const double state = static_cast<double>(n) * fields(workload) * real_bytes(workload);
    return state * 3.0 + static_cast<double>(d) * static_cast<double>(d) * 8.0;
}

CostLimits machine_limits(double max_seconds, bool allow) {
    CostLimits limits{.max_seconds = max_seconds, .allow = allow};
    limits.host_bytes_available = env_bytes("NBODY_HOST_MEMORY_BYTES");
    if (limits.host_bytes_available == 0) {
        std::ifstream meminfo("/proc/meminfo");
        std::string line;
        while (std::getline(meminfo, line))
            if (line.rfind("MemAvailable:", 0) == 0) {
                std::istringstream fields(line.substr(13));
                double kib = 0;
                if (fields >> kib) limits.host_bytes_available = kib * 1024.0;
            }
    }
    limits.device_bytes_available = env_bytes("NBODY_DEVICE_MEMORY_BYTES");
    if (limits.device_bytes_available == 0)
        limits.device_memory_probe = [] {
            const auto gpu = builtin_registry().gpu();
            return gpu ? gpu->memory_bytes : 0.0;
        };
    return limits;
}

std::string excess(const Cost& cost, const CostLimits& limits) {
    std::string why;
    const auto add = [&why](const std::string& text) { why += (why.empty() ? "" : "; ") + text; };
    if (cost.seconds > limits.max_seconds)
        add(fmt::format("estimated {} ({}), above the limit of {}", duration_text(cost.seconds), cost.rate_source,
                        duration_text(limits.max_seconds)));
    if (limits.host_bytes_available > 0 && cost.host_bytes > limits.host_bytes_available)
        add(fmt::format("needs about {} of host memory, {} available", bytes_text(cost.host_bytes),
                        bytes_text(limits.host_bytes_available)));
    double device_available = limits.device_bytes_available;
    if (device_available == 0 && cost.device_bytes > 0 && limits.device_memory_probe)
        device_available = limits.device_memory_probe();
    if (device_available > 0 && cost.device_bytes > device_available)
        add(fmt::format("needs about {} of device memory, {} available", bytes_text(cost.device_bytes),
                        bytes_text(device_available)));
    return why;
}

std::string duration_text(double seconds) {
    if (!std::isfinite(seconds)) return "forever";
    if (seconds < 10) return fmt::format("{:.2g} s", seconds);
    if (seconds < 60) return fmt::format("{:.0f} s", seconds);
    if (seconds < 3600) return fmt::format("{} min {:02} s", static_cast<long>(seconds) / 60, static_cast<long>(seconds) % 60);
    if (seconds < 2 * 86400.0)
        return fmt::format("{} h {:02} min", static_cast<long>(seconds) / 3600, (static_cast<long>(seconds) / 60) % 60);
    if (seconds < 1000 * 86400.0) return fmt::format("{:.0f} days", seconds / 86400);
    return fmt::format("{:.2g} years", seconds / (365.25 * 86400));
}

std::string bytes_text(double bytes) {
    if (bytes < 1e6) return fmt::format("{:.0f} kB", bytes / 1e3);
    if (bytes < 1e9) return fmt::format("{:.0f} MB", bytes / 1e6);
    return fmt::format("{:.1f} GB", bytes / 1e9);
}

std::vector<ConfigurationCost> estimate_configurations(const Registry& registry, const MatrixSpec& spec,
                                                       const std::vector<Configuration>& configurations,
                                                       const CostLimits& limits, bool measure_when_over, bool read_energy) {
    std::vector<ConfigurationCost> out;
    std::set<std::tuple<std::size_t, int, Workload>> references;
    std::map<std::string, std::optional<Rate>> measured;
    for (const Configuration& c : configurations) {
        const double steps = static_cast<double>(c.repetitions) * (c.warmup_steps + c.steps) + c.verify_steps;
        const double reference = references.insert({c.n, c.verify_steps, c.workload}).second
                                     ? reference_seconds(c.workload, c.n, c.verify_steps, spec.verification.full_reference_max_n,
                                                         spec.verification.sample_bodies)
                                     : 0.0;
        const Rate rate = modelled_rate(*c.variant, c.tuning, c.workload, registry, c.n);
        ConfigurationCost e;
        // A minimum timed phase can only lengthen each repetition, by at most its value; a GPU's
        // energy meter waits for its counter around each.
        const double min_time =
            c.repetitions * (c.min_time_s + (read_energy && c.variant->runs_on_gpu ? kNvmlMeterWaitSeconds : 0.0));
        // Each repetition uploads and downloads; the verification's run is one more.
        const int runs = c.repetitions + 1;
        e.cost = Cost{.seconds = reference + steps_seconds(*c.variant, c.tuning, c.workload, c.n, c.d, steps, rate.interactions_per_second, runs) +
                                 min_time,
                      .host_bytes = host_bytes(*c.variant, c.workload, c.n, c.d, 1),
                      .device_bytes = device_bytes(*c.variant, c.workload, c.n, c.d),
                      .rate_source = rate.source};
        if (measure_when_over && e.cost.seconds > limits.max_seconds) {
            std::string key = c.variant->id + "/" + to_string(c.workload);
            for (const auto& [name, value] : c.tuning) key += "/" + name + ":" + value;
            if (!measured.count(key))
                measured[key] = measured_rate(*c.variant, c.tuning, c.workload, spec.constants, c.n);
            if (const auto& m = measured[key]) {
                e.cost.seconds =
                    reference + steps_seconds(*c.variant, c.tuning, c.workload, c.n, c.d, steps, m->interactions_per_second, runs) + min_time;
                e.cost.rate_source = m->source;
            }
        }
        e.why = excess(e.cost, limits);
        e.over_limit = !e.why.empty();
        out.push_back(std::move(e));
    }
    return out;
}

}  // namespace nbody
