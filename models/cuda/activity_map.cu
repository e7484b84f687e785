#include <cub/device/device_histogram.cuh>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "activity_map.cuh"
#include "nbody/errors.hpp"
#include "nbody/physics.hpp"

namespace nbody::cuda {
namespace {

constexpr unsigned int kMapBlock = 256;

__global__ void count_global_atomics(const int* __restrict__ cells, int n, int* __restrict__ counts) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && cells[i] >= 0) atomicAdd(&counts[cells[i]], 1);
}

// Each block counts its bodies in shared memory, then adds its non-zero bins to the global counts.
__global__ void count_shared_privatised(const int* __restrict__ cells, int n, int cell_count,
                                        int* __restrict__ counts) {
    extern __shared__ int block_counts[];
    for (int c = threadIdx.x; c < cell_count; c += blockDim.x) block_counts[c] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        if (cells[i] >= 0) atomicAdd(&block_counts[cells[i]], 1);
    __syncthreads();
    for (int c = threadIdx.x; c < cell_count; c += blockDim.x)
        if (block_counts[c] != 0) atomicAdd(&counts[c], block_counts[c]);
}

// Incremental: every body whose cell changed moves its count; then, after the kernel boundary,
// the cells they left and entered are rewritten.
__global__ void move_counts(const int* __restrict__ cells, int n, IncrementalMapState state) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) state.move(i, cells[i]);
}

template <class Real>
__global__ void cells_of_positions(const Real* __restrict__ x, const Real* __restrict__ y, int n, int d,
                                   int* __restrict__ cells) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) cells[i] = activity_cell(x[i], y[i], d);
}

template <class Real>
__global__ void move_counts_of_positions(const Real* __restrict__ x, const Real* __restrict__ y, int n, int d,
                                         IncrementalMapState state) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) state.move(i, activity_cell(x[i], y[i], d));
}

__global__ void rewrite_moved_cells(int n, IncrementalMapState state) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) state.rewrite_moved(i);
}

__global__ void normalise_counts(const int* __restrict__ counts, std::size_t cell_count, float scale,
                                 float* __restrict__ map) {
    const std::size_t c = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c < cell_count) map[c] = static_cast<float>(counts[c]) * scale;
}

MapStrategy parse_strategy(const std::string& name) {
    if (name == "atomic") return MapStrategy::global_atomics;
    if (name == "shared") return MapStrategy::shared_histogram;
    if (name == "cub") return MapStrategy::cub_histogram;
    if (name == "incremental") return MapStrategy::incremental;
    throw UsageError("map=" + name + " is not one of atomic|shared|cub|incremental");
}

}  // namespace

ActivityMap::ActivityMap(const Problem& problem, const std::string& strategy_name)
    : n_(problem.n),
      d_(problem.d),
      cell_count_(static_cast<std::size_t>(problem.d) * static_cast<std::size_t>(problem.d)),
      scale_(activity_scale(problem.n, problem.d)),
      strategy_(parse_strategy(strategy_name)) {
    if (strategy_ == MapStrategy::shared_histogram && cell_count_ * sizeof(int) > kSharedHistogramBytes)
        throw UsageError("map=shared needs D*D*4 <= " + std::to_string(kSharedHistogramBytes) +
                         " bytes of shared memory; D=" + std::to_string(d_) + " is too large");
    if (strategy_ == MapStrategy::cub_histogram && cell_count_ >= static_cast<std::size_t>(std::numeric_limits<int>::max()))
        throw UsageError("map=cub counts at most 2^31-1 cells; D=" + std::to_string(d_) + " is too large");
    counts_ = DeviceBuffer<int>(cell_count_);
    map_ = DeviceBuffer<float>(cell_count_);
    if (strategy_ == MapStrategy::cub_histogram) {
        std::size_t temp_bytes = 0;
        NBODY_CUDA_CHECK(cub::DeviceHistogram::HistogramEven(nullptr, temp_bytes, static_cast<const int*>(nullptr),
                                                             counts_.data(), static_cast<int>(cell_count_) + 1, 0,
                                                             static_cast<int>(cell_count_), static_cast<int>(n_)));
        cub_temp_ = DeviceBuffer<unsigned char>(temp_bytes);
    }
    if (strategy_ == MapStrategy::incremental) {
        body_cell_ = DeviceBuffer<int>(n_);
        previous_cell_ = DeviceBuffer<int>(n_);
    }
}

