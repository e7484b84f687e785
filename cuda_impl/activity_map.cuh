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
    // Counts body i in `cell` instead of its current cell.
    __device__ void move(int i, int cell) const {
        const int from = body_cell[i];
        if (cell == from) return;
        if (from >= 0) atomicSub(&counts[from], 1);
        if (cell >= 0) atomicAdd(&counts[cell], 1);
        body_cell[i] = cell;
        previous_cell[i] = from;
    }
    // After the barrier: the cells body i's last move left and entered, from their counts.
    __device__ void rewrite_moved(int i) const {
        const int from = previous_cell[i];
        const int to = body_cell[i];
        if (from == to) return;
        rewrite(from);
        rewrite(to);
        previous_cell[i] = to;
    }
    __device__ void rewrite(int cell) const {
        if (cell >= 0) map[cell] = static_cast<float>(counts[cell]) * scale;
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
    // changed, the other strategies count from zero; asynchronous on the default stream.
    void build(const int* cells);
    void copy_to_host(std::vector<float>& host) const;

    MapStrategy strategy() const { return strategy_; }
    // The state a fused kernel updates (strategy incremental only; after reset).
    IncrementalMapState incremental_state() const;

private:
    void count_from_zero(const int* cells);

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
