// cuda.tiled2d: seed report 004's 2D tiling. A block of width x length threads owns `width`
// bodies i and one chunk of `chunk` bodies j, staged once in shared memory (zero-mass padding
// past N, one barrier every thread reaches). Thread row ty sums chunk/length of the chunk,
// the rows are folded in shared memory, and each block writes one partial pull per body:
// partial[i][blockIdx.y]. A second step sums each body's partials (hand kernel or CUB).
// Many more blocks than cuda.tiled at small N, at the price of N^2/chunk partials.
#include <string>

#include "interaction.cuh"
#include "nbody/errors.hpp"
#include "row_reduction.cuh"
#include "simulation_base.cuh"
#include "variants.cuh"

namespace nbody::cuda {
namespace {

constexpr std::size_t kDefaultSharedBytes = 48 * 1024;

template <int Unroll>
__global__ void tiled2d_partials(const float* __restrict__ x, const float* __restrict__ y,
                                 const float* __restrict__ m, int chunk, float2* __restrict__ partials,
                                 DeviceConstants c) {
    extern __shared__ float shared[];
    float* chunk_x = shared;
    float* chunk_y = shared + chunk;
    float* chunk_m = shared + 2 * chunk;
    float2* row_sums = reinterpret_cast<float2*>(shared + 3 * chunk);  // blockDim.x * blockDim.y

    const int thread = threadIdx.y * blockDim.x + threadIdx.x;
    const int chunk_start = blockIdx.y * chunk;
    for (int k = thread; k < chunk; k += blockDim.x * blockDim.y) {
        const int j = chunk_start + k;
        chunk_x[k] = j < c.n ? x[j] : 0.0f;
        chunk_y[k] = j < c.n ? y[j] : 0.0f;
        chunk_m[k] = j < c.n ? m[j] : 0.0f;
    }
    __syncthreads();

    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const bool owns_body = i < c.n;
    const float xi = owns_body ? x[i] : 0.0f, yi = owns_body ? y[i] : 0.0f;
    const int per_row = chunk / blockDim.y;
    const int begin = threadIdx.y * per_row;
    float ax = 0.0f, ay = 0.0f;
#pragma unroll Unroll
    for (int k = begin; k < begin + per_row; ++k) pull(xi, yi, chunk_x[k], chunk_y[k], chunk_m[k], c.eps2, ax, ay);

    row_sums[thread] = make_float2(ax, ay);
    __syncthreads();
    if (threadIdx.y == 0 && owns_body) {
        for (int r = 1; r < blockDim.y; ++r) {
            ax += row_sums[r * blockDim.x + threadIdx.x].x;
            ay += row_sums[r * blockDim.x + threadIdx.x].y;
        }
        partials[static_cast<std::size_t>(i) * gridDim.y + blockIdx.y] = make_float2(ax, ay);
    }
}

TuningParameter power_of_two_tuning(std::string name, std::string description, std::string default_value,
                                    std::vector<std::string> values) {
    return {.name = std::move(name),
            .description = std::move(description),
            .default_value = std::move(default_value),
            .allowed_values = std::move(values)};
}

// Checked before the base class touches the device.
const TuningValues& checked(const TuningValues& t) {
    const long width = tuning_int(t, "width"), length = tuning_int(t, "length"), chunk = tuning_int(t, "chunk");
    if (width * length > 1024)
        throw UsageError("cuda.tiled2d: width*length = " + std::to_string(width * length) + " exceeds 1024 threads");
    if (chunk < length)
        throw UsageError("cuda.tiled2d: chunk=" + std::to_string(chunk) + " is smaller than length=" +
                         std::to_string(length));
    return t;
}

class Tiled2d final : public SoaSimulation {
public:
    Tiled2d(const Problem& p, const TuningValues& t)
        : SoaSimulation(p, checked(t)),
          block_(static_cast<unsigned int>(tuning_int(t, "width")), static_cast<unsigned int>(tuning_int(t, "length"))),
          chunk_(static_cast<int>(tuning_int(t, "chunk"))),
          unroll_(static_cast<int>(tuning_int(t, "unroll"))),
          chunks_(blocks_for(p.n, static_cast<unsigned int>(chunk_))),
          reducer_(p.n, chunks_, t.at("reduction")),
          partials_(p.n * chunks_) {}

private:
    void compute_pull() override {
        const dim3 grid(blocks_for(problem_.n, block_.x), chunks_);
        const std::size_t shared_bytes = 3 * chunk_ * sizeof(float) + block_.x * block_.y * sizeof(float2);
        switch (unroll_) {
            case 1: launch<1>(grid, shared_bytes); break;
            case 2: launch<2>(grid, shared_bytes); break;
            case 4: launch<4>(grid, shared_bytes); break;
            default: launch<8>(grid, shared_bytes); break;
        }
        reducer_.sum(partials_.data(), pull());
    }
    template <int Unroll>
    void launch(dim3 grid, std::size_t shared_bytes) {
        if (shared_bytes > kDefaultSharedBytes)  // chunk 4096: opt in above the default 48 KiB
            NBODY_CUDA_CHECK(cudaFuncSetAttribute(tiled2d_partials<Unroll>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  static_cast<int>(shared_bytes)));
        tiled2d_partials<Unroll><<<grid, block_, shared_bytes>>>(x(), y(), m(), chunk_, partials_.data(), constants_);
        NBODY_CUDA_CHECK_LAUNCH();
    }

    dim3 block_;
    int chunk_, unroll_;
    unsigned int chunks_;
    RowReducer reducer_;
    DeviceBuffer<float2> partials_;
};

}  // namespace

VariantDescriptor tiled2d_variant() {
    return cuda_descriptor(
        "cuda.tiled2d", "seed 004 2D tiling: chunks of j in shared memory, partial sums, second-step row sum",
        {power_of_two_tuning("width", "threads (bodies i) per block along x; width*length <= 1024", "128",
                             {"32", "64", "128", "256", "512"}),
         power_of_two_tuning("length", "thread rows per block, each summing chunk/length bodies j", "2", {"1", "2", "4", "8"}),
         power_of_two_tuning("chunk", "bodies j per block (12 bytes each in shared memory)", "2048",
                             {"256", "512", "1024", "2048", "4096"}),
         power_of_two_tuning("unroll", "unroll factor of the inner loop", "4", {"1", "2", "4", "8"}),
         map_tuning(), reduction_tuning()},
        [](const Problem& p, const TuningValues& t) -> std::unique_ptr<Simulation> {
            return std::make_unique<Tiled2d>(p, t);
        });
}

}  // namespace nbody::cuda