void ActivityMap::reset(const int* cells) {
    count_from_zero(cells, cudaStreamPerThread);
    if (strategy_ == MapStrategy::incremental)
        for (const DeviceBuffer<int>* kept : {&body_cell_, &previous_cell_})
            NBODY_CUDA_CHECK(cudaMemcpyAsync(kept->data(), cells, n_ * sizeof(int), cudaMemcpyDeviceToDevice));
}

void ActivityMap::build(const int* cells, cudaStream_t stream) {
    if (strategy_ != MapStrategy::incremental) {
        count_from_zero(cells, stream);
        return;
    }
    const int n = static_cast<int>(n_);
    move_counts<<<blocks_for(n_, kMapBlock), kMapBlock, 0, stream>>>(cells, n, incremental_state());
    NBODY_CUDA_CHECK_LAUNCH();
    rewrite_moved_cells<<<blocks_for(n_, kMapBlock), kMapBlock, 0, stream>>>(n, incremental_state());
    NBODY_CUDA_CHECK_LAUNCH();
}

template <class Real>
void ActivityMap::build_from_positions(const Real* x, const Real* y, int* cells, cudaStream_t stream) {
    const int n = static_cast<int>(n_);
    if (strategy_ != MapStrategy::incremental) {
        cells_of_positions<Real><<<blocks_for(n_, kMapBlock), kMapBlock, 0, stream>>>(x, y, n, d_, cells);
        NBODY_CUDA_CHECK_LAUNCH();
        count_from_zero(cells, stream);
        return;
    }
    move_counts_of_positions<Real><<<blocks_for(n_, kMapBlock), kMapBlock, 0, stream>>>(x, y, n, d_,
                                                                                          incremental_state());
    NBODY_CUDA_CHECK_LAUNCH();
    rewrite_moved_cells<<<blocks_for(n_, kMapBlock), kMapBlock, 0, stream>>>(n, incremental_state());
    NBODY_CUDA_CHECK_LAUNCH();
}

template void ActivityMap::build_from_positions<float>(const float*, const float*, int*, cudaStream_t);
template void ActivityMap::build_from_positions<double>(const double*, const double*, int*, cudaStream_t);

IncrementalMapState ActivityMap::incremental_state() const {
    if (strategy_ != MapStrategy::incremental) throw std::logic_error("incremental_state of a map that is not incremental");
    return {.counts = counts_.data(),
            .body_cell = body_cell_.data(),
            .previous_cell = previous_cell_.data(),
            .map = map_.data(),
            .scale = scale_};
}

void ActivityMap::count_from_zero(const int* cells, cudaStream_t stream) {
    const int n = static_cast<int>(n_);
    NBODY_CUDA_CHECK(cudaMemsetAsync(counts_.data(), 0, cell_count_ * sizeof(int), stream));
    switch (strategy_) {
        case MapStrategy::incremental:  // counted from zero as the atomic strategy does
        case MapStrategy::global_atomics:
            count_global_atomics<<<blocks_for(n_, kMapBlock), kMapBlock, 0, stream>>>(cells, n, counts_.data());
            NBODY_CUDA_CHECK_LAUNCH();
            break;
        case MapStrategy::shared_histogram: {
            // Enough blocks to fill the GPU's SMs without re-merging many nearly empty histograms.
            const unsigned int blocks = std::min(blocks_for(n_, kMapBlock), 1024u);
            count_shared_privatised<<<blocks, kMapBlock, cell_count_ * sizeof(int), stream>>>(
                cells, n, static_cast<int>(cell_count_), counts_.data());
            NBODY_CUDA_CHECK_LAUNCH();
            break;
        }
        case MapStrategy::cub_histogram: {
            std::size_t temp_bytes = cub_temp_.size();
            // Cells of -1 (outside the unit square) fall below the lowest level and are not counted.
            NBODY_CUDA_CHECK(cub::DeviceHistogram::HistogramEven(cub_temp_.data(), temp_bytes, cells, counts_.data(),
                                                                 static_cast<int>(cell_count_) + 1, 0,
                                                                 static_cast<int>(cell_count_), n, stream));
            break;
        }
    }
    normalise_counts<<<blocks_for(cell_count_, kMapBlock), kMapBlock, 0, stream>>>(counts_.data(), cell_count_,
                                                                                  scale_, map_.data());
    NBODY_CUDA_CHECK_LAUNCH();
}

void ActivityMap::copy_to_host(std::vector<float>& host) const {
    host.resize(cell_count_);
    map_.copy_to_host(host.data());
}

}  // namespace nbody::cuda
