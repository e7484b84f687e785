#include "matrix/matrix.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "nbody/errors.hpp"
#include "results/json_input.hpp"
#include "results/results.hpp"
#include "run/refusals.hpp"

namespace nbody {

namespace {

using nlohmann::json;

class Reader {
public:
    explicit Reader(std::string file) : file_(std::move(file)) {}

    // `where` is built from the file's own keys: shown escaped and shortened, one line whatever they hold.
    [[noreturn]] void fail(const std::string& where, const std::string& what) const {
        throw InputError(fmt::format("{}: {}: {}", file_, one_line(where), what));
    }

    void only_keys(const json& object, const std::string& where, const std::set<std::string>& allowed) const {
        if (!object.is_object()) fail(where, "must be an object");
        for (const auto& [key, value] : object.items())
            if (!allowed.count(key)) fail(where, "unknown key " + json_text_excerpt(key));
    }

    long integer(const json& value, const std::string& where, long min_value, long max_value) const {
        if (!value.is_number_integer()) fail(where, "must be an integer");
        const bool above_long = value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(LONG_MAX);
        const long v = above_long ? LONG_MAX : value.get<long>();
        if (above_long || v < min_value || v > max_value)
            fail(where, fmt::format("must be in [{}, {}], got {}", min_value, max_value, value.dump()));
        return v;
    }

    double positive(const json& value, const std::string& where) const {
        if (!value.is_number() || !(value.get<double>() > 0) || !std::isfinite(value.get<double>()))
            fail(where, "must be a positive finite number");
        return value.get<double>();
    }

    template <class T>
    std::vector<T> integer_list(const json& value, const std::string& where, long min_value, long max_value) const {
        if (!value.is_array() || value.empty()) fail(where, "must be a non-empty list of integers");
        std::vector<T> out;
        std::set<T> listed;
        for (std::size_t i = 0; i < value.size(); ++i) {
            const T v = static_cast<T>(integer(value[i], fmt::format("{}[{}]", where, i), min_value, max_value));
            if (!listed.insert(v).second) twice(where, std::to_string(v));
            out.push_back(v);
        }
        return out;
    }

    // Every list of a matrix holds each value once: a repeat is a mistake, not a request to run twice.
    [[noreturn]] void twice(const std::string& where, const std::string& value) const {
        fail(where, "lists " + value + " twice (each value once)");
    }

    // A seed: any integer of 64 bits without sign, as `--seed` takes it.
    std::uint64_t seed(const json& value, const std::string& where) const {
        if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<long>() >= 0))
            fail(where, fmt::format("must be an integer in [0, {}], got {}", UINT64_MAX, value.dump()));
        return value.get<std::uint64_t>();
    }

    std::string text(const json& value, const std::string& where) const {
        if (!value.is_string() || value.get<std::string>().empty()) fail(where, "must be a non-empty string");
        const std::string& s = value.get_ref<const std::string&>();
        if (s.size() > kMaxTextBytes) fail(where, fmt::format("longer than {} bytes", kMaxTextBytes));
        if (std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; }))
            fail(where, "holds a control character: " + json_text_excerpt(s));
        return s;
    }

    // A tuning value: a string, or an integer written as a number.
    std::string tuning_value(const json& value, const std::string& where) const {
        if (value.is_number_integer()) return std::to_string(value.get<long>());
        return text(value, where);
    }

    // One workload axis: a single value or a non-empty list of them, each read by `one`.
    template <class T, class ReadOne>
    std::vector<T> axis(const json& value, const std::string& where, ReadOne one) const {
        if (!value.is_array()) return {one(value, where)};
        if (value.empty()) fail(where, "must be a value or a non-empty list of values");
        std::vector<T> out;
        for (std::size_t i = 0; i < value.size(); ++i) {
            const T v = one(value[i], fmt::format("{}[{}]", where, i));
            if (std::find(out.begin(), out.end(), v) != out.end()) twice(where, shown(value[i]));
            out.push_back(v);
        }
        return out;
    }

    // The workload's own parsers, their message after the key.
    template <class Parse>
    auto parsed(const std::string& text, const std::string& where, Parse parse) const {
        try {
            return parse(text);
        } catch (const UsageError& e) {
            fail(where, e.what());
        }
    }

    void workload_axes(const json& object, const std::string& prefix, MatrixGroup& out) const {
        if (object.contains("dim"))
            out.dims = axis<int>(object["dim"], prefix + "dim", [this](const json& v, const std::string& where) {
                if (!v.is_number_integer()) fail(where, "must be 2 or 3");
                return parsed(std::to_string(v.get<long>()), where, parse_dim);
            });
        if (object.contains("precision"))
            out.precisions = axis<Precision>(object["precision"], prefix + "precision", [this](const json& v, const std::string& where) {
                return parsed(text(v, where), where, parse_precision);
            });
        if (object.contains("integrator"))
            out.integrators = axis<Integrator>(object["integrator"], prefix + "integrator", [this](const json& v, const std::string& where) {
                return parsed(text(v, where), where, parse_integrator);
            });
    }

    std::vector<std::pair<std::string, std::size_t>> caps(const json& value, const std::string& where) const {
        if (!value.is_object()) fail(where, "must be an object of variant pattern -> largest N");
        std::vector<std::pair<std::string, std::size_t>> out;
        for (const auto& [pattern, cap] : value.items())
            out.emplace_back(pattern, static_cast<std::size_t>(integer(cap, where + "." + pattern, 1, 1L << 30)));
        return out;
    }

    // A listed value as the file writes it, for a message.
    static std::string shown(const json& value) { return value.is_string() ? json_text_excerpt(value.get<std::string>()) : value.dump(); }

