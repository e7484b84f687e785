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

VariantEntry naive_entry() {
    return {.id = "omp_target.naive",
            .description = "target teams distribute parallel for over i, j loop inside, no clauses (one lane per warp)",
            .tunings = {},
            .create = [](const Problem& p, const TuningValues&, OffloadDevice device) {
                return make_simulation(p, NaiveForce{}, device);
            },
            .expected_efficiency = 0.002,
            .full_rate_bodies = 4096,
            .step_overhead_s = 0.002,  // fitted to the GPU sweep (docs/estimates.md)
            .reproducibility = Reproducibility::bitwise};  // each body's j sum by one thread
}

}  // namespace nbody::omp_target
