// The slices of the bodies j that the GPU variants' `slices=auto` gives each block of bodies i
// (cuda.sliced's float4 family, kokkos.team_tiled): host code only, so the rules are tested without
// a GPU.
#pragma once

#include <algorithm>

namespace nbody {

// The fewest slices per block, in a power of two, that give `body_blocks` blocks at least
// `wanted_blocks` blocks in all, so that a power-of-two count of tiles splits into equal slices;
// at most one slice per tile of bodies j (`tiles`), at least one.
inline unsigned int power_of_two_slices(unsigned long wanted_blocks, unsigned int body_blocks, unsigned int tiles) {
    unsigned long slices = 1;
    while (slices * std::max(1u, body_blocks) < wanted_blocks && slices < tiles) slices *= 2;
    return static_cast<unsigned int>(std::min<unsigned long>(slices, std::max(1u, tiles)));
}

}  // namespace nbody
