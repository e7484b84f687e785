// serial.reference: the plain algorithm on one core in the workload's precision (every workload),
// the baseline of every ladder. Its map is a full recount every step (host_cell_counts, the truth
// the tests compare against); map=incremental runs the shared incremental map (activity_counts.hpp)
// instead, as that strategy's serial check.
#include <memory>
#include <optional>

#include "nbody/activity_counts.hpp"
#include "nbody/registry.hpp"
#include "nbody/reference.hpp"
#include "nbody/workload_dispatch.hpp"

namespace nbody {
namespace {

template <class Real>
class SerialReference final : public SimulationOf<Real> {
public:
    // A missing `map` (a caller that passes no tunings instead of resolve_tuning's) is the default,
    // the full recount.
    SerialReference(const Problem& problem, const TuningValues& tuning)
        : problem_(problem), incremental_(tuning.contains("map") && tuning.at("map") == "incremental") {}

    void upload(const BodiesT<Real>& initial) override {
        bodies_ = initial;
        if (needs_initial_pull(problem_.workload.integrator)) host_pulls(bodies_, eps2(), pull_, false);
        if (incremental_) {
            map_.resize(static_cast<std::size_t>(problem_.d) * static_cast<std::size_t>(problem_.d));
            counts_.emplace(problem_.n, problem_.d);
            counts_->recount(bodies_.x.data(), bodies_.y.data(), map_.data());
        } else {
            update_map();
        }
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
    void update_map() {
        if (!incremental_) {
            map_ = normalised_map(host_cell_counts(bodies_, problem_.d), problem_.n, problem_.d);
            return;
        }
        changed_cells_.clear();
        for (std::size_t i = 0; i < bodies_.size(); ++i) counts_->update(i, bodies_.x[i], bodies_.y[i], changed_cells_);
        counts_->rewrite(changed_cells_, map_.data());
    }

    Problem problem_;
    bool incremental_;
    BodiesT<Real> bodies_;
    std::vector<std::vector<Real>> pull_;
    std::vector<float> map_;
    std::optional<ActivityCounts> counts_;  // map=incremental, from the upload on
    std::vector<int> changed_cells_;
};

}  // namespace

void register_serial_reference(Registry& registry) {
    registry.add({.id = "serial.reference",
                  .backend = "serial",
                  .execution_space = "host",
                  .description = "plain algorithm on one core in the workload's precision (the baseline)",
                  .tunings = {{.name = "map",
                               .description = "activity map: a full recount every step (the reference), or "
                                              "incremental (counts kept, only the cells that changed rewritten)",
                               .default_value = "recount",
                               .allowed_values = {"recount", "incremental"},
                               .min_value = 0,
                               .max_value = 0}},
                  .max_n = 0,
                  .runs_on_gpu = false,
                  .workloads = WorkloadSupport::every(),
                  .availability = {},
                  .create = [](const Problem& p, const TuningValues& t) -> std::unique_ptr<Simulation> {
                      return make_for_precision<SerialReference>(p, t);
                  },
                  .reproducibility = Reproducibility::bitwise});  // one thread, index order
}

}  // namespace nbody
