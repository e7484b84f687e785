// omp_target.tiled: the bodies j staged in a team-local tile, as cuda.tiled stages them in shared
// memory: each team takes blocks of threads x kLanes bodies i; its threads copy a tile of bodies j
// into an array declared in the teams region (shared by the team's threads), then every lane
// accumulates its body i over the tile into its pull, which stays in device memory between tiles
// (a private accumulator cannot outlive one worksharing loop).
#include <algorithm>

#include "omp_target.hpp"

namespace nbody::omp_target {
namespace {

constexpr int kTile = 256;

struct TiledForce {
    Launch launch;
    template <class Real, int Dim>
    void pulls(const Real* pos, const Real* mass, Real* pull, int n, Real eps2) const {
        const int teams = launch.teams, threads = launch.threads;  // a member in the clause crashes GCC 12
        const int block = threads * kLanes;
        const int blocks = (n + block - 1) / block;
#pragma omp target teams num_teams(teams) thread_limit(threads)
        {
            Real tile[Dim + 1][kTile];
            for (int blk = omp_get_team_num(); blk < blocks; blk += omp_get_num_teams()) {
                const int first = blk * block, last = std::min(first + block, n);
#pragma omp parallel num_threads(threads)
                for (int j0 = 0; j0 < n; j0 += kTile) {
                    const int tile_len = n - j0 < kTile ? n - j0 : kTile;  // no std::min: it would odr-use kTile, which Clang's device code does not have
#pragma omp for simd
                    for (int t = 0; t < tile_len; ++t) {
                        for (int k = 0; k < Dim; ++k) tile[k][t] = pos[k * n + j0 + t];
                        tile[Dim][t] = mass[j0 + t];
                    }
#pragma omp for simd
                    for (int i = first; i < last; ++i) {
                        const Real xi = pos[i], yi = pos[n + i], zi = Dim == 3 ? pos[2 * n + i] : Real(0);
                        Real ax = 0, ay = 0, az = 0;
                        if (j0 > 0) {
                            ax = pull[i];
                            ay = pull[n + i];
                            if constexpr (Dim == 3) az = pull[2 * n + i];
                        }
                        for (int t = 0; t < tile_len; ++t)
                            interact<Real, Dim>(xi, yi, zi, tile[0][t], tile[1][t], Dim == 3 ? tile[2][t] : Real(0),
                                                tile[Dim][t], eps2, ax, ay, az);
                        pull[i] = ax;
                        pull[n + i] = ay;
                        if constexpr (Dim == 3) pull[2 * n + i] = az;
                    }
                }
            }
        }
    }
};

}  // namespace

VariantEntry tiled_entry() {
    return {.id = "omp_target.tiled",
            .description = "omp_target.simd with tiles of 256 bodies j in a team-local array; num_teams/thread_limit tunings",
            .tunings = launch_tunings(8),
            .create = [](const Problem& p, const TuningValues& t, OffloadDevice device) {
                return make_simulation(p, TiledForce{launch_for(t, p.n, kLanes)}, device);
            },
            .expected_efficiency = 0.023,
            .full_rate_bodies = 32768,
            .step_overhead_s = 0.002,  // fitted to the GPU sweep (docs/estimates.md)
            .reproducibility = Reproducibility::bitwise};  // each body's sum tile by tile in index order
}

}  // namespace nbody::omp_target
