// cuda.sliced: cuda.fastmath's kernels (fast math, float4 tiles) with the tunings that measured
// best at large N (4 bodies per thread, unroll 16; 1 body per thread below 8192 bodies i) and the
// bodies j split over enough blocks for 32 waves of resident blocks (slices=auto, slice_count.hpp),
// so that small N are not left with a fraction of the SMs nor any N with a long last wave.
// Slices add their partial pulls with atomicAdd. Kernel in tiled_float4.cuh, compiled in
// fastmath.cu (float32, --use_fast_math) and unrolled.cu (float64). The bodies j are read from the
// position axes and packed as they are staged (source_layout=axes), which measured faster than the
// ladder's packed copy in every workload on one H200 (5 % in 2D float32, 0.2-1.7 % elsewhere;
// docs/performance-cuda.md). Distributed (docs/scaling.md):
// each rank pulls and integrates its owned block, slicing the bodies j to fill its GPU; with
// exchange=overlap (the default) it pulls from its own block while the others' positions arrive.
#include <utility>
#include <vector>

#include "tiled_float4.cuh"
#include "variants.cuh"

namespace nbody::cuda {

VariantDescriptor sliced_variant() {
    std::vector<TuningParameter> tunings = tuned_float4_tunings("16", "auto", "auto");
    tunings.push_back({.name = "exchange",
                       .description = "over several ranks: overlap (pull from the owned block while the other blocks are "
                                      "gathered on a second stream) or allgather (gather, then pull); one rank: no effect",
                       .default_value = "overlap",
                       .allowed_values = {"overlap", "allgather"}});
    tunings.push_back({.name = "source_layout",
                       .description = "how the pull reads the bodies j: axes (each body packed from the position axes "
                                      "as it is staged; the only layout over several ranks) or packed (a 4-vector "
                                      "copy made each step, one process only)",
                       .default_value = "axes",
                       .allowed_values = {"axes", "packed"}});
    return cuda_descriptor("cuda.sliced", "cuda.fastmath, 4 bodies/thread (1 below 8192 bodies), j split over blocks to fill the GPU (atomicAdd partials)",
                           std::move(tunings),
                           [](const Problem& p, const TuningValues& t) {
                               return make_tiled_float4(p, t, "cuda.sliced", TiledFloat4Kernels::tuned_fast_math);
                           },
                           // lowest measured 0.547 (3D float64), 0.65-0.75 in float32
                           {.workloads = WorkloadSupport::every(), .distributed = true, .expected_efficiency = 0.716, .full_rate_bodies = 1024, .step_overhead_s = 2e-05,
                            .reproducibility = Reproducibility::run_to_run});  // slices add partials by atomicAdd
}

}  // namespace nbody::cuda
