// omp_target.naive: the directive a first port writes, one `target teams distribute parallel for`
// over the bodies i with the j loop inside, no clauses. In GCC's nvptx mapping an OpenMP thread
// is a warp and only `simd` uses its other lanes, so one lane in 32 works.
#include "omp_target.hpp"

namespace nbody::omp_target {
namespace {

struct NaiveForce {
    template <class Real, int Dim>
    void pulls(const Real* pos, const Real* mass, Real* pull, int n, Real eps2) const {
#pragma omp target teams distribute parallel for
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

VariantEntry naive_entry() {
    return {.id = "omp_target.naive",
            .description = "target teams distribute parallel for over i, j loop inside, no clauses (one lane per warp)",
            .tunings = {},
            .create = [](const Problem& p, const TuningValues&, OffloadDevice device) {
                return make_simulation(p, NaiveForce{}, device);
            }};
}

}  // namespace nbody::omp_target
