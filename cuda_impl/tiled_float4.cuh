#pragma once
// The tiled kernel of cuda.tiled with each body j packed as one float4 (x, y, m, 0), so a
// shared-memory read of body j is one 16-byte load instead of three 4-byte ones, plus two
// compile-time knobs: the inner-loop unroll factor (0: the compiler's choice) and bodies i
// per thread (each staged body j then serves several i from registers). A launch may split the
// bodies j into gridDim.y slices, so that small N still fill the GPU: each slice's block adds
// its partial pull with atomicAdd (gridDim.y == 1: a plain store).
// Shared by cuda.float4 (0, 1), cuda.unrolled and cuda.fastmath (the same kernels compiled
// with --use_fast_math). Everything here has internal linkage: each of those files gets its
// own kernels, so the fast-math copies can never be merged with the others at link time.
#include <algorithm>
#include <string>

#include "interaction.cuh"
#include "simulation_base.cuh"

namespace nbody::cuda {
namespace {

__global__ void pack_bodies(const float* __restrict__ x, const float* __restrict__ y, const float* __restrict__ m,
                            float4* __restrict__ packed, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) packed[i] = make_float4(x[i], y[i], m[i], 0.0f);
}

template <int Unroll, int BodiesPerThread>
__global__ void tiled_float4_pull(const float4* __restrict__ bodies, float2* __restrict__ pull_out, DeviceConstants c) {
    extern __shared__ float4 tile[];
    const int first = blockIdx.x * blockDim.x * BodiesPerThread + threadIdx.x;
    float xi[BodiesPerThread], yi[BodiesPerThread], ax[BodiesPerThread], ay[BodiesPerThread];
#pragma unroll
    for (int b = 0; b < BodiesPerThread; ++b) {
        const int i = first + b * blockDim.x;
        const float4 body = i < c.n ? bodies[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        xi[b] = body.x;
        yi[b] = body.y;
        ax[b] = 0.0f;
        ay[b] = 0.0f;
    }
    // This block's share of the tiles (the same for every thread of the block: no divergent barrier).
    const int tiles = (c.n + blockDim.x - 1) / blockDim.x;
    const int tiles_per_slice = (tiles + gridDim.y - 1) / gridDim.y;
    const int slice_end = min(c.n, (blockIdx.y + 1) * tiles_per_slice * blockDim.x);
    for (int tile_start = blockIdx.y * tiles_per_slice * blockDim.x; tile_start < slice_end; tile_start += blockDim.x) {
        const int j = tile_start + threadIdx.x;
        tile[threadIdx.x] = j < c.n ? bodies[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);  // zero mass pads
        __syncthreads();
        if constexpr (Unroll == 0) {
            for (int k = 0; k < blockDim.x; ++k) {
                const float4 body_j = tile[k];
#pragma unroll
                for (int b = 0; b < BodiesPerThread; ++b)
                    pull(xi[b], yi[b], body_j.x, body_j.y, body_j.z, c.eps2, ax[b], ay[b]);
            }
        } else {
#pragma unroll Unroll
            for (int k = 0; k < blockDim.x; ++k) {
                const float4 body_j = tile[k];
#pragma unroll
                for (int b = 0; b < BodiesPerThread; ++b)
                    pull(xi[b], yi[b], body_j.x, body_j.y, body_j.z, c.eps2, ax[b], ay[b]);
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int b = 0; b < BodiesPerThread; ++b) {
        const int i = first + b * blockDim.x;
        if (i >= c.n) continue;
        if (gridDim.y == 1) {
            pull_out[i] = make_float2(ax[b], ay[b]);
        } else {
            atomicAdd(&pull_out[i].x, ax[b]);
            atomicAdd(&pull_out[i].y, ay[b]);
        }
    }
}

// slices == 0 asks for the number of slices that fills the GPU (returned, nothing launched).
using TiledFloat4Launcher = unsigned int (*)(const float4*, float2*, DeviceConstants, unsigned int block,
                                             unsigned int slices);

template <int Unroll, int BodiesPerThread>
unsigned int launch_tiled_float4(const float4* bodies, float2* pull_out, DeviceConstants c, unsigned int block,
                                 unsigned int slices) {
    const unsigned int body_blocks = blocks_for(c.n, block * BodiesPerThread);
    if (slices == 0) {
        // Two waves of resident blocks, but at least one tile per slice.
        int device = 0, sms = 0, resident = 0;
        NBODY_CUDA_CHECK(cudaGetDevice(&device));
        NBODY_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        NBODY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &resident, tiled_float4_pull<Unroll, BodiesPerThread>, static_cast<int>(block), block * sizeof(float4)));
        const unsigned int wanted = blocks_for(2u * sms * resident, body_blocks);
        return std::max(1u, std::min(wanted, blocks_for(c.n, block)));
    }
    tiled_float4_pull<Unroll, BodiesPerThread>
        <<<dim3(body_blocks, slices), block, block * sizeof(float4)>>>(bodies, pull_out, c);
    NBODY_CUDA_CHECK_LAUNCH();
    return slices;
}

// The launcher for the `unroll` and `bodies_per_thread` tunings (a template so that only the
// files offering these tunings instantiate every combination).
template <int = 0>
TiledFloat4Launcher tuned_launcher(long unroll, long bodies_per_thread) {
    auto with_bodies = [&]<int Unroll>() -> TiledFloat4Launcher {
        switch (bodies_per_thread) {
            case 1: return launch_tiled_float4<Unroll, 1>;
            case 2: return launch_tiled_float4<Unroll, 2>;
            default: return launch_tiled_float4<Unroll, 4>;
        }
    };
    switch (unroll) {
        case 1: return with_bodies.template operator()<1>();
        case 2: return with_bodies.template operator()<2>();
        case 4: return with_bodies.template operator()<4>();
        case 8: return with_bodies.template operator()<8>();
        default: return with_bodies.template operator()<16>();
    }
}

template <int = 0>
std::vector<TuningParameter> tuned_float4_tunings(const std::string& unroll_default, const std::string& bodies_default,
                                                  const std::string& slices_default) {
    return {block_size_tuning("256"),
            {.name = "unroll",
             .description = "unroll factor of the loop over a tile",
             .default_value = unroll_default,
             .allowed_values = {"1", "2", "4", "8", "16"}},
            {.name = "bodies_per_thread",
             .description = "bodies i per thread, each staged body j reused from registers",
             .default_value = bodies_default,
             .allowed_values = {"1", "2", "4"}},
            {.name = "slices",
             .description = "split the bodies j over this many blocks per body block (auto: enough to fill the GPU twice)",
             .default_value = slices_default,
             .allowed_values = {"auto", "1", "2", "4", "8", "16", "32"}},
            map_tuning()};
}

// The `slices` tuning: absent means 1, "auto" means as many as fill the GPU.
inline unsigned int slices_of(const TuningValues& t) {
    const auto it = t.find("slices");
    if (it == t.end()) return 1;
    return it->second == "auto" ? 0 : static_cast<unsigned int>(std::stoul(it->second));
}

class TiledFloat4 final : public SoaSimulation {
public:
    TiledFloat4(const Problem& p, const TuningValues& t, TiledFloat4Launcher launcher)
        : SoaSimulation(p, t),
          block_(block_size_of(t)),
          launcher_(launcher),
          slices_(slices_of(t)),
          packed_(p.n) {
        if (slices_ == 0) slices_ = launcher_(nullptr, nullptr, constants_, block_, 0);
    }

private:
    void compute_pull() override {
        pack_bodies<<<blocks_for(problem_.n, block_), block_>>>(x(), y(), m(), packed_.data(), constants_.n);
        NBODY_CUDA_CHECK_LAUNCH();
        if (slices_ > 1) NBODY_CUDA_CHECK(cudaMemsetAsync(pull(), 0, problem_.n * sizeof(float2)));
        launcher_(packed_.data(), pull(), constants_, block_, slices_);
    }
    unsigned int block_;
    TiledFloat4Launcher launcher_;
    unsigned int slices_;
    DeviceBuffer<float4> packed_;
};

}  // namespace
}  // namespace nbody::cuda
