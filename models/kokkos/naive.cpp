// kokkos.naive: a RangePolicy with one body per work item, each summing the pull of all N bodies
// read straight from the space's memory (the Kokkos counterpart of omp.static and a plain SoA
// CUDA kernel).
#include "kokkos_simulation.hpp"
#include "nbody/registry.hpp"

namespace nbody {
namespace kokkos {

template <class Space, class Real, int Dim>
void naive_pulls(Dispatch<Space>& dispatch, DeviceAxes<Space, Real, Dim> p, DeviceReals<Space, Real> m,
                 DeviceAxes<Space, Real, Dim> pull, int n, Real eps2) {
    dispatch.parallel_for(
        "nbody::kokkos::naive", Kokkos::RangePolicy<Space>(dispatch.space(), 0, n), KOKKOS_LAMBDA(const int i) {
            const Vec<Real, Dim> pi = load(p, i);
            Vec<Real, Dim> sum{};
            for (int j = 0; j < n; ++j) accumulate_pull(pi, load(p, j), m(j), eps2, sum, InvSqrt{});
            store(pull, i, sum);
        });
}

template <class Space, class Real, int Dim>
class Naive final : public KokkosSimulation<Space, Real, Dim> {
public:
    using KokkosSimulation<Space, Real, Dim>::KokkosSimulation;

private:
    void compute_pulls() override {
        naive_pulls(this->dispatch(), this->positions(), this->masses(), this->pulls(), this->n(), this->eps2());
    }
};

}  // namespace kokkos

void register_kokkos_naive(Registry& registry) {
    kokkos::register_for_each_space<kokkos::Naive>(
        registry, "naive", "RangePolicy, one body per work item, all j read from the space's memory",
        [](bool) { return std::vector<TuningParameter>{}; },
        {.gpu = 0.256, .host = 0.09, .gpu_step_overhead_s = 1e-06},  // @openmp reached 0.048-0.32 (16 cores), 0.30 (2)
        // one work item per body, j in index order
        {.gpu = Reproducibility::bitwise, .host = Reproducibility::bitwise});
}

}  // namespace nbody
