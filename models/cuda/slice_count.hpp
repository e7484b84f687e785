// How many slices of the bodies j `slices=auto` gives the float4 family's pull (host code only,
// so the rule is tested without a GPU; scripts/scaling_model.py's grid() models the same).
#pragma once

#include <algorithm>
#include <functional>
#include <queue>
#include <vector>

namespace nbody::cuda {

// The share of the SMs' time the pull's grid keeps busy: `body_blocks` x `slices` blocks, a slice
// holding ceil(tiles / slices) tiles of bodies j (the last slice the rest), handed out in launch
// order (body blocks fastest) to the SM with the least work. Blocks on one SM share its pipes, so
// the pull lasts as long as the busiest SM (docs/scaling.md, "The 3D float64 dip").
inline double processor_balance(unsigned int body_blocks, unsigned int slices, unsigned int tiles,
                                unsigned int processors) {
    if (body_blocks == 0 || slices == 0 || tiles == 0 || processors == 0) return 0.0;
    const unsigned long per_slice = (tiles + slices - 1) / slices;
    std::priority_queue<unsigned long, std::vector<unsigned long>, std::greater<>> loads;
    for (unsigned int p = 0; p < processors; ++p) loads.push(0);
    unsigned long total = 0, busiest = 0;
    for (unsigned long y = 0; y < slices; ++y) {
        const unsigned long first = y * per_slice;
        const unsigned long work = first >= tiles ? 0 : std::min<unsigned long>(tiles, first + per_slice) - first;
        for (unsigned int x = 0; x < body_blocks; ++x) {
            const unsigned long load = loads.top() + work;
            loads.pop();
            loads.push(load);
            total += work;
            busiest = std::max(busiest, load);
        }
    }
    return busiest == 0 ? 0.0 : static_cast<double>(total) / (static_cast<double>(processors) * busiest);
}

// At least two waves of resident blocks; from there up to twice as many slices, the count whose
// grid balances the SMs best (the smaller count unless a larger one is 0.5 % better), at most one
// slice per tile of bodies j.
inline unsigned int balanced_slice_count(unsigned int body_blocks, unsigned int tiles, unsigned int processors,
                                         unsigned int resident_per_processor) {
    const unsigned long bodies = std::max(1u, body_blocks);
    const unsigned long two_waves = 2ul * processors * std::max(1u, resident_per_processor);
    const unsigned long least = std::max(1ul, (two_waves + bodies - 1) / bodies);
    const unsigned long most = std::max(1u, tiles);
    unsigned long best = std::min(least, most);
    double best_balance = processor_balance(body_blocks, static_cast<unsigned int>(best), tiles, processors);
    for (unsigned long s = best + 1; s <= std::min(2 * least, most); ++s) {
        const double balance = processor_balance(body_blocks, static_cast<unsigned int>(s), tiles, processors);
        if (balance > best_balance + 0.005) {
            best = s;
            best_balance = balance;
        }
    }
    return static_cast<unsigned int>(best);
}

}  // namespace nbody::cuda
