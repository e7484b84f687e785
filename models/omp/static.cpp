// omp.static: one body per iteration of a schedule(static) loop (the published OpenMP/CUDA lab's OpenMP
// approach), each pull summed over all j with the reference's host_pull_on from the step's
// snapshot: the same arithmetic and order as serial.reference in every workload.
#include "nbody/reference.hpp"
#include "omp_simulation.hpp"

namespace nbody {
namespace {

template <class Real>
class OmpStatic final : public omp::OmpSimulation<Real> {
public:
    using omp::OmpSimulation<Real>::OmpSimulation;

private:
    void compute_pulls(omp::AxisPulls<Real>& pull) override {
        if (this->dim() == 3)
            pulls_of<3>(pull);
        else
            pulls_of<2>(pull);
    }

    template <int Dim>
    void pulls_of(omp::AxisPulls<Real>& pull) const {
        const BodiesT<Real>& b = this->bodies();
        const auto first = static_cast<std::int64_t>(this->owned().first);
        const auto last = first + static_cast<std::int64_t>(this->owned().count);
        const Real eps2 = this->eps2();
        Real* out[Dim];
        for (int k = 0; k < Dim; ++k) out[k] = pull[k].data();
#pragma omp for schedule(static)
        for (std::int64_t i = first; i < last; ++i) {
            const Vec<Real, Dim> sum = host_pull_on<Dim>(b, static_cast<std::size_t>(i), eps2);
            for (int k = 0; k < Dim; ++k) out[k][i] = sum[k];
        }
    }
};

}  // namespace

void register_omp_static(Registry& registry) {
    omp::add_omp_variant<OmpStatic>(registry, "omp.static",
                                    "one body per iteration of a static-schedule loop over the N^2 sum",
                                    omp::Ranks::several, 0.045,  // reached 0.033-0.067 (16 cores), 0.064 (2)
                                    Reproducibility::bitwise);   // each body summed by one thread in index order
}

}  // namespace nbody
