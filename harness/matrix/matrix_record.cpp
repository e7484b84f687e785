#include "matrix/matrix_record.hpp"

#include <fmt/format.h>

#include <optional>

#include "nbody/errors.hpp"
#include "results/json_input.hpp"
#include "results/results.hpp"
#include "verify/verification.hpp"

namespace nbody {

namespace {

using ordered_json = nlohmann::ordered_json;

// A group as it expands: the top-level defaults and caps folded in (the caps in the order they apply).
ordered_json group_definition(const MatrixGroup& g) {
    ordered_json tunings = ordered_json::object();
    for (const auto& [name, values] : g.tunings) tunings[name] = values;
    ordered_json caps = ordered_json::array();
    for (const auto& [pattern, n] : g.max_n) caps.push_back({{"variants", pattern}, {"n", n}});
    ordered_json dims = ordered_json::array(), precisions = ordered_json::array(), integrators = ordered_json::array();
    for (int dim : g.dims) dims.push_back(dim);
    for (Precision p : g.precisions) precisions.push_back(to_string(p));
    for (Integrator i : g.integrators) integrators.push_back(to_string(i));
    return {{"name", g.name},         {"variants", g.variant_patterns}, {"n", g.n},
            {"d", g.d},               {"dim", dims},                    {"precision", precisions},
            {"integrator", integrators}, {"steps", g.steps},            {"warmup_steps", g.warmup_steps},
            {"min_time_s", g.min_time_s}, {"repetitions", g.repetitions}, {"verify_steps", g.verify_steps},
            {"tunings", tunings},     {"max_n", caps}};
}

}  // namespace

ordered_json matrix_context(const MatrixSpec& spec) {
    // The absolute limits given (null: the rounding rule decides; for max_map_diff: every map count
    // must be explained), the same for both precisions.
    const auto thresholds_json = [&](Precision) {
        const ThresholdOverrides& t = spec.verification.overrides;
        const auto value = [](const std::optional<double>& v) { return v ? ordered_json(*v) : ordered_json(nullptr); };
        return ordered_json{{"max_pos_err", value(t.max_pos_err)},
                            {"max_rms_pos_err", value(t.max_rms_pos_err)},
                            {"max_vel_err", value(t.max_vel_err)},
                            {"max_map_diff", value(t.max_map_diff)}};
    };
    ordered_json verification = {{"steps", spec.verify_steps},
                                 {"full_reference_max_n", spec.verification.full_reference_max_n},
                                 {"sample_bodies", spec.verification.sample_bodies}};
    verification.update(thresholds_json(Precision::fp32));  // as version 1 wrote them: the fp32 thresholds
    verification["by_precision"] = {{"fp32", thresholds_json(Precision::fp32)}, {"fp64", thresholds_json(Precision::fp64)}};
    verification["rule"] = {{"rounding_multiple", kRoundingMultiple},
                            {"value_ulps", kValueUlps},
                            {"inconclusive_amplification", kInconclusiveAmplification}};
    ordered_json matrix = {{"name", spec.name},
                           {"file", spec.file},
                           {"seed", spec.seed},
                           {"constants", {{"G", spec.constants.G}, {"dt", spec.constants.dt}, {"softening", spec.constants.softening}}},
                           {"verification", verification}};
    if (!spec.selected_groups.empty()) matrix["groups"] = spec.selected_groups;  // run with --groups
    // Every group of the file, --groups or not: what a resume must find unchanged.
    matrix["group_definitions"] = ordered_json::array();
    for (const MatrixGroup& g : spec.all_groups.empty() ? spec.groups : spec.all_groups)
        matrix["group_definitions"].push_back(group_definition(g));
    return matrix;
}

ResumedFile read_resumed_file(const Registry& registry, const MatrixSpec& spec, const std::string& path, bool retry_failed) {
    const nlohmann::json old = read_json_file(path);
    // Only a file that passes check-results is continued: its entries are kept as they are.
    if (const auto problems = check_results(old); !problems.empty())
        throw InputError(fmt::format("{}: cannot resume: not a valid results file ({}; `nbody-bench check-results {}` "
                                     "lists every problem)",
                                     path, problems.front(), path));
    // Entries judged by another matrix (other groups, name, seed, constants or thresholds), or timed by
    // another build, are not continued under the file's context.
    const ordered_json fresh = results_context(registry, matrix_context(spec));
    if (const std::string differs = matrix_difference(old["context"]["matrix"], fresh["matrix"]); !differs.empty())
        throw UsageError(fmt::format("{}: cannot resume: it was run with another matrix ({})", path, differs));
    if (const std::string differs = build_difference(old["context"], fresh); !differs.empty())
        throw UsageError(fmt::format("{}: cannot resume: it was written by another build ({})", path, differs));
    ResumedFile out{.document = ordered_json::parse(old.dump()), .done = {}};
    ordered_json kept = ordered_json::array();
    for (auto& entry : out.document["benchmarks"]) {
        if (retry_failed && entry.value("error", std::string()) != "") continue;
        out.done.insert(entry.value("run_name", std::string()));
        kept.push_back(entry);
    }
    out.document["benchmarks"] = kept;
    return out;
}

std::string timing_summary(const nlohmann::ordered_json& entry) {
    // Any field may be null (a non-finite value, or a limit that is unknown): read each with care.
    const auto number = [&](const char* key) -> std::optional<double> {
        const auto it = entry.find(key);
        if (it == entry.end() || !it->is_number()) return std::nullopt;
        return it->get<double>();
    };
    const auto shown = [](std::optional<double> value) { return value ? fmt::format("{:.4e}", *value) : std::string("-"); };
    std::string text = fmt::format("{} s/step, {} interactions/s", shown(number("time_per_step_s")),
                                   shown(number("interactions_per_second")));
    if (const auto efficiency = number("efficiency")) text += fmt::format(", efficiency {:.1f}%", 100 * *efficiency);
    const auto verified = entry.find("verified");
    if (verified != entry.end() && verified->is_boolean() && verified->get<bool>())
        text += ", verified";
    else
        text += ", " + entry.value("error", std::string("not verified"));
    return text;
}

}  // namespace nbody
