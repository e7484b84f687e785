#pragma once
// The estimated cost of each configuration of a matrix (estimate.hpp), checked before anything runs.
#include <string>
#include <vector>

#include "matrix/estimate.hpp"
#include "matrix/matrix.hpp"
#include "nbody/registry.hpp"

namespace nbody {

// What each configuration costs (estimate.hpp): its repetitions, warm-up and verification steps, and
// the host reference when it is the first of the list to need it. `measure_when_over`: a
// configuration whose modelled time exceeds the limit is estimated again from its variant's rate
// measured here (once per variant, tuning and workload).
struct ConfigurationCost {
    Cost cost;
    bool over_limit = false;
    std::string why;  // excess(cost, limits)
};
std::vector<ConfigurationCost> estimate_configurations(const Registry& registry, const MatrixSpec& spec,
                                                       const std::vector<Configuration>& configurations,
                                                       const CostLimits& limits, bool measure_when_over,
                                                       bool read_energy = true);

}  // namespace nbody
