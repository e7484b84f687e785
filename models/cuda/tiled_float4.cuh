#pragma once
// The tiled kernel of cuda.tiled with each body j packed as one 4-vector, so a shared-memory
// read of body j is one 16-byte load (float32; two in float64) instead of one per field:
// 2D (x, y, m, 0), 3D the classic (x, y, z, m); float4 in float32, double4 (32-byte aligned) in
// float64. Two compile-time knobs: the inner-loop unroll factor (0: the compiler's choice) and
// bodies i per thread (each staged body j then serves several i from registers). A launch may
// split the bodies j into gridDim.y slices, so that small N still fill the GPU: each slice's
// block adds its partial pull with atomicAdd (gridDim.y == 1: a plain store). The bodies i are
// `targets` (a rank's owned block when distributed, all N in one process); the bodies j all N,
// read from a packed copy (the ladder's rungs, one process) or from the position axes (cuda.sliced,
// every rank).
//
// Where each piece is compiled: float4.cu holds the simulation (packing, slicing, launch) and
// cuda.float4's kernels; unrolled.cu the kernels with the `unroll` and `bodies_per_thread`
// tunings; fastmath.cu the same kernels under --use_fast_math (float32 only: the option changes
// no float64 operation, so the float64 workloads of cuda.fastmath and cuda.sliced run
// unrolled.cu's). The kernel template below has internal linkage: each of those files compiles
// its own, so the fast-math copies can never be merged with the others at link time.
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "interaction.cuh"
#include "simulation_base.cuh"

