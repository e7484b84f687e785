// `nbody-bench list`: every variant of this build, whether it can run here and why not, whether it
// runs over several ranks, how its runs repeat (docs/results-format.md), the workloads it runs
// (SPEC §2), its tunings. With --json: the models as their model.cmake declares them and the
// variants, for scripts (the plot tool, scripts/check_add_model.sh).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>

#include "cli/commands.hpp"
#include "nbody/registry.hpp"
#include "results/results.hpp"

namespace nbody {

namespace {
std::string describe_tuning(const TuningParameter& t) {
    std::string allowed;
    if (t.allowed_values.empty()) {
        allowed = fmt::format("{}..{}", t.min_value, t.max_value);
    } else {
        for (const auto& v : t.allowed_values) allowed += (allowed.empty() ? "" : "|") + v;
    }
    return fmt::format("{}={} [{}]", t.name, t.default_value, allowed);
}
}  // namespace

void add_list_command(CLI::App& app, int& exit_status) {
    auto* cmd = app.add_subcommand("list", "List the variants of this build, their availability, workloads and tunings");
    auto pattern = std::make_shared<std::string>("*");
    cmd->add_option("--variants", *pattern, "comma-separated glob patterns of variant ids")->capture_default_str();
    auto as_json = std::make_shared<bool>(false);
    cmd->add_flag("--json", *as_json, "print {\"models\": [...], \"variants\": [...]} as JSON");
    cmd->callback([pattern, as_json, &exit_status] {
        const auto variants = builtin_registry().match(*pattern);
        if (*as_json) {
            nlohmann::ordered_json listed = {{"models", suite_models_json()}, {"variants", nlohmann::ordered_json::array()}};
            for (const auto* v : variants) {
                const Availability a = v->availability();
                listed["variants"].push_back({{"id", v->id},
                                              {"model", v->id.substr(0, v->id.find('.'))},
                                              {"available", a.available},
                                              {"reason", a.available ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(a.reason)},
                                              {"description", v->description}});
            }
            fmt::print("{}\n", listed.dump(2));
            exit_status = 0;
            return;
        }
        // ranks: "several" when the variant runs one simulation over the ranks of mpirun (docs/scaling.md).
        // reproducibility: bitwise, order-fixed or run-to-run (VariantDescriptor::reproducibility).
        fmt::print("{:<34} {:<10} {:<8} {:<15} {:<36} {:<44} {}\n", "variant", "available", "ranks", "reproducibility",
                   "workloads", "description", "tunings (default [allowed])");
        for (const auto* v : variants) {
            const Availability a = v->availability();
            std::string tunings;
            for (const auto& t : v->tunings) tunings += (tunings.empty() ? "" : "  ") + describe_tuning(t);
            fmt::print("{:<34} {:<10} {:<8} {:<15} {:<36} {:<44} {}\n", v->id, a.available ? "yes" : "no",
                       v->distributed ? "several" : "one", to_string(v->reproducibility), v->workloads.describe(),
                       v->description, tunings.empty() ? "-" : tunings);
            if (!a.available) fmt::print("{:<34} {:<10} reason: {}\n", "", "", a.reason);
        }
        exit_status = 0;
    });
}

}  // namespace nbody
