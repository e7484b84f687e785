// stdpar.blocked: the fastest form the standard allows. std::for_each(par) over blocks of
// `i_block` bodies i (structure of arrays); for each body j, loaded once, std::for_each(unseq)
// over the block's bodies adds j's pull to each: libstdc++ runs an unseq loop under
// `#pragma omp simd` (built with -fopenmp-simd), so the block's bodies are the vector lanes and j's
// position and mass are broadcast. The interaction is physics.hpp's accumulate_pull with the exact
// reciprocal square root (sqrt and division vectorise; the standard has no rsqrt estimate); the
// sums over j keep index order per body. A short last block repeats its last body in the spare lanes
// (their sums are dropped), so every block has the same trip count.
#include <algorithm>

#include "stdpar_simulation.hpp"

namespace nbody {
namespace {

template <class Real>
class StdparBlocked final : public stdpar::StdparSimulation<Real> {
public:
    StdparBlocked(const Problem& problem, const TuningValues& tuning)
        : stdpar::StdparSimulation<Real>(problem), i_block_(static_cast<int>(tuning_int(tuning, "i_block"))) {}

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
        const stdpar::Indices blocks((n + Block - 1) / Block);
        std::for_each(std::execution::par, blocks.begin(), blocks.end(), [=](std::int64_t block) {
            const std::int64_t first = block * Block;
            const std::int64_t count = std::min<std::int64_t>(Block, n - first);
            alignas(64) Real pi[Dim][Block];
            alignas(64) Real sum[Dim][Block] = {};
            for (int l = 0; l < Block; ++l)
                for (int k = 0; k < Dim; ++k) pi[k][l] = position[k][first + std::min<std::int64_t>(l, count - 1)];
            const stdpar::Indices lanes(Block);
            for (std::int64_t j = 0; j < n; ++j) {
                const Vec<Real, Dim> pj = load_axes<Dim>(position, j);
                const Real mj = mass[j];
                std::for_each(std::execution::unseq, lanes.begin(), lanes.end(), [&](std::int64_t l) {
                    Vec<Real, Dim> p, a;
                    for (int k = 0; k < Dim; ++k) {
                        p[k] = pi[k][l];
                        a[k] = sum[k][l];
                    }
                    accumulate_pull(p, pj, mj, eps2, a, ExactInvSqrt{});
                    for (int k = 0; k < Dim; ++k) sum[k][l] = a[k];
                });
            }
            for (std::int64_t l = 0; l < count; ++l)
                for (int k = 0; k < Dim; ++k) out[k][first + l] = sum[k][l];
        });
    }

    int i_block_;
};

}  // namespace

void register_stdpar_blocked(Registry& registry) {
    stdpar::add_stdpar_variant<StdparBlocked>(
        registry, "stdpar.blocked",
        "std::for_each(par) over blocks of bodies i; per body j, std::for_each(unseq) over the block (SIMD lanes)",
        0.03,
        {{.name = "i_block",
          .description = "bodies i per parallel work item, the lanes of the unseq loop",
          .default_value = "16",
          .allowed_values = {"8", "16", "32"},
          .min_value = 0,
          .max_value = 0}});
}

}  // namespace nbody
