#include <cub/device/device_segmented_reduce.cuh>

#include <vector>

#include "nbody/errors.hpp"
#include "row_reduction.cuh"

namespace nbody::cuda {
namespace {

constexpr unsigned int kReduceBlock = 256;
constexpr unsigned int kWarp = 32;

struct Float2Sum {
    __device__ float2 operator()(const float2& a, const float2& b) const { return make_float2(a.x + b.x, a.y + b.y); }
};

__global__ void warp_per_row_sum(const float2* __restrict__ rows, std::size_t row_count, std::size_t row_length,
                                 float2* __restrict__ sums) {
    const std::size_t row = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
    const unsigned int lane = threadIdx.x % kWarp;
    if (row >= row_count) return;  // whole warps leave together: row is uniform across a warp
    float sx = 0.0f, sy = 0.0f;
    const float2* values = rows + row * row_length;
    for (std::size_t k = lane; k < row_length; k += kWarp) {
        sx += values[k].x;
        sy += values[k].y;
    }
    for (unsigned int offset = kWarp / 2; offset > 0; offset /= 2) {
        sx += __shfl_down_sync(0xffffffffu, sx, offset);
        sy += __shfl_down_sync(0xffffffffu, sy, offset);
    }
    if (lane == 0) sums[row] = make_float2(sx, sy);
}

}  // namespace

TuningParameter reduction_tuning() {
    return {.name = "reduction",
            .description = "second-step row sum: hand (warp per row) | cub (DeviceSegmentedReduce)",
            .default_value = "hand",
            .allowed_values = {"hand", "cub"}};
}

RowReducer::RowReducer(std::size_t rows, std::size_t row_length, const std::string& kind)
    : rows_(rows), row_length_(row_length), use_cub_(kind == "cub") {
    if (kind != "hand" && kind != "cub") throw UsageError("reduction=" + kind + " is not one of hand|cub");
    if (!use_cub_) return;
    std::vector<long long> offsets(rows_ + 1);
    for (std::size_t r = 0; r <= rows_; ++r) offsets[r] = static_cast<long long>(r * row_length_);
    offsets_ = DeviceBuffer<long long>(offsets.size());
    offsets_.copy_from_host(offsets.data());
    std::size_t temp_bytes = 0;
    NBODY_CUDA_CHECK(cub::DeviceSegmentedReduce::Reduce(nullptr, temp_bytes, static_cast<const float2*>(nullptr),
                                                        static_cast<float2*>(nullptr), static_cast<int>(rows_),
                                                        offsets_.data(), offsets_.data() + 1, Float2Sum{},
                                                        make_float2(0.0f, 0.0f)));
    cub_temp_ = DeviceBuffer<unsigned char>(temp_bytes);
}

void RowReducer::sum(const float2* rows, float2* sums) {
    if (use_cub_) {
        std::size_t temp_bytes = cub_temp_.size();
        NBODY_CUDA_CHECK(cub::DeviceSegmentedReduce::Reduce(cub_temp_.data(), temp_bytes, rows, sums,
                                                            static_cast<int>(rows_), offsets_.data(),
                                                            offsets_.data() + 1, Float2Sum{},
                                                            make_float2(0.0f, 0.0f)));
        return;
    }
    warp_per_row_sum<<<blocks_for(rows_ * kWarp, kReduceBlock), kReduceBlock>>>(rows, rows_, row_length_, sums);
    NBODY_CUDA_CHECK_LAUNCH();
}

}  // namespace nbody::cuda