private:
    static std::string one_line(const std::string& text) {
        std::string out;
        for (const char c : text.substr(0, 200)) {
            const auto byte = static_cast<unsigned char>(c);
            out += byte < 0x20 || byte == 0x7f ? fmt::format("\\x{:02x}", byte) : std::string(1, c);
        }
        return text.size() > 200 ? out + "..." : out;
    }
    // Names, descriptions, patterns and tuning values: one line each, of a reasonable length.
    static constexpr std::size_t kMaxTextBytes = 4096;

    std::string file_;
};

constexpr long kMaxN = 1L << 26;

// Why a pattern of no variant is a mistake: its model exists and has no such variant, or there is no such model.
std::string no_variant_hint(const Registry& registry, const std::string& pattern) {
    const std::string model = pattern.substr(0, pattern.find('.'));
    for (const ModelPart& part : registry.declared_parts())
        if (part.space.empty() && glob_match(model, part.model)) return "model " + part.model + " has no such variant";
    return fmt::format("no model {}; the models: {}", json_text_excerpt(model), registry.declared_models());
}

// Notes for a one-line message: the first few, distinct, then how many more.
std::string summary_of(const std::vector<std::string>& notes) {
    std::set<std::string> distinct;
    std::string text;
    std::size_t shown = 0;
    for (const auto& note : notes)
        if (distinct.insert(note).second && shown < 3 && text.size() < 300) text += (shown++ ? "; " : "") + note;
    if (text.size() > 400) text = text.substr(0, 400) + "...";
    if (shown < distinct.size()) text += fmt::format("; and {} more", distinct.size() - shown);
    return text;
}

// The parameters named `name` of the variants a group matched.
std::vector<const TuningParameter*> parameters_named(const std::vector<const VariantDescriptor*>& variants, const std::string& name) {
    std::vector<const TuningParameter*> out;
    for (const VariantDescriptor* v : variants)
        for (const TuningParameter& t : v->tunings)
            if (t.name == name) out.push_back(&t);
    return out;
}

// A tuning name or value that no variant of the group defines is a typo (exit 2); a value one of them
// defines but this machine cannot hold (more threads than its cores, an instruction set the CPU
// lacks) is skipped at expansion with a note. Nothing to judge when every pattern was left out of the
// build, and no value when some was (the model left out may define it).
void require_defined_tunings(const MatrixSpec& spec, const MatrixGroup& group, const std::vector<const VariantDescriptor*>& matched,
                             bool left_out_of_build) {
    if (matched.empty()) return;
    for (const auto& tuning : group.tunings) {
        const std::string& name = tuning.first;
        const auto parameters = parameters_named(matched, name);
        if (parameters.empty())
            throw UsageError(fmt::format("{}: {}: no variant matched by this group has a tuning \"{}\"", spec.file, group.name, name));
        if (left_out_of_build) continue;
        for (const std::string& value : tuning.second) {
            if (std::any_of(parameters.begin(), parameters.end(), [&](const TuningParameter* t) { return defines_value(*t, value); }))
                continue;
            std::set<std::string> valid;
            for (const TuningParameter* t : parameters) valid.insert(defined_values_text(*t));
            std::string listed;
            for (const std::string& text : valid) listed += (listed.empty() ? "" : "; ") + text;
            throw InputError(fmt::format("{}: group {}: tunings.{}: no variant matched by this group has the value {} (valid: {})",
                                         spec.file, json_text_excerpt(group.name), name, json_text_excerpt(value), listed));
        }
    }
}

