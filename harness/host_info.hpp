#pragma once
// The host CPU's facts and the CPU and GPU efficiency limits of SPEC §3.
//
// How each CPU input is read (and recorded beside its value, in `*_source`):
//  - cores: distinct (package, core) pairs of /sys/devices/system/cpu/cpuN/topology among the CPUs
//    this process may run on (sched_getaffinity at load, with OpenMP's places); SMT siblings share
//    one core's FP32 pipes.
//  - clock: the larger of the reported clock (cpufreq's cpuinfo_max_freq, else the highest "cpu MHz"
//    of /proc/cpuinfo, which on virtual machines is often the nominal clock) and the clock measured
//    with a chain of dependent 64-bit multiplies (3 cycles each; best of 10 runs of 4e6 timed by the
//    wall clock, x86-64). The same chain on every CPU at once gives the all-core clock, recorded
//    beside it.
//  - SIMD FP32 lanes: the widest vector extension in /proc/cpuinfo's flags (avx512f 16, avx 8,
//    sse 4; aarch64 asimd 4).
//  - FMA pipes: not visible to software; 2 when the fma flag is present (every x86 core with FMA
//    since Haswell and Zen issues two vector FMAs per cycle), else 1.
// Each can be overridden by an environment variable (NBODY_CPU_CLOCK_HZ, NBODY_CPU_SIMD_LANES,
// NBODY_CPU_FMA_PIPES, NBODY_CPU_CORES), which the source then names.
#include <string>

#include "nbody/registry.hpp"
#include "nbody/variant.hpp"

namespace nbody {

struct CpuInfo {
    std::string model_name;
    int logical_cpus = 1;     // CPUs this process may run on
    int physical_cores = 1;   // distinct cores among them
    double clock_hz = 0.0;
    std::string clock_source;
    double all_cpus_busy_clock_hz = 0.0;  // mean clock with the chain on every CPU at once; 0: not measured
    int simd_fp32_lanes = 1;
    std::string simd_source;
    int fma_pipes = 1;
    std::string fma_pipes_source;
};

// Read once per process.
const CpuInfo& host_cpu_info();

// The widest FP32 vector width a /proc/cpuinfo flags line offers, and which flag said so.
int simd_fp32_lanes_from_flags(const std::string& flags, std::string& source);

// The inputs of the CPU limit: cores × clock × SIMD FP32 lanes × FMA pipes ÷ 9.
struct CpuLimitInputs {
    int cores = 1;
    double clock_hz = 0.0;
    int simd_fp32_lanes = 1;
    int fma_pipes = 1;
};

// Interactions per second the CPU could do at 9 FP32 instructions each (SPEC §3).
double cpu_fp32_interaction_limit(const CpuLimitInputs& inputs);

// This host's inputs with `cores` cores (clamped to [1, physical cores]).
CpuLimitInputs host_cpu_limit_inputs(int cores);

// SMs × SM clock × FP32 lanes per SM ÷ 9; 0 when the device did not report them.
double gpu_fp32_interaction_limit(const GpuInfo& gpu);

// Cores a CPU variant keeps busy: 1 for serial execution, else its `threads` tuning, else
// OMP_NUM_THREADS, else every CPU this process may use; at most the physical cores.
int cpu_cores_used(const VariantDescriptor& variant, const TuningValues& tuning);

}  // namespace nbody
