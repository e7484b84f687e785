#include "cli/problem_options.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cerrno>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>

#include "io/io.hpp"
#include "nbody/errors.hpp"
#include "platform/distributed.hpp"

namespace nbody {

namespace {

// A CLI11 check that runs the workload's own parser, so the command line accepts exactly what
// parse_dim / parse_precision / parse_integrator accept and reports their message after the option name.
CLI::Validator accepted_by(const std::function<void(const std::string&)>& parse, const std::string& allowed) {
    return CLI::Validator(
        [parse](std::string& text) {
            try {
                parse(text);
            } catch (const UsageError& e) {
                return std::string(e.what());
            }
            return std::string();
        },
        allowed);
}

// A finite number accepted by `accept`, with a message that says what it must be (CLI11's
// PositiveNumber and NonNegativeNumber print their range's bound in full). NaN fails every `accept`.
CLI::Validator finite_number(bool (*accept)(double), const char* what, const char* name) {
    return CLI::Validator(
        [accept, what](std::string& text) {
            char* end = nullptr;
            const double value = std::strtod(text.c_str(), &end);
            if (end == text.c_str() || *end != '\0' || !accept(value) || !std::isfinite(value))
                return fmt::format("must be a {}, got {}", what, quoted_excerpt(text));
            return std::string();
        },
        name);
}


}  // namespace

const CLI::Validator& positive_finite() {
    static const CLI::Validator check = finite_number([](double v) { return v > 0; }, "positive finite number", "POSITIVE");
    return check;
}

const CLI::Validator& non_negative_finite() {
    static const CLI::Validator check =
        finite_number([](double v) { return v >= 0; }, "non-negative finite number", "NONNEGATIVE");
    return check;
}

const CLI::Validator& min_time_seconds() {
    static const CLI::Validator check =
        finite_number([](double v) { return v >= 0 && v <= kMaxMinTimeSeconds; }, "number of seconds in [0, 3600]", "SECONDS");
    return check;
}

CLI::Validator integer_in(std::uint64_t min, std::uint64_t max) {
    return CLI::Validator(
        [min, max](std::string& text) {
            if (parse_decimal(text, min, max)) return std::string();
            return fmt::format("must be an integer in [{}, {}], got {}", min, max, quoted_excerpt(text));
        },
        fmt::format("INT in [{}, {}]", min, max));
}

const CLI::Validator& non_empty_path() {
    static const CLI::Validator check(
        [](std::string& text) { return text.empty() ? std::string("empty path: give a file name") : std::string(); }, "PATH");
    return check;
}

std::uint64_t parse_seed(const std::string& text) {
    constexpr std::uint64_t largest = std::numeric_limits<std::uint64_t>::max();
    if (const auto value = parse_decimal(text, 0, largest)) return *value;
    throw UsageError(fmt::format("must be an integer in [0, {}], got {}", largest, quoted_excerpt(text)));
}

void ProblemOptions::require_usable_constants(Precision precision) const {
    if (const std::string why = unrepresentable_constant(constants, precision, "--"); !why.empty()) throw UsageError(why);
}

void ProblemOptions::add_constants_to(CLI::App& app) {
    app.add_option("--G", constants.G, "gravitational constant")->capture_default_str()->check(positive_finite());
    app.add_option("--dt", constants.dt, "time step")->capture_default_str()->check(positive_finite());
    // eps = 0 would make the j == i term 0 * inf = NaN (SPEC §1 includes it): eps must be positive.
    app.add_option("--softening", constants.softening, "softening length eps > 0 (eps^2 is added to r^2)")
        ->capture_default_str()
        ->check(positive_finite());
}

void ProblemOptions::add_workload_to(CLI::App& app) {
    app.add_option_function<std::string>("--dim", [this](const std::string& text) { workload.dim = parse_dim(text); },
                                         "dimensions of the problem (default 2)")
        ->check(accepted_by(parse_dim, "2|3"));
    app.add_option_function<std::string>(
           "--precision", [this](const std::string& text) { workload.precision = parse_precision(text); },
           "storage and arithmetic of the step (default fp32)")
        ->check(accepted_by(parse_precision, "fp32|fp64"));
    app.add_option_function<std::string>(
           "--integrator", [this](const std::string& text) { workload.integrator = parse_integrator(text); },
           "time integration: euler (SPEC §1) or kick-drift-kick leapfrog (default euler)")
        ->check(accepted_by(parse_integrator, "euler|leapfrog"));
}

void ProblemOptions::add_initial_state_to(CLI::App& app) {
    app.add_option_function<std::string>(
           "--seed", [this](const std::string& text) { seed = parse_seed(text); },
           fmt::format("SplitMix64 seed of the generated initial state, 0 to 2^64-1 (default {})", kDefaultSeed))
        ->check(accepted_by([](const std::string& text) { parse_seed(text); }, "SEED"));
    app.add_option("--input", input_path,
                   "CSV file of bodies x,y,vx,vy,m (--dim 3: x,y,z,vx,vy,vz,m; empty fields take defaults)")
        ->check(non_empty_path());
}

void ProblemOptions::add_tuning_to(CLI::App& app) {
    app.add_option("--tuning", tuning_assignments, "NAME=VALUE, repeatable (see `list`)");
}

void CostOptions::add_to(CLI::App& app) {
    app.add_flag("--allow-long", allow_long,
                 "run even when the estimate exceeds --time-limit or the memory of the machine or device");
    app.add_option("--time-limit", time_limit_s, "longest estimated time of one run, in seconds, before refusing it")
        ->capture_default_str()
        ->check(positive_finite());
}

void EnergyOptions::add_to(CLI::App& app) {
    app.add_option_function<std::string>(
           "--energy", [this](const std::string& text) { read = text == "on"; },
           "on: read the device's energy over each timed phase (NVML on a GPU, RAPL on the host; "
           "docs/results-format.md), off: do not (default on)")
        ->check(CLI::IsMember({"on", "off"}));
}

void DistributionOptions::add_to(CLI::App& app) {
    app.add_option_function<std::string>(
           "--device-collectives",
           [this](const std::string& text) { device_collectives = parse_device_collectives(text); },
           "under mpirun, how a GPU variant's ranks exchange positions: nccl (one rank per GPU, default), "
           "host-staged (through host memory and MPI; several ranks may share a GPU) or peer (each GPU writes "
           "into the others' memory directly; one node, peer access between its GPUs)")
        ->check(accepted_by([](const std::string& text) { parse_device_collectives(text); }, "nccl|host-staged|peer"));
}

TuningValues ProblemOptions::tuning_overrides() const {
    TuningValues values;
    for (const auto& assignment : tuning_assignments) {
        const auto eq = assignment.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == assignment.size())
            throw UsageError("--tuning '" + assignment + "' is not NAME=VALUE");
        const std::string name = assignment.substr(0, eq), value = assignment.substr(eq + 1);
        if (const auto given = values.find(name); given != values.end() && given->second != value)
            throw UsageError(fmt::format("--tuning {}={} and --tuning {}={}: one value per name", name, given->second, name, value));
        values[name] = value;
    }
    return values;
}

HostState ProblemOptions::initial_state(std::size_t n) const {
    if (!input_path.empty())
        return read_state_csv(input_path, workload, n ? std::optional<std::size_t>(n) : std::nullopt, seed);
    return generate_state(workload, n, seed);
}

}  // namespace nbody
