// libFuzzer target: a results file as `nbody-bench check-results FILE` and `matrix --resume` read
// it: JSON reader, schema and consistency checks. Any input ends in a list of problems (each one
// line) or in a UsageError of one line that names the file; any other exception, a crash or a
// hang is a finding.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "nbody/errors.hpp"
#include "results/json_input.hpp"
#include "results/results.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    constexpr const char* kName = "fuzz.json";
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const nlohmann::json doc = nbody::parse_json_text(text, kName);
        for (const std::string& problem : nbody::check_results(doc))
            if (problem.find('\n') != std::string::npos || problem.size() > 600) std::abort();
    } catch (const nbody::UsageError& e) {
        const std::string message = e.what();
        if (message.rfind(kName, 0) != 0 || message.find('\n') != std::string::npos || message.size() > 600) std::abort();
    }
    return 0;
}
