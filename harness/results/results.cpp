#include "results/results.hpp"

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "nbody/model_registration.hpp"
#include "platform/build_info.hpp"
#include "platform/host_info.hpp"
#include "results/json_input.hpp"
#include "results/json_schema.hpp"

namespace nbody {

namespace {

using ordered_json = nlohmann::ordered_json;

ordered_json text_or_null(const std::map<std::string, std::string>& facts, std::initializer_list<const char*> keys) {
    for (const char* key : keys)
        if (const auto it = facts.find(key); it != facts.end()) return it->second;
    return nullptr;
}

std::string executable_path() {
    std::error_code ec;
    const auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string("nbody-bench") : path.string();
}

// A value for a message: its JSON, shortened.
std::string shown(const nlohmann::json& v) {
    const std::string text = v.dump();
    return text.size() > 80 ? text.substr(0, 80) + "..." : text;
}

// The first place where `a` (recorded) and `b` differ, as a key path ("" at the top), and both values
// (`b` named by `fresh_side`: "the matrix", "this build"); objects are compared on the keys `a` has, so
// a file written before a key existed is not refused for it.
std::optional<std::string> first_difference(const nlohmann::json& a, const nlohmann::json& b, const std::string& at,
                                            const std::string& fresh_side = "the matrix") {
    if (a.is_object() && b.is_object()) {
        for (const auto& [key, value] : a.items()) {
            const std::string here = at.empty() ? key : at + "." + key;
            if (!b.contains(key)) return here + ": recorded, absent from " + fresh_side;
            if (auto d = first_difference(value, b[key], here, fresh_side)) return d;
        }
        return std::nullopt;
    }
    if (a.is_array() && b.is_array()) {
        for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
            if (auto d = first_difference(a[i], b[i], fmt::format("{}[{}]", at, i), fresh_side)) return d;
        if (a.size() == b.size()) return std::nullopt;
        // Equal up to the shorter one: too long to show whole, say what the longer one adds.
        if (a.dump().size() > 80 || b.dump().size() > 80) {
            const bool more_in_file = a.size() > b.size();
            return fmt::format("{}: {} values in the file, {} in {}; the first extra, in {}: {}", at, a.size(), b.size(),
                               fresh_side, more_in_file ? "the file" : fresh_side,
                               shown(more_in_file ? a[b.size()] : b[a.size()]));
        }
    } else if (a == b) {
        return std::nullopt;
    }
    return fmt::format("{}: {} in the file, {} in {}", at, shown(a), shown(b), fresh_side);
}

// Group definitions compared group by group, each named: a group only one side has, then the first
// key of a group that differs, then the order. By position where a side repeats a name.
std::optional<std::string> group_difference(const nlohmann::json& recorded, const nlohmann::json& fresh) {
    if (!recorded.is_array() || !fresh.is_array()) return first_difference(recorded, fresh, "group_definitions");
    const auto names = [](const nlohmann::json& groups) {
        std::vector<std::string> out;
        for (const auto& g : groups) out.push_back(g.is_object() && g.contains("name") && g["name"].is_string() ? g["name"].get<std::string>() : "");
        return out;
    };
    const std::vector<std::string> old_names = names(recorded), new_names = names(fresh);
    const auto unique = [](const std::vector<std::string>& list) { return std::set<std::string>(list.begin(), list.end()).size() == list.size(); };
    const auto group = [](const std::string& name) { return "group " + json_text_excerpt(name); };
    if (!unique(old_names) || !unique(new_names)) {
        for (std::size_t i = 0; i < recorded.size() && i < fresh.size(); ++i)
            if (auto d = first_difference(recorded[i], fresh[i], fmt::format("group_definitions[{}] ({})", i, group(old_names[i]))))
                return d;
        if (recorded.size() == fresh.size()) return std::nullopt;
        return fmt::format("group_definitions: {} groups in the file, {} in the matrix", recorded.size(), fresh.size());
    }
    const auto index_of = [](const std::vector<std::string>& list, const std::string& name) {
        return static_cast<std::size_t>(std::find(list.begin(), list.end(), name) - list.begin());
    };
    for (const std::string& name : old_names)
        if (index_of(new_names, name) == new_names.size()) return "group_definitions: " + group(name) + " in the file, absent from the matrix";
    for (const std::string& name : new_names)
        if (index_of(old_names, name) == old_names.size()) return "group_definitions: " + group(name) + " in the matrix, absent from the file";
    for (std::size_t i = 0; i < old_names.size(); ++i) {
        const auto& mine = fresh[index_of(new_names, old_names[i])];
        if (auto d = first_difference(recorded[i], mine, "")) return "group_definitions: " + group(old_names[i]) + ": " + *d;
    }
    if (old_names != new_names) {
        const auto listed = [](const std::vector<std::string>& list) {
            std::string text;
            for (const auto& name : list) text += (text.empty() ? "" : ", ") + json_text_excerpt(name);
            return text;
        };
        return fmt::format("group_definitions: the groups in the order {} in the file, {} in the matrix", listed(old_names), listed(new_names));
    }
    return std::nullopt;
}

}  // namespace

std::string matrix_difference(const nlohmann::json& recorded, const ordered_json& fresh) {
    const nlohmann::json now = nlohmann::json::parse(fresh.dump());  // as the file would hold it
    for (const char* key : {"name", "seed", "constants", "verification"}) {
        if (!recorded.contains(key)) return std::string(key) + ": absent from the file";
        if (const auto d = first_difference(recorded[key], now.value(key, nlohmann::json()), key)) return *d;
    }
    // A file written before the group definitions were recorded is compared on the rest.
    if (recorded.contains("group_definitions"))
        if (const auto d = group_difference(recorded["group_definitions"], now.value("group_definitions", nlohmann::json())))
            return *d;
    return "";
}

std::string build_difference(const nlohmann::json& recorded, const ordered_json& fresh) {
    const nlohmann::json now = nlohmann::json::parse(fresh.dump());
    const auto value_of = [](const nlohmann::json& object, const std::string& key) {
        return object.is_object() && object.contains(key) ? object[key] : nlohmann::json();
    };
    const auto differs = [](const std::string& key, const nlohmann::json& a, const nlohmann::json& b) {
        const auto text = [](const nlohmann::json& v) { return v.is_null() ? std::string("absent") : shown(v); };
        return fmt::format("{}: {} in the file, {} in this build", key, text(a), text(b));
    };
    for (const char* key : {"nbody_bench_version", "git_commit", "compiler", "build_type", "build_flags"})
        if (value_of(recorded, key) != value_of(now, key)) return differs(key, value_of(recorded, key), value_of(now, key));
    // Every model's versions and settings, either side's keys.
    const nlohmann::json old_facts = value_of(recorded, "build_facts"), new_facts = value_of(now, "build_facts");
    std::set<std::string> keys;
    for (const auto* facts : {&old_facts, &new_facts})
        if (facts->is_object())
            for (const auto& [key, value] : facts->items()) keys.insert(key);
    for (const std::string& key : keys)
        if (value_of(old_facts, key) != value_of(new_facts, key))
            return differs("build_facts." + key, value_of(old_facts, key), value_of(new_facts, key));
    return "";
}

std::string iso8601_now() {
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char text[40];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S%z", &local);
    const std::string date(text);  // ...+0000 -> ...+00:00, as Google Benchmark writes it
    return date.size() < 5 ? date : fmt::format("{}:{}", date.substr(0, date.size() - 2), date.substr(date.size() - 2));
}

ordered_json suite_models_json() {
    ordered_json models = ordered_json::array();
    for (const SuiteModel& m : suite_models())
        models.push_back({{"id", m.name},
                          {"name", m.title},
                          {"family", m.family},
                          {"order", m.report_order},
                          {"native_spaces", m.native_spaces},
                          {"in_build", m.in_build},
                          {"status", m.status}});
    return models;
}

ordered_json results_context(const Registry& registry, const ordered_json& matrix) {
    const auto& gb_cpu = benchmark::CPUInfo::Get();
    const CpuInfo& cpu = host_cpu_info();
    const BuildInfo& build = build_info();
    const auto& facts = registry.build_facts();
    const auto gpu = registry.gpu();

    ordered_json c;
    c["date"] = iso8601_now();
    c["host_name"] = benchmark::SystemInfo::Get().name;
    c["executable"] = executable_path();
    c["num_cpus"] = gb_cpu.num_cpus;
    c["mhz_per_cpu"] = static_cast<long>(gb_cpu.cycles_per_second / 1e6);
    c["cpu_scaling_enabled"] = gb_cpu.scaling == benchmark::CPUInfo::ENABLED;
    c["caches"] = ordered_json::array();
    for (const auto& cache : gb_cpu.caches)
        c["caches"].push_back({{"type", cache.type}, {"level", cache.level}, {"size", cache.size}, {"num_sharing", cache.num_sharing}});
    c["load_avg"] = gb_cpu.load_avg;
    c["library_build_type"] = build.build_type == "Debug" ? "debug" : "release";
    c["json_schema_version"] = 1;
    c["nbody_results_version"] = kResultsVersion;
    c["nbody_bench_version"] = build.version;
    c["git_commit"] = build.git_commit;
    c["compiler"] = build.compiler;
    c["build_type"] = build.build_type;
    c["build_flags"] = build.build_flags;
    c["host_cpu"] = {{"model_name", cpu.model_name},
                     {"logical_cpus", cpu.logical_cpus},
                     {"physical_cores", cpu.physical_cores},
                     {"clock_hz", cpu.clock_hz},
                     {"clock_source", cpu.clock_source},
                     {"all_cpus_busy_clock_hz", cpu.all_cpus_busy_clock_hz},
                     {"simd_fp32_lanes", cpu.simd_fp32_lanes},
                     {"simd_fp64_lanes", cpu.simd_fp64_lanes},
                     {"simd_source", cpu.simd_source},
                     {"fma_pipes", cpu.fma_pipes},
                     {"fma_pipes_source", cpu.fma_pipes_source},
                     {"fp32_interaction_limit", cpu_interaction_limit(host_cpu_limit_inputs(cpu.physical_cores, Workload{}))}};
    if (gpu) {
        std::string fp64_source;
        const int fp64_lanes = fp64_lanes_per_sm(gpu->compute_capability, fp64_source);
        c["gpu"] = {{"name", gpu->name},
                    {"compute_capability", gpu->compute_capability},
                    {"sm_count", gpu->sm_count},
                    {"sm_clock_hz", gpu->sm_clock_hz},
                    {"fp32_lanes_per_sm", gpu->fp32_lanes_per_sm},
                    {"fp64_lanes_per_sm", fp64_lanes},
                    {"fp64_lanes_source", fp64_source},
                    {"memory_clock_hz", gpu->memory_clock_hz},
                    {"memory_bus_width_bits", gpu->memory_bus_width_bits},
                    {"driver_version", gpu->driver_version},
                    {"runtime_version", gpu->runtime_version},
                    {"fp32_interaction_limit", gpu_interaction_limit(gpu_limit_inputs(*gpu, Workload{}))}};
    } else {
        c["gpu"] = nullptr;
    }
    c["cuda_version"] = text_or_null(facts, {"cuda_version", "cuda_runtime"});
    c["cuda_driver_version"] = gpu ? ordered_json(gpu->driver_version) : ordered_json(nullptr);
    c["cuda_runtime_version"] = gpu ? ordered_json(gpu->runtime_version) : text_or_null(facts, {"cuda_runtime"});
    c["kokkos_version"] = text_or_null(facts, {"kokkos_version"});
    c["build_facts"] = facts;
    c["build_facts"]["host_arch"] = build.host_arch;  // the ISA host code (and a built Kokkos) was compiled for
    c["models"] = suite_models_json();
    c["matrix"] = matrix;
    return c;
}

std::string configuration_name(const std::string& variant, std::size_t n, int d, int steps, const Workload& workload,
                               const TuningValues& tuning) {
    std::string name = fmt::format("{}/n:{}/d:{}/steps:{}", variant, n, d, steps);
    if (workload != Workload{})
        name += fmt::format("/dim:{}/precision:{}/integrator:{}", workload.dim, to_string(workload.precision),
                            to_string(workload.integrator));
    for (const auto& [key, value] : tuning) name += fmt::format("/{}:{}", key, value);
    return name;
}

ordered_json limit_inputs_json(const CpuLimitInputs& in) {
    return {{"cores", in.cores},
            {"clock_hz", in.clock_hz},
            {"simd_lanes", in.simd_lanes},
            {"fma_pipes", in.fma_pipes},
            {"instructions_per_interaction", in.instructions_per_interaction}};
}

ordered_json limit_inputs_json(const GpuLimitInputs& in) {
    return {{"sm_count", in.sm_count},
            {"sm_clock_hz", in.sm_clock_hz},
            {"lanes_per_sm", in.lanes_per_sm},
            {"lanes_source", in.lanes_source},
            {"instructions_per_interaction", in.instructions_per_interaction}};
}

ordered_json energy_json(const EnergyReading& total, const std::vector<EnergyReading>& ranks) {
    ordered_json energy = {{"meter", total.meter}, {"available", total.available}};
    if (!total.available) energy["reason"] = total.reason;
    if (!total.device.empty()) energy["device"] = total.device;
    if (total.available) {
        energy["window_s"] = total.window_s;
        if (total.meter == "nvml") {
            energy["clock_samples"] = total.clock_samples;
            energy["counter_updates"] = total.counter_updates;
        }
    }
    if (ranks.size() > 1) {
        ordered_json each = ordered_json::array();
        for (const EnergyReading& r : ranks) {
            ordered_json rank = {{"device", r.device}, {"available", r.available}};
            if (r.available) {
                rank["energy_j"] = r.energy_j;
                rank["window_s"] = r.window_s;
                rank["mean_power_w"] = r.mean_power_w();
                if (r.clock_samples > 0) rank["mean_sm_clock_mhz"] = r.mean_sm_clock_mhz;
            } else {
                rank["reason"] = r.reason;
            }
            each.push_back(rank);
        }
        energy["ranks"] = each;
    }
    return energy;
}

Workload entry_workload(const nlohmann::json& entry) {
    Workload w;  // version 1 entries have no workload fields: the canonical one
    if (entry.contains("dim")) w.dim = entry["dim"].get<int>();
    if (entry.contains("precision")) w.precision = parse_precision(entry["precision"].get<std::string>());
    if (entry.contains("integrator")) w.integrator = parse_integrator(entry["integrator"].get<std::string>());
    return w;
}

namespace {

// An iteration entry's energy figures against energy_j, its timed steps and its meter's window;
// the ranks' energies against their sum; efficiency_at_clock against the limit at the clock held.
void check_energy_fields(const nlohmann::json& b, const std::string& where, std::vector<std::string>& problems) {
    const auto close = [](double a, double c) { return std::abs(a - c) <= 1e-6 * std::max(std::abs(a), std::abs(c)); };
    const auto number = [&](const char* key) -> std::optional<double> {
        return b.contains(key) && b[key].is_number() ? std::optional(b[key].get<double>()) : std::nullopt;
    };
    const nlohmann::json energy = b.value("energy", nlohmann::json());
    const auto energy_j = number("energy_j");
    if (energy.is_object() && energy["available"].get<bool>() != energy_j.has_value())
        problems.push_back(where + (energy_j ? ": energy_j recorded by a meter that was not available"
                                             : ": energy.available without energy_j"));
    if (!energy_j) return;
    const double steps = number("timed_steps").value_or(b["steps"].get<double>());
    if (const auto per_step = number("energy_per_step_j"); !per_step || !close(*per_step * steps, *energy_j))
        problems.push_back(where + ": energy_per_step_j is not energy_j / timed_steps");
    else if (const auto per_joule = number("interactions_per_joule");
             !per_joule || !close(*per_joule * *per_step, b["n"].get<double>() * b["n"].get<double>()))
        problems.push_back(where + ": interactions_per_joule is not n^2 / energy_per_step_j");
    if (energy.is_object() && energy.contains("window_s"))
        if (const auto power = number("mean_power_w"); !power || !close(*power * energy["window_s"].get<double>(), *energy_j))
            problems.push_back(where + ": mean_power_w is not energy_j / energy.window_s");
    if (energy.is_object() && energy.contains("ranks")) {
        double sum = 0.0;
        for (const auto& rank : energy["ranks"]) sum += rank.value("energy_j", 0.0);
        if (!close(sum, *energy_j)) problems.push_back(where + ": energy_j is not the sum of energy.ranks' energy_j");
    }
    if (const auto at_clock = number("efficiency_at_clock")) {
        const auto clock = number("mean_sm_clock_mhz"), ips = number("interactions_per_second"),
                   limit = number("efficiency_limit");
        const nlohmann::json inputs = b.value("efficiency_limit_inputs", nlohmann::json());
        const bool known = clock && ips && limit && inputs.is_object() && inputs.contains("sm_clock_hz");
        if (!known || !close(*at_clock, efficiency_at_clock(*ips, *limit, inputs["sm_clock_hz"].get<double>(), *clock)))
            problems.push_back(where +
                               ": efficiency_at_clock is not interactions_per_second / (efficiency_limit x "
                               "mean_sm_clock_mhz / efficiency_limit_inputs.sm_clock_hz)");
    }
}

}  // namespace

std::vector<std::string> check_results(const nlohmann::json& doc) {
    std::vector<std::string> problems = validate_json_schema(results_schema(), doc);
    if (!problems.empty()) return problems;

    const auto close = [](double a, double b) { return std::abs(a - b) <= 1e-6 * std::max(std::abs(a), std::abs(b)); };
    static const std::map<std::string, double> unit_seconds = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0}};
    std::set<std::string> seen;
    std::map<std::string, long> iterations_of, repetitions_of;
    std::set<std::string> failed;
    const auto& entries = doc["benchmarks"];
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const auto& b = entries[i];
        const std::string where = fmt::format("/benchmarks/{}", i);
        // The schema says "integer"; the checks below hold these in an int.
        const auto int_range = [&](const nlohmann::json& object, const char* key, const std::string& at) {
            if (!object.is_object() || !object.contains(key) || !object[key].is_number()) return true;
            const double v = object[key].get<double>();
            if (v >= -2147483648.0 && v <= 2147483647.0) return true;
            problems.push_back(fmt::format("{}/{}: {} does not fit the range of an int", at, key, object[key].dump()));
            return false;
        };
        bool in_range = int_range(b, "d", where) && int_range(b, "steps", where);
        if (b.contains("efficiency_limit_inputs"))
            for (const char* key : {"cores", "simd_lanes", "fma_pipes", "sm_count", "lanes_per_sm"})
                in_range = int_range(b["efficiency_limit_inputs"], key, where + "/efficiency_limit_inputs") && in_range;
        if (!in_range) continue;
        const std::string run_name = b["run_name"];
        const bool aggregate = b["run_type"] == "aggregate";
        const std::string key = aggregate ? fmt::format("{}#{}", run_name, b["aggregate_name"].get<std::string>())
                                          : fmt::format("{}#{}", run_name, b["repetition_index"].get<long>());
        if (!seen.insert(key).second) problems.push_back(where + ": a second entry for " + json_text_excerpt(key));
        const Workload workload = entry_workload(b);
        const std::string expected_name = configuration_name(b["variant"], b["n"], b["d"], b["steps"], workload, b["tuning"]);
        if (run_name != expected_name)
            problems.push_back(fmt::format("{}: run_name {} does not name its fields (expected {})", where,
                                           json_text_excerpt(run_name), json_text_excerpt(expected_name)));
        if (b.value("error_occurred", false)) {
            failed.insert(run_name);
            continue;
        }
        const double tps = b["time_per_step_s"], ips = b["interactions_per_second"];
        const double n = b["n"];
        if (!aggregate) {
            ++iterations_of[run_name];
            repetitions_of[run_name] = b["repetitions"];
            if (!close(ips, n * n / tps)) problems.push_back(where + ": interactions_per_second is not n^2 / time_per_step_s");
            if (!close(b["real_time"].get<double>() * unit_seconds.at(b["time_unit"]), tps))
                problems.push_back(where + ": real_time is not time_per_step_s in time_unit");
            if (!b["efficiency"].is_null() &&
                (b["efficiency_limit"].is_null() || !close(b["efficiency"].get<double>(), ips / b["efficiency_limit"].get<double>())))
                problems.push_back(where + ": efficiency is not interactions_per_second / efficiency_limit");
        }
        if (const auto inputs = b.value("efficiency_limit_inputs", nlohmann::json()); !inputs.is_null()) {
            if (inputs["instructions_per_interaction"].get<double>() != flops_per_interaction(workload))
                problems.push_back(fmt::format("{}: instructions_per_interaction {} is not the {} count {}", where,
                                               inputs["instructions_per_interaction"].dump(), to_string(workload),
                                               flops_per_interaction(workload)));
            const bool cpu = inputs.contains("cores");
            if (cpu != (b["device"] == "cpu")) problems.push_back(where + ": efficiency_limit_inputs are not those of its device");
            const double one_rank_limit = cpu ? cpu_interaction_limit({.cores = inputs["cores"],
                                                              .clock_hz = inputs["clock_hz"],
                                                              .simd_lanes = inputs["simd_lanes"],
                                                              .fma_pipes = inputs["fma_pipes"],
                                                              .instructions_per_interaction = inputs["instructions_per_interaction"]})
                                     : gpu_interaction_limit({.sm_count = inputs["sm_count"],
                                                              .sm_clock_hz = inputs["sm_clock_hz"],
                                                              .lanes_per_sm = inputs["lanes_per_sm"],
                                                              .lanes_source = inputs["lanes_source"],
                                                              .instructions_per_interaction = inputs["instructions_per_interaction"]});
            const double limit = one_rank_limit * inputs.value("ranks", 1);  // several ranks: all their devices
            const bool limit_known = limit > 0 && std::isfinite(limit);
            if (limit_known != !b["efficiency_limit"].is_null() ||
                (limit_known && !close(limit, b["efficiency_limit"].get<double>())))
                problems.push_back(where + ": efficiency_limit is not the product of efficiency_limit_inputs");
        }
        if (b["device"] == "cpu" && b["cores_used"].is_null()) problems.push_back(where + ": a CPU entry without cores_used");
        if (!aggregate) check_energy_fields(b, where, problems);
    }
    for (const auto& [run_name, count] : iterations_of)
        if (count != repetitions_of[run_name])
            problems.push_back(fmt::format("{}: {} iteration entries for {} repetitions", json_text_excerpt(run_name), count,
                                           repetitions_of[run_name]));
    for (const auto& run_name : failed)
        if (iterations_of.count(run_name)) problems.push_back(json_text_excerpt(run_name) + ": both an error entry and timed entries");
    return problems;
}

}  // namespace nbody
