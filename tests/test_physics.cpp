// One step on hand-computed systems (2D and 3D), the activity map at its edges, momentum
// conservation, the integrators' long-run behaviour (energy, time reversibility), and the pull in
// mass-scaled coordinates with the masses it can take; the directive models' scalar forms of the
// interaction and the integrator halves, bitwise the Vec forms.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "nbody/foldable_masses.hpp"
#include "nbody/generator.hpp"
#include "nbody/inv_sqrt.hpp"
#include "nbody/reference.hpp"
#include "nbody/registry.hpp"
#include "nbody/scalar_physics.hpp"

namespace nbody {
namespace {

const PhysicsConstants kConstants{};  // G = 9.8, dt = 0.01, eps = 2

// Runs serial.reference (float32) for `steps` steps and returns its state and map.
std::pair<Bodies, std::vector<float>> run_serial(const Bodies& initial, int d, int steps) {
    const VariantDescriptor* serial = builtin_registry().find("serial.reference");
    EXPECT_NE(serial, nullptr);
    auto sim = serial->create(Problem{.n = initial.size(), .d = d, .constants = kConstants, .workload = {}, .distribution = {}}, {});
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

// serial.reference on any workload: the state after `steps` steps and its map.
template <class Real>
std::pair<BodiesT<Real>, std::vector<float>> run_serial_workload(const BodiesT<Real>& initial, Integrator integrator,
                                                                 int d, int steps) {
    const Workload workload{initial.dim, std::is_same_v<Real, float> ? Precision::fp32 : Precision::fp64, integrator};
    auto sim = builtin_registry().find("serial.reference")->create(
        Problem{.n = initial.size(), .d = d, .constants = kConstants, .workload = workload, .distribution = {}}, {});
    sim->upload(initial);
    sim->advance(steps);
    std::pair<BodiesT<Real>, std::vector<float>> out;
    sim->download(out.first, out.second);
    return out;
}

TEST(OneStep3D, TwoBodiesAlongZMatchTheHandComputedValues) {
    // Two bodies 0.5 apart along z, at rest, masses 0.5: the 2D case turned onto the z axis.
    BodiesT<double> initial(2, 3);
    initial.x = {0.5, 0.5};
    initial.y = {0.5, 0.5};
    initial.z = {0.25, 0.75};
    initial.m = {0.5, 0.5};
    const double a0 = 9.8 * 0.5 * 0.5 / std::pow(4.25, 1.5);
    const double dt = 0.01;

    BodiesT<double> euler = initial;
    reference_advance(euler, kConstants, Integrator::euler, 2);
    EXPECT_NEAR(euler.z[0], 0.25 + dt * dt * a0, 1e-17);
    EXPECT_NEAR(euler.vz[0], 2 * dt * a0, 1e-17);  // both steps from (almost) the start positions
    EXPECT_NEAR(euler.vz[1], -euler.vz[0], 1e-17);
    EXPECT_EQ(euler.vx[0], 0.0);
    EXPECT_EQ(euler.y[1], 0.5);

    // Leapfrog, one step: half kick with a0, drift, half kick with the pull at the new positions.
    BodiesT<double> leapfrog = initial;
    reference_advance(leapfrog, kConstants, Integrator::leapfrog, 1);
    const double z0 = 0.25 + dt * (dt / 2 * a0);
    const double gap = 0.75 - dt * (dt / 2 * a0) - z0;
    const double a1 = 9.8 * 0.5 * gap / std::pow(gap * gap + 4.0, 1.5);
    EXPECT_NEAR(leapfrog.z[0], z0, 1e-17);
    EXPECT_NEAR(leapfrog.vz[0], dt / 2 * a0 + dt / 2 * a1, 1e-17);
    EXPECT_NEAR(leapfrog.vz[1], -leapfrog.vz[0], 1e-17);

    const auto [single, map] = run_serial_workload(BodiesT<float>::converted_from(initial), Integrator::leapfrog, 4, 1);
    EXPECT_NEAR(single.z[0], z0, 1e-7);
    EXPECT_NEAR(single.vz[0], leapfrog.vz[0], 1e-8);
    EXPECT_EQ(map[2 * 4 + 2], 2 * (4.0f / 2.0f));  // both in cell (2, 2) of the x-y projection
}

TEST(OneStep3D, ThreeBodiesMatchAPlainDoubleSum) {
    BodiesT<float> initial(3, 3);
    initial.x = {0.1f, 0.6f, 0.4f};
    initial.y = {0.2f, 0.3f, 0.9f};
    initial.z = {0.7f, -0.2f, 0.35f};
    initial.vx = {0.5f, -0.25f, 0.0f};
    initial.vy = {0.0f, 0.125f, -1.0f};
    initial.vz = {0.25f, 0.0f, -0.5f};
    initial.m = {1.0f, 2.0f, 0.5f};

    // SPEC §2 written out in double, independent of the library code.
    double expected_p[3][3], expected_v[3][3];
    for (int i = 0; i < 3; ++i) {
        double a[3] = {0, 0, 0};
        for (int j = 0; j < 3; ++j) {
            double d[3];
            for (int k = 0; k < 3; ++k) d[k] = double(initial.position(k)[j]) - initial.position(k)[i];
            const double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + 4.0;
            for (int k = 0; k < 3; ++k) a[k] += initial.m[j] * d[k] / (r2 * std::sqrt(r2));
        }
        for (int k = 0; k < 3; ++k) {
            expected_p[i][k] = initial.position(k)[i] + 0.01 * initial.velocity(k)[i];
            expected_v[i][k] = initial.velocity(k)[i] + 0.01 * 9.8 * a[k];
        }
    }
    BodiesT<double> ref = BodiesT<double>::converted_from(initial);
    reference_advance(ref, kConstants, Integrator::euler, 1);
    const auto [serial, map] = run_serial_workload(initial, Integrator::euler, 8, 1);
    for (int i = 0; i < 3; ++i) {
        for (int k = 0; k < 3; ++k) {
            EXPECT_NEAR(ref.position(k)[i], expected_p[i][k], 1e-15) << i << "," << k;
            EXPECT_NEAR(ref.velocity(k)[i], expected_v[i][k], 1e-15) << i << "," << k;
            EXPECT_NEAR(serial.position(k)[i], expected_p[i][k], 1e-6) << i << "," << k;
            EXPECT_NEAR(serial.velocity(k)[i], expected_v[i][k], 1e-6) << i << "," << k;
        }
    }
}

// A pair's pulls are equal and opposite, so total momentum is conserved by both integrators.
TEST(Reference, Float64MomentumIsConservedIn3D) {
    for (Integrator integrator : {Integrator::euler, Integrator::leapfrog}) {
        BodiesT<double> b(64, 3);
        SplitMix64 rng(17);
        for (std::size_t i = 0; i < b.size(); ++i) {
            for (int k = 0; k < 3; ++k) b.position(k)[i] = unit_float_from(rng.next());
            for (int k = 0; k < 3; ++k) b.velocity(k)[i] = unit_float_from(rng.next()) - 0.5;
            b.m[i] = 0.5 + unit_float_from(rng.next());
        }
        auto momentum = [&](int k) {
            double p = 0;
            for (std::size_t i = 0; i < b.size(); ++i) p += b.m[i] * b.velocity(k)[i];
            return p;
        };
        const double before[3] = {momentum(0), momentum(1), momentum(2)};
        reference_advance(b, kConstants, integrator, 100);
        for (int k = 0; k < 3; ++k) EXPECT_NEAR(momentum(k), before[k], 1e-12) << to_string(integrator) << " axis " << k;
    }
}

// Kinetic plus softened potential energy, -G m_i m_j / sqrt(r^2 + eps^2) per pair.
double energy(const BodiesT<double>& b) {
    double kinetic = 0, potential = 0;
    for (std::size_t i = 0; i < b.size(); ++i) {
        double v2 = 0;
        for (int k = 0; k < b.dim; ++k) v2 += b.velocity(k)[i] * b.velocity(k)[i];
        kinetic += 0.5 * b.m[i] * v2;
        for (std::size_t j = i + 1; j < b.size(); ++j) {
            double r2 = kConstants.eps2();
            for (int k = 0; k < b.dim; ++k) r2 += std::pow(b.position(k)[j] - b.position(k)[i], 2);
            potential -= kConstants.G * b.m[i] * b.m[j] / std::sqrt(r2);
        }
    }
    return kinetic + potential;
}

// Two equal bodies on the circular orbit of the softened force, 10^4 steps (about 17 orbits):
// leapfrog's energy error oscillates and stays bounded; Euler's grows with every orbit.
TEST(Integrators, CircularOrbitEnergyBoundedUnderLeapfrogAndBelowEuler) {
    const double r = 0.5, m = 0.5;
    const double a = kConstants.G * m * r / std::pow(r * r + kConstants.eps2(), 1.5);  // toward the centre
    const double v = std::sqrt(a * r / 2);                                               // v^2 / (r/2) = a
    BodiesT<double> initial(2, 3);
    initial.x = {0.5 - r / 2, 0.5 + r / 2};
    initial.y = {0.5, 0.5};
    initial.z = {0.5, 0.5};
    initial.vy = {-v, v};
    initial.m = {m, m};
    const double e0 = energy(initial);

    auto worst_drift = [&](Integrator integrator, double& first_half, double& second_half) {
        BodiesT<double> b = initial;
        first_half = second_half = 0;
        for (int step = 1; step <= 10000; ++step) {
            reference_advance(b, kConstants, integrator, 1);
            const double drift = std::abs(energy(b) - e0) / std::abs(e0);
            (step <= 5000 ? first_half : second_half) = std::max(step <= 5000 ? first_half : second_half, drift);
        }
    };
    double leap1, leap2, euler1, euler2;
    worst_drift(Integrator::leapfrog, leap1, leap2);
    worst_drift(Integrator::euler, euler1, euler2);
    EXPECT_LT(leap2, 1e-5);               // bounded: a small oscillation
    EXPECT_LT(leap2, 1.5 * leap1);        // not growing from one half of the run to the next
    EXPECT_GT(euler2, 1.5 * euler1);      // Euler's error grows
    EXPECT_LT(leap2 * 100, euler2);       // and is far larger
}

// Kick-drift-kick is time-symmetric: k steps, velocities negated, k steps return to the start.
// In float64 only rounding separates them: about 1e-16 per operation over 2k steps of a smooth
// (softened) flow, so 1e-12 is far above rounding and far below what a non-reversible
// integrator leaves (Euler: errors of order dt^2 |a| per step, ~1e-5 here).
TEST(Integrators, LeapfrogIsTimeReversibleInFloat64) {
    const auto initial = generate_bodies_of<double>(200, 3, 3);
    for (Integrator integrator : {Integrator::leapfrog, Integrator::euler}) {
        auto forward = run_serial_workload(initial, integrator, 4, 50).first;
        for (int k = 0; k < 3; ++k)
            for (auto& value : forward.velocity(k)) value = -value;
        const auto back = run_serial_workload(forward, integrator, 4, 50).first;
        double worst = 0;
        for (int k = 0; k < 3; ++k)
            for (std::size_t i = 0; i < initial.size(); ++i)
                worst = std::max({worst, std::abs(back.position(k)[i] - initial.position(k)[i]),
                                  std::abs(back.velocity(k)[i] + initial.velocity(k)[i])});
        if (integrator == Integrator::leapfrog)
            EXPECT_LT(worst, 1e-12);
        else
            EXPECT_GT(worst, 1e-7);
    }
}

// accumulate_scaled_pull from scale_by_mass's body is accumulate_pull's m_j d (|d|^2 + eps2)^(-3/2),
// up to rounding, in both dimensions and precisions, for masses across the foldable range.
template <class Real, int Dim>
void expect_scaled_pull_equals_pull() {
    const Real eps2 = 4;
    const Real first[3] = {0.25, 0.75, 0.5}, second[3] = {0.875, 0.125, 0.0625};
    Vec<Real, Dim> pi, pj;
    for (int k = 0; k < Dim; ++k) {
        pi[k] = first[k];
        pj[k] = second[k];
    }
    for (const double m : {1e-12, 0.5, 1.0, 3.0, 1e12}) {
        Vec<Real, Dim> plain{}, scaled{};
        accumulate_pull(pi, pj, static_cast<Real>(m), eps2, plain, ExactInvSqrt{});
        const ScaledBody<Real, Dim> body = scale_by_mass(pj, static_cast<Real>(m), eps2);
        accumulate_scaled_pull(pi, body.position, body.scale, body.softening, scaled, ExactInvSqrt{});
        const double tolerance = std::is_same_v<Real, float> ? 1e-5 : 1e-13;
        for (int k = 0; k < Dim; ++k)
            EXPECT_NEAR(scaled[k] / plain[k], 1.0, tolerance) << "dim " << Dim << " axis " << k << " mass " << m;
    }
}

TEST(ScaledPull, EqualsThePullOfTheUnscaledBody) {
    expect_scaled_pull_equals_pull<float, 2>();
    expect_scaled_pull_equals_pull<float, 3>();
    expect_scaled_pull_equals_pull<double, 2>();
    expect_scaled_pull_equals_pull<double, 3>();
}

// scalar_physics.hpp against physics.hpp: body j's pull on body i from interact and from
// accumulate_pull with the exact inv_sqrt, then one step's halves axis by axis (with the integrator
// given as an Integrator and as a bool) and as Vecs, all compared bit for bit.
template <class Real, int Dim>
void expect_scalar_forms_equal_vec_forms() {
    const Real eps2 = static_cast<Real>(kConstants.eps2()), G = static_cast<Real>(kConstants.G),
               dt = static_cast<Real>(kConstants.dt);
    std::uint32_t state = 12345;
    const auto next = [&state] {  // in [0, 1)
        state = state * 1664525u + 1013904223u;
        return static_cast<Real>(state >> 8) / static_cast<Real>(1u << 24);
    };
    for (int trial = 0; trial < 200; ++trial) {
        Vec<Real, Dim> pi, pj, a{};
        for (int k = 0; k < Dim; ++k) {
            pi[k] = next() * Real(4) - Real(2);
            pj[k] = next() * Real(4) - Real(2);
            a[k] = next() - Real(0.5);
        }
        const Real mj = next() + Real(0.01);
        Real scalar[3] = {a[0], a[1], Dim == 3 ? a[2] : Real(0)};
        interact<Real, Dim>(pi[0], pi[1], Dim == 3 ? pi[2] : Real(0), pj[0], pj[1], Dim == 3 ? pj[2] : Real(0), mj,
                            eps2, scalar[0], scalar[1], scalar[2]);
        accumulate_pull(pi, pj, mj, eps2, a, ExactInvSqrt{});
        for (int k = 0; k < Dim; ++k) EXPECT_EQ(scalar[k], a[k]) << "pull, axis " << k << " trial " << trial;

        for (const Integrator integrator : {Integrator::euler, Integrator::leapfrog}) {
            Vec<Real, Dim> p = pi, v, pull = a;
            for (int k = 0; k < Dim; ++k) v[k] = next() - Real(0.5);
            Real pos[Dim], vel[Dim], pos_bool[Dim], vel_bool[Dim], moved[Dim];
            for (int k = 0; k < Dim; ++k) {
                pos[k] = pos_bool[k] = p[k];
                vel[k] = vel_bool[k] = v[k];
            }
            const bool leapfrog = integrator == Integrator::leapfrog;
            for (int k = 0; k < Dim; ++k) {
                advance_axis_before_force(integrator, pos, vel, pull.c, k, G, dt);
                advance_axis_before_force(leapfrog, pos_bool, vel_bool, pull.c, k, G, dt);
            }
            advance_before_force(integrator, p, v, pull, G, dt);
            for (int k = 0; k < Dim; ++k) {
                moved[k] = advance_axis_after_force(integrator, pos, vel, pull.c, k, G, dt);
                advance_axis_after_force(leapfrog, pos_bool, vel_bool, pull.c, k, G, dt);
            }
            advance_after_force(integrator, p, v, pull, G, dt);
            for (int k = 0; k < Dim; ++k) {
                const std::string where = std::string(to_string(integrator)) + ", axis " + std::to_string(k);
                EXPECT_EQ(pos[k], p[k]) << where;
                EXPECT_EQ(vel[k], v[k]) << where;
                EXPECT_EQ(moved[k], p[k]) << where;
                EXPECT_EQ(pos_bool[k], p[k]) << where;
                EXPECT_EQ(vel_bool[k], v[k]) << where;
            }
        }
    }
}

TEST(ScalarPhysics, EqualsTheVecFormsBitwise) {
    expect_scalar_forms_equal_vec_forms<float, 2>();
    expect_scalar_forms_equal_vec_forms<float, 3>();
    expect_scalar_forms_equal_vec_forms<double, 2>();
    expect_scalar_forms_equal_vec_forms<double, 3>();
}

// The fold's range at eps = 2: eps2/m and (m/eps2)^1.5 within 1e-30..1e30 (float32), i.e.
// m in 4e-20..4e20; 1e-300..1e300 (float64), m in 4e-200..4e200. Outside, and for masses that are
// not positive finite numbers, a UsageError names the body and the range.
TEST(FoldableMasses, InsideTheRangeAreTakenOutsideAreRefusedWithTheBodyNamed) {
    const auto state_with = [](double mass) {
        BodiesT<double> bodies(3, 2);
        bodies.m = {1.0, mass, 1.0};
        return bodies;
    };
    for (const double mass : {4e-20 * 1.01, 1.0, 4e20 * 0.99})
        EXPECT_NO_THROW(require_foldable_masses(BodiesT<float>::converted_from(state_with(mass)), 2.0, "v", "w")) << mass;
    for (const double mass : {4e-20 * 0.99, 4e20 * 1.01, 0.0, -1.0, std::numeric_limits<double>::infinity(),
                              std::numeric_limits<double>::quiet_NaN()}) {
        try {
            require_foldable_masses(BodiesT<float>::converted_from(state_with(mass)), 2.0, "v", "w");
            ADD_FAILURE() << "mass " << mass << " taken in float32";
        } catch (const UsageError& e) {
            const std::string message = e.what();
            EXPECT_NE(message.find("body 1's mass"), std::string::npos) << message;
            EXPECT_NE(message.find("1e-30..1e+30"), std::string::npos) << message;
            EXPECT_NE(message.find("w runs it"), std::string::npos) << message;
        }
    }
    EXPECT_NO_THROW(require_foldable_masses(state_with(4e20 * 1.01), 2.0, "v", "w"));
    EXPECT_NO_THROW(require_foldable_masses(state_with(4e200 * 0.99), 2.0, "v", "w"));
    EXPECT_THROW(require_foldable_masses(state_with(4e200 * 1.01), 2.0, "v", "w"), UsageError);
    EXPECT_THROW(require_foldable_masses(state_with(4e-200 * 0.99), 2.0, "v", "w"), UsageError);
}

// The portable reciprocal square root (kokkos.simd's) holds the accuracy its comment states: every float32 in
// [1, 4) (the estimate treats every exponent pair alike, so this covers every positive normal
// float), and float64 at evenly spread points of [1, 4) and across exponents. The bounds sit just
// above the measured 6.2-6.3e-7 and 1.6-1.9e-16 (the test's own compile flags may round differently).
TEST(PortableInvSqrt, HoldsItsStatedAccuracy) {
    const PortableInvSqrt inv_sqrt;
    const auto unit_float = PortableInvSqrt::fold(1.0f);
    const auto unit_double = PortableInvSqrt::fold(1.0);
    double worst_float = 0, worst_float_cubed = 0;
    for (std::uint32_t bits = 0x3F800000u; bits < 0x40800000u; ++bits) {
        const float x = std::bit_cast<float>(bits);
        const double exact = 1.0 / std::sqrt(static_cast<double>(x));
        worst_float = std::max(worst_float, std::abs(static_cast<double>(inv_sqrt(x)) / exact - 1.0));
        worst_float_cubed =
            std::max(worst_float_cubed,
                     std::abs(static_cast<double>(inv_sqrt.mass_cubed(unit_float, x)) / (exact * exact * exact) - 1.0));
    }
    EXPECT_LT(worst_float, 7.0e-7);
    EXPECT_GT(worst_float, 1.0e-7);  // a cubic fit, not an exact root: the loop really measured it
    // The quartic fitted to u^(-3/2): 2.5e-7 in exact arithmetic, 4.7e-7 with float32 roundings (the
    // cube of the root above would be 2.8e-6).
    EXPECT_LT(worst_float_cubed, 6.0e-7);
    long double worst_double = 0, worst_double_cubed = 0;
    for (int e = -40; e <= 40; e += 8)
        for (int k = 0; k < 200000; ++k) {
            const double x = std::ldexp(1.0 + 3.0 * (k + 0.5) / 200000, e);
            const long double exact = 1.0L / std::sqrt(static_cast<long double>(x));
            worst_double = std::max(worst_double, std::abs(static_cast<long double>(inv_sqrt(x)) / exact - 1.0L));
            worst_double_cubed =
                std::max(worst_double_cubed,
                         std::abs(static_cast<long double>(inv_sqrt.mass_cubed(unit_double, x)) / (exact * exact * exact) - 1.0L));
        }
    EXPECT_LT(worst_double, 4.0e-16L);
    // The third-order step taken on the cube: 3.4-4.2e-16 measured, against 6.5-7.7e-16 for the cube of
    // the refined 1/sqrt it replaced.
    EXPECT_LT(worst_double_cubed, 5.0e-16L);
}

// mass_cubed(fold(m), x) is m x^(-3/2) to the accuracy of mass_cubed(fold(1), x) for any mass: the fold scales the
// coefficients, it does not change the polynomial.
TEST(PortableInvSqrt, FoldsTheMassIntoItsCoefficients) {
    const PortableInvSqrt inv_sqrt;
    for (const double m : {1.0, 0.37, 3.1e-5, 1.7, 2.5e3}) {
        double worst_float = 0;
        long double worst_double = 0;
        for (int e = -30; e <= 30; e += 6)
            for (int k = 0; k < 20000; ++k) {
                const double x = std::ldexp(1.0 + 3.0 * (k + 0.5) / 20000, e);
                const float xf = static_cast<float>(x);
                const float mf = static_cast<float>(m);
                const double exact_float = mf / (std::sqrt(double{xf}) * xf);
                worst_float = std::max(
                    worst_float, std::abs(inv_sqrt.mass_cubed(PortableInvSqrt::fold(mf), xf) / exact_float - 1.0));
                const long double exact = m / (std::sqrt(static_cast<long double>(x)) * x);
                worst_double = std::max(
                    worst_double, std::abs(inv_sqrt.mass_cubed(PortableInvSqrt::fold(m), x) / exact - 1.0L));
            }
        EXPECT_LT(worst_float, 7.0e-7) << "m = " << m;
        EXPECT_GT(worst_float, 5.0e-8) << "m = " << m;  // the fitted quartic's error, really measured
        EXPECT_LT(worst_double, 6.0e-16L) << "m = " << m;
    }
}

}  // namespace
}  // namespace nbody
