#pragma once
// The incremental activity map on the host (the `map=incremental` strategy of serial.reference and
// the OpenMP variants): integer counts per cell and the cell of every body are kept between steps.
// A step moves the count of each body whose cell changed and rewrites only the cells whose count
// changed, as count * activity_scale(N, D): the same conversion and product as normalised_map, so
// the map equals a full recount bit for bit while costing O(N + moves) per step instead of O(D^2).
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "nbody/physics.hpp"

namespace nbody {

class ActivityCounts {
public:
    ActivityCounts(std::size_t n, int d)
        : d_(d),
          scale_(activity_scale(n, d)),
          counts_(static_cast<std::size_t>(d) * static_cast<std::size_t>(d), 0),
          cell_of_(n, kOutside) {}

    // Counts every body from scratch and writes every cell of `map` (D*D floats): the upload.
    template <class Real>
    void recount(const Real* x, const Real* y, float* map) {
        std::fill(counts_.begin(), counts_.end(), 0);
        for (std::size_t i = 0; i < cell_of_.size(); ++i) {
            cell_of_[i] = activity_cell(x[i], y[i], d_);
            if (cell_of_[i] != kOutside) ++counts_[static_cast<std::size_t>(cell_of_[i])];
        }
        for (std::size_t c = 0; c < counts_.size(); ++c) map[c] = cell_value(c);
    }

    // Body `body` now lies at (x, y): when its cell changed, moves its count and appends the cells
    // whose count changed to `changed`. Threads may call it at once for distinct bodies.
    template <class Real>
    void update(std::size_t body, Real x, Real y, std::vector<int>& changed) {
        const int cell = activity_cell(x, y, d_);
        const int previous = cell_of_[body];
        if (cell == previous) return;
        cell_of_[body] = cell;
        if (previous != kOutside) {
            std::atomic_ref<std::int32_t>(counts_[static_cast<std::size_t>(previous)])
                .fetch_sub(1, std::memory_order_relaxed);
            changed.push_back(previous);
        }
        if (cell != kOutside) {
            std::atomic_ref<std::int32_t>(counts_[static_cast<std::size_t>(cell)]).fetch_add(1, std::memory_order_relaxed);
            changed.push_back(cell);
        }
    }

    // map[c] = count * scale for the cells in `changed`, once every update of the step is done
    // (behind a barrier). Threads may call it at once, also with the same cell in their lists:
    // they store the same value.
    void rewrite(const std::vector<int>& changed, float* map) const {
        for (const int c : changed)
            std::atomic_ref<float>(map[c]).store(cell_value(static_cast<std::size_t>(c)), std::memory_order_relaxed);
    }

private:
    static constexpr int kOutside = -1;  // activity_cell's value outside the unit square

    // Read behind the barrier that ends the step's updates: no update runs at the same time.
    float cell_value(std::size_t c) const { return static_cast<float>(counts_[c]) * scale_; }

    int d_;
    float scale_;
    std::vector<std::int32_t> counts_;
    std::vector<int> cell_of_;  // kOutside outside the unit square
};

}  // namespace nbody
