#pragma once
// The results file (SPEC §6, docs/results-format.md): its context block and its checker.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nbody/registry.hpp"
#include "nbody/variant.hpp"
#include "platform/energy.hpp"
#include "platform/host_info.hpp"

namespace nbody {

// Version 2 added the workload axes (dim, precision, integrator in every entry) and each entry's
// efficiency limit inputs; a version 1 file's entries are of the canonical workload 2d/fp32/euler.
inline constexpr int kResultsVersion = 2;

// Google Benchmark's context fields plus ours: host CPU and its limit inputs, GPU, model versions,
// compiler, build flags, git commit, date, and `matrix`: what the matrix records of itself (its seed,
// constants, verification settings and groups: matrix_context in matrix/matrix_record.hpp).
nlohmann::ordered_json results_context(const Registry& registry, const nlohmann::ordered_json& matrix);

// Every model of the suite as its model.cmake declares it (docs/adding-a-model.md): id, display
// name, report family and order, the execution spaces it is the hand-written code of, whether it is
// in this build and its configure status. `nbody-bench list --json` prints it; results' context
// records it as `models`, so that a report names and orders models as the build that ran them did.
nlohmann::ordered_json suite_models_json();

// What makes two matrices' results different, between a results file's context.matrix and the
// matrix about to resume it (results_context's): "" when they agree, else the first key that differs
// and its two values. Compared: name, seed, constants, verification and every group's definition,
// group by group, naming the group (group_definitions; a file written before it existed is compared
// on the rest).
std::string matrix_difference(const nlohmann::json& recorded, const nlohmann::ordered_json& fresh);

// The same between a results file's context and this build's (results_context's): version, git
// commit, compiler, build type and flags, and every model's build facts.
std::string build_difference(const nlohmann::json& recorded, const nlohmann::ordered_json& fresh);

// Local time as ISO 8601 with the UTC offset, the way Google Benchmark writes `date`.
std::string iso8601_now();

// An entry's `efficiency_limit_inputs`: what its limit is the product of (SPEC §3).
nlohmann::ordered_json limit_inputs_json(const CpuLimitInputs& inputs);
nlohmann::ordered_json limit_inputs_json(const GpuLimitInputs& inputs);

// An entry's `energy` object (docs/results-format.md): its meter, whether it read (else why), the
// meter's window and clock samples, and over several ranks each rank's reading.
nlohmann::ordered_json energy_json(const EnergyReading& total, const std::vector<EnergyReading>& ranks);

// <variant>/n:<N>/d:<D>/steps:<S>[/dim:<2|3>/precision:<p>/integrator:<i>][/<tuning>:<value>...]: the
// workload part only when it is not the canonical 2d/fp32/euler, so names written before the workload
// axes existed keep naming the same configurations.
std::string configuration_name(const std::string& variant, std::size_t n, int d, int steps, const Workload& workload,
                               const TuningValues& tuning);

// The workload an entry records; 2d/fp32/euler where it records none (version 1).
Workload entry_workload(const nlohmann::json& entry);

// harness/results/results.schema.json, compiled in.
const nlohmann::json& results_schema();

// Violations of the schema, then of what the schema cannot say (interactions/s = N^2 / time per step,
// efficiency = interactions/s / limit, the limit = the product of its inputs with the workload's
// instruction count, real_time = time per step, run_name = the name of the entry's fields, one entry
// per repetition, unique names, the energy figures derived from energy_j as docs/results-format.md
// says and the ranks' energies summing to energy_j).
std::vector<std::string> check_results(const nlohmann::json& document);

}  // namespace nbody
