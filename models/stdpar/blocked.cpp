// stdpar.blocked: the fastest form the standard allows. std::for_each(par) over work items of
// `item_blocks` blocks of `i_block` bodies i (structure of arrays); the item walks j in tiles of
// kJTile bodies, and each of its blocks takes the tile in turn, so a tile is read from memory once
// per item and from cache by its other blocks (one block per item streamed all N bodies j per 16
// bodies i, which outgrew a 2 MB L2 at N = 262144). For each body j, loaded once,
// std::for_each(unseq) over a block's bodies adds j's pull to each: libstdc++ runs an unseq loop
// under `#pragma omp simd` (built with -fopenmp-simd), so the block's bodies are the vector lanes
// and j's position and mass are broadcast. The interaction is physics.hpp's accumulate_pull with
// the exact reciprocal square root (sqrt and division vectorise; the standard has no rsqrt
// estimate); the sums over j keep index order per body. A short last block repeats its last body
// in the spare lanes (their sums are dropped), so every block has the same trip count.
#include <algorithm>

#include "stdpar_simulation.hpp"

namespace nbody {
namespace {

// Bodies j per tile: 2048 x (x, y, z, m) in float64 is 64 KB, well inside L2 beside the sums.
constexpr std::int64_t kJTile = 2048;
constexpr int kMostItemBlocks = 16;

template <class Real>
class StdparBlocked final : public stdpar::StdparSimulation<Real> {
public:
    StdparBlocked(const Problem& problem, const TuningValues& tuning)
        : stdpar::StdparSimulation<Real>(problem),
          i_block_(static_cast<int>(tuning_int(tuning, "i_block"))),
          item_blocks_(static_cast<int>(tuning_int(tuning, "item_blocks"))) {}

private:
    void compute_pulls_2d(stdpar::AxisPulls<Real>& pull) override { by_block<2>(pull); }
    void compute_pulls_3d(stdpar::AxisPulls<Real>& pull) override { by_block<3>(pull); }

    template <int Dim>
    void by_block(stdpar::AxisPulls<Real>& pull) const {
        if (i_block_ == 8) return pulls_of<Dim, 8>(pull);
        if (i_block_ == 32) return pulls_of<Dim, 32>(pull);
        return pulls_of<Dim, 16>(pull);
    }

    template <int Dim, int Block>
    void pulls_of(stdpar::AxisPulls<Real>& pull) const {
        const BodiesT<Real>& b = this->bodies();
        const Real* position[Dim];
        Real* out[Dim];
        for (int k = 0; k < Dim; ++k) {
            position[k] = b.position(k).data();
            out[k] = pull[k].data();
        }
        const Real* mass = b.m.data();
        const auto n = static_cast<std::int64_t>(b.size());
        const Real eps2 = this->eps2();
        const std::int64_t blocks = (n + Block - 1) / Block;
        const int item_blocks = item_blocks_;
        const stdpar::Indices items((blocks + item_blocks - 1) / item_blocks);
        std::for_each(std::execution::par, items.begin(), items.end(), [=](std::int64_t item) {
            const std::int64_t first_block = item * item_blocks;
            const int own_blocks = static_cast<int>(std::min<std::int64_t>(item_blocks, blocks - first_block));
            alignas(64) Real pi[kMostItemBlocks][Dim][Block];
            alignas(64) Real sum[kMostItemBlocks][Dim][Block] = {};
            for (int blk = 0; blk < own_blocks; ++blk) {
                const std::int64_t first = (first_block + blk) * Block;
                const std::int64_t count = std::min<std::int64_t>(Block, n - first);
                for (int l = 0; l < Block; ++l)
                    for (int k = 0; k < Dim; ++k)
                        pi[blk][k][l] = position[k][first + std::min<std::int64_t>(l, count - 1)];
            }
            const stdpar::Indices lanes(Block);
            for (std::int64_t tile = 0; tile < n; tile += kJTile) {
                const std::int64_t tile_end = std::min(n, tile + kJTile);
                for (int blk = 0; blk < own_blocks; ++blk) {
                    Real (*block_pi)[Block] = pi[blk];
                    Real (*block_sum)[Block] = sum[blk];
                    for (std::int64_t j = tile; j < tile_end; ++j) {
                        const Vec<Real, Dim> pj = load_axes<Dim>(position, j);
                        const Real mj = mass[j];
                        std::for_each(std::execution::unseq, lanes.begin(), lanes.end(), [&](std::int64_t l) {
                            Vec<Real, Dim> p, a;
                            for (int k = 0; k < Dim; ++k) {
                                p[k] = block_pi[k][l];
                                a[k] = block_sum[k][l];
                            }
                            accumulate_pull(p, pj, mj, eps2, a, ExactInvSqrt{});
                            for (int k = 0; k < Dim; ++k) block_sum[k][l] = a[k];
                        });
                    }
                }
            }
            for (int blk = 0; blk < own_blocks; ++blk) {
                const std::int64_t first = (first_block + blk) * Block;
                const std::int64_t count = std::min<std::int64_t>(Block, n - first);
                for (std::int64_t l = 0; l < count; ++l)
                    for (int k = 0; k < Dim; ++k) out[k][first + l] = sum[blk][k][l];
            }
        });
    }

    int i_block_;
    int item_blocks_;
};

}  // namespace

void register_stdpar_blocked(Registry& registry) {
    stdpar::add_stdpar_variant<StdparBlocked>(
        registry, "stdpar.blocked",
        "std::for_each(par) over items of several blocks of bodies i sharing tiles of j; per body j, "
        "std::for_each(unseq) over a block (SIMD lanes)",
        0.03,
        {{.name = "i_block",
          .description = "bodies i per block, the lanes of the unseq loop",
          .default_value = "16",
          .allowed_values = {"8", "16", "32"},
          .min_value = 0,
          .max_value = 0},
         {.name = "item_blocks",
          .description = "blocks of bodies i per parallel work item, sharing each tile of 2048 bodies j from cache",
          .default_value = "8",
          .allowed_values = {"1", "4", "8", "16"},
          .min_value = 0,
          .max_value = 0}});
}

}  // namespace nbody
