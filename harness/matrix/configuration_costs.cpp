#include "matrix/configuration_costs.hpp"

#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "platform/energy.hpp"

namespace nbody {

std::vector<ConfigurationCost> estimate_configurations(const Registry& registry, const MatrixSpec& spec,
                                                       const std::vector<Configuration>& configurations,
                                                       const CostLimits& limits, bool measure_when_over, bool read_energy) {
    std::vector<ConfigurationCost> out;
    std::set<std::tuple<std::size_t, int, Workload>> references;
    std::map<std::string, std::optional<Rate>> measured;
    for (const Configuration& c : configurations) {
        const double steps = static_cast<double>(c.repetitions) * (c.warmup_steps + c.steps) + c.verify_steps;
        const double reference = references.insert({c.n, c.verify_steps, c.workload}).second
                                     ? reference_seconds(c.workload, c.n, c.verify_steps, spec.verification.full_reference_max_n,
                                                         spec.verification.sample_bodies)
                                     : 0.0;
        const Rate rate = modelled_rate(*c.variant, c.tuning, c.workload, registry, c.n);
        ConfigurationCost e;
        // A minimum timed phase can only lengthen each repetition, by at most its value; a GPU's
        // energy meter waits for its counter around each.
        const double min_time =
            c.repetitions * (c.min_time_s + (read_energy && c.variant->runs_on_gpu ? kNvmlMeterWaitSeconds : 0.0));
        // Each repetition uploads and downloads; the verification's run is one more.
        const int runs = c.repetitions + 1;
        e.cost = Cost{.seconds = reference + steps_seconds(*c.variant, c.tuning, c.workload, c.n, c.d, steps, rate.interactions_per_second, runs) +
                                 min_time,
                      .host_bytes = host_bytes(*c.variant, c.workload, c.n, c.d, 1),
                      .device_bytes = device_bytes(*c.variant, c.workload, c.n, c.d),
                      .rate_source = rate.source};
        if (measure_when_over && e.cost.seconds > limits.max_seconds) {
            std::string key = c.variant->id + "/" + to_string(c.workload);
            for (const auto& [name, value] : c.tuning) key += "/" + name + ":" + value;
            if (!measured.count(key))
                measured[key] = measured_rate(*c.variant, c.tuning, c.workload, spec.constants, c.n);
            if (const auto& m = measured[key]) {
                e.cost.seconds =
                    reference + steps_seconds(*c.variant, c.tuning, c.workload, c.n, c.d, steps, m->interactions_per_second, runs) + min_time;
                e.cost.rate_source = m->source;
            }
        }
        e.why = excess(e.cost, limits);
        e.over_limit = !e.why.empty();
        out.push_back(std::move(e));
    }
    return out;
}

}  // namespace nbody
