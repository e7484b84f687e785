// libFuzzer target: a matrix file as `nbody-bench matrix FILE --dry-run` reads it: JSON reader,
// matrix reader, expansion against this build's variants and the cost estimate of every
// configuration. Any input ends in a plan or in a UsageError of one line that names the file; any
// other exception, a crash or a hang is a finding.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "matrix/estimate.hpp"
#include "matrix/matrix.hpp"
#include "matrix/matrix_runner.hpp"
#include "nbody/errors.hpp"
#include "results/json_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    constexpr const char* kName = "fuzz.json";
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const nbody::MatrixSpec spec = nbody::parse_matrix(nbody::parse_json_text(text, kName), kName);
        const nbody::MatrixExpansion plan = nbody::expand_matrix(spec, nbody::builtin_registry(), true);
        if (plan.configurations.size() > nbody::kMaxMatrixConfigurations) std::abort();
        const auto costs = nbody::estimate_configurations(nbody::builtin_registry(), spec, plan.configurations,
                                                          nbody::CostLimits{}, false);
        for (const auto& c : costs)
            if (!(c.cost.seconds >= 0) || !(c.cost.host_bytes >= 0)) std::abort();
    } catch (const nbody::UsageError& e) {
        const std::string message = e.what();
        if (message.rfind(kName, 0) != 0 || message.find('\n') != std::string::npos || message.size() > 600) std::abort();
    }
    return 0;
}
