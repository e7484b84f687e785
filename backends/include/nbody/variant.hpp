#pragma once
// The common variant interface (SPEC §4). A variant is a factory of Simulations plus metadata;
// each programming model only implements Simulation and registers descriptors.
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nbody/bodies.hpp"
#include "nbody/physics.hpp"

namespace nbody {

struct Problem {
    std::size_t n = 0;
    int d = 0;
    PhysicsConstants constants;
};

// One simulation of one problem by one variant, holding its state wherever the model keeps it.
class Simulation {
public:
    virtual ~Simulation() = default;
    // Takes the initial host state (the upload, timed apart from the steps).
    virtual void upload(const Bodies& initial) = 0;
    // Advances `steps` steps; the activity map is produced after every step.
    // May return before device work finishes: call synchronize() before reading a clock.
    virtual void advance(int steps) = 0;
    virtual void synchronize() {}
    // Hands back positions, velocities (masses unchanged) and the activity map (D*D floats) of
    // the current positions (after upload and before any step: of the initial positions).
    virtual void download(Bodies& state, std::vector<float>& activity_map) = 0;
};

// A tuning parameter: either a list of allowed values or an inclusive integer range.
struct TuningParameter {
    std::string name;
    std::string description;
    std::string default_value;
    std::vector<std::string> allowed_values;  // empty: integer in [min_value, max_value]
    long min_value = 0;
    long max_value = 0;
};

using TuningValues = std::map<std::string, std::string>;

struct Availability {
    bool available = true;
    std::string reason;  // why not, when unavailable
};

struct VariantDescriptor {
    std::string id;               // "<backend>.<variant>[@<space>]"
    std::string backend;          // serial, omp, cuda, kokkos
    std::string execution_space;  // host, openmp, cuda, serial ...; "device" kinds need a GPU
    std::string description;
    std::vector<TuningParameter> tunings;
    std::size_t max_n = 0;        // 0: no cap; otherwise the largest N it accepts (memory)
    bool runs_on_gpu = false;     // selects the GPU or CPU efficiency limit
    std::function<Availability()> availability;
    std::function<std::unique_ptr<Simulation>(const Problem&, const TuningValues&)> create;
};

// Parses an integer tuning value that resolve_tuning() already validated.
long tuning_int(const TuningValues& values, const std::string& name);

}  // namespace nbody
