#include <cublas_v2.h>
#include <cub/device/device_segmented_reduce.cuh>

#include <climits>
#include <stdexcept>
#include <vector>

#include "nbody/errors.hpp"
#include "row_reduction.cuh"

// Throws std::runtime_error naming the cuBLAS call, its status and the source line.
#define NBODY_CUBLAS_CHECK(call)                                                                            \
    do {                                                                                                    \
        const cublasStatus_t nbody_cublas_status_ = (call);                                                 \
        if (nbody_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                                  \
            throw std::runtime_error(std::string("cuBLAS error ") + cublasGetStatusName(nbody_cublas_status_) + \
                                     " (" + cublasGetStatusString(nbody_cublas_status_) + ") in " + #call +   \
                                     " at " + __FILE__ + ":" + std::to_string(__LINE__));                 \
    } while (0)

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

// y = op(A) x for the workload's real type: cublasSgemv or cublasDgemv.
cublasStatus_t gemv(cublasHandle_t h, cublasOperation_t op, int m, int n, const float* alpha, const float* a,
                    int lda, const float* x, const float* beta, float* y) {
    return cublasSgemv(h, op, m, n, alpha, a, lda, x, 1, beta, y, 1);
}
cublasStatus_t gemv(cublasHandle_t h, cublasOperation_t op, int m, int n, const double* alpha, const double* a,
                    int lda, const double* x, const double* beta, double* y) {
    return cublasDgemv(h, op, m, n, alpha, a, lda, x, 1, beta, y, 1);
}

}  // namespace

void CublasHandleDeleter::operator()(cublasContext* handle) const {
    cublasDestroy(handle);  // no throw from a destructor
}

TuningParameter reduction_tuning() {
    return {.name = "reduction",
            .description = "second-step row sum: hand (warp per row) | cub (DeviceSegmentedReduce) | cublas "
                           "(gemv of the transposed partials against a ones vector)",
            .default_value = "hand",
            .allowed_values = {"hand", "cub", "cublas"}};
}

template <class Real, int Dim>
RowReducer<Real, Dim>::RowReducer(std::size_t rows, std::size_t row_length, const std::string& kind)
    : rows_(rows), row_length_(row_length) {
    if (kind == "hand") kind_ = Kind::hand;
    else if (kind == "cub") kind_ = Kind::cub;
    else if (kind == "cublas") kind_ = Kind::cublas;
    else throw UsageError("reduction=" + kind + " is not one of hand|cub|cublas");
    if (kind_ == Kind::cublas && (row_length_ > INT_MAX || rows_ * Dim > INT_MAX))
        throw UsageError("reduction=cublas: " + std::to_string(rows_) + " rows of " + std::to_string(row_length_) +
                         " partials exceed gemv's int dimensions");
    partials_ = DeviceBuffer<Real>(rows_ * row_length_ * Dim);
    if (kind_ == Kind::cub) {
        std::vector<long long> offsets(rows_ + 1);
        for (std::size_t r = 0; r <= rows_; ++r) offsets[r] = static_cast<long long>(r * row_length_);
        offsets_ = DeviceBuffer<long long>(offsets.size());
        offsets_.copy_from_host(offsets.data());
        std::size_t temp_bytes = 0;
        NBODY_CUDA_CHECK(cub::DeviceSegmentedReduce::Reduce(
            nullptr, temp_bytes, static_cast<const Vec<Real, Dim>*>(nullptr), static_cast<Vec<Real, Dim>*>(nullptr),
            static_cast<int>(rows_), offsets_.data(), offsets_.data() + 1, VecSum{}, Vec<Real, Dim>{}));
        cub_temp_ = DeviceBuffer<unsigned char>(temp_bytes);
    }
    if (kind_ == Kind::cublas) {
        const std::vector<Real> ones(row_length_, Real(1));
        ones_ = DeviceBuffer<Real>(row_length_);
        ones_.copy_from_host(ones.data());
        cublasHandle_t handle = nullptr;
        NBODY_CUBLAS_CHECK(cublasCreate(&handle));
        cublas_.reset(handle);
        // Host-side alpha and beta; the per-thread default stream our kernels use (nbody_cuda is
        // compiled with it, and a step is captured into a CUDA graph on it: cuBLAS, compiled apart,
        // would otherwise launch on the legacy stream, which a capture refuses).
        NBODY_CUBLAS_CHECK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
        NBODY_CUBLAS_CHECK(cublasSetStream(handle, cudaStreamPerThread));
    }
}

template <class Real, int Dim>
PartialRows<Real, Dim> RowReducer<Real, Dim>::destination() const {
    return {.values = partials_.data(), .row_length = row_length_, .axis_rows = kind_ == Kind::cublas};
}

template <class Real, int Dim>
void RowReducer<Real, Dim>::sum(Vec<Real, Dim>* sums) {
    const auto* rows = reinterpret_cast<const Vec<Real, Dim>*>(partials_.data());
    switch (kind_) {
    case Kind::cub: {
        std::size_t temp_bytes = cub_temp_.size();
        NBODY_CUDA_CHECK(cub::DeviceSegmentedReduce::Reduce(cub_temp_.data(), temp_bytes, rows, sums,
                                                            static_cast<int>(rows_), offsets_.data(),
                                                            offsets_.data() + 1, VecSum{}, Vec<Real, Dim>{}));
        return;
    }
    case Kind::cublas: {
        // Column-major, the partials are a row_length x (rows * Dim) matrix A (lda = row_length);
        // sums, read as rows * Dim reals (body after body, axis after axis), = A^T * ones.
        const Real one = 1, zero = 0;
        NBODY_CUBLAS_CHECK(gemv(cublas_.get(), CUBLAS_OP_T, static_cast<int>(row_length_),
                                static_cast<int>(rows_ * Dim), &one, partials_.data(), static_cast<int>(row_length_),
                                ones_.data(), &zero, reinterpret_cast<Real*>(sums)));
        return;
    }
    case Kind::hand:
        warp_per_row_sum<<<blocks_for(rows_ * kWarp, kReduceBlock), kReduceBlock>>>(rows, rows_, row_length_, sums);
        NBODY_CUDA_CHECK_LAUNCH();
        return;
    }
}

template class RowReducer<float, 2>;
template class RowReducer<float, 3>;
template class RowReducer<double, 2>;
template class RowReducer<double, 3>;

}  // namespace nbody::cuda
