// How many slices of the bodies j `slices=auto` gives the float4 family's pull (host code only,
// so the rule is tested without a GPU; scripts/scaling_model.py's grid() models the same).
#pragma once

#include <algorithm>

namespace nbody::cuda {

// The most slices auto gives: the largest count measured (docs/scaling.md, "Slices of the bodies j").
inline constexpr unsigned int kMostAutoSlices = 32;

// Enough slices for eight waves of resident blocks, so that the last, partial wave is a small part
// of the pull; a power of two, so that a power-of-two count of tiles splits into equal slices; at
// most kMostAutoSlices, and at most one slice per tile of bodies j.
inline unsigned int slice_count(unsigned int body_blocks, unsigned int tiles, unsigned int processors,
                                unsigned int resident_per_processor) {
    const unsigned long wanted = 8ul * std::max(1u, processors) * std::max(1u, resident_per_processor);
    const unsigned long bodies = std::max(1u, body_blocks);
    unsigned int slices = 1;
    while (slices < kMostAutoSlices && slices * bodies < wanted) slices *= 2;
    return std::max(1u, std::min(slices, tiles));
}

}  // namespace nbody::cuda
