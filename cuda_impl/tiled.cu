// cuda.tiled: shared-memory tiling (GPU Gems 3, ch. 31). Each block stages one tile of
// blockDim bodies (x, y, m) in shared memory, every thread sums over it, next tile. The last
// tile is padded with zero-mass bodies, whose pull is exactly zero, so every thread of the
// block reaches every barrier whatever N is (no conditional __syncthreads).
#include "interaction.cuh"
#include "simulation_base.cuh"
#include "variants.cuh"

namespace nbody::cuda {
namespace {

__global__ void tiled_pull(const float* __restrict__ x, const float* __restrict__ y, const float* __restrict__ m,
                           float2* __restrict__ pull_out, DeviceConstants c) {
    extern __shared__ float tile[];
    float* tile_x = tile;
    float* tile_y = tile + blockDim.x;
    float* tile_m = tile + 2 * blockDim.x;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const bool owns_body = i < c.n;
    const float xi = owns_body ? x[i] : 0.0f, yi = owns_body ? y[i] : 0.0f;
    float ax = 0.0f, ay = 0.0f;
    for (int tile_start = 0; tile_start < c.n; tile_start += blockDim.x) {
        const int j = tile_start + threadIdx.x;
        tile_x[threadIdx.x] = j < c.n ? x[j] : 0.0f;
        tile_y[threadIdx.x] = j < c.n ? y[j] : 0.0f;
        tile_m[threadIdx.x] = j < c.n ? m[j] : 0.0f;
        __syncthreads();
        for (int k = 0; k < blockDim.x; ++k) pull(xi, yi, tile_x[k], tile_y[k], tile_m[k], c.eps2, ax, ay);
        __syncthreads();
    }
    if (owns_body) pull_out[i] = make_float2(ax, ay);
}

class Tiled final : public SoaSimulation {
public:
    Tiled(const Problem& p, const TuningValues& t) : SoaSimulation(p, t), block_(block_size_of(t)) {}

private:
    void compute_pull() override {
        tiled_pull<<<blocks_for(problem_.n, block_), block_, 3 * block_ * sizeof(float)>>>(x(), y(), m(), pull(),
                                                                                          constants_);
        NBODY_CUDA_CHECK_LAUNCH();
    }
    unsigned int block_;
};

}  // namespace

VariantDescriptor tiled_variant() {
    return cuda_descriptor("cuda.tiled", "SoA, shared-memory tiles of blockDim bodies (GPU Gems 3 ch. 31), rsqrtf",
                           {block_size_tuning("256"), map_tuning()},
                           [](const Problem& p, const TuningValues& t) -> std::unique_ptr<Simulation> {
                               return std::make_unique<Tiled>(p, t);
                           });
}

}  // namespace nbody::cuda
