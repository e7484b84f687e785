// stdpar.blocked: the fastest form the standard allows. std::for_each(par) over work items of
// `item_blocks` blocks of `i_block` bodies i (structure of arrays); the item walks j in tiles of
// kJTile bodies, and each of its blocks takes the tile in turn, so a tile is read from memory once
// per item and from cache by its other blocks (one block per item streamed all N bodies j per 16
// bodies i, which outgrew a 2 MB L2 at N = 262144). For each body j, loaded once,
// std::for_each(unseq) over a block's bodies adds j's pull to each: libstdc++ runs an unseq loop
// under `#pragma omp simd` (built with -fopenmp-simd), so the block's bodies are the vector lanes
// and j's position and mass are broadcast. The interaction is physics.hpp's accumulate_pull; its
// reciprocal square root (`inv_sqrt`) is either exact (sqrt and division, which vectorise but issue
// slowly) or, by default, inv_sqrt.hpp's portable estimate (an integer seed refined by
// multiply-adds, in plain C++: the standard has no hardware estimate to start from), each body's
// mass folded into its coefficients once per step. The sums over j keep index order per body. A
// short last block repeats its last body in the spare lanes (their sums are dropped), so every
// block has the same trip count.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "nbody/foldable_masses.hpp"
#include "nbody/inv_sqrt.hpp"
#include "stdpar_simulation.hpp"

namespace nbody {
namespace {

// Bodies j per tile: 2048 x (x, y, z and the folded mass's 3 coefficients) in float64 is 96 KB, well
// inside L2 beside the sums.
constexpr std::int64_t kJTile = 2048;
constexpr int kMostItemBlocks = 16;

template <class Real, int Dim>
class StdparBlocked final : public stdpar::StdparSimulation<Real, Dim> {
public:
    StdparBlocked(const Problem& problem, const TuningValues& tuning)
        : stdpar::StdparSimulation<Real, Dim>(problem),
          i_block_(static_cast<int>(tuning_int(tuning, "i_block"))),
          item_blocks_(static_cast<int>(tuning_int(tuning, "item_blocks"))),
          exact_(tuning.at("inv_sqrt") == "exact") {}

private:
    // The exact form reads the masses as they are; the estimate reads them folded, saturating r^2 in a
    // step where some coordinate passed the bound.
    void compute_pulls(stdpar::AxisPulls<Real, Dim>& pull) override {
        if (exact_) return by_block(pull, ExactInvSqrt{}, this->bodies().m.data());
        if (fold_masses_beyond_bound()) return by_block(pull, SaturatedPortableInvSqrt{}, folded_.data());
        return by_block(pull, PortableInvSqrt{}, folded_.data());
    }
    template <class InvSqrt, class Mass>
    void by_block(stdpar::AxisPulls<Real, Dim>& pull, InvSqrt inv_sqrt, const Mass* mass) const {
        if (i_block_ == 8) return pulls_of<8>(pull, inv_sqrt, mass);
        if (i_block_ == 32) return pulls_of<32>(pull, inv_sqrt, mass);
        return pulls_of<16>(pull, inv_sqrt, mass);
    }

    // Each body's mass folded into the estimate's coefficients (mass_cubed: no multiply by m per
    // interaction) and whether some coordinate passes overflow_free_bound (a NaN does), in one pass.
    bool fold_masses_beyond_bound() {
        const BodiesT<Real>& b = this->bodies();
        const Real* position[Dim];
        for (int k = 0; k < Dim; ++k) position[k] = b.position(k).data();
        const Real* mass = b.m.data();
        folded_.resize(b.size());
        PortableInvSqrt::FoldedMass<Real>* folded = folded_.data();
        const Real bound = overflow_free_bound<Real, Dim>(this->eps2());
        const stdpar::Indices bodies(static_cast<std::int64_t>(b.size()));
        return std::transform_reduce(std::execution::par_unseq, bodies.begin(), bodies.end(), false,
                                     std::logical_or<>{}, [=](std::int64_t j) {
                                         folded[j] = PortableInvSqrt::fold(mass[j]);
                                         bool beyond = false;
                                         for (int k = 0; k < Dim; ++k) beyond = beyond || !(std::abs(position[k][j]) <= bound);
                                         return beyond;
                                     });
    }

    // mass[j]: body j's mass, or its fold for the estimate.
    template <int Block, class InvSqrt, class Mass>
    void pulls_of(stdpar::AxisPulls<Real, Dim>& pull, InvSqrt inv_sqrt, const Mass* mass) const {
        const BodiesT<Real>& b = this->bodies();
        const Real* position[Dim];
        Real* out[Dim];
        for (int k = 0; k < Dim; ++k) {
            position[k] = b.position(k).data();
            out[k] = pull[k].data();
        }
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
                        const Mass& mj = mass[j];
                        std::for_each(std::execution::unseq, lanes.begin(), lanes.end(), [&](std::int64_t l) {
                            Vec<Real, Dim> p, a;
                            for (int k = 0; k < Dim; ++k) {
                                p[k] = block_pi[k][l];
                                a[k] = block_sum[k][l];
                            }
                            accumulate_pull(p, pj, mj, eps2, a, inv_sqrt);
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
    bool exact_;
    std::vector<PortableInvSqrt::FoldedMass<Real>> folded_;  // the estimate's masses, refolded each step
};

}  // namespace

void register_stdpar_blocked(Registry& registry) {
    stdpar::add_stdpar_variant<StdparBlocked>(
        registry, "stdpar.blocked",
        "std::for_each(par) over items of several blocks of bodies i sharing tiles of j; per body j, "
        "std::for_each(unseq) over a block (SIMD lanes)",
        0.18,                      // reached 0.14-0.25 (16 cores), 0.26 (2)
        Reproducibility::bitwise,  // each body's sum over j in index order, one lane
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
          .max_value = 0},
         {.name = "inv_sqrt",
          .description = "reciprocal square root: newton (inv_sqrt.hpp's portable estimate: an integer seed "
                         "refined by multiply-adds to full precision) or exact (sqrt and division)",
          .default_value = "newton",
          .allowed_values = {"newton", "exact"},
          .min_value = 0,
          .max_value = 0}});
}

}  // namespace nbody
