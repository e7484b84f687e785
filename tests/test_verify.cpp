// Verification against the host reference (every workload), and the host facts behind the CPU
// efficiency limit.
#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "cli/commands.hpp"
#include "io/io.hpp"
#include "nbody/errors.hpp"
#include "nbody/generator.hpp"
#include "nbody/model_registration.hpp"
#include "nbody/reference.hpp"
#include "nbody/stress.hpp"
#include "platform/host_info.hpp"
#include "test_support.hpp"
#include "verify/verification.hpp"

namespace nbody {
namespace {

template <class Real = float>
struct SerialRun {
    BodiesT<Real> state;
    std::vector<float> map;
};

template <class Real>
SerialRun<Real> run_serial(const BodiesT<Real>& initial, int d, int steps, Integrator integrator = Integrator::euler) {
    Registry registry;
    register_serial_variants(registry);
    const auto* v = registry.find("serial.reference");
    const Workload workload{initial.dim, std::is_same_v<Real, float> ? Precision::fp32 : Precision::fp64, integrator};
    auto sim = v->create(Problem{.n = initial.size(), .d = d, .constants = {}, .workload = workload, .distribution = {}}, {});
    sim->upload(initial);
    sim->advance(steps);
    SerialRun<Real> out;
    sim->download(out.state, out.map);
    return out;
}

TEST(Verification, SerialReferencePassesTheFullCheckAtEveryRequestedStep) {
    const Bodies initial = generate_bodies(300, 7);
    Registry registry;
    register_serial_variants(registry);
    auto sim = registry.find("serial.reference")->create(Problem{.n = 300, .d = 16, .constants = {}, .workload = {}, .distribution = {}}, {});
    const ReferenceSolution reference(initial, {}, Integrator::euler, {10, 1, 3}, VerificationSettings{});
    ASSERT_EQ(reference.kind(), CheckKind::full);
    const auto results = verify_simulation(*sim, initial, reference, 16);
    ASSERT_EQ(results.size(), 3u);
    EXPECT_EQ(results[0].steps, 1);
    EXPECT_EQ(results[2].steps, 10);
    for (const auto& r : results) {
        EXPECT_TRUE(r.passed) << r.failure;
        EXPECT_LT(r.errors.max_pos_err, 1e-6);
        EXPECT_GT(r.errors.max_vel_err, 0.0);  // float32 against float64: not bit-equal
        EXPECT_LE(r.errors.rms_pos_err, r.errors.max_pos_err);
        // The same algorithm as the index-order shadow: within one rounding scale.
        EXPECT_LE(r.errors.pos_rounding_multiple, 1.0);
        EXPECT_LE(r.errors.vel_rounding_multiple, 1.0);
        EXPECT_EQ(r.verdict, Verdict::pass);
        EXPECT_EQ(r.vel_limit_source, LimitSource::rounding);
    }
}

TEST(Verification, PerturbedPositionFailsNamingTheError) {
    const Bodies initial = generate_bodies(200, 3);
    const ReferenceSolution reference(initial, {}, Integrator::euler, {2}, VerificationSettings{});
    auto run = run_serial(initial, 8, 2);
    run.state.x[17] += 3e-4f;
    const CheckResult r = reference.check(2, run.state, run.map, 8);
    EXPECT_FALSE(r.passed);
    EXPECT_NEAR(r.errors.max_pos_err, 3e-4, 1e-5);
    EXPECT_NE(r.failure.find("max_pos_err"), std::string::npos);
    EXPECT_EQ(r.failure.find("map_diff"), std::string::npos);
}

TEST(Verification, MapDifferenceCountsBodiesInAnotherCell) {
    const std::size_t n = 100;
    const int d = 10;
    const Bodies initial = generate_bodies(n, 11);
    const ReferenceSolution reference(initial, {}, Integrator::euler, {1}, VerificationSettings{});
    auto run = run_serial(initial, d, 1);
    // Move one body's count to a different cell: L1 = 2, divided by 2N; no body of this state lies
    // within the position error of a cell edge, so nothing explains it.
    const float unit = activity_scale(n, d);
    std::size_t from = 0;
    while (run.map[from] == 0.0f) ++from;
    run.map[from] -= unit;
    run.map[(from + 1) % run.map.size()] += unit;
    const CheckResult r = reference.check(1, run.state, run.map, d);
    EXPECT_DOUBLE_EQ(r.errors.map_diff, 1.0 / n);
    EXPECT_EQ(r.errors.map_unexplained_counts, 2);
    EXPECT_FALSE(r.passed);
    EXPECT_NE(r.failure.find("map: 2 counts unexplained"), std::string::npos) << r.failure;
    // The explicitly lax mode of earlier versions compares the plain difference instead.
    ThresholdOverrides lax;
    lax.max_map_diff = 0.02;
    EXPECT_TRUE(reference.check(1, run.state, run.map, d, lax).passed);
}

// Reference positions for the map tests: N bodies, the first `near_count` placed `near` below a
// column edge.
BodiesT<long double> positions_with_bodies_near_edges(std::size_t n, int d, long double near, std::size_t near_count) {
    BodiesT<long double> truth(n, 2);
    SplitMix64 rng(99);
    for (std::size_t i = 0; i < n; ++i) {
        truth.x[i] = unit_float_from(rng.next());
        truth.y[i] = unit_float_from(rng.next());
        truth.m[i] = 1.0L / n;
    }
    for (std::size_t i = 0; i < near_count; ++i) {
        const long double edge = (1 + static_cast<long double>(rng.next() % static_cast<std::uint64_t>(d - 1))) / d;
        truth.x[i] = edge - near;
    }
    return truth;
}

// The map a correct float32 variant would hand back: the cells of its own positions, each the
// reference's moved by `shift` along x.
std::vector<float> map_of_positions(const BodiesT<long double>& truth, int d, long double shift) {
    std::vector<float> map(static_cast<std::size_t>(d) * d, 0.0f);
    const float unit = activity_scale(truth.size(), d);
    for (std::size_t i = 0; i < truth.size(); ++i) {
        const int cell = activity_cell(static_cast<float>(truth.x[i] + shift), static_cast<float>(truth.y[i]), d);
        if (cell >= 0) map[static_cast<std::size_t>(cell)] += unit;
    }
    return map;
}

constexpr long double kMapTestError = 1e-6L;  // the position error the map tests allow

ErrorMetrics map_check(const std::vector<float>& map, const BodiesT<long double>& truth, int d, double tolerance) {
    ErrorMetrics e;
    check_map_counts<float>(map, truth, d, tolerance, e);
    return e;
}

// Edge rounding is explained by the position error; nothing else is.
TEST(MapCheck, BodiesWithinThePositionErrorOfAnEdgeMayLandOnEitherSide) {
    for (int d : {10, 1000, 15000}) {
        const auto truth = positions_with_bodies_near_edges(1024, d, kMapTestError / 2, 5);
        const double tolerance = static_cast<double>(kMapTestError);
        EXPECT_EQ(map_check(map_of_positions(truth, d, 0), truth, d, tolerance).map_unexplained_counts, 0) << "D=" << d;
        const auto pushed_map = map_of_positions(truth, d, kMapTestError);  // the five cross their edge
        const ErrorMetrics pushed = map_check(pushed_map, truth, d, tolerance);
        EXPECT_EQ(pushed.map_unexplained_counts, 0) << "D=" << d;
        EXPECT_GE(pushed.map_ambiguous_bodies, 5) << "D=" << d;
        EXPECT_GE(pushed.map_explained_counts, 5) << "D=" << d;
        EXPECT_GT(pushed.map_diff, 0.0) << "D=" << d;
        // Allowing no position error, the same crossings are not explained: the five placed bodies
        // (and any other that the shift carried over an edge), each missing in one cell and extra
        // in another.
        EXPECT_GE(map_check(pushed_map, truth, d, 0.0).map_unexplained_counts, 10) << "D=" << d;
    }
}

// A badly wrong run (positions off by far more than a cell) is unexplained, and the check does not
// enumerate the many cells such an error would reach.
TEST(MapCheck, ErrorsOfManyCellsAreUnexplainedNotEnumerated) {
    const int d = 1000;
    const auto truth = positions_with_bodies_near_edges(1024, d, kMapTestError / 2, 5);
    const ErrorMetrics e = map_check(map_of_positions(truth, d, 0), truth, d, 0.3);
    EXPECT_GE(e.map_unexplained_counts, 1024);  // every body, and the counts left in its cells
    EXPECT_EQ(e.map_ambiguous_bodies, 0);
}

// Mutations of a correct map that real bugs produce: each is detected at every D.
TEST(MapCheck, MutationsAreDetected) {
    for (int d : {10, 1000, 15000}) {
        const std::size_t n = 1024;
        const auto truth = positions_with_bodies_near_edges(n, d, kMapTestError / 2, 5);
        const double tolerance = static_cast<double>(kMapTestError);
        const float unit = activity_scale(n, d);
        std::vector<float> map = map_of_positions(truth, d, kMapTestError);
        ASSERT_EQ(map_check(map, truth, d, tolerance).map_unexplained_counts, 0) << "D=" << d;
        // Each mutation is applied to `map`, checked, and undone (D = 15000 maps are 900 MB).
        auto detected = [&](const char* what, auto mutate) {
            const std::vector<std::pair<std::size_t, float>> saved = mutate();
            EXPECT_GT(map_check(map, truth, d, tolerance).map_unexplained_counts, 0) << what << ", D=" << d;
            for (auto it = saved.rbegin(); it != saved.rend(); ++it) map[it->first] = it->second;
        };
        const std::size_t far = 100;  // a body far from any edge
        const std::size_t cell = static_cast<std::size_t>(
            activity_cell(static_cast<float>(truth.x[far]), static_cast<float>(truth.y[far]), d));
        const std::size_t row = cell / static_cast<std::size_t>(d), col = cell % static_cast<std::size_t>(d);
        const std::size_t two_over = row * d + (col + 2) % static_cast<std::size_t>(d);
        detected("one body moved two cells", [&] {
            std::vector<std::pair<std::size_t, float>> saved = {{cell, map[cell]}, {two_over, map[two_over]}};
            map[cell] -= unit;
            map[two_over] += unit;
            return saved;
        });
        detected("one body dropped", [&] {
            std::vector<std::pair<std::size_t, float>> saved = {{cell, map[cell]}};
            map[cell] -= unit;
            return saved;
        });
        detected("a row's cells one column off", [&] {
            std::vector<std::pair<std::size_t, float>> saved;
            for (std::size_t c = 0; c < static_cast<std::size_t>(d); ++c) saved.push_back({row * d + c, map[row * d + c]});
            for (std::size_t c = static_cast<std::size_t>(d) - 1; c > 0; --c) map[row * d + c] = map[row * d + c - 1];
            map[row * d] = 0.0f;
            return saved;
        });
        detected("counts halved by lost atomics", [&] {
            std::vector<std::pair<std::size_t, float>> saved;
            for (std::size_t c = 0; c < map.size(); ++c)
                if (map[c] != 0.0f) {
                    saved.push_back({c, map[c]});
                    map[c] = std::floor(map[c] / unit / 2) * unit;
                }
            return saved;
        });
    }
}

TEST(Verification, NaNFailsEveryThreshold) {
    const Bodies initial = generate_bodies(50, 5);
    const ReferenceSolution reference(initial, {}, Integrator::euler, {1}, VerificationSettings{});
    auto run = run_serial(initial, 4, 1);
    run.state.vx[3] = std::numeric_limits<float>::quiet_NaN();
    const CheckResult r = reference.check(1, run.state, run.map, 4);
    EXPECT_FALSE(r.passed);
    EXPECT_TRUE(std::isnan(r.errors.max_vel_err));
    EXPECT_NE(r.failure.find("max_vel_err"), std::string::npos);
}

TEST(Verification, LargeNGetsTheSampledFirstStepCheck) {
    const Bodies initial = generate_bodies(500, 9);
    VerificationSettings settings;
    settings.full_reference_max_n = 100;
    settings.sample_bodies = 40;
    const ReferenceSolution reference(initial, {}, Integrator::euler, {1, 10}, settings);
    EXPECT_EQ(reference.kind(), CheckKind::sampled);
    EXPECT_EQ(reference.steps(), std::vector<int>{1});
    auto run = run_serial(initial, 12, 1);
    const CheckResult good = reference.check(1, run.state, run.map, 12);
    EXPECT_TRUE(good.passed) << good.failure;
    EXPECT_GT(good.errors.max_vel_err, 0.0);

    // The sampled velocities agree with the full float64 reference's.
    BodiesT<double> full = BodiesT<double>::converted_from(initial);
    reference_advance(full, {}, Integrator::euler, 1);
    double worst = 0;
    for (std::size_t i = 0; i < initial.size(); ++i) worst = std::max(worst, std::abs(run.state.vx[i] - full.vx[i]));
    EXPECT_LE(good.errors.max_vel_err, worst);

    // A wrong velocity on every body is caught whichever bodies are sampled.
    for (auto& v : run.state.vy) v += 1e-3f;
    EXPECT_FALSE(reference.check(1, run.state, run.map, 12).passed);
}

// Sampled checks hold velocities to the rounding of the shadows (the sample's accelerations summed
// in the workload's precision in index and in reversed order): that index-order sum itself passes,
// well beyond the rule's multiple of its error fails, and a user's absolute limit replaces the rule.
TEST(Verification, SampledVelocitiesAreHeldToTheShadowsRounding) {
    const std::size_t n = 12000;
    const Bodies initial = generate_bodies(n, 21);
    VerificationSettings settings;
    settings.full_reference_max_n = 1000;
    settings.sample_bodies = 64;
    const ReferenceSolution reference(initial, {}, Integrator::euler, {1}, settings);
    ASSERT_EQ(reference.kind(), CheckKind::sampled);

    // One Euler step from rest: positions unchanged, v = dt * a with a summed in float32 in index order.
    const PhysicsConstants constants{};
    std::vector<std::size_t> every(n);
    for (std::size_t i = 0; i < n; ++i) every[i] = i;
    const auto acceleration = reference_accelerations(initial, constants, every);
    Bodies index_order = initial;
    float largest_speed = 0;
    for (std::size_t i = 0; i < n; ++i) {
        index_order.vx[i] = static_cast<float>(constants.dt) * acceleration[0][i];
        index_order.vy[i] = static_cast<float>(constants.dt) * acceleration[1][i];
        largest_speed = std::max({largest_speed, std::abs(index_order.vx[i]), std::abs(index_order.vy[i])});
    }
    const std::vector<float> map = run_serial(initial, 8, 1).map;

    const CheckResult own = reference.check(1, index_order, map, 8);
    EXPECT_TRUE(own.passed) << own.failure;
    EXPECT_GT(own.errors.float32_sum_vel_err, 0.0);
    EXPECT_LE(own.errors.vel_rounding_multiple, 2.0);
    EXPECT_LE(own.errors.max_vel_err, own.errors.vel_err_limit);

    // Off by more than the rule allows on every body: beyond any shadow error and value ulps.
    const double scale = 4 * own.errors.float32_sum_vel_err + 2 * kValueUlps * std::numeric_limits<float>::epsilon() * largest_speed;
    Bodies off = index_order;
    for (auto& v : off.vx) v += static_cast<float>(kRoundingMultiple * scale);
    const CheckResult wrong = reference.check(1, off, map, 8);
    EXPECT_EQ(wrong.verdict, Verdict::fail);
    EXPECT_GT(wrong.errors.vel_rounding_multiple, kRoundingMultiple);
    EXPECT_NE(wrong.failure.find("max_vel_err"), std::string::npos);

    // An absolute limit replaces the rule for what it names.
    ThresholdOverrides loose;
    loose.max_vel_err = 1.0;
    const CheckResult by_user = reference.check(1, off, map, 8, loose);
    EXPECT_TRUE(by_user.passed) << by_user.failure;
    EXPECT_EQ(by_user.vel_limit_source, LimitSource::absolute);
    EXPECT_EQ(by_user.pos_limit_source, LimitSource::rounding);
    EXPECT_EQ(by_user.errors.vel_err_limit, 1.0);
    ThresholdOverrides strict;
    strict.max_vel_err = 1e-12;  // below any float32 rounding
    EXPECT_EQ(reference.check(1, index_order, map, 8, strict).verdict, Verdict::fail);

    // Float64 workloads have their own shadows (no float32 one).
    const ReferenceSolution reference64(BodiesT<double>::converted_from(initial), {}, Integrator::euler, {1}, settings);
    const auto run64 = run_serial(BodiesT<double>::converted_from(initial), 8, 1);
    const CheckResult r64 = reference64.check(1, run64.state, run64.map, 8);
    EXPECT_TRUE(r64.passed) << r64.failure;
    EXPECT_EQ(r64.errors.float32_sum_vel_err, 0.0);
}

// Float64 workloads are checked against the long-double reference with thresholds that a float64
// computation meets and anything rounded through float32 on the way does not.
TEST(Verification, Float64IsCheckedTightlyAndCatchesFloat32Rounding) {
    for (int dim : {2, 3}) {
        const auto initial = generate_bodies_of<double>(400, dim, 21);
        const ReferenceSolution reference(initial, {}, Integrator::leapfrog, {1, 10}, VerificationSettings{});
        EXPECT_EQ(reference.precision(), Precision::fp64);
        Registry registry;
        register_serial_variants(registry);
        auto sim = registry.find("serial.reference")
                       ->create(Problem{.n = 400, .d = 10, .constants = {},
                                        .workload = {dim, Precision::fp64, Integrator::leapfrog}, .distribution = {}},
                                {});
        for (const auto& r : verify_simulation(*sim, initial, reference, 10)) {
            EXPECT_TRUE(r.passed) << dim << "D after " << r.steps << ": " << r.failure;
            EXPECT_LT(r.errors.max_pos_err, 1e-14);
        }
        // The same steps in float32, widened: a silent float32 path in a float64 variant.
        const auto single = run_serial(BodiesT<float>::converted_from(initial), 10, 10, Integrator::leapfrog);
        const CheckResult mixed = reference.check(10, BodiesT<double>::converted_from(single.state), single.map, 10);
        EXPECT_FALSE(mixed.passed);
        EXPECT_GT(mixed.errors.max_vel_err, 1e-10);
    }
}

// The sampled check follows the integrator and the dimension: its first-step truth equals the
// full reference's, and a run with the other integrator fails it.
TEST(Verification, SampledCheckFollowsLeapfrogIn3D) {
    const auto initial = generate_bodies_of<float>(500, 3, 13);
    VerificationSettings sampled;
    sampled.full_reference_max_n = 100;
    sampled.sample_bodies = 50;
    const ReferenceSolution reference(initial, {}, Integrator::leapfrog, {1, 10}, sampled);
    ASSERT_EQ(reference.kind(), CheckKind::sampled);
    const ReferenceSolution full(initial, {}, Integrator::leapfrog, {1}, VerificationSettings{});
    ASSERT_EQ(full.kind(), CheckKind::full);

    const auto leapfrog = run_serial(initial, 16, 1, Integrator::leapfrog);
    const CheckResult by_sample = reference.check(1, leapfrog.state, leapfrog.map, 16);
    const CheckResult by_full = full.check(1, leapfrog.state, leapfrog.map, 16);
    EXPECT_TRUE(by_sample.passed) << by_sample.failure;
    EXPECT_EQ(by_sample.errors.max_pos_err, by_full.errors.max_pos_err);  // every position, same truth
    EXPECT_LE(by_sample.errors.max_vel_err, by_full.errors.max_vel_err);   // a subset of the bodies
    EXPECT_GT(by_sample.errors.max_vel_err, 0.0);

    const auto euler = run_serial(initial, 16, 1, Integrator::euler);
    EXPECT_FALSE(reference.check(1, euler.state, euler.map, 16).passed);

    auto moved = leapfrog;
    moved.state.z[7] += 5e-4f;
    const CheckResult r = reference.check(1, moved.state, moved.map, 16);
    EXPECT_FALSE(r.passed);
    EXPECT_NE(r.failure.find("max_pos_err"), std::string::npos);
}

// The third verdict: on an input that amplifies rounding (masses over 8 decades in float32), an
// error beyond a body's own rounding scale but within the rule's multiple of the shadows' largest
// error is INCONCLUSIVE after 10 steps; the same after one step, where nothing is amplified yet,
// FAILs; and an error beyond any rounding the shadows show FAILs after 10 steps too.
TEST(Verification, AmplifiedRoundingGivesInconclusiveNeverAfterOneStep) {
    const StressCase masses = stress_state(StressKind::masses, 256, 2, Precision::fp32);
    const auto& initial = std::get<BodiesT<float>>(masses.state);
    const ReferenceSolution reference(masses.state, masses.constants, Integrator::leapfrog, {1, 10}, VerificationSettings{});
    Registry registry;
    register_serial_variants(registry);
    const Workload workload{2, Precision::fp32, Integrator::leapfrog};
    auto sim = registry.find("serial.reference")
                   ->create(Problem{.n = 256, .d = 10, .constants = masses.constants, .workload = workload, .distribution = {}}, {});
    const auto snapshots = snapshots_at(*sim, initial, {1, 10});
    const CheckResult own = reference.check(10, snapshots[1].state, snapshots[1].map, 10);
    ASSERT_TRUE(own.passed) << own.failure;  // the index-order shadow's own arithmetic
    ASSERT_GT(own.errors.rounding_amplification, kInconclusiveAmplification);

    const auto perturbed = [](const Snapshot& s, double by) {
        auto state = std::get<BodiesT<float>>(s.state);
        for (std::size_t i = 0; i < state.size(); i += 8) state.vx[i] += static_cast<float>(by);
        return state;
    };
    // Half the rule's multiple of the largest shadow error: beyond most bodies' own scale.
    const double spread = 0.5 * kRoundingMultiple * own.errors.vel_shadow_err;
    const CheckResult amplified = reference.check(10, perturbed(snapshots[1], spread), snapshots[1].map, 10);
    EXPECT_EQ(amplified.verdict, Verdict::inconclusive) << amplified.failure;
    EXPECT_FALSE(amplified.passed);
    EXPECT_NE(amplified.failure.find("rounding amplified"), std::string::npos) << amplified.failure;
    // Beyond any rounding the shadows show: FAIL.
    const CheckResult wrong = reference.check(10, perturbed(snapshots[1], 4 * spread), snapshots[1].map, 10);
    EXPECT_EQ(wrong.verdict, Verdict::fail) << wrong.failure;
    // After one step the check is decisive.
    const CheckResult first = reference.check(1, snapshots[0].state, snapshots[0].map, 10);
    ASSERT_TRUE(first.passed) << first.failure;
    const double first_spread = 0.5 * kRoundingMultiple * std::max(first.errors.vel_shadow_err, 1e-6);
    EXPECT_EQ(reference.check(1, perturbed(snapshots[0], first_spread), snapshots[0].map, 10).verdict, Verdict::fail);
    // An absolute limit is never excused.
    ThresholdOverrides absolute;
    absolute.max_vel_err = own.errors.max_vel_err;
    EXPECT_EQ(reference.check(10, perturbed(snapshots[1], spread), snapshots[1].map, 10, absolute).verdict, Verdict::fail);
}

// `nbody-bench verify ARGS...` through the real command line; returns its exit status.
int verify_command(std::vector<std::string> args) {
    CLI::App app;
    int exit_status = -1;
    add_verify_command(app, exit_status);
    args.insert(args.begin(), "verify");
    std::reverse(args.begin(), args.end());  // CLI11 takes the arguments reversed
    app.parse(args);
    return exit_status;
}

TEST(VerifyCommand, PassesAndFailsOnTheThresholds) {
    EXPECT_EQ(verify_command({"--variants", "serial.reference", "-n", "64", "100", "-d", "4", "--steps", "1", "3"}), 0);
    // No float32 run matches float64 exactly after a step: a zero velocity threshold fails it.
    EXPECT_EQ(verify_command({"--variants", "serial.reference", "-n", "64", "-d", "4", "--max-vel-err", "0"}), 1);
    EXPECT_THROW(verify_command({"--variants", "no.such_variant"}), UsageError);
    EXPECT_THROW(verify_command({"--max-pos-err", "-1"}), CLI::ValidationError);
    // The workload axes: one workload, several, and values that do not exist.
    EXPECT_EQ(verify_command({"--variants", "serial.reference", "-n", "64", "-d", "4", "--dim", "3", "--precision",
                              "fp64", "--integrator", "leapfrog"}),
              0);
    EXPECT_EQ(verify_command({"--variants", "serial.reference", "-n", "50", "-d", "3", "--steps", "2"}), 0);
    EXPECT_THROW(verify_command({"--dim", "4"}), CLI::ValidationError);
    EXPECT_THROW(verify_command({"--precision", "fp16"}), CLI::ValidationError);
    EXPECT_THROW(verify_command({"--integrator", "rk4"}), CLI::ValidationError);
    // Hard inputs: by name (with -n, only when named), refused by an unknown name or beside --input.
    EXPECT_EQ(verify_command({"--variants", "serial.reference", "-n", "64", "-d", "4", "--steps", "1", "--dim", "2",
                              "--precision", "fp64", "--integrator", "euler", "--hard", "masses", "drift", "--hard-n", "64"}),
              0);
    EXPECT_THROW(verify_command({"--variants", "serial.reference", "-n", "64", "--hard", "bogus"}), UsageError);
    EXPECT_THROW(verify_command({"--variants", "serial.reference", "-n", "64", "--hard", "none", "mixed"}), UsageError);
    testing::TempDir dir;
    const std::string state = dir.file("state.csv");
    write_bodies_csv(state, generate_bodies(16), "16 bodies");
    try {
        verify_command({"--variants", "serial.reference", "--input", state, "--hard", "mixed"});
        ADD_FAILURE() << "--hard beside --input accepted";
    } catch (const UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("--hard and --input"), std::string::npos) << e.what();
    }
}

TEST(HostInfo, SimdLanesComeFromTheWidestFlag) {
    std::string source;
    EXPECT_EQ(simd_fp32_lanes_from_flags("fpu sse sse2 avx avx2 fma avx512f", source), 16);
    EXPECT_NE(source.find("avx512f"), std::string::npos);
    EXPECT_EQ(simd_fp32_lanes_from_flags("fpu sse sse2 avx avx2 fma", source), 8);
    EXPECT_EQ(simd_fp32_lanes_from_flags("fpu sse sse2", source), 4);
    EXPECT_EQ(simd_fp32_lanes_from_flags("fp asimd evtstrm", source), 4);
    EXPECT_EQ(simd_fp32_lanes_from_flags("fpu", source), 1);
    EXPECT_EQ(simd_fp32_lanes_from_flags("avx512fp16x", source), 1);  // whole words only
}

TEST(HostInfo, CoresUsedFollowTheThreadsTuning) {
    const auto descriptor = [](const char* id, const char* backend, const char* space) {
        VariantDescriptor v;
        v.id = id;
        v.backend = backend;
        v.execution_space = space;
        return v;
    };
    EXPECT_EQ(cpu_cores_used(descriptor("serial.x", "serial", "host"), {}), 1);
    const VariantDescriptor omp = descriptor("omp.x", "omp", "openmp");
    EXPECT_EQ(cpu_cores_used(omp, {{"threads", "1"}}), 1);
    EXPECT_EQ(cpu_cores_used(omp, {{"threads", "4096"}}), host_cpu_info().physical_cores);
    const VariantDescriptor kokkos_serial = descriptor("kokkos.x@serial", "kokkos", "serial");
    EXPECT_EQ(cpu_cores_used(kokkos_serial, {}), 1);
}

}  // namespace
}  // namespace nbody
