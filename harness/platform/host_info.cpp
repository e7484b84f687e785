#include "platform/host_info.hpp"

#include <pthread.h>
#include <sched.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <chrono>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "nbody/physics.hpp"
#include "nbody/start_affinity.hpp"

namespace nbody {

namespace {

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string trim(std::string s) {
    const auto begin = s.find_first_not_of(" \t\n");
    const auto end = s.find_last_not_of(" \t\n");
    return begin == std::string::npos ? std::string() : s.substr(begin, end - begin + 1);
}

// The value of the first /proc/cpuinfo line whose key is `key`, or "".
std::string cpuinfo_value(const std::string& cpuinfo, const std::string& key) {
    std::istringstream lines(cpuinfo);
    for (std::string line; std::getline(lines, line);) {
        const auto colon = line.find(':');
        if (colon != std::string::npos && trim(line.substr(0, colon)) == key) return trim(line.substr(colon + 1));
    }
    return "";
}

bool has_flag(const std::string& flags, const std::string& flag) {
    std::istringstream words(flags);
    for (std::string word; words >> word;)
        if (word == flag) return true;
    return false;
}

// A positive number from the environment, or nothing.
bool env_number(const char* name, double& value) {
    const char* text = std::getenv(name);
    if (text == nullptr || *text == '\0') return false;
    char* end = nullptr;
    const double parsed = std::strtod(text, &end);
    if (end == text || *end != '\0' || !(parsed > 0)) return false;
    value = parsed;
    return true;
}

// The CPUs the process was started on (start_affinity.hpp): OpenMP's binding or Kokkos may since
// have pinned the main thread to one of them.
std::vector<int> allowed_cpus() {
    std::vector<int> cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &start_affinity())) cpus.push_back(c);
    return cpus;
}

const std::vector<int> cpus_at_start = allowed_cpus();

// The core clock as it runs now: a chain of dependent 64-bit multiplies retires one multiply
// every 3 cycles (imul r64 latency on every x86-64 core since Nehalem and Zen), so 3 * multiplies /
// seconds is the clock. Timed by the wall clock, best of 10 runs: time lost to other processes can
// only lower the estimate. Add-immediate chains are no use: recent Intel cores resolve them in the
// renamer (one read 19.9 GHz on a Xeon). A reading above 7 GHz is discarded as implausible.
// 0 where there is no such loop for this architecture.
double measured_clock_hz() {
#if defined(__x86_64__)
    constexpr long kBlocks = 500'000;  // x 8 multiplies
    constexpr double kCyclesPerMultiply = 3.0;
    double best = 0;
    for (int run = 0; run < 10; ++run) {
        std::uint64_t chain = 1, factor = 3;
        const auto start = std::chrono::steady_clock::now();
        for (long i = 0; i < kBlocks; ++i)
            asm volatile(
                "imul %1, %0\n\timul %1, %0\n\timul %1, %0\n\timul %1, %0\n\t"
                "imul %1, %0\n\timul %1, %0\n\timul %1, %0\n\timul %1, %0"
                : "+r"(chain)
                : "r"(factor));
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (seconds > 0) best = std::max(best, kCyclesPerMultiply * 8.0 * kBlocks / seconds);
    }
    return best > 7e9 ? 0.0 : best;
#else
    return 0.0;
#endif
}

// The same chain on every given CPU at once, each thread pinned to its CPU: the mean clock while
// all cores are busy (all-core turbo is lower than one core's boost). Informational: the limit
// keeps the one-core peak. 0 where measured_clock_hz() has no loop.
double all_cpus_busy_clock_hz(const std::vector<int>& cpus) {
    std::vector<double> clocks(cpus.size(), 0.0);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < cpus.size(); ++t)
        threads.emplace_back([&, t] {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(cpus[t], &one);
            pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
            clocks[t] = measured_clock_hz();
        });
    for (std::thread& thread : threads) thread.join();
    double sum = 0;
    for (double clock : clocks) {
        if (clock <= 0) return 0.0;
        sum += clock;
    }
    return sum / static_cast<double>(clocks.size());
}

