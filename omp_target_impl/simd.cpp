// omp_target.simd: omp_target.naive with `simd` on the loop over i, so that the 32 lanes of each
// warp take 32 bodies i (GCC maps `simd` onto a warp's lanes), and num_teams / thread_limit as
// tunings.
#include "omp_target.hpp"

namespace nbody::omp_target {
namespace {

struct SimdForce {
    Launch launch;
    template <class Real, int Dim>
    void pulls(const Real* pos, const Real* mass, Real* pull, int n, Real eps2) const {
        const int teams = launch.teams, threads = launch.threads;  // a member in the clause crashes GCC 12
#pragma omp target teams distribute parallel for simd num_teams(teams) thread_limit(threads)
        for (int i = 0; i < n; ++i) {
            const Real* p_axes[Dim];
            Real* a_axes[Dim];
            axis_pointers<Dim>(pos, n, p_axes);
            axis_pointers<Dim>(pull, n, a_axes);
            const Vec<Real, Dim> pi = load_axes<Dim>(p_axes, i);
            Vec<Real, Dim> a{};
            for (int j = 0; j < n; ++j) {
                const Vec<Real, Dim> pj = load_axes<Dim>(p_axes, j);
                accumulate_pull(pi, pj, mass[j], eps2, a, ExactInvSqrt{});
            }
            store_axes<Dim>(a_axes, i, a);
        }
    }
};

}  // namespace

VariantEntry simd_entry() {
    return {.id = "omp_target.simd",
            .description = "parallel for simd over i: 32 bodies per warp, one per lane; num_teams/thread_limit tunings",
            .tunings = launch_tunings("8"),
            .create = [](const Problem& p, const TuningValues& t, OffloadDevice device) {
                return make_simulation(p, SimdForce{launch_for(t, p.n, kLanes)}, device);
            }};
}

}  // namespace nbody::omp_target
