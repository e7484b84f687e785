#include "problem_options.hpp"

#include "nbody/errors.hpp"
#include "nbody/io.hpp"

namespace nbody {

void ProblemOptions::add_constants_to(CLI::App& app) {
    app.add_option("--G", constants.G, "gravitational constant")->capture_default_str()->check(CLI::PositiveNumber);
    app.add_option("--dt", constants.dt, "time step")->capture_default_str()->check(CLI::PositiveNumber);
    app.add_option("--softening", constants.softening, "softening length eps (eps^2 is added to r^2)")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
}

void ProblemOptions::add_initial_state_to(CLI::App& app) {
    app.add_option("--seed", seed, "SplitMix64 seed of the generated initial state")->capture_default_str();
    app.add_option("--input", input_path, "CSV file of bodies x,y,vx,vy,m (empty fields take defaults)");
;
}

void ProblemOptions::add_tuning_to(CLI::App& app) {
    app.add_option("--tuning", tuning_assignments, "NAME=VALUE, repeatable (see `list`)");
}

TuningValues ProblemOptions::tuning_overrides() const {
    TuningValues values;
    for (const auto& assignment : tuning_assignments) {
        const auto eq = assignment.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == assignment.size())
            throw UsageError("--tuning '" + assignment + "' is not NAME=VALUE");
        values[assignment.substr(0, eq)] = assignment.substr(eq + 1);
    }
    return values;
}

Bodies ProblemOptions::initial_state(std::size_t n) const {
    if (!input_path.empty())
        return read_bodies_csv(input_path, n ? std::optional<std::size_t>(n) : std::nullopt, seed);
    return generate_bodies(n, seed);
}

}  // namespace nbody
