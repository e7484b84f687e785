// kokkos.naive: a RangePolicy with one body per work item, each summing the pull of all N bodies
// read straight from the space's memory (the Kokkos counterpart of omp.static and a plain SoA
// CUDA kernel).
#include "kokkos_simulation.hpp"
#include "nbody/model_registration.hpp"

namespace nbody {
namespace kokkos {

template <class Space>
void naive_pulls(const Space& space, DeviceFloats<Space> x, DeviceFloats<Space> y, DeviceFloats<Space> m,
                 DeviceFloats<Space> ax, DeviceFloats<Space> ay, int n, float eps2) {
    Kokkos::parallel_for(
        "nbody::kokkos::naive", Kokkos::RangePolicy<Space>(space, 0, n), KOKKOS_LAMBDA(const int i) {
            const float xi = x(i), yi = y(i);
            float sum_x = 0.0f, sum_y = 0.0f;
            for (int j = 0; j < n; ++j) accumulate_pull(xi, yi, x(j), y(j), m(j), eps2, sum_x, sum_y, InvSqrt{});
            ax(i) = sum_x;
            ay(i) = sum_y;
        });
}

template <class Space>
class Naive final : public KokkosSimulation<Space> {
public:
    using KokkosSimulation<Space>::KokkosSimulation;

private:
    void compute_pulls() override {
        naive_pulls(this->space(), this->x(), this->y(), this->m(), this->ax(), this->ay(), this->n(), this->eps2());
    }
};

}  // namespace kokkos

void register_kokkos_naive(Registry& registry) {
    kokkos::register_for_each_space<kokkos::Naive>(
        registry, "naive", "RangePolicy, one body per work item, all j read from the space's memory",
        [](bool) { return std::vector<TuningParameter>{}; });
}

}  // namespace nbody
