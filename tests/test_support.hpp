#pragma once
// Small helpers shared by the test files: temporary folders and files, position errors.
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "nbody/bodies.hpp"
#include "nbody/registry.hpp"
#include "nbody/workload.hpp"

namespace nbody::testing {

// A fresh folder under the system temp dir, removed with the object.
class TempDir {
public:
    TempDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "nbody-test-XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
        path_ = pattern;
    }
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    std::string file(const std::string& name) const { return (path_ / name).string(); }
    std::string write(const std::string& name, const std::string& contents) const {
        std::ofstream(path_ / name, std::ios::binary) << contents;
        return file(name);
    }
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

inline std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A shell command's exit status (-1 when a signal ended it) and what it printed.
struct Outcome {
    int status = -1;
    std::string out, err;
};

// Runs `command` through the shell, its output captured in files of `dir`.
inline Outcome run_capturing(const std::string& command, const TempDir& dir) {
    const std::string out = dir.file("stdout.txt"), err = dir.file("stderr.txt");
    const int raw = std::system((command + " >" + out + " 2>" + err).c_str());
    return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, read_text(out), read_text(err)};
}

// The largest |x - x_ref| or |y - y_ref| over all bodies.
inline double max_position_error(const Bodies& state, const BodiesT<double>& reference) {
    double worst = 0.0;
    for (std::size_t i = 0; i < state.size(); ++i)
        worst = std::max({worst, std::abs(state.x[i] - reference.x[i]), std::abs(state.y[i] - reference.y[i])});
    return worst;
}

// The built-in variant `id`. Throws std::logic_error when it is absent, so a test that names a
// variant the build lost fails instead of skipping its checks.
inline const VariantDescriptor& registered_variant(const std::string& id) {
    const VariantDescriptor* v = builtin_registry().find(id);
    if (v == nullptr) throw std::logic_error(id + " is not registered");
    return *v;
}

// True when `name` matches a glob of the comma-separated list in the environment variable `list`,
// or that variable is unset or empty.
inline bool listed_in_environment(const char* list, const std::string& name) {
    const char* patterns = std::getenv(list);
    if (patterns == nullptr || *patterns == '\0') return true;
    std::string rest = patterns;
    for (std::size_t comma; !rest.empty(); rest = comma == std::string::npos ? "" : rest.substr(comma + 1)) {
        comma = rest.find(',');
        if (glob_match(rest.substr(0, comma), name)) return true;
    }
    return false;
}

// Whether a test that sweeps the registry checks `v` in this run. NBODY_TEST_VARIANTS (glob patterns,
// as `--variants` takes them) narrows the sweep to what a stage is for: the ThreadSanitizer stage
// checks the threaded spaces, where Serial would only repeat the plain build's checks 10x slower.
inline bool variant_under_test(const VariantDescriptor& v) { return listed_in_environment("NBODY_TEST_VARIANTS", v.id); }

// Whether a test that steps many times through every workload runs `w`. NBODY_TEST_WORKLOADS (glob
// patterns of to_string(w), e.g. "2d/fp32/euler,3d/fp64/*") narrows those long sweeps in the
// sanitizer and Clang stages to workloads that still cover both dimensions, precisions and
// integrators; the plain build runs them all.
inline bool workload_under_test(const Workload& w) { return listed_in_environment("NBODY_TEST_WORKLOADS", to_string(w)); }

inline std::vector<Workload> workloads_under_test() {
    std::vector<Workload> out;
    for (const Workload& w : all_workloads())
        if (workload_under_test(w)) out.push_back(w);
    return out;
}

}  // namespace nbody::testing
