// The run-time estimate's rate (harness/matrix/estimate.hpp): a variant's declared expected efficiency,
// scaled down below the size that fills a GPU, and the model's default where none is declared;
// checked against recorded measurements (numbers from results/ and docs/estimates.md, never a
// timing taken here).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "matrix/estimate.hpp"
#include "nbody/registry.hpp"
#include "platform/host_info.hpp"
#include "results/json_input.hpp"
#include "results/results.hpp"

namespace nbody {
namespace {

// The H100 of results/h100-*.json: 132 SMs at 1.98 GHz, 128 FP32 lanes each.
GpuInfo h100() {
    GpuInfo gpu;
    gpu.name = "NVIDIA H100 80GB HBM3";
    gpu.compute_capability = "9.0";
    gpu.sm_count = 132;
    gpu.sm_clock_hz = 1.98e9;
    gpu.fp32_lanes_per_sm = 128;
    return gpu;
}

Registry registry_with_h100() {
    Registry registry;
    registry.set_gpu_probe([] { return std::optional<GpuInfo>(h100()); });
    return registry;
}

VariantDescriptor gpu_variant(double expected_efficiency) {
    VariantDescriptor v;
    v.id = "cuda.test";
    v.backend = "cuda";
    v.runs_on_gpu = true;
    v.expected_efficiency = expected_efficiency;
    return v;
}

const Workload k3dFp32{3, Precision::fp32, Integrator::euler};

TEST(Estimate, DeclaredEfficiencySetsTheRateAndFallsBelowAFullGpu) {
    const Registry registry = registry_with_h100();
    const double limit = gpu_interaction_limit(gpu_limit_inputs(h100(), k3dFp32));
    EXPECT_DOUBLE_EQ(modelled_rate(gpu_variant(0.3), {}, k3dFp32, registry, 1 << 20).interactions_per_second, 0.3 * limit);
    EXPECT_DOUBLE_EQ(modelled_rate(gpu_variant(0.3), {}, k3dFp32, registry, 65536).interactions_per_second, 0.3 * limit);
    EXPECT_DOUBLE_EQ(modelled_rate(gpu_variant(0.3), {}, k3dFp32, registry, 16384).interactions_per_second, 0.3 / 4 * limit);
    EXPECT_DOUBLE_EQ(modelled_rate(gpu_variant(0.3), {}, k3dFp32, registry).interactions_per_second, 0.3 * limit);
    // Undeclared: the CUDA model's default, the slowest rung's.
    EXPECT_DOUBLE_EQ(modelled_rate(gpu_variant(0), {}, k3dFp32, registry, 1 << 20).interactions_per_second, 0.003 * limit);
}

// Every variant that declares an efficiency declares a fraction of the limit, and a GPU variant's
// size that fills the device and its step overhead are sizes and seconds a GPU can have.
TEST(Estimate, DeclaredEfficienciesAreFractionsOfTheLimit) {
    int declared = 0;
    for (const VariantDescriptor& v : builtin_registry().all()) {
        EXPECT_GE(v.expected_efficiency, 0.0) << v.id;
        EXPECT_LT(v.expected_efficiency, 1.0) << v.id << ": a fraction of the limit";
        EXPECT_TRUE(v.full_rate_bodies == 0 || (v.full_rate_bodies >= 256 && v.full_rate_bodies <= 1 << 22)) << v.id;
        EXPECT_TRUE(v.step_overhead_s >= 0 && v.step_overhead_s < 0.01) << v.id;
        if (!v.runs_on_gpu) {
            EXPECT_TRUE(v.full_rate_bodies == 0 && v.step_overhead_s == 0) << v.id << ": GPU facts on a host variant";
        }
        declared += v.expected_efficiency > 0;
    }
    EXPECT_GT(declared, 0);
}

// A GPU variant's declared fill size and step overhead: the rate falls in proportion to N below
// the one; the other grows with the dimension and doubles for leapfrog's two phases.
TEST(Estimate, AGpuVariantFillsAtItsDeclaredSizeAndPaysItsStepOverheadPerPhase) {
    VariantDescriptor v = gpu_variant(0.4);
    v.full_rate_bodies = 4096;
    v.step_overhead_s = 1e-3;
    EXPECT_DOUBLE_EQ(assumed_efficiency(v, 1024), 0.1);
    EXPECT_DOUBLE_EQ(assumed_efficiency(v, 4096), 0.4);
    EXPECT_DOUBLE_EQ(assumed_efficiency(v, 1 << 20), 0.4);
    const TuningValues none;
    const auto one_step = [&](const Workload& w) { return steps_seconds(v, none, w, 16, 1, 1, 1e30, 0); };
    const Workload euler2d{2, Precision::fp32, Integrator::euler}, euler3d{3, Precision::fp32, Integrator::euler},
        leapfrog3d{3, Precision::fp64, Integrator::leapfrog};
    EXPECT_NEAR(one_step(euler2d), 1e-3, 1e-9);
    EXPECT_NEAR(one_step(euler3d), 1.5e-3, 1e-9);
    EXPECT_NEAR(one_step(leapfrog3d), 3e-3, 1e-9);
}

// `run --variant cuda.sliced --dim 3 -n 1048576` on the H100 reached 2.03e12 interactions/s (72.7 % of
// the 3D float32 limit; README); the estimate errs long by at most 4x (it was 242x at the CUDA
// model's 0.3 %).
TEST(Estimate, CudaSlicedOnTheH100ErrsLongWithinFourTimes) {
    const VariantDescriptor* sliced = builtin_registry().find("cuda.sliced");
    if (sliced == nullptr) GTEST_SKIP() << "this build has no CUDA";
    const double modelled = modelled_rate(*sliced, Registry::resolve_tuning(*sliced, {}), k3dFp32, registry_with_h100(), 1 << 20)
                                .interactions_per_second;
    const double measured = 2.03e12;
    EXPECT_GE(measured / modelled, 1.0);
    EXPECT_LE(measured / modelled, 4.0);
}

// Whether a results entry ran `variant` with its default tunings (on the host at any thread count).
bool ran_default_tuning(const VariantDescriptor& variant, const nlohmann::json& tuning) {
    bool default_tuning = true;
    for (const TuningParameter& t : variant.tunings)
        default_tuning &= t.name == "threads" || tuning.value(t.name, t.default_value) == t.default_value;
    return default_tuning;
}

// One GPU configuration as measured: what the estimate's model is held to.
struct GpuStep {
    std::string variant, where;
    Workload workload;
    std::size_t n;
    int d;
    double seconds_per_step, limit;
    nlohmann::json tuning = nlohmann::json::object();  // the CSV's rows ran the default tunings
};

// The median steps of results/h200-estimate-gpu.csv (scripts/step_times_csv.py).
std::vector<GpuStep> steps_of_csv(const std::string& file) {
    std::ifstream in(std::string(NBODY_SOURCE_DIR) + "/results/" + file);
    EXPECT_TRUE(in) << file;
    std::vector<GpuStep> steps;
    std::string line;
    bool header = true;
    while (std::getline(in, line)) {
        if (line.empty() || line.front() == '#') continue;
        if (std::exchange(header, false)) continue;
        std::vector<std::string> f;
        std::stringstream fields(line);
        for (std::string field; std::getline(fields, field, ',');) f.push_back(field);
        EXPECT_EQ(f.size(), 9u) << line;
        if (f.size() != 9 || f[8] != "true") continue;
        steps.push_back({f[0], file, Workload{std::stoi(f[1]), parse_precision(f[2]), parse_integrator(f[3])},
                         std::stoul(f[4]), std::stoi(f[5]), std::stod(f[6]), std::stod(f[7])});
    }
    return steps;
}

// The verified GPU medians of a committed results file.
std::vector<GpuStep> steps_of_results(const std::string& file) {
    const nlohmann::json doc = read_json_file(std::string(NBODY_SOURCE_DIR) + "/results/" + file);
    std::vector<GpuStep> steps;
    for (const auto& entry : doc["benchmarks"])
        if (entry["device"] == "gpu" && entry.value("aggregate_name", "") == "median" && entry.value("verified", false))
            steps.push_back({entry["variant"].get<std::string>(), file, entry_workload(entry), entry["n"].get<std::size_t>(),
                             entry["d"].get<int>(), entry["time_per_step_s"].get<double>(),
                             entry["efficiency_limit"].get<double>(), entry["tuning"]});
    return steps;
}

// Each model's fastest variant on the host and on a GPU (README): estimated within 0.5-2x of what it
// measures, the others 0.5-4x.
const std::set<std::string> kBestVariants = {
    "serial.reference", "omp.simd", "kokkos.simd@openmp", "stdpar.blocked", "thrust.split_j@tbb", "openacc.multi_i@host",
    "cuda.folded_mass", "kokkos.folded_mass@cuda", "thrust.split_j@cuda", "openacc.naive", "omp_target.simd"};

void expect_within_bounds(const std::string& variant, double estimate_over_measured, const std::string& where) {
    EXPECT_GE(estimate_over_measured, 0.5) << variant << " " << where;
    EXPECT_LE(estimate_over_measured, kBestVariants.count(variant) ? 2.0 : 4.0) << variant << " " << where;
}

// What every GPU variant of this build took per step, default tunings, N = 1024-65536 on the H200
// (2D float32 Euler, 3D float64 leapfrog), N = 1024 and 262144 in the H200 energy run and N = 1024 to
// 4 M on the H100: the estimate's step (its rate at that N at the limit the run saw, its step
// overhead, the map) within its bounds of each.
TEST(Estimate, GpuVariantsAreModelledWithinTheirBoundsOfTheCommittedSweeps) {
    std::vector<GpuStep> measured = steps_of_csv("h200-estimate-gpu.csv");
    for (const char* file : {"h200-energy.json", "h100-n-sweep.json"})
        for (GpuStep& step : steps_of_results(file)) measured.push_back(std::move(step));
    int compared = 0;
    for (const GpuStep& m : measured) {
        const VariantDescriptor* v = builtin_registry().find(m.variant);
        // A model this build left out, a size below those modelled, another tuning than the default.
        if (v == nullptr || m.n < 1024 || !ran_default_tuning(*v, m.tuning)) continue;
        const TuningValues tuning = Registry::resolve_tuning(*v, {});
        const double rate = m.limit * assumed_efficiency(*v, m.n);
        const double ratio = steps_seconds(*v, tuning, m.workload, m.n, m.d, 1, rate, 0) / m.seconds_per_step;
        expect_within_bounds(m.variant, ratio, m.where + " N=" + std::to_string(m.n) + " " + to_string(m.workload));
        ++compared;
    }
    EXPECT_GT(measured.size(), 300u) << "the committed sweeps were not read";
    if (compared == 0) GTEST_SKIP() << "this build has no GPU variant";
}

// A D = 30000 map costs a GPU variant its cells once per run (allocated, counted at the upload,
// downloaded), the directive models' host arrays more than the others' device buffers. Measured on
// the H200 (results/h200-estimates.txt: N = 16384, 5 steps, 2D float32, the run's wall time less the
// process's start): the estimate within 0.5-2x of each model's fastest variant.
TEST(Estimate, GpuLargeMapsAreEstimatedWithinTwiceWhatTheyCost) {
    const double h200_limit = 3.71712e12;  // 2D float32 interactions/s at 1980 MHz
    const std::map<std::string, double> measured = {{"cuda.folded_mass", 2.56},     {"kokkos.folded_mass@cuda", 2.29},
                                                    {"thrust.split_j@cuda", 2.42},  {"omp_target.simd", 9.16},
                                                    {"openacc.naive", 8.01}};
    int compared = 0;
    for (const auto& [id, seconds] : measured) {
        const VariantDescriptor* v = builtin_registry().find(id);
        if (v == nullptr) continue;
        const TuningValues tuning = Registry::resolve_tuning(*v, {});
        const double rate = h200_limit * assumed_efficiency(*v, 16384);
        const double estimate = steps_seconds(*v, tuning, Workload{}, 16384, 30000, 5, rate);
        expect_within_bounds(id, estimate / seconds, fmt::format("D = 30000: estimated {} s", estimate));
        ++compared;
    }
    if (compared == 0) GTEST_SKIP() << "this build has no GPU variant";
}

// The fraction of its limit the estimate assumes `variant` reaches with `tuning` (0 where this
// host's limit is unknown).
double modelled_efficiency(const VariantDescriptor& variant, const nlohmann::json& tuning, const Workload& workload) {
    const TuningValues values = tuning.get<TuningValues>();
    const double limit = cpu_interaction_limit(host_cpu_limit_inputs(cpu_cores_used(variant, values), workload));
    if (!(limit > 0)) return 0;
    return modelled_rate(variant, values, workload, builtin_registry()).interactions_per_second / limit;
}


// What every host variant reached on the 16-core hosts of the GPU machines (the committed results,
// N >= 65536, default tunings at every thread count): the estimate within its bounds of each.
TEST(Estimate, HostVariantsAreModelledWithinTheirBoundsOfTheCommittedResults) {
    int compared = 0;
    for (const char* file : {"h100-portability-host.json", "h100-portability-models.json", "h100-host-avx512.json",
                             "h100-host-compilers-gcc.json", "h100-host-compilers-clang.json", "h100-host-stdpar.json",
                             "h200-host-avx512.json", "h200-portability.json"}) {
        const nlohmann::json doc = read_json_file(std::string(NBODY_SOURCE_DIR) + "/results/" + file);
        for (const auto& entry : doc["benchmarks"]) {
            if (entry["device"] != "cpu" || entry.value("aggregate_name", "") != "median" || entry["n"].get<long>() < 65536 ||
                !entry["efficiency"].is_number())
                continue;
            const VariantDescriptor* v = builtin_registry().find(entry["variant"].get<std::string>());
            if (v == nullptr) continue;  // a model this build left out
            if (!ran_default_tuning(*v, entry["tuning"])) continue;
            const double modelled = modelled_efficiency(*v, entry["tuning"], entry_workload(entry));
            if (modelled == 0) GTEST_SKIP() << "this host's efficiency limit is unknown";
            const double reached = entry["efficiency"].get<double>();
            expect_within_bounds(v->id, reached / modelled,
                                 fmt::format("{} N={} {}: reached {}, modelled {}", file, entry["n"].get<long>(),
                                             to_string(entry_workload(entry)), reached, modelled));
            ++compared;
        }
    }
    EXPECT_GT(compared, 50);
}

// What every host variant reached on the 2-core development host (docs/estimates.md: one thread,
// N = 16384, 2D float32, default tunings): the estimate within its bounds of each.
TEST(Estimate, HostVariantsAreModelledWithinTheirBoundsOfTheTwoCoreHost) {
    const std::map<std::string, double> reached = {
        {"serial.reference", 0.043},          {"omp.static", 0.064},          {"omp.edge_sharing", 0.22},
        {"omp.simd", 0.62},                   {"kokkos.naive@openmp", 0.30},  {"kokkos.team_tiled@openmp", 0.046},
        {"kokkos.hierarchical@openmp", 0.26}, {"kokkos.simd@openmp", 0.45},   {"kokkos.persistent@openmp", 0.023},
        {"kokkos.folded_mass@openmp", 0.26}, {"stdpar.plain", 0.075},        {"stdpar.blocked", 0.26},
        {"thrust.naive@omp", 0.078},          {"thrust.packed@omp", 0.064},   {"thrust.split_j@omp", 0.27},
        {"thrust.naive@tbb", 0.069},          {"thrust.packed@tbb", 0.073},   {"thrust.split_j@tbb", 0.28},
        {"openacc.naive@host", 0.068},        {"openacc.multi_i@host", 0.070}};
    for (const auto& [id, efficiency] : reached) {
        const VariantDescriptor* v = builtin_registry().find(id);
        if (v == nullptr) continue;
        nlohmann::json defaults = nlohmann::json::object();
        for (const TuningParameter& t : v->tunings) defaults[t.name] = t.default_value;
        const double modelled = modelled_efficiency(*v, defaults, Workload{});
        if (modelled == 0) GTEST_SKIP() << "this host's efficiency limit is unknown";
        expect_within_bounds(id, efficiency / modelled, fmt::format("on 2 cores: reached {}, modelled {}", efficiency, modelled));
    }
}

// A large map costs every run its cells once (allocated, counted at the upload, downloaded) and, where
// the variant recounts it each step, every cell each step. Measured on the 2-core development host
// (docs/estimates.md: N = 1024, D = 20000, no warm-up, the seconds of CPU of one thread less
// the process's start): the estimate within 0.5-2x, where it was 0.03x for serial.reference.
TEST(Estimate, ALargeMapIsEstimatedWithinTwiceWhatItCosts) {
    struct Measured {
        const char* variant;
        int steps;
        double seconds;
    };
    const Measured measured[] = {{"serial.reference", 1, 12.0}, {"serial.reference", 6, 27.2}, {"omp.simd", 1, 3.85},
                                 {"omp.simd", 6, 4.24},         {"stdpar.blocked", 1, 4.44},    {"stdpar.blocked", 6, 6.34},
                                 {"kokkos.simd@openmp", 6, 4.26}};
    for (const Measured& m : measured) {
        const VariantDescriptor* v = builtin_registry().find(m.variant);
        if (v == nullptr) continue;
        const TuningValues tuning = Registry::resolve_tuning(*v, {});
        const double rate = modelled_rate(*v, tuning, Workload{}, builtin_registry(), 1024).interactions_per_second;
        const double estimate = steps_seconds(*v, tuning, Workload{}, 1024, 20000, m.steps, rate);
        EXPECT_GE(estimate / m.seconds, 0.5) << m.variant << " steps " << m.steps << ": estimated " << estimate;
        EXPECT_LE(estimate / m.seconds, 2.0) << m.variant << " steps " << m.steps << ": estimated " << estimate;
    }
}

}  // namespace
}  // namespace nbody
