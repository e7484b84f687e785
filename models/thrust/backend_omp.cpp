// The Thrust model on its OpenMP backend (CPU): thrust.*@omp.
#define THRUST_DEVICE_SYSTEM THRUST_DEVICE_SYSTEM_OMP
#include <omp.h>

#include <thrust/system/omp/execution_policy.h>
#include <thrust/system/omp/vector.h>

#include "nbody/variant.hpp"

#define NBODY_THRUST_SPACE backend_omp
namespace nbody::thrust_model::backend_omp {
struct Backend {
    static constexpr const char* space = "omp";
    static constexpr const char* description = "Thrust OpenMP backend";
    static constexpr bool runs_on_gpu = false;
    template <class T>
    using vector = thrust::omp::vector<T>;
    static auto policy() { return thrust::omp::par; }
    static long concurrent_threads() { return omp_get_max_threads(); }
    template <class Work>
    static void run(Work&& work) { work(); }
    static void synchronize() {}
    static Availability availability() { return {}; }
};
}  // namespace nbody::thrust_model::backend_omp
#include "thrust_simulation.inl"

namespace nbody {
// naive and packed reached 0.036-0.069 of the limit on 16 cores, 0.064-0.082 on 2; split_j's vector lanes
// 0.18-0.24 on the H200's 16-core host (results/h200-one-source.txt).
void register_thrust_omp(Registry& registry) { thrust_model::backend_omp::register_backend(registry, {0.06}, {0.06}, {0.11}); }
}  // namespace nbody
