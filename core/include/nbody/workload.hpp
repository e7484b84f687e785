#pragma once
// The workload axes (SPEC §2): dimension, precision and integrator. A problem carries one
// Workload; a variant says which it supports (WorkloadSupport) and never falls back silently.
#include <compare>
#include <string>
#include <vector>

namespace nbody {

enum class Precision { fp32, fp64 };
enum class Integrator { euler, leapfrog };

struct Workload {
    int dim = 2;  // 2 or 3
    Precision precision = Precision::fp32;
    Integrator integrator = Integrator::euler;
    auto operator<=>(const Workload&) const = default;
};

const char* to_string(Precision precision);
const char* to_string(Integrator integrator);
// "2d/fp32/euler": the form `list`, messages and configuration names use.
std::string to_string(const Workload& workload);

// UsageError naming the option and the allowed values on anything else.
Precision parse_precision(const std::string& text);
Integrator parse_integrator(const std::string& text);
int parse_dim(const std::string& text);

// Every combination of the axes, canonical (2d/fp32/euler) first.
std::vector<Workload> all_workloads();

// The workloads a variant runs: every combination of the listed values (the axes are independent
// in every model). Default: the canonical workload only.
struct WorkloadSupport {
    std::vector<int> dims = {2};
    std::vector<Precision> precisions = {Precision::fp32};
    std::vector<Integrator> integrators = {Integrator::euler};

    static WorkloadSupport every();
    bool supports(const Workload& workload) const;
    // "dim 2|3, fp32|fp64, euler|leapfrog"
    std::string describe() const;
};

// Counting (SPEC §3): FP instructions per interaction in the workload's precision, the reciprocal
// square root counted apart: 9 in 2D (2 sub, 2 fma for r^2+eps2, 3 mul, 2 fma), 12 in 3D.
double flops_per_interaction(const Workload& workload);

}  // namespace nbody