CpuInfo read_host_cpu() {
    CpuInfo info;
    const std::string cpuinfo = read_text("/proc/cpuinfo");
    info.model_name = cpuinfo_value(cpuinfo, "model name");
    if (info.model_name.empty()) info.model_name = cpuinfo_value(cpuinfo, "Model");
    if (info.model_name.empty()) info.model_name = "unknown";

    const std::vector<int>& cpus = cpus_at_start;
    info.logical_cpus = static_cast<int>(cpus.size());
    std::set<std::pair<std::string, std::string>> cores;
    for (int c : cpus) {
        const std::string topology = "/sys/devices/system/cpu/cpu" + std::to_string(c) + "/topology/";
        const std::string package = trim(read_text(topology + "physical_package_id"));
        const std::string core = trim(read_text(topology + "core_id"));
        if (core.empty()) {
            cores.clear();
            break;
        }
        cores.insert({package, core});
    }
    info.physical_cores = cores.empty() ? info.logical_cpus : static_cast<int>(cores.size());
    double value = 0;
    if (env_number("NBODY_CPU_CORES", value))
        info.physical_cores = std::clamp(static_cast<int>(value), 1, info.logical_cpus);

    if (env_number("NBODY_CPU_CLOCK_HZ", value)) {
        info.clock_hz = value;
        info.clock_source = "environment NBODY_CPU_CLOCK_HZ";
    } else {
        // The limit is a peak: the larger of the reported clock and the measured one (a virtual
        // machine's "cpu MHz" is often the nominal clock while the core runs at its boost clock).
        double reported_hz = 0;
        std::string reported_source;
        if (const std::string khz = trim(read_text("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")); !khz.empty()) {
            reported_hz = std::strtod(khz.c_str(), nullptr) * 1e3;
            reported_source = "cpufreq cpuinfo_max_freq";
        } else {
            std::istringstream lines(cpuinfo);
            for (std::string line; std::getline(lines, line);) {
                const auto colon = line.find(':');
                if (colon != std::string::npos && trim(line.substr(0, colon)) == "cpu MHz")
                    reported_hz = std::max(reported_hz, std::strtod(line.c_str() + colon + 1, nullptr) * 1e6);
            }
            reported_source = "/proc/cpuinfo cpu MHz";
        }
        const double measured_hz = measured_clock_hz();
        info.clock_hz = std::max(reported_hz, measured_hz);
        char text[200];
        std::snprintf(text, sizeof text, "larger of %s (%.3f GHz) and a measured dependent-multiply chain (%.3f GHz)",
                      reported_source.c_str(), reported_hz / 1e9, measured_hz / 1e9);
        info.clock_source = text;
    }
    info.all_cpus_busy_clock_hz = all_cpus_busy_clock_hz(cpus);

    std::string flags = cpuinfo_value(cpuinfo, "flags");
    if (flags.empty()) flags = cpuinfo_value(cpuinfo, "Features");  // aarch64
    if (env_number("NBODY_CPU_SIMD_LANES", value)) {
        info.simd_fp32_lanes = static_cast<int>(value);
        info.simd_source = "environment NBODY_CPU_SIMD_LANES";
    } else {
        info.simd_fp32_lanes = simd_fp32_lanes_from_flags(flags, info.simd_source);
    }
    info.simd_fp64_lanes = simd_fp64_lanes_of(info.simd_fp32_lanes);
    if (env_number("NBODY_CPU_FMA_PIPES", value)) {
        info.fma_pipes = static_cast<int>(value);
        info.fma_pipes_source = "environment NBODY_CPU_FMA_PIPES";
    } else if (has_flag(flags, "fma") || has_flag(flags, "asimd")) {
        info.fma_pipes = 2;
        info.fma_pipes_source = "assumed 2: cpuinfo flag " + std::string(has_flag(flags, "fma") ? "fma" : "asimd") +
                                " (cores with FMA since Haswell/Zen issue two vector FMAs per cycle; "
                                "set NBODY_CPU_FMA_PIPES to override)";
    } else {
        info.fma_pipes = 1;
        info.fma_pipes_source = "assumed 1: no fma flag in /proc/cpuinfo";
    }
    return info;
}

}  // namespace

