// cuda.unrolled: cuda.float4 with an explicit unroll factor on the loop over a tile and, as a
// tuning, several bodies i per thread. Kernel in tiled_float4.cuh; this file compiles it for
// every workload (IEEE float math), the float64 kernels also for cuda.fastmath and cuda.sliced.
#include "tiled_float4.cuh"
#include "variants.cuh"

namespace nbody::cuda {

template <class Real, int Dim>
TiledFloat4Kernel<Real, Dim> precise_tuned_kernel(long unroll, long bodies_per_thread) {
    return tuned_kernel<Real, Dim>(unroll, bodies_per_thread);
}
template TiledFloat4Kernel<float, 2> precise_tuned_kernel<float, 2>(long, long);
template TiledFloat4Kernel<float, 3> precise_tuned_kernel<float, 3>(long, long);
template TiledFloat4Kernel<double, 2> precise_tuned_kernel<double, 2>(long, long);
template TiledFloat4Kernel<double, 3> precise_tuned_kernel<double, 3>(long, long);

VariantDescriptor unrolled_variant() {
    return cuda_descriptor("cuda.unrolled", "cuda.float4 with #pragma unroll and bodies per thread as tunings",
                           tuned_float4_tunings("8", "1", "1"),
                           [](const Problem& p, const TuningValues& t) {
                               return make_tiled_float4(p, t, "cuda.unrolled", TiledFloat4Kernels::tuned_precise);
                           },
                           // lowest measured 0.458; slices > 1 add partials by atomicAdd
                           {.workloads = WorkloadSupport::every(), .expected_efficiency = 0.428, .step_overhead_s = 5e-06,
                            .reproducibility = Reproducibility::run_to_run});
}

}  // namespace nbody::cuda
