// omp_target.simd_j: `simd` on the inner loop instead: each OpenMP thread (a warp) takes one
// body i, its lanes split the bodies j, and a simd reduction adds the lanes' partial pulls.
#include "omp_target.hpp"

namespace nbody::omp_target {
namespace {

struct SimdJForce {
    Launch launch;
    template <class Real, int Dim>
    void pulls(const Real* pos, const Real* mass, Real* pull, int n, Real eps2) const {
        const int teams = launch.teams, threads = launch.threads;  // a member in the clause crashes GCC 12
#pragma omp target teams distribute parallel for num_teams(teams) thread_limit(threads)
        for (int i = 0; i < n; ++i) {
            const Real* p_axes[Dim];
            Real* a_axes[Dim];
            axis_pointers<Dim>(pos, n, p_axes);
            axis_pointers<Dim>(pull, n, a_axes);
            const Vec<Real, Dim> pi = load_axes<Dim>(p_axes, i);
            // Scalars: GCC 12 reduces scalars over simd lanes, not a Vec.
            Real ax = 0, ay = 0, az = 0;
#pragma omp simd reduction(+ : ax, ay, az)
            for (int j = 0; j < n; ++j) {
                const Vec<Real, Dim> pj = load_axes<Dim>(p_axes, j);
                Vec<Real, Dim> a{};
                accumulate_pull(pi, pj, mass[j], eps2, a, ExactInvSqrt{});
                ax += a[0];
                ay += a[1];
                if constexpr (Dim == 3) az += a[2];
            }
            Vec<Real, Dim> a;
            a[0] = ax;
            a[1] = ay;
            if constexpr (Dim == 3) a[2] = az;
            store_axes<Dim>(a_axes, i, a);
        }
    }
};

}  // namespace

VariantEntry simd_j_entry() {
    return {.id = "omp_target.simd_j",
            .description = "one body i per warp, simd over j with a reduction of the lanes' pulls; num_teams/thread_limit tunings",
            .tunings = launch_tunings("8"),
            .create = [](const Problem& p, const TuningValues& t, OffloadDevice device) {
                return make_simulation(p, SimdJForce{launch_for(t, p.n, 1)}, device);
            }};
}

}  // namespace nbody::omp_target
