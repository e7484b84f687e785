#include <cub/device/device_segmented_reduce.cuh>

#include <vector>

#include "nbody/errors.hpp"
#include "row_reduction.cuh"

namespace nbody::cuda {
namespace {

constexpr unsigned int kReduceBlock = 256;
constexpr unsigned int kWarp = 32;

struct VecSum {
    template <class Real, int Dim>
    __device__ Vec<Real, Dim> operator()(const Vec<Real, Dim>& a, const Vec<Real, Dim>& b) const {
        Vec<Real, Dim> sum;
NBODY_UNROLL_AXES
        for (int k = 0; k < Dim; ++k) sum[k] = a[k] + b[k];
        return sum;
    }
};

template <class Real, int Dim>
__global__ void warp_per_row_sum(const Vec<Real, Dim>* __restrict__ rows, std::size_t row_count,
                                 std::size_t row_length, Vec<Real, Dim>* __restrict__ sums) {
    const std::size_t row = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
    const unsigned int lane = threadIdx.x % kWarp;
    if (row >= row_count) return;  // whole warps leave together: row is uniform across a warp
    Vec<Real, Dim> sum{};
    const Vec<Real, Dim>* values = rows + row * row_length;
    for (std::size_t k = lane; k < row_length; k += kWarp) sum = VecSum{}(sum, values[k]);
    for (unsigned int offset = kWarp / 2; offset > 0; offset /= 2) {
NBODY_UNROLL_AXES
        for (int axis = 0; axis < Dim; ++axis) sum[axis] += __shfl_down_sync(0xffffffffu, sum[axis], offset);
    }
    if (lane == 0) sums[row] = sum;
}

}  // namespace

TuningParameter reduction_tuning() {
    return {.name = "reduction",
            .description = "second-step row sum: hand (warp per row) | cub (DeviceSegmentedReduce)",
            .default_value = "hand",
            .allowed_values = {"hand", "cub"}};
}

template <class Real, int Dim>
RowReducer<Real, Dim>::RowReducer(std::size_t rows, std::size_t row_length, const std::string& kind)
    : rows_(rows), row_length_(row_length), use_cub_(kind == "cub") {
    if (kind != "hand" && kind != "cub") throw UsageError("reduction=" + kind + " is not one of hand|cub");
    if (!use_cub_) return;
    std::vector<long long> offsets(rows_ + 1);
    for (std::size_t r = 0; r <= rows_; ++r) offsets[r] = static_cast<long long>(r * row_length_);
    offsets_ = DeviceBuffer<long long>(offsets.size());
    offsets_.copy_from_host(offsets.data());
    std::size_t temp_bytes = 0;
    NBODY_CUDA_CHECK(cub::DeviceSegmentedReduce::Reduce(nullptr, temp_bytes, static_cast<const Vec<Real, Dim>*>(nullptr),
                                                        static_cast<Vec<Real, Dim>*>(nullptr), static_cast<int>(rows_),
                                                        offsets_.data(), offsets_.data() + 1, VecSum{},
                                                        Vec<Real, Dim>{}));
    cub_temp_ = DeviceBuffer<unsigned char>(temp_bytes);
}

template <class Real, int Dim>
void RowReducer<Real, Dim>::sum(const Vec<Real, Dim>* rows, Vec<Real, Dim>* sums) {
    if (use_cub_) {
        std::size_t temp_bytes = cub_temp_.size();
        NBODY_CUDA_CHECK(cub::DeviceSegmentedReduce::Reduce(cub_temp_.data(), temp_bytes, rows, sums,
                                                            static_cast<int>(rows_), offsets_.data(),
                                                            offsets_.data() + 1, VecSum{}, Vec<Real, Dim>{}));
        return;
    }
    warp_per_row_sum<<<blocks_for(rows_ * kWarp, kReduceBlock), kReduceBlock>>>(rows, rows_, row_length_, sums);
    NBODY_CUDA_CHECK_LAUNCH();
}

template class RowReducer<float, 2>;
template class RowReducer<float, 3>;
template class RowReducer<double, 2>;
template class RowReducer<double, 3>;

}  // namespace nbody::cuda
