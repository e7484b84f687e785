#pragma once
// The activity map on the device (SPEC §1), four ways to keep it (the `map` tuning). Every
// strategy starts from one cell index per body (-1: outside the unit square). atomic, shared and
// cub clear the counts, count every body and normalise all D*D cells, every step; incremental
// keeps the integer counts and each body's previous cell on the device between steps, moves the
// count of the bodies whose cell changed and rewrites only the cells whose count changed, which
// gives the same floats as a full recount (same count, same float expression).
#include <cstddef>
#include <string>

#include "cuda_common.cuh"

namespace nbody::cuda {

enum class MapStrategy { global_atomics, shared_histogram, cub_histogram, incremental };

// A privatised histogram keeps D*D int counters per block in the default 48 KiB of shared memory.
inline constexpr std::size_t kSharedHistogramBytes = 48 * 1024;

// The incremental map's device state, for the map's own kernels and for kernels that move counts
// themselves (cuda.persistent). Between a body's move and the rewrite of the cells it touched
// there must be a grid-wide barrier (a kernel boundary or a grid sync), so that the rewrite reads
// the counts every move of the step left. Bodies of one cell rewrite it with the same value.
struct IncrementalMapState {
    int* counts;         // bodies per cell
    int* body_cell;      // each body's cell as counted
    int* previous_cell;  // its cell before its last move; equal to body_cell once rewritten
    float* map;          // counts[c] * scale, for every cell
    float scale;         // activity_scale(n, d)

#if defined(__CUDACC__)
    // Body i's cell as counted and its cell before its last move (equal once rewritten): what move
    // and rewrite_moved read, for a kernel that reads them ahead (cuda.persistent, before its sum).
    struct BodyCells {
        int counted, previous;
    };
    __device__ BodyCells cells_of(int i) const { return {body_cell[i], previous_cell[i]}; }

    // Counts body i in `cell` instead of its current cell.
    __device__ void move(int i, int cell) const { move(i, cell, body_cell[i]); }
    __device__ void move(int i, int cell, int from) const {
        if (cell == from) return;
        if (from >= 0) atomicSub(&counts[from], 1);
        if (cell >= 0) atomicAdd(&counts[cell], 1);
        body_cell[i] = cell;
        previous_cell[i] = from;
    }
    // After the barrier: the cells body i's last move left and entered, from their counts.
    __device__ void rewrite_moved(int i) const { rewrite_moved(i, cells_of(i)); }
    __device__ void rewrite_moved(int i, BodyCells cells) const {
        if (cells.previous == cells.counted) return;
        // Both counts read before either cell is written: one round trip to memory, not two.
        const int left = cells.previous >= 0 ? counts[cells.previous] : 0;
        const int entered = cells.counted >= 0 ? counts[cells.counted] : 0;
        if (cells.previous >= 0) map[cells.previous] = static_cast<float>(left) * scale;
        if (cells.counted >= 0) map[cells.counted] = static_cast<float>(entered) * scale;
        previous_cell[i] = cells.counted;
    }
#endif
};

class ActivityMap {
public:
    // Checks the strategy fits the problem before touching the device (UsageError otherwise).
    ActivityMap(const Problem& problem, const std::string& strategy_name);
    // The map of `cells` (n entries, device memory) counted from zero, whatever the strategy;
    // asynchronous on the default stream.
    void reset(const int* cells);
    // The map of `cells` after a step (after a reset): incremental moves the bodies whose cell
    // changed, the other strategies count from zero; asynchronous on `stream`.
    void build(const int* cells, cudaStream_t stream);
    // The same from every body's position (x, y: n values on the device), each body's cell as
    // activity_cell gives it: incremental computes the cell and moves the count in one kernel; the
    // other strategies write `cells` (n entries) and count them.
    template <class Real>
    void build_from_positions(const Real* x, const Real* y, int* cells, cudaStream_t stream);
    void copy_to_host(std::vector<float>& host) const;

    MapStrategy strategy() const { return strategy_; }
    // The state a fused kernel updates (strategy incremental only; after reset).
    IncrementalMapState incremental_state() const;

private:
    void count_from_zero(const int* cells, cudaStream_t stream);

    std::size_t n_;
    int d_;
    std::size_t cell_count_;
    float scale_;
    MapStrategy strategy_;
    DeviceBuffer<int> counts_;
    DeviceBuffer<float> map_;
    DeviceBuffer<unsigned char> cub_temp_;
    DeviceBuffer<int> body_cell_, previous_cell_;  // incremental only
};

}  // namespace nbody::cuda
