#pragma once
// The results document of a small matrix of the serial variants, run in this process and read back:
// the tests of the results checker and of the energy fields start from one.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "matrix/matrix_runner.hpp"
#include "nbody/model_registration.hpp"

namespace nbody::testing {

// `matrix` is the matrix file's text; `o` is taken as given except for its output (a temporary file,
// removed after reading) and its log (kept out of the test's output).
inline nlohmann::json run_serial_matrix(const std::string& matrix, MatrixRunOptions o = {}) {
    Registry registry;
    register_serial_variants(registry);
    const auto path = std::filesystem::temp_directory_path() / ("nbody_test_matrix_" + std::to_string(::getpid()) + ".json");
    o.out_path = path.string();
    o.overwrite = true;
    std::ostringstream log;
    o.log = &log;
    run_matrix(registry, parse_matrix(nlohmann::json::parse(matrix), "t.json"), o);
    std::ifstream in(path);
    nlohmann::json document = nlohmann::json::parse(in);
    std::filesystem::remove(path);
    return document;
}

}  // namespace nbody::testing
