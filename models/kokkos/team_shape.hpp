// The shape `tile=auto` and `slices=auto` give the tiled pulls' teams (kokkos.team_tiled, whose
// measurements chose them, and kokkos.folded_mass): host code only, so the rules are tested without
// a GPU (docs/performance-kokkos.md, docs/scaling.md).
#pragma once

#include "nbody/slice_count.hpp"

namespace nbody::kokkos {

// tile=auto (GPU): blocks of bodies small enough that small N still spread over many teams (512-body
// blocks left N = 1024 two blocks; smaller tiles also shorten each thread's chain of dependent
// interactions: at N = 1024 with graphs 13.6, 10.1 and 6.05 us per step with 128-, 64- and 32-body
// tiles), 512 from N = 65536 where the larger tile is the faster one. `bodies`: those whose pulls
// are summed.
inline int auto_tile(int bodies) {
    if (bodies >= 65536) return 512;
    if (bodies >= 32768) return 256;
    if (bodies >= 8192) return 128;
    if (bodies >= 2048) return 64;
    return 32;
}

// tile=auto over several ranks, for a rank of `owned` bodies i pulled by all `n`. From 8192 bodies:
// twice the tile of its own bodies, at most the tile of N. Its fewer blocks of bodies i are made up
// by slices, but the overlapped pull from the owned block alone has at most (owned / tile)^2 teams
// of one tile: 1024 with the tile of N at 16384 of 65536 bodies, half a wave of the GPU; 256 gives
// it 4096 (4 x H200 over 4 GPUs: 430.1 against 442.3 us per step in 2D float32, 1274.7 against
// 1306.9 in 3D float64). With 65536 bodies the tile of N stays the faster (6418 against 6475 us at
// N = 262144). Below 8192, the tile of its own bodies, whose small blocks keep the owned block's pull
// spread over many teams (at N = 16384 over 4 GPUs the tile of N ran 103.6 us against 45.6). One
// process: its bodies are N.
inline int auto_tile_of_rank(int owned, int n) {
    if (owned < 8192) return auto_tile(owned);
    const int twice_own = 2 * auto_tile(owned);
    return twice_own < auto_tile(n) ? twice_own : auto_tile(n);
}

// team_size=auto: one thread per group of a block's bodies when each thread sums several
// (`bodies_per_thread` > 1), else one per body, at most 256 (the measured default of the other
// mappings).
inline int auto_team_size(int tile, int bodies_per_thread) {
    if (bodies_per_thread > 1) return tile / bodies_per_thread;
    return tile < 256 ? tile : 256;
}

// slices=auto for `bodies` bodies i in blocks of `tile`, pulled by `sources` bodies j (N, also over
// ranks) in tiles of `source_tile` (0: `tile`). GPU: enough teams for eight waves of full teams
// (`concurrency`, the threads the space runs at once, over `team_size`), so that the teams are short
// and the last, partial wave a small part of the pull, in a power of two (as cuda.sliced's rule):
// teams of one tile were still the faster at N = 65536 on one H200 (2D float32: 1608.0 us per step
// with these 128 slices against 1669.6 with the two waves of 33 before); at most one slice per tile
// of bodies j. Host: two teams per thread, at most one slice per block of bodies i (the rule
// measured there, where a slice's partial pulls cost atomic additions).
inline int auto_slices(bool gpu, long concurrency, int bodies, int sources, int team_size, int tile,
                       int source_tile = 0) {
    if (source_tile == 0) source_tile = tile;
    const long blocks = (bodies + tile - 1) / tile;
    const long tiles = (sources + source_tile - 1) / source_tile;
    if (blocks == 0 || tiles == 0) return 1;  // a rank with an empty block
    const long full_teams = concurrency / team_size;
    if (gpu)
        return static_cast<int>(power_of_two_slices(static_cast<unsigned long>(8 * full_teams),
                                                    static_cast<unsigned int>(blocks), static_cast<unsigned int>(tiles)));
    const long slices = (2 * full_teams + blocks - 1) / blocks;
    return static_cast<int>(slices < 1 ? 1 : (slices > blocks ? blocks : slices));
}

// A pull from part of the bodies j (exchange=overlap, CUDA: the owned block's, the other blocks') in
// blocks of `block` bodies i, `bodies_per_thread` to a thread, over tiles of `source_tile` bodies j.
struct PartPullShape {
    int block;
    int bodies_per_thread;
    int source_tile;
};

// A rank's auto shape (`auto_shape`: tile, team_size, body_mapping and slices all auto) with two
// bodies per thread (4096 to 16383 bodies of its own) pulls from the other blocks with four per
// thread in teams of 32 threads over its tile of bodies j, in float32: 4 x H200 at N = 16384 in 2D,
// 39.1 against 40.4 us per step over 4 GPUs (its tile 64), 65.7 against 66.1 over 2 (its tile 128).
// Four per thread load each staged body once for four interactions, and the short tile keeps one
// tile per team and thousands of teams. In 3D float64, where the FP64 units bound the loop, it was
// slower (96.1 against 95.1 us over 4 GPUs, 180.7 against 177.6 over 2;
// results/h200x4-part-registers.txt parts B, D): float64 keeps the rank's own shape, as every
// other rank.
inline PartPullShape other_blocks_shape(int tile, int bodies_per_thread, bool auto_shape, bool float32) {
    if (auto_shape && float32 && bodies_per_thread == 2) return {128, 4, tile};
    return {tile, bodies_per_thread, tile};
}

}  // namespace nbody::kokkos
