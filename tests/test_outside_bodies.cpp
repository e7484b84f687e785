// Bodies the activity map does not count, on every model: bodies just outside each edge and corner
// of the unit square and far away must never count against the map check (SPEC §1: simulated, not
// counted), and bodies so far apart that |d|^2 overflows the workload's precision must get the pull
// the plain formula gives (none), not a non-finite state from a fast 1/sqrt path. Each model's case
// runs every variant of that model available here; a model with none here skips, saying why.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "nbody/generator.hpp"
#include "nbody/model_registration.hpp"
#include "nbody/registry.hpp"
#include "test_support.hpp"
#include "verify/verification.hpp"

namespace nbody {
namespace {

// The variants of each model, by id pattern (a GPU model's ids: CUDA and Kokkos' CUDA space).
struct Model {
    std::string name;
    std::string patterns;
};
void PrintTo(const Model& model, std::ostream* os) { *os << model.name; }
// Kokkos' host spaces apart and its CUDA space with CUDA's variants; then every other model of
// the suite (suite_models(), in the build or not) as "<model>.*".
std::vector<Model> every_model() {
    std::vector<Model> models = {{"kokkos_host", "kokkos.*@serial,kokkos.*@openmp"}, {"cuda", "cuda.*,kokkos.*@cuda"}};
    for (const SuiteModel& suite_model : suite_models()) {
        const std::string ids = std::string(suite_model.name) + ".";
        const bool grouped = std::any_of(models.begin(), models.end(), [&](const Model& model) {
            return ("," + model.patterns).find("," + ids) != std::string::npos;
        });
        if (!grouped) models.push_back({suite_model.name, ids + "*"});
    }
    return models;
}

std::vector<const VariantDescriptor*> available(const Model& model, const Workload& workload) {
    std::vector<const VariantDescriptor*> out;
    for (const auto* v : builtin_registry().match(model.patterns))
        if (v->availability().available && v->workloads.supports(workload)) out.push_back(v);
    return out;
}

// Why a model has nothing to check here: the first variant's reason, or that the build lacks it.
std::string why_none(const Model& model) {
    const auto variants = builtin_registry().match(model.patterns);
    if (variants.empty()) return fmt::format("this build has no {} variant", model.name);
    return fmt::format("no {} variant can run here ({}: {})", model.name, variants.front()->id,
                       variants.front()->availability().reason);
}

// `inside` generated bodies at rest followed by `extra`, each (x, y[, z]) at rest with mass 1/N.
template <class Real>
BodiesT<Real> with_extra_bodies(std::size_t inside, int dim, const std::vector<std::vector<double>>& extra) {
    const BodiesT<Real> generated = generate_bodies_of<Real>(inside, dim, kDefaultSeed);
    const std::size_t n = inside + extra.size();
    BodiesT<Real> out(n, dim);
    for (std::size_t i = 0; i < n; ++i) {
        for (int axis = 0; axis < dim; ++axis)
            out.position(axis)[i] = i < inside ? generated.position(axis)[i]
                                               : static_cast<Real>(extra[i - inside][static_cast<std::size_t>(axis)]);
        out.m[i] = static_cast<Real>(1.0 / static_cast<double>(n));
    }
    return out;
}

// Just outside each edge and corner (1 itself lies outside: col = floor(x D) must be < D), a body
// exactly on the lower edges (inside), and far away.
std::vector<std::vector<double>> outside_positions() {
    const double e = 1e-6;
    return {{-e, 0.5, 0.5},     {1.0, 0.5, 0.5},    {1.0 + e, 0.25, 0.5}, {0.5, -e, 0.5},   {0.5, 1.0, 0.5},
            {0.75, 1.0 + e, 0.5}, {-e, -e, 0.5},    {1.0, -e, 0.5},      {-e, 1.0, 0.5},    {1.0, 1.0, 0.5},
            {-0.01, -0.01, 0.5}, {2.0, -1.0, 0.5}, {0.0, 0.0, 0.5},      {100.0, 100.0, 0.5}, {-1e6, 3.0, -2.0},
            {0.5, 0.5, 7.0}};
}

// Every check of `variant` (with `tuning` over its defaults) on `initial` at each D and after 1 and
// 10 steps, at the default thresholds.
void expect_verified(const VariantDescriptor& variant, const HostState& initial, Integrator integrator,
                     const std::vector<int>& ds, const TuningValues& tuning = {}) {
    const Workload workload{state_dim(initial), state_precision(initial), integrator};
    const VerificationSettings settings;
    const ReferenceSolution reference(initial, {}, integrator, {1, 10}, settings);
    std::string what = variant.id + " " + to_string(workload);
    for (const auto& [name, value] : tuning) what += " " + name + "=" + value;
    for (int d : ds) {
        auto sim = variant.create(Problem{.n = state_size(initial), .d = d, .constants = {}, .workload = workload, .distribution = {}},
                                  Registry::resolve_tuning(variant, tuning));
        for (const CheckResult& r :
             verify_simulation(*sim, initial, reference, d))
            EXPECT_TRUE(r.passed) << what << " D=" << d << " K=" << r.steps << ": " << r.failure;
    }
}

// Each value of the tunings that choose how 1/sqrt is computed (omp.simd's instruction set, as
// listed here: those this CPU runs; its Newton step), each alone over the defaults.
std::vector<TuningValues> inv_sqrt_tunings(const VariantDescriptor& variant) {
    std::vector<TuningValues> out;
    for (const TuningParameter& t : variant.tunings)
        if (t.name == "isa" || t.name == "newton")
            for (const std::string& value : t.allowed_values)
                if (value != t.default_value && value != "auto") out.push_back({{t.name, value}});
    return out;
}

// After 10 steps with `tuning`: every value finite, and the bodies from `first_far` on where and as
// they started (nothing pulls them). For tunings whose arithmetic the default thresholds do not cover
// (omp.simd's newton=0: the bare 14-bit estimate errs by about 2e-6 in velocity).
template <class Real>
void expect_finite_and_far_bodies_unmoved(const VariantDescriptor& variant, const BodiesT<Real>& initial,
                                          Integrator integrator, std::size_t first_far, const TuningValues& tuning) {
    const Workload workload{initial.dim, std::is_same_v<Real, float> ? Precision::fp32 : Precision::fp64, integrator};
    auto sim = variant.create(Problem{.n = initial.size(), .d = 10, .constants = {}, .workload = workload, .distribution = {}},
                              Registry::resolve_tuning(variant, tuning));
    sim->upload(initial);
    sim->advance(10);
    sim->synchronize();
    BodiesT<Real> got;
    std::vector<float> map;
    sim->download(got, map);
    const std::string what = variant.id + " " + to_string(workload) + " " + tuning.begin()->first + "=" + tuning.begin()->second;
    ASSERT_EQ(got.size(), initial.size()) << what;
    for (int axis = 0; axis < initial.dim; ++axis)
        for (std::size_t i = 0; i < initial.size(); ++i) {
            ASSERT_TRUE(std::isfinite(got.position(axis)[i]) && std::isfinite(got.velocity(axis)[i])) << what << " body " << i;
            if (i < first_far) continue;
            EXPECT_EQ(got.position(axis)[i], initial.position(axis)[i]) << what << " body " << i;
            EXPECT_EQ(got.velocity(axis)[i], initial.velocity(axis)[i]) << what << " body " << i;
        }
}

class OutsideBodies : public ::testing::TestWithParam<Model> {};

TEST_P(OutsideBodies, NeverCountAgainstTheMap) {
    const Model& model = GetParam();
    int checked = 0;
    for (const Workload& workload : {Workload{2, Precision::fp32, Integrator::euler},
                                     Workload{3, Precision::fp64, Integrator::leapfrog}}) {
        for (const auto* v : available(model, workload)) {
            const HostState initial =
                workload.precision == Precision::fp32
                    ? HostState(with_extra_bodies<float>(200, workload.dim, outside_positions()))
                    : HostState(with_extra_bodies<double>(200, workload.dim, outside_positions()));
            expect_verified(*v, initial, workload.integrator, {1, 10, 1000});
            ++checked;
        }
    }
    if (checked == 0) GTEST_SKIP() << why_none(model);
}

// Two groups 2e30 (float32) or 2e200 (float64) apart: |d|^2 overflows to infinity, where the plain
// formula's 1/sqrt is 0, so neither group pulls the other and every state stays finite.
TEST_P(OutsideBodies, BodiesWhoseDistanceSquaredOverflowsPullNothing) {
    const Model& model = GetParam();
    int checked = 0;
    for (const Workload& workload : {Workload{2, Precision::fp32, Integrator::euler}, Workload{3, Precision::fp32, Integrator::leapfrog},
                                     Workload{2, Precision::fp64, Integrator::euler}, Workload{3, Precision::fp64, Integrator::leapfrog}}) {
        const double far = workload.precision == Precision::fp32 ? 1e30 : 1e200;
        const bool overflows = workload.precision == Precision::fp32 ? std::isinf(static_cast<float>(far) * static_cast<float>(far))
                                                                      : std::isinf(far * far);
        ASSERT_TRUE(overflows);
        const std::vector<std::vector<double>> far_bodies = {{far, far, far}, {-far, -far, -far}, {far, -far, 0.5}, {-far, 0.5, far}};
        for (const auto* v : available(model, workload)) {
            const HostState initial = workload.precision == Precision::fp32
                                          ? HostState(with_extra_bodies<float>(100, workload.dim, far_bodies))
                                          : HostState(with_extra_bodies<double>(100, workload.dim, far_bodies));
            expect_verified(*v, initial, workload.integrator, {10});
            for (const TuningValues& tuning : inv_sqrt_tunings(*v)) {
                if (tuning.count("newton") == 0) {
                    expect_verified(*v, initial, workload.integrator, {10}, tuning);
                    continue;
                }
                std::visit([&](const auto& bodies) { expect_finite_and_far_bodies_unmoved(*v, bodies, workload.integrator, 100, tuning); },
                           initial);
            }
            ++checked;
        }
    }
    if (checked == 0) GTEST_SKIP() << why_none(model);
}

INSTANTIATE_TEST_SUITE_P(EveryModel, OutsideBodies, ::testing::ValuesIn(every_model()),
                         [](const ::testing::TestParamInfo<Model>& info) { return info.param.name; });

// `nbody-bench verify --input` on a file with such bodies: every variant passes (exit 0).
TEST(VerifyInput, BodiesOutsideTheSquarePass) {
    testing::TempDir dir;
    std::string csv = "# x,y,vx,vy,m\n";
    for (int i = 0; i < 40; ++i) csv += fmt::format("{},{},,,\n", (i % 7 + 0.5) / 7, (i / 7 + 0.5) / 7);
    for (const auto& p : outside_positions()) csv += fmt::format("{},{},,,\n", p[0], p[1]);
    const std::string input = dir.write("bodies.csv", csv);
    const std::string command = fmt::format("{} verify --input {} --precision fp32 -d 1 10 1000 >{} 2>{}", NBODY_BENCH_PATH,
                                            input, dir.file("out.txt"), dir.file("err.txt"));
    const int raw = std::system(command.c_str());
    const int status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    const std::string out = testing::read_text(dir.file("out.txt"));
    EXPECT_EQ(status, 0) << out << testing::read_text(dir.file("err.txt"));
    EXPECT_EQ(out.find("FAIL"), std::string::npos) << out;
    EXPECT_NE(out.find("PASS"), std::string::npos) << out;
}

}  // namespace
}  // namespace nbody
