#pragma once
// The omp_target variants (OpenMP target offload, GCC's nvptx offload): one entry per variant
// file, registered in register.cpp in ladder order.
#include <memory>
#include <string>
#include <vector>

#include "nbody/registry.hpp"
#include "nbody/variant.hpp"
#include "omp_target_simulation.hpp"

namespace nbody::omp_target {

using Factory = std::unique_ptr<Simulation> (*)(const Problem&, const TuningValues&, OffloadDevice);

struct VariantEntry {
    std::string id;
    std::string description;
    std::vector<TuningParameter> tunings;
    Factory create;
    double expected_efficiency = 0;                                 // VariantDescriptor's
    double full_rate_bodies = 0;                                    // VariantDescriptor's
    double step_overhead_s = 0;                                     // VariantDescriptor's
    Reproducibility reproducibility = Reproducibility::run_to_run;  // VariantDescriptor's
};

VariantEntry naive_entry();
VariantEntry simd_entry();
VariantEntry simd_j_entry();
VariantEntry multi_i_entry();
VariantEntry tiled_entry();

// Every entry, in ladder order.
const std::vector<VariantEntry>& entries();

// The simulation of variant `id` (tunings already resolved); `device` says whether libgomp may
// run it on the host (the model's tests without a GPU) or a device is required.
std::unique_ptr<Simulation> create_simulation(const std::string& id, const Problem& problem,
                                              const TuningValues& tuning, OffloadDevice device);

}  // namespace nbody::omp_target
