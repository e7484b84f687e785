#pragma once
// Second step of the partial-sum variants (cuda.force_matrix, cuda.tiled2d, cuda.tiled2d_stepwise):
// the reducer owns the rows of partial pulls (rows x row_length), the kernels write into them
// through PartialRows, and sum() adds each row into one pull: a hand-written kernel (one warp per
// row, shuffle tree), CUB DeviceSegmentedReduce, or cuBLAS gemv against a ones vector (the published 2D tiling
// study's accumulation). gemv sums matrix rows of scalars, so for it the partials are stored with
// the study's layout change: one row per (body, axis) instead of one row of vectors per body.
// Templated on the pull's real type and dimension; compiled in row_reduction.cu for each.
#include <memory>
#include <string>

#include "cuda_common.cuh"

struct cublasContext;  // cublasHandle_t points to one; cublas_v2.h stays in row_reduction.cu

namespace nbody::cuda {

TuningParameter reduction_tuning();

// Where partial `column` of body `row` goes: rows of vectors (hand, cub) or, for cuBLAS, the
// transposed layout: the `column`s of one (row, axis) consecutive, axis after axis.
template <class Real, int Dim>
struct PartialRows {
    Real* values;
    std::size_t row_length;
    bool axis_rows;

    __device__ void store(std::size_t row, std::size_t column, const Vec<Real, Dim>& a) const {
        if (axis_rows) {
NBODY_UNROLL_AXES
            for (int k = 0; k < Dim; ++k) values[(row * Dim + k) * row_length + column] = a[k];
        } else {
            reinterpret_cast<Vec<Real, Dim>*>(values)[row * row_length + column] = a;
        }
    }
};

struct CublasHandleDeleter {
    void operator()(cublasContext* handle) const;
};

template <class Real, int Dim>
class RowReducer {
public:
    // `kind` is "hand", "cub" or "cublas"; `rows` rows of `row_length` partial pulls.
    RowReducer(std::size_t rows, std::size_t row_length, const std::string& kind);
    // Where the partials' kernel writes.
    PartialRows<Real, Dim> destination() const;
    // sums[r] = sum of row r; asynchronous on the default stream.
    void sum(Vec<Real, Dim>* sums);

private:
    enum class Kind { hand, cub, cublas };
    std::size_t rows_, row_length_;
    Kind kind_;
    DeviceBuffer<Real> partials_;      // rows x row_length x Dim reals
    DeviceBuffer<long long> offsets_;  // cub: row r spans [offsets[r], offsets[r+1])
    DeviceBuffer<unsigned char> cub_temp_;
    DeviceBuffer<Real> ones_;  // cublas: the row_length ones gemv multiplies by
    std::unique_ptr<cublasContext, CublasHandleDeleter> cublas_;  // one handle per simulation
};

extern template class RowReducer<float, 2>;
extern template class RowReducer<float, 3>;
extern template class RowReducer<double, 2>;
extern template class RowReducer<double, 3>;

}  // namespace nbody::cuda
