// serial.reference: the plain algorithm on one core in the workload's precision (every workload),
// the baseline of every ladder.
#include <memory>

#include "nbody/model_registration.hpp"
#include "nbody/reference.hpp"

namespace nbody {
namespace {

template <class Real>
class SerialReference final : public SimulationOf<Real> {
public:
    explicit SerialReference(const Problem& problem) : problem_(problem) {}

    void upload(const BodiesT<Real>& initial) override {
        bodies_ = initial;
        if (needs_initial_pull(problem_.workload.integrator)) host_pulls(bodies_, eps2(), pull_, false);
        update_map();
    }

    void advance(int steps) override {
        const Integrator integrator = problem_.workload.integrator;
        const Real G = static_cast<Real>(problem_.constants.G), dt = static_cast<Real>(problem_.constants.dt);
        for (int s = 0; s < steps; ++s) {
            host_advance_before_force(bodies_, pull_, integrator, G, dt);
            host_pulls(bodies_, eps2(), pull_, false);
            host_advance_after_force(bodies_, pull_, integrator, G, dt);
            update_map();
        }
    }

    void download(BodiesT<Real>& state, std::vector<float>& activity_map) override {
        state = bodies_;
        activity_map = map_;
    }

private:
    Real eps2() const { return static_cast<Real>(problem_.constants.eps2()); }
    void update_map() { map_ = normalised_map(host_cell_counts(bodies_, problem_.d), problem_.n, problem_.d); }

    Problem problem_;
    BodiesT<Real> bodies_;
    std::vector<std::vector<Real>> pull_;
    std::vector<float> map_;
};

}  // namespace

void register_cpu_ref_variants(Registry& registry) {
    registry.add({.id = "serial.reference",
                  .backend = "serial",
                  .execution_space = "host",
                  .description = "plain algorithm on one core in the workload's precision (the baseline)",
                  .tunings = {},
                  .max_n = 0,
                  .runs_on_gpu = false,
                  .workloads = WorkloadSupport::every(),
                  .availability = {},
                  .create = [](const Problem& p, const TuningValues&) -> std::unique_ptr<Simulation> {
                      if (p.workload.precision == Precision::fp64) return std::make_unique<SerialReference<double>>(p);
                      return std::make_unique<SerialReference<float>>(p);
                  }});
}

}  // namespace nbody
