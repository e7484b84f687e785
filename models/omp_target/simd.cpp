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
            const Real xi = pos[i], yi = pos[n + i], zi = Dim == 3 ? pos[2 * n + i] : Real(0);
            Real ax = 0, ay = 0, az = 0;
            for (int j = 0; j < n; ++j)
                interact<Real, Dim>(xi, yi, zi, pos[j], pos[n + j], Dim == 3 ? pos[2 * n + j] : Real(0), mass[j], eps2,
                                    ax, ay, az);
            pull[i] = ax;
            pull[n + i] = ay;
            if constexpr (Dim == 3) pull[2 * n + i] = az;
        }
    }
};

}  // namespace

VariantEntry simd_entry() {
    return {.id = "omp_target.simd",
            .description = "parallel for simd over i: 32 bodies per warp, one per lane; num_teams/thread_limit tunings",
            .tunings = launch_tunings(8),
            .create = [](const Problem& p, const TuningValues& t, OffloadDevice device) {
                return make_simulation(p, SimdForce{launch_for(t, p.n, kLanes)}, device);
            },
            .expected_efficiency = 0.058,
            .full_rate_bodies = 32768,
            .step_overhead_s = 0.0018,  // fitted to the GPU sweeps (docs/estimates.md)
            .reproducibility = Reproducibility::bitwise};  // each body's j sum by one lane
}

}  // namespace nbody::omp_target