int simd_fp32_lanes_from_flags(const std::string& flags, std::string& source) {
    static const std::pair<const char*, int> widths[] = {{"avx512f", 16}, {"avx", 8}, {"sse", 4}, {"asimd", 4}};
    for (const auto& [flag, lanes] : widths) {
        if (has_flag(flags, flag)) {
            source = std::string("/proc/cpuinfo flag ") + flag + " (" + std::to_string(lanes * 32) + "-bit vectors)";
            return lanes;
        }
    }
    source = "/proc/cpuinfo lists no vector extension: scalar";
    return 1;
}

const CpuInfo& host_cpu_info() {
    static const CpuInfo info = read_host_cpu();
    return info;
}

int simd_fp64_lanes_of(int simd_fp32_lanes) { return std::max(1, simd_fp32_lanes / 2); }

double cpu_interaction_limit(const CpuLimitInputs& in) {
    return in.cores * in.clock_hz * in.simd_lanes * in.fma_pipes / in.instructions_per_interaction;
}

CpuLimitInputs host_cpu_limit_inputs(int cores, const Workload& workload) {
    const CpuInfo& cpu = host_cpu_info();
    return {.cores = std::clamp(cores, 1, cpu.physical_cores),
            .clock_hz = cpu.clock_hz,
            .simd_lanes = workload.precision == Precision::fp64 ? cpu.simd_fp64_lanes : cpu.simd_fp32_lanes,
            .fma_pipes = cpu.fma_pipes,
            .instructions_per_interaction = flops_per_interaction(workload)};
}

int fp64_lanes_per_sm(const std::string& compute_capability, std::string& source) {
    static const std::pair<const char*, int> table[] = {
        {"5.0", 4}, {"5.2", 4}, {"5.3", 4}, {"6.0", 32}, {"6.1", 4},  {"6.2", 4},  {"7.0", 32}, {"7.2", 4},
        {"7.5", 2}, {"8.0", 32}, {"8.6", 2}, {"8.7", 2}, {"8.9", 2}, {"9.0", 64}};
    for (const auto& [capability, lanes] : table)
        if (compute_capability == capability) {
            source = "CUDA Programming Guide throughput table, compute capability " + compute_capability;
            return lanes;
        }
    source = "compute capability '" + compute_capability + "' is not in the throughput table: FP64 limit unknown";
    return 0;
}

GpuLimitInputs gpu_limit_inputs(const GpuInfo& gpu, const Workload& workload) {
    GpuLimitInputs in;
    in.sm_count = gpu.sm_count;
    in.sm_clock_hz = gpu.sm_clock_hz;
    in.instructions_per_interaction = flops_per_interaction(workload);
    if (workload.precision == Precision::fp64) {
        in.lanes_per_sm = fp64_lanes_per_sm(gpu.compute_capability, in.lanes_source);
    } else {
        in.lanes_per_sm = gpu.fp32_lanes_per_sm;
        in.lanes_source = "FP32 lanes per SM as the device probe reported them";
    }
    return in;
}

double gpu_interaction_limit(const GpuLimitInputs& in) {
    return in.sm_count * in.sm_clock_hz * in.lanes_per_sm / in.instructions_per_interaction;
}

namespace {

const char* openmp_binding() {
#ifdef _OPENMP
    switch (omp_get_proc_bind()) {
        case omp_proc_bind_false: return "none";
        case omp_proc_bind_true: return "true";
        case omp_proc_bind_master: return "primary";
        case omp_proc_bind_close: return "close";
        case omp_proc_bind_spread: return "spread";
    }
#endif
    return "none";
}

}  // namespace

HostThreading host_threading(const VariantDescriptor& variant, const TuningValues& tuning) {
    if (variant.execution_space == "tbb") return {start_cpu_count(), "none"};
    if (variant.backend == "serial" || variant.execution_space == "serial") return {1, openmp_binding()};
    int threads = host_cpu_info().logical_cpus;
    if (const auto it = tuning.find("threads"); it != tuning.end()) {
        threads = static_cast<int>(tuning_int(tuning, "threads"));
    } else if (const char* env = std::getenv("OMP_NUM_THREADS"); env != nullptr) {
        int parsed = 0;
        const std::string text(env);
        const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
        if (ec == std::errc() && parsed > 0) threads = parsed;
    }
    return {threads, openmp_binding()};
}

int cpu_cores_used(const VariantDescriptor& variant, const TuningValues& tuning) {
    return std::clamp(host_threading(variant, tuning).threads, 1, host_cpu_info().physical_cores);
}

}  // namespace nbody
