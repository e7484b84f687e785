// The shape `slices=auto` and `bodies_per_thread=auto` give the float4 family's pull (host code
// only, so the rules are tested without a GPU; scripts/scaling_model.py's grid() models the slices).
#pragma once

#include <algorithm>
#include <cstddef>

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

// bodies_per_thread=auto for `bodies` bodies i (a rank's owned block, all N in one process): 4, the
// best measured at large N, from 8192; 1 below, where 4 per thread leave fewer than 8 blocks of
// bodies i (256 threads each) and the pull too few blocks to fill the SMs (4 x H200, N = 16384 over
// 4 GPUs: 43.5 against 51.8 us per step in 2D float32, 111.3 against 145.6 in 3D float64; one GPU
// at N = 4096: 21.8 against 29.0 and 38.5 against 61.8; docs/scaling.md).
inline int auto_bodies_per_thread(std::size_t bodies) { return bodies < 8192 ? 1 : 4; }

}  // namespace nbody::cuda
