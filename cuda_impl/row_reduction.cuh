#pragma once
// Second step of the partial-sum variants (cuda.force_matrix, cuda.tiled2d): each body's row of
// partial pulls summed into one, by a hand-written kernel (one warp per row, shuffle tree) or
// by the library (CUB DeviceSegmentedReduce). cuBLAS gemv, as seed report 004 used, is not
// offered: the toolkit here has no static cuBLAS and the shared one is too large to carry.
// Templated on the pull's real type and dimension; compiled in row_reduction.cu for each.
#include <string>

#include "cuda_common.cuh"

namespace nbody::cuda {

TuningParameter reduction_tuning();

template <class Real, int Dim>
class RowReducer {
public:
    // `kind` is "hand" or "cub"; rows of `row_length` pulls, stored row after row.
    RowReducer(std::size_t rows, std::size_t row_length, const std::string& kind);
    // sums[r] = sum of row r of `rows`; asynchronous on the default stream.
    void sum(const Vec<Real, Dim>* rows, Vec<Real, Dim>* sums);

private:
    std::size_t rows_, row_length_;
    bool use_cub_;
    DeviceBuffer<long long> offsets_;  // row r spans [offsets[r], offsets[r+1])
    DeviceBuffer<unsigned char> cub_temp_;
};

extern template class RowReducer<float, 2>;
extern template class RowReducer<float, 3>;
extern template class RowReducer<double, 2>;
extern template class RowReducer<double, 3>;

}  // namespace nbody::cuda
