// omp_target.multi_i: omp_target.simd with several bodies i per lane, so that each body j loaded
// serves `bodies` interactions (the register blocking of cuda.unrolled, written as a loop that
// GCC unrolls at compile time).
#include "omp_target.hpp"

namespace nbody::omp_target {
namespace {

template <int Bodies>
struct MultiIForce {
    Launch launch;
    template <class Real, int Dim>
    void pulls(const Real* pos, const Real* mass, Real* pull, int n, Real eps2) const {
        const int teams = launch.teams, threads = launch.threads;  // a member in the clause crashes GCC 12
        const int groups = (n + Bodies - 1) / Bodies;
#pragma omp target teams distribute parallel for simd num_teams(teams) thread_limit(threads)
        for (int g = 0; g < groups; ++g) {
            const Real* p_axes[Dim];
            Real* a_axes[Dim];
            axis_pointers<Dim>(pos, n, p_axes);
            axis_pointers<Dim>(pull, n, a_axes);
            // Body b of the group is g + b * groups: consecutive lanes read consecutive bodies;
            // past the end it repeats the group's first body and stores nothing.
            Vec<Real, Dim> pi[Bodies], a[Bodies];
#pragma GCC unroll 4
            for (int b = 0; b < Bodies; ++b) {
                const int i = g + b * groups;
                pi[b] = load_axes<Dim>(p_axes, i < n ? i : g);
                a[b] = Vec<Real, Dim>{};
            }
            for (int j = 0; j < n; ++j) {
                const Vec<Real, Dim> pj = load_axes<Dim>(p_axes, j);
                const Real mj = mass[j];
#pragma GCC unroll 4
                for (int b = 0; b < Bodies; ++b) accumulate_pull(pi[b], pj, mj, eps2, a[b], ExactInvSqrt{});
            }
#pragma GCC unroll 4
            for (int b = 0; b < Bodies; ++b) {
                const int i = g + b * groups;
                if (i < n) store_axes<Dim>(a_axes, i, a[b]);
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
    std::vector<TuningParameter> tunings = launch_tunings("8");
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
            }};
}

}  // namespace nbody::omp_target
