#pragma once
// The tiled kernel of cuda.tiled with each body j packed as one float4 (x, y, m, 0), so a
// shared-memory read of body j is one 16-byte load instead of three 4-byte ones, plus two
// compile-time knobs: the inner-loop unroll factor (0: the compiler's choice) and bodies i
// per thread (each staged body j then serves several i from registers).
// Shared by cuda.float4 (0, 1), cuda.unrolled and cuda.fastmath (the same kernels compiled
// with --use_fast_math). Everything here has internal linkage: each of those files gets its
// own kernels, so the fast-math copies can never be merged with the others at link time.
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
    for (int tile_start = 0; tile_start < c.n; tile_start += blockDim.x) {
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
        if (i < c.n) pull_out[i] = make_float2(ax[b], ay[b]);
    }
}

using TiledFloat4Launcher = void (*)(const float4*, float2*, DeviceConstants, unsigned int block);

template <int Unroll, int BodiesPerThread>
void launch_tiled_float4(const float4* bodies, float2* pull_out, DeviceConstants c, unsigned int block) {
    const unsigned int bodies_per_block = block * BodiesPerThread;
    tiled_float4_pull<Unroll, BodiesPerThread>
        <<<blocks_for(c.n, bodies_per_block), block, block * sizeof(float4)>>>(bodies, pull_out, c);
    NBODY_CUDA_CHECK_LAUNCH();
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
std::vector<TuningParameter> tuned_float4_tunings(const std::string& unroll_default, const std::string& bodies_default) {
    return {block_size_tuning("256"),
            {.name = "unroll",
             .description = "unroll factor of the loop over a tile",
             .default_value = unroll_default,
             .allowed_values = {"1", "2", "4", "8", "16"}},
            {.name = "bodies_per_thread",
             .description = "bodies i per thread, each staged body j reused from registers",
             .default_value = bodies_default,
             .allowed_values = {"1", "2", "4"}},
            map_tuning()};
}

class TiledFloat4 final : public SoaSimulation {
public:
    TiledFloat4(const Problem& p, const TuningValues& t, TiledFloat4Launcher launcher)
        : SoaSimulation(p, t), block_(block_size_of(t)), launcher_(launcher), packed_(p.n) {}

private:
    void compute_pull() override {
        pack_bodies<<<blocks_for(problem_.n, block_), block_>>>(x(), y(), m(), packed_.data(), constants_.n);
        NBODY_CUDA_CHECK_LAUNCH();
        launcher_(packed_.data(), pull(), constants_, block_);
    }
    unsigned int block_;
    TiledFloat4Launcher launcher_;
    DeviceBuffer<float4> packed_;
};

}  // namespace
}  // namespace nbody::cuda
