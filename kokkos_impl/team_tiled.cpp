// kokkos.team_tiled: the shared-memory tiling of cuda.tiled (GPU Gems 3, ch. 31) written with a
// TeamPolicy and level-0 scratch. Each team owns a block of `tile` bodies and walks the j bodies
// in tiles of `tile`, staged (x, y, m) in scratch by the whole team; the block's bodies are spread
// over the team's threads (one each when team_size == tile, the GPU case; all on one thread with
// team_size 1, the host case, where the tile is a cache block). The partial sums live in scratch
// too, so any team size works with any tile. The last tile is padded with zero-mass bodies, whose
// pull is exactly zero, so every thread reaches every barrier.
#include <string>

#include "kokkos_simulation.hpp"
#include "nbody/model_registration.hpp"

namespace nbody {
namespace kokkos {

template <class Space>
using ScratchFloats = Kokkos::View<float*, typename Space::scratch_memory_space, Kokkos::MemoryUnmanaged>;

// Scratch of one team: the staged tile (x, y, m) and the block's partial sums (ax, ay).
template <class Space>
std::size_t team_tiled_scratch_bytes(int tile) {
    return 5 * ScratchFloats<Space>::shmem_size(tile);
}

template <class Space>
void team_tiled_pulls(const Space& space, DeviceFloats<Space> x, DeviceFloats<Space> y, DeviceFloats<Space> m,
                      DeviceFloats<Space> ax, DeviceFloats<Space> ay, int n, float eps2, int team_size, int tile) {
    using Policy = Kokkos::TeamPolicy<Space>;
    using Member = typename Policy::member_type;
    const int blocks = (n + tile - 1) / tile;
    const auto policy =
        Policy(space, blocks, team_size).set_scratch_size(0, Kokkos::PerTeam(team_tiled_scratch_bytes<Space>(tile)));
    Kokkos::parallel_for(
        "nbody::kokkos::team_tiled", policy, KOKKOS_LAMBDA(const Member& team) {
            const ScratchFloats<Space> tile_x(team.team_scratch(0), tile), tile_y(team.team_scratch(0), tile),
                tile_m(team.team_scratch(0), tile), sum_x(team.team_scratch(0), tile),
                sum_y(team.team_scratch(0), tile);
            const int block_start = team.league_rank() * tile;
            const int block_size = n - block_start < tile ? n - block_start : tile;
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, block_size), [&](const int k) {
                sum_x(k) = 0.0f;
                sum_y(k) = 0.0f;
            });
            for (int tile_start = 0; tile_start < n; tile_start += tile) {
                Kokkos::parallel_for(Kokkos::TeamThreadRange(team, tile), [&](const int k) {
                    const int j = tile_start + k;
                    tile_x(k) = j < n ? x(j) : 0.0f;
                    tile_y(k) = j < n ? y(j) : 0.0f;
                    tile_m(k) = j < n ? m(j) : 0.0f;
                });
                team.team_barrier();
                Kokkos::parallel_for(Kokkos::TeamThreadRange(team, block_size), [&](const int k) {
                    const float xi = x(block_start + k), yi = y(block_start + k);
                    float pull_x = sum_x(k), pull_y = sum_y(k);
                    for (int t = 0; t < tile; ++t)
                        accumulate_pull(xi, yi, tile_x(t), tile_y(t), tile_m(t), eps2, pull_x, pull_y, InvSqrt{});
                    sum_x(k) = pull_x;
                    sum_y(k) = pull_y;
                });
                team.team_barrier();
            }
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, block_size), [&](const int k) {
                ax(block_start + k) = sum_x(k);
                ay(block_start + k) = sum_y(k);
            });
        });
}

template <class Space>
class TeamTiled final : public KokkosSimulation<Space> {
public:
    TeamTiled(const Problem& problem, const TuningValues& tuning)
        : KokkosSimulation<Space>(problem, tuning),
          team_size_(static_cast<int>(tuning_int(tuning, "team_size"))),
          tile_(static_cast<int>(tuning_int(tuning, "tile"))) {
        const std::size_t limit = Kokkos::TeamPolicy<Space>::scratch_size_max(0);
        if (team_tiled_scratch_bytes<Space>(tile_) > limit)
            throw UsageError("tuning tile=" + std::to_string(tile_) + " needs " +
                             std::to_string(team_tiled_scratch_bytes<Space>(tile_)) + " bytes of level-0 scratch; " +
                             SpaceName<Space>::value + " offers " + std::to_string(limit));
    }

private:
    void compute_pulls() override {
        team_tiled_pulls(this->space(), this->x(), this->y(), this->m(), this->ax(), this->ay(), this->n(),
                         this->eps2(), team_size_, tile_);
    }

    int team_size_, tile_;
};

}  // namespace kokkos

void register_kokkos_team_tiled(Registry& registry) {
    kokkos::for_each_space([&](auto tag) {
        using Space = typename decltype(tag)::type;
        // Host spaces run teams of one thread (Kokkos' host team size is the threads of one core).
        const bool gpu = kokkos::kRunsOnGpu<Space>;
        registry.add(kokkos::describe_variant<Space, kokkos::TeamTiled<Space>>(
            "team_tiled", "TeamPolicy, j tiles staged in level-0 scratch by the team (the shared-memory tiling)",
            {kokkos::power_of_two_tuning("team_size", "threads per team", gpu ? 32 : 1, gpu ? 1024 : 1,
                                         gpu ? 256 : 1),
             kokkos::power_of_two_tuning("tile", "bodies per tile (and per team's block of bodies)", 32, 1024,
                                         gpu ? 256 : 512)}));
    });
}

}  // namespace nbody