// The variants a group's patterns match, without judging the patterns (expand_matrix does).
std::vector<const VariantDescriptor*> matched_variants(const MatrixGroup& group, const Registry& registry) {
    std::vector<const VariantDescriptor*> matched;
    for (const std::string& pattern : group.variant_patterns)
        for (const std::string& part : Registry::pattern_parts(pattern))
            for (const auto* v : registry.match(part))
                if (std::find(matched.begin(), matched.end(), v) == matched.end()) matched.push_back(v);
    return matched;
}

// A size cap that caps no variant of the groups it applies to is a typo (exit 2), unless its pattern
// names a model or space this build left out. Judged on every group of the file (--groups or not):
// a top-level cap may serve a group not selected.
void require_caps_that_cap(const MatrixSpec& spec, const Registry& registry) {
    std::map<std::string, bool> caps_something;  // pattern -> matches a variant of a group it applies to
    for (const MatrixGroup& group : spec.all_groups.empty() ? spec.groups : spec.all_groups) {
        const auto matched = matched_variants(group, registry);
        for (const auto& cap : group.max_n) {
            const std::string& pattern = cap.first;
            caps_something[pattern] |= std::any_of(matched.begin(), matched.end(),
                                                   [&](const VariantDescriptor* v) { return glob_match(pattern, v->id); });
        }
    }
    // Named entries, not structured bindings: Clang 16 with -fopenmp cannot capture a binding in a lambda.
    for (const auto& cap : caps_something) {
        const std::string& pattern = cap.first;
        if (cap.second || !registry.absent_from_build(pattern).empty()) continue;
        const bool exists = std::any_of(registry.all().begin(), registry.all().end(),
                                        [&](const VariantDescriptor& v) { return glob_match(pattern, v.id); });
        throw InputError(fmt::format("{}: max_n: pattern {} caps no variant of the matrix ({})", spec.file,
                                     json_text_excerpt(pattern),
                                     exists ? "it matches none of the variants its groups list"
                                            : no_variant_hint(registry, pattern) + "; see `nbody-bench list`"));
    }
}

}  // namespace

