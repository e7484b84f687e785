// The Kokkos runtime for every variant: started once on the first simulation, finalised at exit,
// and the availability check that keeps Kokkos::initialize from aborting the process.
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>

#include "kokkos_simulation.hpp"

#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace nbody::kokkos {

Availability availability() {
#ifdef KOKKOS_ENABLE_CUDA
    // Kokkos::initialize starts the CUDA backend with the host ones and aborts without a GPU.
    static const Availability cached = [] {
        int devices = 0;
        const cudaError_t status = cudaGetDeviceCount(&devices);
        if (status != cudaSuccess)
            return Availability{false, std::string("this Kokkos includes CUDA and cannot start without a GPU: ") +
                                           cudaGetErrorString(status)};
        if (devices == 0)
            return Availability{false, "this Kokkos includes CUDA and cannot start without a GPU: no CUDA device"};
        return Availability{true, ""};
    }();
    return cached;
#else
    return {true, ""};
#endif
}

void ensure_initialized(int device) {
    static std::once_flag once;
    std::call_once(once, [device] {
        if (Kokkos::is_initialized()) return;
        const Availability a = availability();
        if (!a.available) throw std::runtime_error(a.reason);
        // Thread counts and devices come from the environment (OMP_NUM_THREADS, KOKKOS_* ...),
        // except a device the caller names (a rank's GPU, that of its device communicator).
        char program[] = "nbody";
        char quiet[] = "--kokkos-disable-warnings";
        std::string device_argument = "--kokkos-device-id=" + std::to_string(device);
        char* argv[] = {program, quiet, device_argument.data(), nullptr};
        int argc = device >= 0 ? 3 : 2;
        Kokkos::initialize(argc, argv);
        std::atexit([] {
            if (Kokkos::is_initialized()) Kokkos::finalize();
        });
    });
}

TuningParameter map_tuning() {
    return {.name = "map",
            .description = "activity map: incremental (counts and cells kept between steps; bodies that "
                           "changed cell move a count, only the cells they left or entered are rewritten), or a "
                           "full recount every step with Kokkos::atomic_add on shared counts (atomic) or a "
                           "ScatterView (scatter: atomics on the GPU, per-thread copies on OpenMP)",
            .default_value = "incremental",
            .allowed_values = {"incremental", "atomic", "scatter"},
            .min_value = 0,
            .max_value = 0};
}

TuningParameter incremental_map_tuning() {
    return {.name = "map",
            .description = "activity map: incremental only (the counts' moves and the moved cells' rewrites run in "
                           "the same kernel as the steps)",
            .default_value = "incremental",
            .allowed_values = {"incremental"},
            .min_value = 0,
            .max_value = 0};
}

TuningParameter dispatch_tuning() {
    return {.name = "dispatch",
            .description = "how a step's kernels start: launch (each from the host), or graphK (K steps recorded "
                           "once as a Kokkos graph, a CUDA graph on the GPU, and replayed with one submission; "
                           "map=incremental; over ranks captured from the stream, on CUDA with nccl or peer "
                           "collectives); auto: graph" +
                           std::to_string(kAutoGraphSteps) + " on the GPU where it can, launch on host spaces",
            .default_value = "auto",
            .allowed_values = {"auto", "launch", "graph1", "graph4", "graph16", "graph64"},
            .min_value = 0,
            .max_value = 0};
}

int graph_steps_of(const std::string& dispatch) {
    if (dispatch == "launch") return 0;
    if (dispatch.rfind("graph", 0) == 0) return std::stoi(dispatch.substr(5));
    throw std::logic_error("dispatch=" + dispatch + " is not a recorded graph or a launch");
}

TuningParameter step_end_tuning() {
    return {.name = "step_end",
            .description = "separate: the pull kernel, then a kernel that advances the bodies and moves their map "
                           "counts; fused: the last team to finish a block of bodies ends their step in the pull "
                           "kernel (positions double-buffered, map=incremental on one rank); auto: fused on the GPU "
                           "in 2D where it can, else separate",
            .default_value = "auto",
            .allowed_values = {"auto", "separate", "fused"},
            .min_value = 0,
            .max_value = 0};
}

bool fused_step_end_of(const std::string& step_end, bool runs_on_gpu, int dim) {
    // 3D measured slower fused on the H100 (N = 1024: 6.70 against 6.49 us; N = 65536: 2321 against
    // 2195 us per step), 2D faster at every N (docs/performance-kokkos.md).
    if (step_end == "auto") return runs_on_gpu && dim == 2;
    if (step_end == "fused") return true;
    if (step_end == "separate") return false;
    throw std::logic_error("step_end=" + step_end + " is not auto, separate or fused");
}

TuningParameter power_of_two_tuning(const std::string& name, const std::string& description, int smallest,
                                    int largest, int default_value) {
    TuningParameter t{.name = name,
                      .description = description,
                      .default_value = std::to_string(default_value),
                      .allowed_values = {},
                      .min_value = 0,
                      .max_value = 0};
    for (int v = smallest; v <= largest; v *= 2) t.allowed_values.push_back(std::to_string(v));
    return t;
}

}  // namespace nbody::kokkos
