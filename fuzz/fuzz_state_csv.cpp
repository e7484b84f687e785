// libFuzzer target: the CSV state reader (SPEC §1, §2) in every dimension and precision, with and
// without a required N. Any input ends in a state that holds only what the reader promises (finite
// values, positive masses, the asked N) or in an InputError of one line that names the file; any
// other exception, a crash or a hang is a finding.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>

#include "io/io.hpp"
#include "nbody/errors.hpp"

namespace {

constexpr const char* kName = "fuzz.csv";

template <class Real>
void read_one(const std::string& text, int dim, std::optional<std::size_t> expected_n) {
    std::istringstream in(text);
    try {
        const nbody::BodiesT<Real> b = nbody::read_bodies_csv_of<Real>(in, kName, expected_n, 42, dim);
        if (b.size() == 0 || b.size() > nbody::kMaxInputBodies || b.dim != dim) std::abort();
        if (expected_n && b.size() != *expected_n) std::abort();
        for (std::size_t i = 0; i < b.size(); ++i) {
            if (!(b.m[i] > 0) || !std::isfinite(b.m[i])) std::abort();
            for (int axis = 0; axis < dim; ++axis)
                if (!std::isfinite(b.position(axis)[i]) || !std::isfinite(b.velocity(axis)[i])) std::abort();
        }
    } catch (const nbody::InputError& e) {
        const std::string message = e.what();
        if (message.rfind(kName, 0) != 0 || message.find('\n') != std::string::npos || message.size() > 400) std::abort();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    for (int dim : {2, 3})
        for (std::optional<std::size_t> n : {std::optional<std::size_t>(), std::optional<std::size_t>(2)}) {
            read_one<float>(text, dim, n);
            read_one<double>(text, dim, n);
        }
    return 0;
}
