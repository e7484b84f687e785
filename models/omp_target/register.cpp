#include <omp.h>

#include <stdexcept>
#include <string>

#include "nbody/registry.hpp"
#include "omp_target.hpp"

namespace nbody {
namespace omp_target {

Availability offload_availability() {
    if (omp_get_num_devices() > 0) return {};
#if defined(NBODY_OMP_TARGET_CUBIN_REJECTED)
    return {false,
            "no OpenMP offload device: this Clang's libomptarget (18-20) rejects the cubin that CUDA 13's nvlink "
            "linked for it (a newer ELF ABI) and so lists no GPU; build omp_target with Clang 16, GCC, or an LLVM 21 "
            "with the fix for that ABI (docs/models.md)"};
#elif defined(__clang__)
    return {false,
            "no OpenMP offload device: libomptarget found no GPU (it needs its CUDA plugin "
            "libomptarget.rtl.cuda.nextgen.so or libomptarget.rtl.cuda.so beside it, under those names, libLLVM-16, "
            "the CUDA driver libcuda.so and an NVIDIA GPU), and running the target regions on the host instead is "
            "refused"};
#else
    return {false,
            "no OpenMP offload device: libgomp found no GPU (it needs its nvptx plugin libgomp-plugin-nvptx.so.1 "
            "beside the binary or on the library path, the CUDA driver libcuda.so.1 and an NVIDIA GPU), and running "
            "the target regions on the host instead is refused"};
#endif
}

std::vector<TuningParameter> launch_tunings(int default_warps) {
    constexpr int kThreadsPerWarp = 32 / kLanes;
    return {
        {.name = "threads",
         .description = kLanes == 1 ? "thread_limit: OpenMP threads per team, one CUDA thread each in Clang's mapping"
                                    : "thread_limit: OpenMP threads per team, each a warp of 32 lanes in GCC's nvptx mapping",
         .default_value = std::to_string(default_warps * kThreadsPerWarp),
         .allowed_values = {},
         .min_value = 1,
         .max_value = 32 * kThreadsPerWarp,  // a CUDA block's 1024 threads
         // Clang's mapping (one CUDA thread each) takes up to 1024 where GCC's takes 32
         .larger_elsewhere = true},
        {.name = "teams",
         .description = "num_teams; 0: enough teams for the bodies (N / (threads x bodies per thread))",
         .default_value = "0",
         .allowed_values = {},
         .min_value = 0,
         .max_value = 1 << 20},
    };
}

Launch launch_for(const TuningValues& tuning, std::size_t n, int per_thread) {
    Launch launch;
    launch.threads = static_cast<int>(tuning_int(tuning, "threads"));
    launch.teams = static_cast<int>(tuning_int(tuning, "teams"));
    if (launch.teams == 0) {
        const std::size_t per_team = static_cast<std::size_t>(launch.threads) * per_thread;
        launch.teams = static_cast<int>(std::max<std::size_t>(1, (n + per_team - 1) / per_team));
    }
    return launch;
}

const std::vector<VariantEntry>& entries() {
    static const std::vector<VariantEntry> all = {naive_entry(), simd_entry(), simd_j_entry(), multi_i_entry(),
                                                  tiled_entry()};
    return all;
}

std::unique_ptr<Simulation> create_simulation(const std::string& id, const Problem& problem,
                                              const TuningValues& tuning, OffloadDevice device) {
    for (const VariantEntry& entry : entries())
        if (entry.id == id) return entry.create(problem, tuning, device);
    throw std::logic_error(id + " is not an omp_target variant");
}

}  // namespace omp_target

void register_omp_target_variants(Registry& registry) {
    for (const omp_target::VariantEntry& entry : omp_target::entries()) {
        const std::string id = entry.id;
        registry.add({.id = entry.id,
                      .backend = "omp_target",
                      .execution_space = "omp_target",
                      .description = entry.description + " [" NBODY_OMP_TARGET_COMPILER "]",
                      .tunings = entry.tunings,
                      .max_n = 0,
                      .runs_on_gpu = true,
                      .workloads = WorkloadSupport::every(),
                      .availability = omp_target::offload_availability,
                      .create = [create = entry.create](const Problem& p, const TuningValues& t) {
                          return create(p, t, omp_target::OffloadDevice::gpu_required);
                      },
                      .expected_efficiency = entry.expected_efficiency,
                      .full_rate_bodies = entry.full_rate_bodies,
                      .step_overhead_s = entry.step_overhead_s,
                      .reproducibility = entry.reproducibility});
    }
    registry.add_build_fact("omp_target_compiler", NBODY_OMP_TARGET_COMPILER);
}

}  // namespace nbody