MatrixSpec parse_matrix(const json& doc, const std::string& file) {
    const Reader r(file);
    r.only_keys(doc, "top level",
                {"name", "description", "seed", "constants", "steps", "warmup_steps", "min_time_s", "repetitions", "verification",
                 "max_n", "dim", "precision", "integrator", "groups"});
    MatrixSpec spec;
    spec.file = file;
    if (!doc.contains("name")) r.fail("top level", "missing \"name\"");
    spec.name = r.text(doc["name"], "name");
    if (doc.contains("description")) spec.description = r.text(doc["description"], "description");
    if (doc.contains("seed")) spec.seed = r.seed(doc["seed"], "seed");
    if (doc.contains("constants")) {
        const json& c = doc["constants"];
        r.only_keys(c, "constants", {"G", "dt", "softening"});
        if (c.contains("G")) spec.constants.G = r.positive(c["G"], "constants.G");
        if (c.contains("dt")) spec.constants.dt = r.positive(c["dt"], "constants.dt");
        if (c.contains("softening")) spec.constants.softening = r.positive(c["softening"], "constants.softening");
    }
    if (doc.contains("verification")) {
        const json& v = doc["verification"];
        r.only_keys(v, "verification",
                    {"steps", "full_reference_max_n", "sample_bodies", "max_pos_err", "max_rms_pos_err", "max_vel_err",
                     "max_map_diff"});
        if (v.contains("steps")) spec.verify_steps = static_cast<int>(r.integer(v["steps"], "verification.steps", 1, 1000));
        if (v.contains("full_reference_max_n"))
            spec.verification.full_reference_max_n = static_cast<std::size_t>(
                r.integer(v["full_reference_max_n"], "verification.full_reference_max_n", 1, kMaxN));
        if (v.contains("sample_bodies"))
            spec.verification.sample_bodies =
                static_cast<std::size_t>(r.integer(v["sample_bodies"], "verification.sample_bodies", 1, kMaxN));
        ThresholdOverrides& t = spec.verification.overrides;
        for (auto [key, target] : {std::pair{"max_pos_err", &t.max_pos_err}, std::pair{"max_rms_pos_err", &t.max_rms_pos_err},
                                   std::pair{"max_vel_err", &t.max_vel_err}, std::pair{"max_map_diff", &t.max_map_diff}})
            if (v.contains(key)) *target = r.positive(v[key], std::string("verification.") + key);
    }

    MatrixGroup defaults;
    if (doc.contains("steps")) defaults.steps = static_cast<int>(r.integer(doc["steps"], "steps", 1, 1L << 30));
    if (doc.contains("warmup_steps")) defaults.warmup_steps = static_cast<int>(r.integer(doc["warmup_steps"], "warmup_steps", 0, 1L << 30));
    if (doc.contains("min_time_s")) defaults.min_time_s = r.positive(doc["min_time_s"], "min_time_s");
    if (doc.contains("repetitions")) defaults.repetitions = static_cast<int>(r.integer(doc["repetitions"], "repetitions", 1, 1000));
    if (doc.contains("max_n")) defaults.max_n = r.caps(doc["max_n"], "max_n");
    r.workload_axes(doc, "", defaults);
    defaults.verify_steps = spec.verify_steps;

    if (!doc.contains("groups") || !doc["groups"].is_array() || doc["groups"].empty())
        r.fail("top level", "\"groups\" must be a non-empty list");
    for (std::size_t g = 0; g < doc["groups"].size(); ++g) {
        const json& group = doc["groups"][g];
        const std::string where = fmt::format("groups[{}]", g);
        r.only_keys(group, where, {"name", "variants", "n", "d", "dim", "precision", "integrator", "steps", "warmup_steps",
                                   "min_time_s", "repetitions", "verify_steps", "tunings", "max_n"});
        MatrixGroup out = defaults;
        out.name = group.contains("name") ? r.text(group["name"], where + ".name") : fmt::format("group{}", g);
        if (!group.contains("variants") || !group["variants"].is_array() || group["variants"].empty())
            r.fail(where, "\"variants\" must be a non-empty list of ids or patterns");
        std::set<std::string> listed_patterns;
        for (std::size_t i = 0; i < group["variants"].size(); ++i) {
            const std::string pattern = r.text(group["variants"][i], fmt::format("{}.variants[{}]", where, i));
            if (!listed_patterns.insert(pattern).second) r.twice(where + ".variants", json_text_excerpt(pattern));
            out.variant_patterns.push_back(pattern);
        }
        if (!group.contains("n")) r.fail(where, "missing \"n\"");
        if (!group.contains("d")) r.fail(where, "missing \"d\"");
        out.n = r.integer_list<std::size_t>(group["n"], where + ".n", 1, kMaxN);
        out.d = r.integer_list<int>(group["d"], where + ".d", 1, kMaxMapSize);
        r.workload_axes(group, where + ".", out);
        if (group.contains("steps")) out.steps = static_cast<int>(r.integer(group["steps"], where + ".steps", 1, 1L << 30));
        if (group.contains("warmup_steps"))
            out.warmup_steps = static_cast<int>(r.integer(group["warmup_steps"], where + ".warmup_steps", 0, 1L << 30));
        if (group.contains("min_time_s")) out.min_time_s = r.positive(group["min_time_s"], where + ".min_time_s");
        if (group.contains("repetitions"))
            out.repetitions = static_cast<int>(r.integer(group["repetitions"], where + ".repetitions", 1, 1000));
        if (group.contains("verify_steps"))
            out.verify_steps = static_cast<int>(r.integer(group["verify_steps"], where + ".verify_steps", 1, 1000));
        if (group.contains("tunings")) {
            const json& tunings = group["tunings"];
            if (!tunings.is_object()) r.fail(where + ".tunings", "must be an object of name -> list of values");
            for (const auto& [name, values] : tunings.items()) {
                const std::string at = where + ".tunings." + name;
                if (!values.is_array() || values.empty()) r.fail(at, "must be a non-empty list");
                std::vector<std::string> list;
                std::set<std::string> listed_values;
                for (std::size_t i = 0; i < values.size(); ++i) {
                    const std::string value = r.tuning_value(values[i], fmt::format("{}[{}]", at, i));
                    if (!listed_values.insert(value).second) r.twice(at, json_text_excerpt(value));
                    list.push_back(value);
                }
                out.tunings.emplace_back(name, list);
            }
        }
        if (group.contains("max_n")) {
            auto caps = r.caps(group["max_n"], where + ".max_n");
            out.max_n.insert(out.max_n.begin(), caps.begin(), caps.end());  // the group's caps first
        }
        for (const Precision precision : out.precisions) {
            const std::string bad = unrepresentable_constant(spec.constants, precision, "constants.");
            if (!bad.empty()) r.fail(where + ".precision", bad);
        }
        spec.groups.push_back(std::move(out));
    }
    return spec;
}

