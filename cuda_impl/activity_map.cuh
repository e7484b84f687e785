#pragma once
// The activity map on the device (SPEC §1), three ways to count bodies per cell (the `map`
// tuning). Every strategy starts from one cell index per body (-1: outside the unit square),
// clears the counts, counts, and normalises into the float map, every step.
#include <cstddef>
#include <string>

#include "cuda_common.cuh"

namespace nbody::cuda {

enum class MapStrategy { global_atomics, shared_histogram, cub_histogram };

// A privatised histogram keeps D*D int counters per block in the default 48 KiB of shared memory.
inline constexpr std::size_t kSharedHistogramBytes = 48 * 1024;

class ActivityMap {
public:
    // Checks the strategy fits the problem before touching the device (UsageError otherwise).
    ActivityMap(const Problem& problem, const std::string& strategy_name);
    // Counts `cells` (n entries) into the map; asynchronous on the default stream.
    void build(const int* cells);
    void copy_to_host(std::vector<float>& host) const;

private:
    std::size_t n_;
    int d_;
    std::size_t cell_count_;
    float scale_;
    MapStrategy strategy_;
    DeviceBuffer<int> counts_;
    DeviceBuffer<float> map_;
    DeviceBuffer<unsigned char> cub_temp_;
};

}  // namespace nbody::cuda
