// One step on hand-computed systems, the activity map at its edges, and momentum conservation.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "nbody/generator.hpp"
#include "nbody/reference.hpp"
#include "nbody/registry.hpp"

namespace nbody {
namespace {

const PhysicsConstants kConstants{};  // G = 9.8, dt = 0.01, eps = 2

// Runs serial.reference (float32) for `steps` steps and returns its state and map.
std::pair<Bodies, std::vector<float>> run_serial(const Bodies& initial, int d, int steps) {
    const VariantDescriptor* serial = builtin_registry().find("serial.reference");
    EXPECT_NE(serial, nullptr);
    auto sim = serial->create(Problem{.n = initial.size(), .d = d, .constants = kConstants}, {});
    sim->upload(initial);
    sim->advance(steps);
    std::pair<Bodies, std::vector<float>> out;
    sim->download(out.first, out.second);
    return out;
}

TEST(OneStep, TwoBodiesMatchTheHandComputedValues) {
    // Two bodies 0.5 apart on the x axis, at rest, masses 0.5 each.
    Bodies initial(2);
    initial.x = {0.25f, 0.75f};
    initial.y = {0.5f, 0.5f};
    initial.vx = {0.0f, 0.0f};
    initial.vy = {0.0f, 0.0f};
    initial.m = {0.5f, 0.5f};
    // |d|^2 + eps^2 = 0.25 + 4 = 4.25; pull on body 0 = G * m * dx / 4.25^1.5, body 1 the opposite.
    const double a0 = 9.8 * 0.5 * 0.5 / std::pow(4.25, 1.5);
    const double dt = 0.01;

    BodiesT<double> ref = BodiesT<double>::converted_from(initial);
    reference_advance(ref, kConstants, Integrator::euler, 1);
    // Position first with the old (zero) velocity: positions unchanged after step one.
    EXPECT_DOUBLE_EQ(ref.x[0], 0.25);
    EXPECT_DOUBLE_EQ(ref.x[1], 0.75);
    EXPECT_NEAR(ref.vx[0], dt * a0, 1e-17);
    EXPECT_NEAR(ref.vx[1], -dt * a0, 1e-17);
    EXPECT_EQ(ref.vy[0], 0.0);

    // Step two moves them with the velocity of step one.
    reference_advance(ref, kConstants, Integrator::euler, 1);
    EXPECT_NEAR(ref.x[0], 0.25 + dt * dt * a0, 1e-17);
    EXPECT_NEAR(ref.x[1], 0.75 - dt * dt * a0, 1e-17);

    const auto [serial, map] = run_serial(initial, 4, 2);
    EXPECT_NEAR(serial.x[0], 0.25 + dt * dt * a0, 1e-7);
    // Both steps start from the initial positions, so each adds dt * a0.
    EXPECT_NEAR(serial.vx[0], 2 * dt * a0, 2 * dt * a0 * 1e-5);
    EXPECT_NEAR(serial.vx[1], -serial.vx[0], 1e-9);
}

TEST(OneStep, ThreeBodiesMatchAPlainDoubleSum) {
    Bodies initial(3);
    initial.x = {0.1f, 0.6f, 0.4f};
    initial.y = {0.2f, 0.3f, 0.9f};
    initial.vx = {0.5f, -0.25f, 0.0f};
    initial.vy = {0.0f, 0.125f, -1.0f};
    initial.m = {1.0f, 2.0f, 0.5f};

    // The formula of SPEC §1 written out in double, independent of the library code.
    double expected_x[3], expected_y[3], expected_vx[3], expected_vy[3];
    for (int i = 0; i < 3; ++i) {
        double ax = 0, ay = 0;
        for (int j = 0; j < 3; ++j) {
            const double dx = double(initial.x[j]) - initial.x[i], dy = double(initial.y[j]) - initial.y[i];
            const double r2 = dx * dx + dy * dy + 4.0;
            ax += initial.m[j] * dx / (r2 * std::sqrt(r2));
            ay += initial.m[j] * dy / (r2 * std::sqrt(r2));
        }
        expected_x[i] = initial.x[i] + 0.01 * initial.vx[i];
        expected_y[i] = initial.y[i] + 0.01 * initial.vy[i];
        expected_vx[i] = initial.vx[i] + 0.01 * 9.8 * ax;
        expected_vy[i] = initial.vy[i] + 0.01 * 9.8 * ay;
    }

    BodiesT<double> ref = BodiesT<double>::converted_from(initial);
    reference_advance(ref, kConstants, Integrator::euler, 1);
    const auto [serial, map] = run_serial(initial, 8, 1);
    for (int i = 0; i < 3; ++i) {
        EXPECT_NEAR(ref.x[i], expected_x[i], 1e-15);
        EXPECT_NEAR(ref.y[i], expected_y[i], 1e-15);
        EXPECT_NEAR(ref.vx[i], expected_vx[i], 1e-15);
        EXPECT_NEAR(ref.vy[i], expected_vy[i], 1e-15);
        // float32: a few ulps of values of order 1.
        EXPECT_NEAR(serial.x[i], expected_x[i], 1e-6);
        EXPECT_NEAR(serial.y[i], expected_y[i], 1e-6);
        EXPECT_NEAR(serial.vx[i], expected_vx[i], 1e-6);
        EXPECT_NEAR(serial.vy[i], expected_vy[i], 1e-6);
    }
}

TEST(ActivityMap, CellsAtTheEdgesOfTheUnitSquare) {
    const float below_one = std::nextafter(1.0f, 0.0f);
    EXPECT_EQ(activity_cell(0.0f, 0.0f, 10), 0);
    EXPECT_EQ(activity_cell(below_one, 0.0f, 10), 9);
    EXPECT_EQ(activity_cell(0.0f, below_one, 10), 90);
    EXPECT_EQ(activity_cell(below_one, below_one, 10), 99);
    EXPECT_EQ(activity_cell(0.55f, 0.25f, 10), 25);  // row 2, col 5
    EXPECT_EQ(activity_cell(1.0f, 0.5f, 10), -1);
    EXPECT_EQ(activity_cell(0.5f, 1.0f, 10), -1);
    EXPECT_EQ(activity_cell(-1e-7f, 0.5f, 10), -1);
    EXPECT_EQ(activity_cell(0.5f, -0.25f, 10), -1);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    EXPECT_EQ(activity_cell(nan, 0.5f, 10), -1);
    EXPECT_EQ(activity_cell(0.5f, nan, 10), -1);
    EXPECT_EQ(activity_cell(std::numeric_limits<float>::infinity(), 0.5f, 10), -1);
    // floor(x * D) in float32 stays below D for x < 1 at the largest D of the sweeps.
    EXPECT_EQ(activity_cell(below_one, 0.5f, 15000), 7500 * 15000 + 14999);
}

TEST(ActivityMap, NormalisedByDOverNAndBodiesOutsideNotCounted) {
    // Four bodies at rest far apart (tiny mutual pull over one step), one outside the square.
    Bodies initial(5);
    initial.x = {0.1f, 0.15f, 0.9f, 0.6f, 1.5f};
    initial.y = {0.1f, 0.2f, 0.9f, 0.1f, 0.5f};
    initial.vx.assign(5, 0.0f);
    initial.vy.assign(5, 0.0f);
    initial.m.assign(5, 1e-6f);
    const auto [state, map] = run_serial(initial, 2, 1);
    ASSERT_EQ(map.size(), 4u);
    const float per_body = 2.0f / 5.0f;  // D / N
    EXPECT_FLOAT_EQ(map[0], 2 * per_body);  // row 0, col 0: bodies 0 and 1
    EXPECT_FLOAT_EQ(map[1], 1 * per_body);  // row 0, col 1: body 3
    EXPECT_FLOAT_EQ(map[2], 0.0f);
    EXPECT_FLOAT_EQ(map[3], 1 * per_body);  // row 1, col 1: body 2
    for (float v : map) EXPECT_FALSE(std::isnan(v));
    EXPECT_GT(state.x[4], 1.0f);  // simulated, not counted
}

TEST(Reference, Float64MomentumIsConservedOver100Steps) {
    BodiesT<double> b(64);
    SplitMix64 rng(5);
    double scale = 0;
    for (std::size_t i = 0; i < b.size(); ++i) {
        b.x[i] = unit_float_from(rng.next());
        b.y[i] = unit_float_from(rng.next());
        b.vx[i] = unit_float_from(rng.next()) - 0.5;
        b.vy[i] = unit_float_from(rng.next()) - 0.5;
        b.m[i] = 0.5 + unit_float_from(rng.next());
    }
    auto momentum = [&](double& px, double& py) {
        px = py = scale = 0;
        for (std::size_t i = 0; i < b.size(); ++i) {
            px += b.m[i] * b.vx[i];
            py += b.m[i] * b.vy[i];
            scale += b.m[i] * std::hypot(b.vx[i], b.vy[i]);
        }
    };
    double px0, py0, px1, py1;
    momentum(px0, py0);
    reference_advance(b, kConstants, Integrator::euler, 100);
    momentum(px1, py1);
    EXPECT_NEAR(px1, px0, 1e-12 * scale);
    EXPECT_NEAR(py1, py0, 1e-12 * scale);
}

}  // namespace
}  // namespace nbody