MatrixSpec load_matrix(const std::string& path) { return parse_matrix(read_json_file(path), path); }

std::vector<const VariantDescriptor*> available_variants(const std::vector<const VariantDescriptor*>& matched,
                                                         std::vector<std::string>& skipped) {
    std::vector<const VariantDescriptor*> available;
    for (const auto* v : matched) {
        const Availability a = v->availability();
        if (a.available)
            available.push_back(v);
        else
            skipped.push_back(v->id + ": " + a.reason);
    }
    return available;
}

void select_groups(MatrixSpec& spec, const std::vector<std::string>& names) {
    std::string known;
    for (const MatrixGroup& g : spec.groups) known += (known.empty() ? "" : ", ") + g.name;
    for (const std::string& name : names)
        if (std::none_of(spec.groups.begin(), spec.groups.end(), [&](const MatrixGroup& g) { return g.name == name; }))
            throw UsageError(fmt::format("{}: no group \"{}\" (its groups: {})", spec.file, name, known));
    if (spec.all_groups.empty()) spec.all_groups = spec.groups;
    std::erase_if(spec.groups, [&](const MatrixGroup& g) { return std::find(names.begin(), names.end(), g.name) == names.end(); });
    spec.selected_groups = names;
}

MatrixExpansion expand_matrix(const MatrixSpec& spec, const Registry& registry, bool include_unavailable) {
    MatrixExpansion out;
    std::set<std::string> seen;
    for (const MatrixGroup& group : spec.groups) {
        // What this group skips: every note names the group; `why_empty` keeps them for the refusal
        // of a group that expands to nothing.
        std::vector<std::string> why_empty;
        const auto note = [&](const std::string& text) {
            out.notes.push_back(fmt::format("{}: {}", group.name, text));
            why_empty.push_back(text);
        };
        // A pattern of no variant is a typo unless it names a model or space this build left out.
        bool left_out_of_build = false;
        std::vector<const VariantDescriptor*> matched;
        for (const std::string& pattern : group.variant_patterns)
            for (const std::string& part : Registry::pattern_parts(pattern)) {
                const auto found = registry.match(part);
                if (found.empty()) {
                    const std::string absent = registry.absent_from_build(part);
                    if (absent.empty())
                        throw InputError(fmt::format("{}: group {}: variant pattern {} matches no variant ({}; see `nbody-bench list`)",
                                                     spec.file, json_text_excerpt(group.name), json_text_excerpt(part),
                                                     no_variant_hint(registry, part)));
                    note(fmt::format("pattern \"{}\" skipped: {}", part, absent));
                    left_out_of_build = true;
                }
                for (const auto* v : found)
                    if (std::find(matched.begin(), matched.end(), v) == matched.end()) matched.push_back(v);
            }
        require_defined_tunings(spec, group, matched, left_out_of_build);
        // Variants that exist but cannot run here are skipped with their reason (a dry run may keep them).
        std::vector<const VariantDescriptor*> variants;
        std::vector<std::string> unavailable;
        if (include_unavailable)
            variants = matched;
        else
            variants = available_variants(matched, unavailable);
        for (const auto& why : unavailable) note("skipped " + why);
        std::vector<Workload> workloads;
        for (int dim : group.dims)
            for (Precision precision : group.precisions)
                for (Integrator integrator : group.integrators) workloads.push_back({dim, precision, integrator});
        // The group's size before anything is built: a few lists of many values multiply fast.
        double combinations = static_cast<double>(variants.size()) * static_cast<double>(workloads.size()) *
                              static_cast<double>(group.n.size()) * static_cast<double>(group.d.size());
        for (const auto& [name, values] : group.tunings) combinations *= static_cast<double>(values.size());
        if (combinations > static_cast<double>(kMaxMatrixConfigurations))
            throw InputError(fmt::format("{}: group {}: {:.3g} combinations of variants, workloads, tunings, N and D, more "
                                         "than {} configurations: split the matrix",
                                         spec.file, json_text_excerpt(group.name), combinations, kMaxMatrixConfigurations));
        std::size_t expanded = 0;
        bool tuning_rejected_here = false;
        for (const auto* v : variants) {
            // The sweep over the tunings this variant has (others in the group's list do not apply to it).
            std::vector<TuningValues> sweeps{TuningValues{}};
            for (const auto& tuning : group.tunings) {
                const std::string& name = tuning.first;
                const auto& values = tuning.second;
                if (std::none_of(v->tunings.begin(), v->tunings.end(), [&](const TuningParameter& t) { return t.name == name; }))
                    continue;
                std::vector<TuningValues> next;
                for (const auto& partial : sweeps)
                    for (const auto& value : values) {
                        TuningValues extended = partial;
                        extended[name] = value;
                        next.push_back(extended);
                    }
                sweeps = std::move(next);
            }
            std::size_t cap = v->max_n;
            for (const auto& [pattern, limit] : group.max_n)
                if (glob_match(pattern, v->id)) {
                    cap = cap == 0 ? limit : std::min(cap, limit);
                    break;
                }
            // Workloads the variant does not run are skipped like an unavailable variant: one note says which.
            std::string unsupported;
            for (const Workload& workload : workloads)
                if (!v->workloads.supports(workload)) unsupported += (unsupported.empty() ? "" : ", ") + to_string(workload);
            if (!unsupported.empty()) note(fmt::format("skipped {} for {}: it runs {}", v->id, unsupported, v->workloads.describe()));
            for (const Workload& workload : workloads) {
                if (!v->workloads.supports(workload)) continue;
                for (const auto& overrides : sweeps) {
                    TuningValues tuning;
                    try {
                        tuning = Registry::resolve_tuning(*v, overrides);
                    } catch (const UsageError& e) {  // e.g. more threads than this host has: skip, say so
                        note(fmt::format("skipped: {}", e.what()));
                        tuning_rejected_here = true;
                        continue;
                    }
                    for (std::size_t n : group.n) {
                        if (cap != 0 && n > cap) {
                            note(fmt::format("{} not run at N={} (cap {})", v->id, n, cap));
                            continue;
                        }
                        for (int d : group.d) {
                            Configuration c{.name = configuration_name(v->id, n, d, group.steps, workload, tuning),
                                            .variant = v,
                                            .tuning = tuning,
                                            .n = n,
                                            .d = d,
                                            .workload = workload,
                                            .steps = group.steps,
                                            .warmup_steps = group.warmup_steps,
                                            .min_time_s = group.min_time_s,
                                            .repetitions = group.repetitions,
                                            .verify_steps = group.verify_steps,
                                            .group = group.name};
                            ++expanded;
                            if (seen.insert(c.name).second) out.configurations.push_back(std::move(c));
                            if (out.configurations.size() > kMaxMatrixConfigurations)
                                throw InputError(fmt::format("{}: more than {} configurations: split the matrix", spec.file,
                                                             kMaxMatrixConfigurations));
                        }
                    }
                }
            }
        }
        // A group of nothing is a mistake in the file (every N above the caps, workloads its variants
        // do not run), unless what it names is left out of this build or cannot run on this machine.
        if (expanded == 0) {
            if (!left_out_of_build && unavailable.empty() && !tuning_rejected_here)
                throw InputError(fmt::format("{}: group {} expands to no configuration: {}", spec.file,
                                             json_text_excerpt(group.name), summary_of(why_empty)));
            out.notes.push_back(fmt::format("{}: nothing of this group runs here", group.name));
        }
    }
    require_caps_that_cap(spec, registry);
    // Caps notes repeat per tuning and workload; keep each once, in order.
    std::vector<std::string> unique_notes;
    std::set<std::string> noted;
    for (auto& note : out.notes)
        if (noted.insert(note).second) unique_notes.push_back(std::move(note));
    out.notes = std::move(unique_notes);
    return out;
}

void require_configurations(const MatrixSpec& spec, const MatrixExpansion& expansion) {
    if (expansion.configurations.empty())
        throw InputError(fmt::format("{}: no configuration to run here: every group is skipped ({})", spec.file,
                                     summary_of(expansion.notes)));
}

}  // namespace nbody
