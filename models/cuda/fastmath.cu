// cuda.fastmath: cuda.unrolled's kernels compiled with --use_fast_math (flush denormals to zero,
// approximate division and square root: CMakeLists.txt sets it for this file alone), as the
// published OpenMP/CUDA lab's last step. Kernel in tiled_float4.cuh; this file compiles the float32 kernels,
// also for cuda.sliced. The option changes no float64 operation, so in float64 both run
// cuda.unrolled's kernels (unrolled.cu).
#include "tiled_float4.cuh"
#include "variants.cuh"

namespace nbody::cuda {

template <int Dim>
TiledFloat4Kernel<float, Dim> fast_math_tuned_kernel(long unroll, long bodies_per_thread) {
    return tuned_kernel<float, Dim>(unroll, bodies_per_thread);
}
template TiledFloat4Kernel<float, 2> fast_math_tuned_kernel<2>(long, long);
template TiledFloat4Kernel<float, 3> fast_math_tuned_kernel<3>(long, long);

VariantDescriptor fastmath_variant() {
    return cuda_descriptor("cuda.fastmath", "cuda.unrolled compiled with --use_fast_math (ftz; float32 only)",
                           tuned_float4_tunings("8", "2", "1"),
                           [](const Problem& p, const TuningValues& t) {
                               return make_tiled_float4(p, t, "cuda.fastmath", TiledFloat4Kernels::tuned_fast_math);
                           },
                           // lowest measured 0.481; slices > 1 add partials by atomicAdd
                           {.workloads = WorkloadSupport::every(), .expected_efficiency = 0.404, .step_overhead_s = 3e-06,
                            .reproducibility = Reproducibility::run_to_run});
}

}  // namespace nbody::cuda
