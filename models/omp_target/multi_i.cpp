// omp_target.multi_i: omp_target.simd with several bodies i per lane, so that each body j loaded
// serves `bodies` interactions (the register blocking of cuda.unrolled, written out for 2 and 4
// bodies in scalars: a per-lane array would go to GCC's SIMT lane memory).
#include "omp_target.hpp"

namespace nbody::omp_target {
namespace {

template <int Bodies>
struct MultiIForce {
    static_assert(Bodies == 2 || Bodies == 4, "the bodies tuning is 2 or 4");
    Launch launch;
    template <class Real, int Dim>
    void pulls(const Real* pos, const Real* mass, Real* pull, int n, Real eps2) const {
        const int teams = launch.teams, threads = launch.threads;  // a member in the clause crashes GCC 12
        const int groups = (n + Bodies - 1) / Bodies;
#pragma omp target teams distribute parallel for simd num_teams(teams) thread_limit(threads)
        for (int g = 0; g < groups; ++g) {
            // Body b of the group is g + b * groups: consecutive lanes read consecutive bodies;
            // past the end it repeats the group's first body and stores nothing. Every body is
            // its own scalars (bodies 2 and 3 only when Bodies == 4): no per-lane array.
            const int i1 = g + groups, i2 = g + 2 * groups, i3 = g + 3 * groups;
            const int l1 = i1 < n ? i1 : g, l2 = i2 < n ? i2 : g, l3 = i3 < n ? i3 : g;
            const Real x0 = pos[g], y0 = pos[n + g], z0 = Dim == 3 ? pos[2 * n + g] : Real(0);
            const Real x1 = pos[l1], y1 = pos[n + l1], z1 = Dim == 3 ? pos[2 * n + l1] : Real(0);
            const Real x2 = Bodies == 4 ? pos[l2] : Real(0), y2 = Bodies == 4 ? pos[n + l2] : Real(0),
                       z2 = Bodies == 4 && Dim == 3 ? pos[2 * n + l2] : Real(0);
            const Real x3 = Bodies == 4 ? pos[l3] : Real(0), y3 = Bodies == 4 ? pos[n + l3] : Real(0),
                       z3 = Bodies == 4 && Dim == 3 ? pos[2 * n + l3] : Real(0);
            Real ax0 = 0, ay0 = 0, az0 = 0, ax1 = 0, ay1 = 0, az1 = 0;
            Real ax2 = 0, ay2 = 0, az2 = 0, ax3 = 0, ay3 = 0, az3 = 0;
            for (int j = 0; j < n; ++j) {
                const Real xj = pos[j], yj = pos[n + j], zj = Dim == 3 ? pos[2 * n + j] : Real(0), mj = mass[j];
                interact<Real, Dim>(x0, y0, z0, xj, yj, zj, mj, eps2, ax0, ay0, az0);
                interact<Real, Dim>(x1, y1, z1, xj, yj, zj, mj, eps2, ax1, ay1, az1);
                if constexpr (Bodies == 4) {
                    interact<Real, Dim>(x2, y2, z2, xj, yj, zj, mj, eps2, ax2, ay2, az2);
                    interact<Real, Dim>(x3, y3, z3, xj, yj, zj, mj, eps2, ax3, ay3, az3);
                }
            }
            pull[g] = ax0;
            pull[n + g] = ay0;
            if constexpr (Dim == 3) pull[2 * n + g] = az0;
            if (i1 < n) {
                pull[i1] = ax1;
                pull[n + i1] = ay1;
                if constexpr (Dim == 3) pull[2 * n + i1] = az1;
            }
            if constexpr (Bodies == 4) {
                if (i2 < n) {
                    pull[i2] = ax2;
                    pull[n + i2] = ay2;
                    if constexpr (Dim == 3) pull[2 * n + i2] = az2;
                }
                if (i3 < n) {
                    pull[i3] = ax3;
                    pull[n + i3] = ay3;
                    if constexpr (Dim == 3) pull[2 * n + i3] = az3;
                }
            }
        }
    }
};

template <int Bodies>
std::unique_ptr<Simulation> make(const Problem& p, const TuningValues& t, OffloadDevice device) {
    return make_simulation(p, MultiIForce<Bodies>{launch_for(t, p.n, kLanes * Bodies)}, device);
}

}  // namespace

VariantEntry multi_i_entry() {
    std::vector<TuningParameter> tunings = launch_tunings(8);
    tunings.push_back({.name = "bodies",
                       .description = "bodies i per lane (each loaded body j serves that many interactions)",
                       .default_value = "4",
                       .allowed_values = {"2", "4"},
                       .min_value = 0,
                       .max_value = 0});
    return {.id = "omp_target.multi_i",
            .description = "omp_target.simd with several bodies i per lane; num_teams/thread_limit tunings",
            .tunings = std::move(tunings),
            .create = [](const Problem& p, const TuningValues& t, OffloadDevice device) {
                return t.at("bodies") == "2" ? make<2>(p, t, device) : make<4>(p, t, device);
            },
            // Fitted to the GPU sweep (docs/estimates.md): it still gains at N = 65536 (0.048 of the limit).
            .expected_efficiency = 0.115,
            .full_rate_bodies = 131072,
            .step_overhead_s = 0.002,  // fitted to the GPU sweep (docs/estimates.md)
            .reproducibility = Reproducibility::bitwise};  // each body's j sum by one lane
}

}  // namespace nbody::omp_target
