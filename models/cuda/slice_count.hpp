// The shape `slices=auto` and `bodies_per_thread=auto` give the float4 family's pull (host code
// only, so the rules are tested without a GPU; scripts/scaling_model.py's grid() models the slices).
#pragma once

#include <algorithm>
#include <cstddef>

#include "nbody/slice_count.hpp"

namespace nbody::cuda {

// Enough slices for 32 waves of resident blocks, so that the blocks are short and the last, partial
// wave a small part of the pull (4 x H200, one GPU at N = 262144: 26.30 ms per step with these 128
// slices against 26.61 with the 32 of eight waves in 2D float32, 78.46 against 79.06 with 64 in 3D
// float64; docs/performance-cuda.md); a power of two, at most one slice per tile of bodies j.
inline unsigned int slice_count(unsigned int body_blocks, unsigned int tiles, unsigned int processors,
                                unsigned int resident_per_processor) {
    const unsigned long wave =
        static_cast<unsigned long>(std::max(1u, processors)) * std::max(1u, resident_per_processor);
    return power_of_two_slices(32 * wave, body_blocks, tiles);
}

// bodies_per_thread=auto for `bodies` bodies i (a rank's owned block, all N in one process): 4, the
// best measured at large N, from 8192; 1 below, where 4 per thread leave fewer than 8 blocks of
// bodies i (256 threads each) and the pull too few blocks to fill the SMs (4 x H200, N = 16384 over
// 4 GPUs: 43.5 against 51.8 us per step in 2D float32, 111.3 against 145.6 in 3D float64; one GPU
// at N = 4096: 21.8 against 29.0 and 38.5 against 61.8; docs/scaling.md).
inline int auto_bodies_per_thread(std::size_t bodies) { return bodies < 8192 ? 1 : 4; }

// The block size (and tile of bodies j) of the overlapped exchange's pull from a rank's owned block.
// With one body per thread (a rank below 8192 bodies) that pull's (owned / block)^2 blocks of the
// tuned size are a fraction of a wave (256 on 132 SMs for 4096 bodies and 256 threads), and it
// outlasts the gather beside it; 64-thread blocks give it 16 times as many (4 x H200, N = 16384
// over 4 GPUs: 41.97 us per step against 43.52 with 256 in 2D float32; 3D float64 111.4 with 256,
// 107.2 with 128, 100.6 with 64 in another call). With more bodies per thread, the tuned block
// (over 2 GPUs at 16384, 4 per thread, 128-thread blocks ran 74.6 against 65.8 us;
// results/h200x4-sliced-axes.txt, docs/scaling.md).
inline unsigned int owned_part_block(unsigned int block, int bodies_per_thread) {
    return bodies_per_thread == 1 ? std::min(block, 64u) : block;
}

}  // namespace nbody::cuda
