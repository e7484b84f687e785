// How many slices of the bodies j `slices=auto` gives the float4 family's pull (host code only,
// so the rule is tested without a GPU; scripts/scaling_model.py's grid() models the same).
#pragma once

#include <algorithm>

namespace nbody::cuda {

// The power of two at least `wanted` / `blocks` (1 for no blocks).
inline unsigned int power_of_two_covering(unsigned long wanted, unsigned int blocks) {
    unsigned long slices = 1;
    while (slices * std::max(1u, blocks) < wanted) slices *= 2;
    return static_cast<unsigned int>(slices);
}

// Enough slices for eight waves of resident blocks, so that the last, partial wave is a small part
// of the pull, but more than 32 (the most measured with long slices) only as many as two waves
// need (a rank's few body blocks); a power of two, so that a power-of-two count of tiles splits
// into equal slices; at most one slice per tile of bodies j.
inline unsigned int slice_count(unsigned int body_blocks, unsigned int tiles, unsigned int processors,
                                unsigned int resident_per_processor) {
    const unsigned long wave =
        static_cast<unsigned long>(std::max(1u, processors)) * std::max(1u, resident_per_processor);
    const unsigned int eight_waves = power_of_two_covering(8 * wave, body_blocks);
    const unsigned int two_waves = power_of_two_covering(2 * wave, body_blocks);
    return std::max(1u, std::min({eight_waves, std::max(32u, two_waves), tiles}));
}

}  // namespace nbody::cuda
