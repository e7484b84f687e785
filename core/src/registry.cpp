#include "nbody/registry.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "nbody/errors.hpp"

namespace nbody {

bool glob_match(const std::string& pattern, const std::string& text) {
    // Iterative wildcard match with backtracking to the last '*'.
    std::size_t p = 0, t = 0, star = std::string::npos, resume = 0;
    while (t < text.size()) {
        if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
            ++p;
            ++t;
        } else if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            resume = t;
        } else if (star != std::string::npos) {
            p = star + 1;
            t = ++resume;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*') ++p;
    return p == pattern.size();
}

void Registry::add(VariantDescriptor descriptor) {
    if (descriptor.id.empty() || descriptor.id.find('.') == std::string::npos)
        throw std::logic_error("variant id '" + descriptor.id + "' is not <backend>.<variant>");
    if (find(descriptor.id) != nullptr)
        throw std::logic_error("variant '" + descriptor.id + "' registered twice or an alias");
    if (!descriptor.create) throw std::logic_error("variant '" + descriptor.id + "' has no factory");
    if (!descriptor.availability) descriptor.availability = [] { return Availability{}; };
    variants_.push_back(std::move(descriptor));
}

const VariantDescriptor* Registry::find(const std::string& id) const {
    const auto alias = aliases_.find(id);
    const std::string& current = alias == aliases_.end() ? id : alias->second;
    for (const auto& v : variants_)
        if (v.id == current) return &v;
    return nullptr;
}

void Registry::add_alias(const std::string& former_id, const std::string& id) {
    if (find(id) == nullptr) throw std::logic_error("alias '" + former_id + "' of unregistered variant '" + id + "'");
    if (find(former_id) != nullptr) throw std::logic_error("alias '" + former_id + "' is already a variant id");
    aliases_[former_id] = id;
}

std::vector<std::string> Registry::pattern_parts(const std::string& patterns) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (start <= patterns.size()) {
        const std::size_t comma = patterns.find(',', start);
        const std::string part =
            patterns.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!part.empty()) parts.push_back(part);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return parts;
}

std::vector<const VariantDescriptor*> Registry::match(const std::string& patterns) const {
    std::vector<std::string> parts = pattern_parts(patterns);
    // A former id names its variant too (matrices written before a rename).
    for (std::string& part : parts)
        if (const auto alias = aliases_.find(part); alias != aliases_.end()) part = alias->second;
    std::vector<const VariantDescriptor*> out;
    for (const auto& v : variants_)
        if (std::any_of(parts.begin(), parts.end(),
                        [&](const std::string& p) { return glob_match(p, v.id); }))
            out.push_back(&v);
    return out;
}

std::string Registry::absent_from_build(const std::string& pattern) const {
    // "<model>.<variant>[@<space>]": the model is what precedes the first '.', the space what follows '@'.
    const std::string model = pattern.substr(0, pattern.find('.'));
    const std::size_t at = pattern.rfind('@');
    for (const ModelPart& part : parts_)
        if (part.space.empty() && !part.in_build && glob_match(model, part.model))
            return "model " + part.model + " is not in this build: " + part.why_absent;
    if (at == std::string::npos) return "";
    const std::string space = pattern.substr(at + 1);
    for (const ModelPart& part : parts_)
        if (!part.space.empty() && !part.in_build && glob_match(model, part.model) && glob_match(space, part.space))
            return "execution space " + part.space + " of model " + part.model + " is not in this build: " + part.why_absent;
    return "";
}

std::string Registry::declared_models() const {
    std::string models;
    for (const ModelPart& part : parts_)
        if (part.space.empty()) models += (models.empty() ? "" : ", ") + part.model;
    return models;
}

namespace {
bool parse_long(const std::string& text, long& value) {
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    return ec == std::errc() && ptr == end && !text.empty();
}
}  // namespace

bool defines_value(const TuningParameter& parameter, const std::string& value) {
    const auto listed = [&](const std::vector<std::string>& values) {
        return std::find(values.begin(), values.end(), value) != values.end();
    };
    if (!parameter.allowed_values.empty()) return listed(parameter.allowed_values) || listed(parameter.values_elsewhere);
    long parsed = 0;
    return parse_long(value, parsed) && parsed >= parameter.min_value &&
           (parsed <= parameter.max_value || parameter.larger_elsewhere);
}

std::string defined_values_text(const TuningParameter& parameter) {
    if (parameter.allowed_values.empty())
        return parameter.larger_elsewhere
                   ? "an integer >= " + std::to_string(parameter.min_value)
                   : "an integer in [" + std::to_string(parameter.min_value) + ", " + std::to_string(parameter.max_value) + "]";
    std::string text;
    for (const auto* values : {&parameter.allowed_values, &parameter.values_elsewhere})
        for (const auto& value : *values) text += (text.empty() ? "" : "|") + value;
    return text;
}

TuningValues Registry::resolve_tuning(const VariantDescriptor& variant, const TuningValues& overrides) {
    TuningValues values;
    for (const auto& t : variant.tunings) values[t.name] = t.default_value;
    for (const auto& [name, value] : overrides) {
        const auto it = std::find_if(variant.tunings.begin(), variant.tunings.end(),
                                     [&](const TuningParameter& t) { return t.name == name; });
        if (it == variant.tunings.end())
            throw UsageError("variant " + variant.id + " has no tuning '" + name + "'");
        if (!it->allowed_values.empty()) {
            if (std::find(it->allowed_values.begin(), it->allowed_values.end(), value) ==
                it->allowed_values.end()) {
                std::string allowed;
                for (const auto& a : it->allowed_values) allowed += (allowed.empty() ? "" : "|") + a;
                throw UsageError("variant " + variant.id + ": tuning " + name + "=" + value +
                                 (defines_value(*it, value) ? " is not available on this machine (here: " + allowed + ")"
                                                            : " is not one of " + allowed));
            }
        } else {
            long parsed = 0;
            if (!parse_long(value, parsed) || parsed < it->min_value || parsed > it->max_value)
                throw UsageError("variant " + variant.id + ": tuning " + name + "=" + value +
                                 " is not an integer in [" + std::to_string(it->min_value) + ", " +
                                 std::to_string(it->max_value) + "]" +
                                 (defines_value(*it, value) ? " on this machine" : ""));
        }
        values[name] = value;
    }
    return values;
}

HostState empty_state(const Workload& workload, std::size_t n) {
    return make_host_state(workload.precision, [&]<class Real>() { return BodiesT<Real>(n, workload.dim); });
}

void require_workload(const VariantDescriptor& variant, const Workload& workload) {
    if (!variant.workloads.supports(workload))
        throw UsageError("variant " + variant.id + " does not run the " + to_string(workload) + " workload (it runs " +
                         variant.workloads.describe() + "; see `nbody-bench list`)");
}

long tuning_int(const TuningValues& values, const std::string& name) {
    const auto it = values.find(name);
    long parsed = 0;
    if (it == values.end() || !parse_long(it->second, parsed))
        throw std::logic_error("tuning '" + name + "' missing or not an integer");
    return parsed;
}

BlockDecomposition decomposition_of(const Problem& problem) {
    return BlockDecomposition(problem.n, problem.distribution.ranks());
}

BodyBlock owned_block(const Problem& problem) {
    return decomposition_of(problem).block(problem.distribution.rank());
}

}  // namespace nbody
