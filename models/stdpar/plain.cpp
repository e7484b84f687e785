// stdpar.plain: the step as a first port to the standard library writes it: one
// std::for_each(par_unseq) over the bodies i, each summing its pull over every j in index order
// with physics.hpp's accumulate_pull and the exact reciprocal square root (the reference's
// arithmetic and order).
#include "stdpar_simulation.hpp"

namespace nbody {
namespace {

template <class Real, int Dim>
class StdparPlain final : public stdpar::StdparSimulation<Real, Dim> {
public:
    StdparPlain(const Problem& problem, const TuningValues&) : stdpar::StdparSimulation<Real, Dim>(problem) {}

private:
    void compute_pulls(stdpar::AxisPulls<Real, Dim>& pull) override {
        const BodiesT<Real>& b = this->bodies();
        const Real* position[Dim];
        Real* out[Dim];
        for (int k = 0; k < Dim; ++k) {
            position[k] = b.position(k).data();
            out[k] = pull[k].data();
        }
        const Real* mass = b.m.data();
        const auto n = static_cast<std::int64_t>(b.size());
        const Real eps2 = this->eps2();
        const stdpar::Indices bodies(n);
        std::for_each(std::execution::par_unseq, bodies.begin(), bodies.end(), [=](std::int64_t i) {
            const Vec<Real, Dim> pi = load_axes<Dim>(position, i);
            Vec<Real, Dim> sum{};
            for (std::int64_t j = 0; j < n; ++j)
                accumulate_pull(pi, load_axes<Dim>(position, j), mass[j], eps2, sum, ExactInvSqrt{});
            store_axes<Dim>(out, i, sum);
        });
    }
};

}  // namespace

void register_stdpar_plain(Registry& registry) {
    stdpar::add_stdpar_variant<StdparPlain>(
        registry, "stdpar.plain", "std::for_each(par_unseq) over the bodies i, the j sum inside (TBB backend)",
        0.05,  // reached 0.049-0.055 (16 cores), 0.075 (2)
        Reproducibility::bitwise);  // each body's sum in index order by one task
}

}  // namespace nbody
