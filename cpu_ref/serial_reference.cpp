// serial.reference: the plain algorithm in float32 on one core, the baseline of every ladder.
#include <memory>

#include "nbody/model_registration.hpp"
#include "nbody/reference.hpp"

namespace nbody {
namespace {

class SerialReference final : public Simulation {
public:
    explicit SerialReference(const Problem& problem)
        : problem_(problem), ax_(problem.n), ay_(problem.n) {}

    void upload(const Bodies& initial) override {
        bodies_ = initial;
        update_map();
    }

    void advance(int steps) override {
        const auto& c = problem_.constants;
        const float eps2 = static_cast<float>(c.eps2());
        const float G = static_cast<float>(c.G), dt = static_cast<float>(c.dt);
        for (int s = 0; s < steps; ++s) {
            for (std::size_t i = 0; i < bodies_.size(); ++i) host_pull_on(bodies_, i, eps2, ax_[i], ay_[i]);
            for (std::size_t i = 0; i < bodies_.size(); ++i)
                integrate_body(bodies_.x[i], bodies_.y[i], bodies_.vx[i], bodies_.vy[i], ax_[i], ay_[i], G, dt);
            update_map();
        }
    }

    void download(Bodies& state, std::vector<float>& activity_map) override {
        state = bodies_;
        activity_map = map_;
    }

private:
    void update_map() { map_ = normalised_map(host_cell_counts(bodies_, problem_.d), problem_.n, problem_.d); }

    Problem problem_;
    Bodies bodies_;
    std::vector<float> ax_, ay_, map_;
};

}  // namespace

void register_cpu_ref_variants(Registry& registry) {
    registry.add({.id = "serial.reference",
                  .backend = "serial",
                  .execution_space = "host",
                  .description = "plain float32 algorithm on one core (the baseline)",
                  .tunings = {},
                  .max_n = 0,
                  .runs_on_gpu = false,
                  .availability = {},
                  .create = [](const Problem& p, const TuningValues&) -> std::unique_ptr<Simulation> {
                      return std::make_unique<SerialReference>(p);
                  }});
}

}  // namespace nbody
