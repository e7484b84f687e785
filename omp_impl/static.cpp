// omp.static: one body per iteration of a schedule(static) loop (seed report 002's OpenMP
// approach), each pull summed over all j with the reference arithmetic from the step's snapshot.
#include "nbody/reference.hpp"
#include "omp_simulation.hpp"

namespace nbody {
namespace {

class OmpStatic final : public omp::OmpSimulation {
public:
    using OmpSimulation::OmpSimulation;

private:
    void compute_pulls(std::vector<float>& ax, std::vector<float>& ay) override {
        const Bodies& b = bodies();
        const auto n = static_cast<std::int64_t>(b.size());
        const float eps2 = static_cast<float>(problem().constants.eps2());
#pragma omp parallel for schedule(static) num_threads(threads())
        for (std::int64_t i = 0; i < n; ++i) host_pull_on(b, static_cast<std::size_t>(i), eps2, ax[i], ay[i]);
    }
};

}  // namespace

void register_omp_static(Registry& registry) {
    omp::add_omp_variant<OmpStatic>(registry, "omp.static",
                                    "one body per iteration of a static-schedule loop over the N^2 sum (seed 002)");
}

}  // namespace nbody
