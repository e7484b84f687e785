#pragma once
// The host CPU's facts and the CPU and GPU efficiency limits of SPEC §3, per workload: the limit
// divides by the workload's instructions per interaction (9 in 2D, 12 in 3D) and counts the lanes
// of its precision.
//
// How each CPU input is read (and recorded beside its value, in `*_source`):
//  - cores: distinct (package, core) pairs of /sys/devices/system/cpu/cpuN/topology among the CPUs
//    this process was started on (start_affinity.hpp: before OpenMP's binding); SMT siblings share
//    one core's FP32 pipes.
//  - clock: the larger of the reported clock (cpufreq's cpuinfo_max_freq, else the highest "cpu MHz"
//    of /proc/cpuinfo, which on virtual machines is often the nominal clock) and the clock measured
//    with a chain of dependent 64-bit multiplies (3 cycles each; best of 10 runs of 4e6 timed by the
//    wall clock, x86-64). The same chain on every CPU at once gives the all-core clock, recorded
//    beside it.
//  - SIMD FP32 lanes: the widest vector extension in /proc/cpuinfo's flags (avx512f 16, avx 8,
//    sse 4; aarch64 asimd 4).
//  - SIMD FP64 lanes: half the FP32 lanes (a 64-bit value fills two 32-bit lanes of the same
//    registers and pipes), at least 1.
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
    int simd_fp64_lanes = 1;
    std::string simd_source;
    int fma_pipes = 1;
    std::string fma_pipes_source;
};

// Read once per process.
const CpuInfo& host_cpu_info();

// The widest FP32 vector width a /proc/cpuinfo flags line offers, and which flag said so.
int simd_fp32_lanes_from_flags(const std::string& flags, std::string& source);

// FP64 lanes of a vector unit with `simd_fp32_lanes` FP32 lanes: half, at least 1.
int simd_fp64_lanes_of(int simd_fp32_lanes);

// The inputs of the CPU limit: cores × clock × SIMD lanes × FMA pipes ÷ instructions per interaction.
struct CpuLimitInputs {
    int cores = 1;
    double clock_hz = 0.0;
    int simd_lanes = 1;  // of the workload's precision
    int fma_pipes = 1;
    double instructions_per_interaction = 9;
};

// Interactions per second the CPU could do (SPEC §3).
double cpu_interaction_limit(const CpuLimitInputs& inputs);

// This host's inputs for `workload` with `cores` cores (clamped to [1, physical cores]).
CpuLimitInputs host_cpu_limit_inputs(int cores, const Workload& workload);

// FP64 results per clock per SM of a compute capability, from the CUDA C++ Programming Guide's table
// "Throughput of Native Arithmetic Instructions" (64-bit floating-point add, multiply, multiply-add):
// 64 on 9.0 (Hopper), 32 on 6.0, 7.0 and 8.0 (P100, V100, A100: half their 64 FP32 lanes), 2 on
// consumer and embedded parts (7.5, 8.6, 8.7, 8.9), 4 on 5.x, 6.1, 6.2, 7.2. 0 for a capability not
// listed here (the limit is then unknown, never guessed). `source` says which.
int fp64_lanes_per_sm(const std::string& compute_capability, std::string& source);

// The inputs of the GPU limit: SMs × SM clock × lanes per SM ÷ instructions per interaction.
struct GpuLimitInputs {
    int sm_count = 0;
    double sm_clock_hz = 0.0;
    int lanes_per_sm = 0;  // FP32 lanes as the device reported them, or FP64 lanes from the table
    std::string lanes_source;
    double instructions_per_interaction = 9;
};

GpuLimitInputs gpu_limit_inputs(const GpuInfo& gpu, const Workload& workload);

// Interactions per second the GPU could do; 0 when an input is unknown.
double gpu_interaction_limit(const GpuLimitInputs& inputs);

// The host threads a CPU variant computes with, and how they are bound (results' `host_threads`
// and `thread_binding`):
//  - TBB's (execution space "tbb": stdpar, thrust@tbb): one per CPU the process started on,
//    binding "none": they run on every one of them whatever OMP_PROC_BIND says (tbb_start_arena.hpp);
//  - serial execution: 1, the main thread, bound as OpenMP binds it;
//  - every other: its `threads` tuning, else OMP_NUM_THREADS, else every CPU this process may use,
//    bound as OpenMP binds its threads (OMP_PROC_BIND: "none", "true", "primary", "close", "spread").
struct HostThreading {
    int threads = 1;
    std::string binding;
};
HostThreading host_threading(const VariantDescriptor& variant, const TuningValues& tuning);

// Cores a CPU variant keeps busy: host_threading's threads, at most the physical cores.
int cpu_cores_used(const VariantDescriptor& variant, const TuningValues& tuning);

}  // namespace nbody
