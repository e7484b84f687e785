// The Thrust model on its TBB backend (CPU): thrust.*@tbb.
#define THRUST_DEVICE_SYSTEM THRUST_DEVICE_SYSTEM_TBB
#include <thrust/system/tbb/execution_policy.h>
#include <thrust/system/tbb/vector.h>

#include "nbody/tbb_start_arena.hpp"
#include "nbody/variant.hpp"

#define NBODY_THRUST_SPACE backend_tbb
namespace nbody::thrust_model::backend_tbb {
struct Backend {
    static constexpr const char* space = "tbb";
    static constexpr const char* description = "Thrust TBB backend";
    static constexpr bool runs_on_gpu = false;
    template <class T>
    using vector = thrust::tbb::vector<T>;
    static auto policy() { return thrust::tbb::par; }
    static long concurrent_threads() { return start_affinity_arena().max_concurrency(); }
    // On the CPUs the process started on, whatever OpenMP's binding did to the calling thread.
    template <class Work>
    static void run(Work&& work) { in_start_affinity_arena(std::forward<Work>(work)); }
    static void synchronize() {}
    static Availability availability() { return {}; }
};
}  // namespace nbody::thrust_model::backend_tbb
#include "thrust_simulation.inl"

namespace nbody {
// naive and packed reached 0.036-0.069 of the limit on 16 cores, 0.064-0.082 on 2; split_j's vector lanes
// 0.27-0.41 on the H200's 16-core host (results/h200-one-source.txt).
void register_thrust_tbb(Registry& registry) { thrust_model::backend_tbb::register_backend(registry, {0.06}, {0.06}, {0.16}); }
}  // namespace nbody
