// estimate_check: for the best variant of each model that runs here, the run-time estimate `run`
// makes (harness/matrix/estimate.hpp: the modelled rate, steps_seconds) beside the wall time of the same
// steps measured here (the simulation created, the state uploaded, the steps and the download), and
// their ratio; it should lie within 0.5-2x. Prints only: timings never decide a test.
// scripts/estimate_vs_measured.py compares whole `run`, `verify` and `matrix` commands the same way.
// Usage: estimate_check [STEPS] (default 10).
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <variant>
#include <vector>

#include "matrix/estimate.hpp"
#include "nbody/generator.hpp"
#include "nbody/registry.hpp"
#include "platform/measure.hpp"

namespace {

struct Case {
    const char* variant;
    nbody::Workload workload;
    std::size_t n;
};

// The best variant of each model (README), at a size where it fills its device.
const Case kCases[] = {
    {"serial.reference", {2, nbody::Precision::fp32, nbody::Integrator::euler}, 8192},
    {"omp.simd", {2, nbody::Precision::fp32, nbody::Integrator::euler}, 131072},
    {"omp.simd", {3, nbody::Precision::fp64, nbody::Integrator::euler}, 65536},
    {"kokkos.simd@openmp", {2, nbody::Precision::fp32, nbody::Integrator::euler}, 131072},
    {"stdpar.blocked", {2, nbody::Precision::fp32, nbody::Integrator::euler}, 65536},
    {"thrust.split_j@tbb", {2, nbody::Precision::fp32, nbody::Integrator::euler}, 65536},
    {"openacc.multi_i@host", {2, nbody::Precision::fp32, nbody::Integrator::euler}, 16384},
    {"cuda.sliced", {3, nbody::Precision::fp32, nbody::Integrator::euler}, 1048576},
    {"cuda.sliced", {3, nbody::Precision::fp64, nbody::Integrator::euler}, 262144},
    {"kokkos.team_tiled@cuda", {3, nbody::Precision::fp32, nbody::Integrator::euler}, 1048576},
    {"omp_target.multi_i", {3, nbody::Precision::fp32, nbody::Integrator::euler}, 262144},
};

}  // namespace

int main(int argc, char** argv) {
    using namespace nbody;
    const int steps = argc > 1 ? std::atoi(argv[1]) : 10;
    if (steps < 1) {
        fmt::print(stderr, "estimate_check: STEPS must be a positive integer\n");
        return 2;
    }
    constexpr int kMapSize = 1000;
    fmt::print("{:<24} {:<15} {:>8} {:>6} {:>12} {:>12} {:>7}  {}\n", "variant", "workload", "N", "steps", "estimate_s",
               "measured_s", "ratio", "rate source");
    for (const Case& c : kCases) {
        const VariantDescriptor* v = builtin_registry().find(c.variant);
        if (v == nullptr || !v->availability().available) {
            fmt::print("{:<24} not run here: {}\n", c.variant, v == nullptr ? "not in this build" : v->availability().reason);
            continue;
        }
        const TuningValues tuning = Registry::resolve_tuning(*v, {});
        const Rate rate = modelled_rate(*v, tuning, c.workload, builtin_registry(), c.n);
        const double estimate = steps_seconds(*v, tuning, c.workload, c.n, kMapSize, steps + 1, rate.interactions_per_second);
        const HostState initial = generate_state(c.workload, c.n);
        const auto start = std::chrono::steady_clock::now();
        auto simulation = v->create(Problem{.n = c.n, .d = kMapSize, .constants = {}, .workload = c.workload, .distribution = {}}, tuning);
        simulation->upload(initial);
        simulation->advance(1);  // the warm-up step, as `run` takes one
        simulation->advance(steps);
        HostState final_state = empty_state(c.workload, c.n);
        std::vector<float> map;
        simulation->download(final_state, map);
        const double measured = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        fmt::print("{:<24} {:<15} {:>8} {:>6} {:>12.3g} {:>12.3g} {:>7.2f}  {}\n", c.variant, to_string(c.workload), c.n, steps,
                   estimate, measured, estimate / measured, rate.source);
        std::fflush(stdout);
    }
    return 0;
}
