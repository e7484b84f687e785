#pragma once
// Command-line options shared by the subcommands that build a problem.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "matrix/estimate.hpp"
#include "nbody/generator.hpp"
#include "nbody/variant.hpp"
#include "run/refusals.hpp"

// CLI11 only where options are added (it costs a few seconds of every file that includes it).
namespace CLI {
class App;
class Validator;
}  // namespace CLI

namespace nbody {

struct ProblemOptions {
    PhysicsConstants constants;
    Workload workload;  // --dim, --precision, --integrator (SPEC §2); default 2d/fp32/euler
    std::uint64_t seed = kDefaultSeed;
    std::string input_path;  // empty: generate
    std::vector<std::string> tuning_assignments;  // "name=value"

    void add_constants_to(CLI::App& app);
    void add_workload_to(CLI::App& app);
    void add_initial_state_to(CLI::App& app);
    void add_tuning_to(CLI::App& app);

    // name=value pairs; UsageError on a malformed one or on one name given two values.
    TuningValues tuning_overrides() const;
    // UsageError when --softening or --dt cannot be used in `precision` (unrepresentable_constant).
    void require_usable_constants(Precision precision) const;
    // The initial state in the workload's dimension and precision: from the input file (which must
    // hold `n` bodies when n != 0; InputError when a line's field count does not fit the dimension)
    // or generated.
    HostState initial_state(std::size_t n) const;
};

// A seed as the command line gives it: decimal digits of a value below 2^64; UsageError (the message
// follows the option's name) otherwise
// ("-1", "18446744073709551616", "1e23" would otherwise wrap or round to another seed).
std::uint64_t parse_seed(const std::string& text);

// CLI11 checks: a number > 0 (>= 0) and finite, with a short message (CLI11's own print their
// range's bound, the largest double, in full).
const CLI::Validator& positive_finite();
const CLI::Validator& non_negative_finite();
// --min-time: a finite number of seconds in [0, kMaxMinTimeSeconds].
inline constexpr double kMaxMinTimeSeconds = 3600;
const CLI::Validator& min_time_seconds();
// Every integer option: decimal digits of a value in [min, max] (parse_decimal), so that -1 or 2^64
// is refused naming the option and the value, never wrapped or saturated.
CLI::Validator integer_in(std::uint64_t min, std::uint64_t max);
// Every path option: "" names no file (it would otherwise read or write nothing silently).
const CLI::Validator& non_empty_path();

// --allow-long and --time-limit (run, verify, matrix): what estimate.hpp's estimates are held to.
struct CostOptions {
    bool allow_long = false;
    double time_limit_s = 3600;
    void add_to(CLI::App& app);
    CostLimits limits() const { return machine_limits(time_limit_s, allow_long); }
};

// --device-collectives (run, verify, matrix): how a distributed GPU variant's ranks move device data.
struct DistributionOptions {
    std::optional<DeviceCollectives> device_collectives;  // nullopt: not given (NCCL)
    void add_to(CLI::App& app);
};

// --energy on|off: read the energy of each timed phase (platform/energy.hpp), on by default.
struct EnergyOptions {
    bool read = true;
    void add_to(CLI::App& app);
};

}  // namespace nbody