namespace nbody::cuda {

// One compiled pull kernel (for cudaLaunchKernel and the occupancy queries) and its bodies per thread.
template <class Real, int Dim>
struct TiledFloat4Kernel {
    const void* function = nullptr;         // pulls on all N (one process)
    const void* ranged_function = nullptr;  // pulls on `targets` only (a rank's owned block)
    int bodies_per_thread = 1;
};

// The `unroll` and `bodies_per_thread` values compiled per workload (kEveryKernelTuning): every
// allowed value in 2D float32; elsewhere the two largest unroll factors (the variants' defaults
// are 8 and 16) and every bodies-per-thread count, the tuning that matters most there.
template <class Real, int Dim>
struct TiledFloat4Tunings {
    using Unrolls = std::conditional_t<kEveryKernelTuning<Real, Dim>, CompiledValues<1, 2, 4, 8, 16>, CompiledValues<8, 16>>;
    using BodiesPerThread = CompiledValues<1, 2, 4>;
};

// cuda.float4's kernel: unroll left to nvcc, one body per thread (float4.cu).
template <class Real, int Dim>
TiledFloat4Kernel<Real, Dim> compiler_unrolled_kernel();
// The kernels of the tuned variants, IEEE float math (unrolled.cu) ...
template <class Real, int Dim>
TiledFloat4Kernel<Real, Dim> precise_tuned_kernel(long unroll, long bodies_per_thread);
// ... and under --use_fast_math (fastmath.cu).
template <int Dim>
TiledFloat4Kernel<float, Dim> fast_math_tuned_kernel(long unroll, long bodies_per_thread);

enum class TiledFloat4Kernels { compiler_unrolled, tuned_precise, tuned_fast_math };

// The simulation of `problem`'s workload with the chosen kernels (float4.cu). UsageError, before
// any device call, for a tuning value not compiled for the workload.
std::unique_ptr<Simulation> make_tiled_float4(const Problem& problem, const TuningValues& tuning,
                                              const std::string& variant_id, TiledFloat4Kernels kernels);

// block_size, unroll, bodies_per_thread, slices and map, with these defaults.
std::vector<TuningParameter> tuned_float4_tunings(const std::string& unroll_default, const std::string& bodies_default,
                                                  const std::string& slices_default);

// The bodies j a ranged launch pulls from: the indices [first, end) of the bodies with
// [skipped_first, skipped_first + skipped_count) left out (j = v, or v + skipped_count from
// skipped_first on), so one launch covers every block but the owned one. `accumulate`: add to
// the pull already there (with gridDim.y > 1 the partials are always added).
struct SourceBodies {
    int first = 0;
    int end = 0;
    int skipped_first = 0;
    int skipped_count = 0;
    bool accumulate = false;
    int count() const { return end - first; }
};

namespace {

// 2D (x, y, m, 0), 3D (x, y, z, m).
template <class Real, int Dim>
__device__ __forceinline__ PackedBody<Real> pack_body(const Vec<Real, Dim>& p, Real m) {
    if constexpr (Dim == 2) return {p[0], p[1], m, Real(0)};
    else return {p[0], p[1], p[2], m};
}
template <class Real, int Dim>
__device__ __forceinline__ Vec<Real, Dim> packed_position(const PackedBody<Real>& b) {
    if constexpr (Dim == 2) return {{b.x, b.y}};
    else return {{b.x, b.y, b.z}};
}
template <class Real, int Dim>
__device__ __forceinline__ Real packed_mass(const PackedBody<Real>& b) {
    if constexpr (Dim == 2) return b.z;
    else return b.w;
}

// Body j as a kernel reads it: packed beforehand, or packed as it is read from the axes (every
// rank, whose positions arrive by axis from the gather: packing them would put a kernel before each
// part of the overlapped pull, 2.5 us each at N = 2^14; and cuda.sliced in one process).
template <class Real, int Dim>
__device__ __forceinline__ PackedBody<Real> body_at(const PackedBody<Real>* __restrict__ packed, int j) {
    return packed[j];
}
template <class Real, int Dim>
__device__ __forceinline__ PackedBody<Real> body_at(const DeviceBodies<Real, Dim>& bodies, int j) {
    return pack_body<Real, Dim>(bodies.position_of(j), bodies.mass[j]);
}

// What a pull kernel reads the bodies from: the packed bodies, or the axes when Ranged.
template <class Real, int Dim, bool Ranged>
using PullSource = std::conditional_t<Ranged, DeviceBodies<Real, Dim>, const PackedBody<Real>*>;

// Ranged: the bodies i are `targets` and the bodies are read from their axes; otherwise all N,
// `targets` is unused and the bodies are packed. Two instantiations rather than one: the packed
// one is the ladder's kernel as it was before distribution existed (cuda.float4 to cuda.fastmath);
// ptxas schedules the two differently, and on one H200 the ranged one ran 0.2-5.5 % faster in every
// workload with 4 bodies per thread (cuda.sliced's source_layout, docs/performance-cuda.md).
template <class Real, int Dim, int Unroll, int BodiesPerThread, bool Ranged>
__global__ void tiled_float4_pull(PullSource<Real, Dim, Ranged> bodies, Vec<Real, Dim>* __restrict__ pull_out,
                                  BodyRange targets, SourceBodies sources, DeviceConstants<Real> c) {
    extern __shared__ __align__(32) unsigned char tile_bytes[];
    PackedBody<Real>* tile = reinterpret_cast<PackedBody<Real>*>(tile_bytes);
    const int targets_first = Ranged ? targets.first : 0;
    const int targets_end = Ranged ? targets.end : c.n;
    const int first = targets_first + blockIdx.x * blockDim.x * BodiesPerThread + threadIdx.x;
    Vec<Real, Dim> pi[BodiesPerThread], a[BodiesPerThread];
#pragma unroll
    for (int b = 0; b < BodiesPerThread; ++b) {
        const int i = first + b * blockDim.x;
        pi[b] = packed_position<Real, Dim>(i < targets_end ? body_at<Real, Dim>(bodies, i) : PackedBody<Real>{});
        a[b] = Vec<Real, Dim>{};
    }
    // This block's share of the tiles (the same for every thread of the block: no divergent barrier).
    const int sources_first = Ranged ? sources.first : 0;
    const int sources_end = Ranged ? sources.end : c.n;
    const int source_count = sources_end - sources_first;
    const int tiles = (source_count + blockDim.x - 1) / blockDim.x;
    const int tiles_per_slice = (tiles + gridDim.y - 1) / gridDim.y;
    const int slice_end = sources_first + min(source_count, (blockIdx.y + 1) * tiles_per_slice * blockDim.x);
    for (int tile_start = sources_first + blockIdx.y * tiles_per_slice * blockDim.x; tile_start < slice_end;
         tile_start += blockDim.x) {
        const int v = tile_start + threadIdx.x;
        const int j = Ranged && v >= sources.skipped_first ? v + sources.skipped_count : v;
        tile[threadIdx.x] = v < sources_end ? body_at<Real, Dim>(bodies, j) : PackedBody<Real>{};  // zero mass pads
        __syncthreads();
        const auto interact = [&](int k) {
            const PackedBody<Real> body_j = tile[k];
            const Vec<Real, Dim> pj = packed_position<Real, Dim>(body_j);
            const Real mj = packed_mass<Real, Dim>(body_j);
#pragma unroll
            for (int b = 0; b < BodiesPerThread; ++b) pull(pi[b], pj, mj, c.eps2, a[b]);
        };
        if constexpr (Unroll == 0) {
            for (int k = 0; k < blockDim.x; ++k) interact(k);
        } else {
#pragma unroll Unroll
            for (int k = 0; k < blockDim.x; ++k) interact(k);
        }
        __syncthreads();
    }
#pragma unroll
    for (int b = 0; b < BodiesPerThread; ++b) {
        const int i = first + b * blockDim.x;
        if (i >= targets_end) continue;
        if (gridDim.y == 1 && !(Ranged && sources.accumulate)) {
            pull_out[i] = a[b];
        } else if (gridDim.y == 1) {
NBODY_UNROLL_AXES
            for (int k = 0; k < Dim; ++k) pull_out[i][k] += a[b][k];
        } else {
NBODY_UNROLL_AXES
            for (int k = 0; k < Dim; ++k) atomicAdd(&pull_out[i][k], a[b][k]);
        }
    }
}

template <class Real, int Dim, int Unroll, int BodiesPerThread>
TiledFloat4Kernel<Real, Dim> kernel_of() {
    return {reinterpret_cast<const void*>(tiled_float4_pull<Real, Dim, Unroll, BodiesPerThread, false>),
            reinterpret_cast<const void*>(tiled_float4_pull<Real, Dim, Unroll, BodiesPerThread, true>), BodiesPerThread};
}

// The kernel of the `unroll` and `bodies_per_thread` tunings, from the values compiled for the
// workload (a template: only the files offering these tunings instantiate the kernels).
template <class Real, int Dim>
TiledFloat4Kernel<Real, Dim> tuned_kernel(long unroll, long bodies_per_thread) {
    using Tunings = TiledFloat4Tunings<Real, Dim>;
    return Tunings::Unrolls::select(unroll, [&]<int Unroll>() {
        return Tunings::BodiesPerThread::select(bodies_per_thread,
                                                [&]<int Bodies>() { return kernel_of<Real, Dim, Unroll, Bodies>(); });
    });
}

}  // namespace
}  // namespace nbody::cuda
