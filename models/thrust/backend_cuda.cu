// The Thrust model on its CUDA backend (GPU): thrust.*@cuda. Compiled with --use_fast_math as
// the CUDA model's fast kernels are (models/thrust/CMakeLists.txt); float64 stays FP64 throughout.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include <thrust/system/cuda/execution_policy.h>
#include <thrust/system/cuda/vector.h>

#include "nbody/variant.hpp"

#define NBODY_THRUST_SPACE backend_cuda
namespace nbody::thrust_model::backend_cuda {
struct Backend {
    static constexpr const char* space = "cuda";
    static constexpr const char* description = "Thrust CUDA backend";
    static constexpr bool runs_on_gpu = true;
    template <class T>
    using vector = thrust::cuda::vector<T>;
    static auto policy() { return thrust::cuda::par; }
    // The threads the GPU keeps resident at once: what thrust.split_j's work items must fill.
    template <class Work>
    static void run(Work&& work) { work(); }
    static long concurrent_threads() {
        int device = 0, multiprocessors = 0, threads_per_multiprocessor = 0;
        cudaError_t status = cudaGetDevice(&device);
        if (status == cudaSuccess) status = cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device);
        if (status == cudaSuccess)
            status = cudaDeviceGetAttribute(&threads_per_multiprocessor, cudaDevAttrMaxThreadsPerMultiProcessor, device);
        if (status != cudaSuccess) throw std::runtime_error(std::string("thrust@cuda: ") + cudaGetErrorString(status));
        return static_cast<long>(multiprocessors) * threads_per_multiprocessor;
    }
    static void synchronize() {
        const cudaError_t status = cudaDeviceSynchronize();
        if (status != cudaSuccess) throw std::runtime_error(std::string("thrust@cuda: ") + cudaGetErrorString(status));
    }
    static Availability availability() {
        int devices = 0;
        const cudaError_t status = cudaGetDeviceCount(&devices);
        if (status != cudaSuccess) {
            cudaGetLastError();  // clear it: the next CUDA call must not see it
            return {false, std::string("no CUDA device: ") + cudaGetErrorString(status)};
        }
        if (devices == 0) return {false, "no CUDA device found"};
        return {};
    }
};
}  // namespace nbody::thrust_model::backend_cuda
#include "thrust_simulation.inl"

namespace nbody {
// thrust.split_j: 0.63-0.73 of the limit measured in float32 on an H100 (docs/models.md); 0.45
// leaves room for float64, whose rate is not measured.
// Fitted to the GPU sweep of docs/estimates.md: split_j's steps cost about 0.15 ms besides their
// interactions in 2D float32 Euler and 0.5 ms in 3D float64 leapfrog, the most of any CUDA-space variant.
void register_thrust_cuda(Registry& registry) {
    thrust_model::backend_cuda::register_backend(registry, {.efficiency = 0.136, .step_overhead_s = 1e-6},
                                                 {.efficiency = 0.035, .full_rate_bodies = 32768, .step_overhead_s = 1e-6},
                                                 {.efficiency = 0.404, .full_rate_bodies = 16384, .step_overhead_s = 2e-4});
}
}  // namespace nbody
