#include "nbody/workload.hpp"

#include <algorithm>

#include "nbody/errors.hpp"

namespace nbody {

const char* to_string(Precision precision) { return precision == Precision::fp32 ? "fp32" : "fp64"; }
const char* to_string(Integrator integrator) { return integrator == Integrator::euler ? "euler" : "leapfrog"; }

std::string to_string(const Workload& workload) {
    return std::to_string(workload.dim) + "d/" + to_string(workload.precision) + "/" + to_string(workload.integrator);
}

Precision parse_precision(const std::string& text) {
    if (text == "fp32") return Precision::fp32;
    if (text == "fp64") return Precision::fp64;
    throw UsageError("precision '" + text + "' is not one of fp32|fp64");
}

Integrator parse_integrator(const std::string& text) {
    if (text == "euler") return Integrator::euler;
    if (text == "leapfrog") return Integrator::leapfrog;
    throw UsageError("integrator '" + text + "' is not one of euler|leapfrog");
}

int parse_dim(const std::string& text) {
    if (text == "2") return 2;
    if (text == "3") return 3;
    throw UsageError("dim '" + text + "' is not one of 2|3");
}

std::vector<Workload> all_workloads() {
    std::vector<Workload> out;
    for (int dim : {2, 3})
        for (Precision precision : {Precision::fp32, Precision::fp64})
            for (Integrator integrator : {Integrator::euler, Integrator::leapfrog})
                out.push_back({dim, precision, integrator});
    return out;
}

WorkloadSupport WorkloadSupport::every() {
    return {{2, 3}, {Precision::fp32, Precision::fp64}, {Integrator::euler, Integrator::leapfrog}};
}

bool WorkloadSupport::supports(const Workload& w) const {
    return std::find(dims.begin(), dims.end(), w.dim) != dims.end() &&
           std::find(precisions.begin(), precisions.end(), w.precision) != precisions.end() &&
           std::find(integrators.begin(), integrators.end(), w.integrator) != integrators.end();
}

std::string WorkloadSupport::describe() const {
    auto join = [](const auto& values, auto name) {
        std::string out;
        for (const auto& v : values) out += (out.empty() ? "" : "|") + name(v);
        return out;
    };
    return "dim " + join(dims, [](int d) { return std::to_string(d); }) + ", " +
           join(precisions, [](Precision p) { return std::string(to_string(p)); }) + ", " +
           join(integrators, [](Integrator i) { return std::string(to_string(i)); });
}

double flops_per_interaction(const Workload& workload) { return workload.dim == 3 ? 12.0 : 9.0; }

}  // namespace nbody
