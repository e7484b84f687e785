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
            const Real xi = pos[i], yi = pos[n + i], zi = Dim == 3 ? pos[2 * n + i] : Real(0);
            // Scalars: GCC 12 reduces scalars over simd lanes, not a Vec. Each j's pull is computed
            // into zeroed scalars and then added, as the lanes' partial sums are.
            Real ax = 0, ay = 0, az = 0;
#pragma omp simd reduction(+ : ax, ay, az)
            for (int j = 0; j < n; ++j) {
                Real pax = 0, pay = 0, paz = 0;
                interact<Real, Dim>(xi, yi, zi, pos[j], pos[n + j], Dim == 3 ? pos[2 * n + j] : Real(0), mass[j], eps2,
                                    pax, pay, paz);
                ax += pax;
                ay += pay;
                if constexpr (Dim == 3) az += paz;
            }
            pull[i] = ax;
            pull[n + i] = ay;
            if constexpr (Dim == 3) pull[2 * n + i] = az;
        }
    }
};

}  // namespace

VariantEntry simd_j_entry() {
    return {.id = "omp_target.simd_j",
            .description = "one body i per warp, simd over j with a reduction of the lanes' pulls; num_teams/thread_limit tunings",
            .tunings = launch_tunings(8),
            .create = [](const Problem& p, const TuningValues& t, OffloadDevice device) {
                return make_simulation(p, SimdJForce{launch_for(t, p.n, 1)}, device);
            },
            .expected_efficiency = 0.041,
            .full_rate_bodies = 32768,
            .step_overhead_s = 0.002,  // fitted to the GPU sweep (docs/estimates.md)
            .reproducibility = Reproducibility::order_fixed};  // the lanes' partials, reduced
}

}  // namespace nbody::omp_target
