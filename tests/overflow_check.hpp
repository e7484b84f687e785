#pragma once
// A model's own test that bodies too far apart for r^2 to be finite pull nothing, as the plain
// formula's 1/sqrt(inf) = 0 does: a fast reciprocal square root whose estimate of 1/sqrt(inf) is not
// 0 must take r^2 saturated in such a step.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "nbody/registry.hpp"

namespace nbody::testing {

// Bodies 0 and 1 at rest 1 apart on x, body 2 so far along x (2e19 in float32, 2e154 in float64)
// that its r^2 with them overflows. In every Euler workload, after one step of `variant` (default
// tunings) the pair's velocities are dt G times their pull on each other and body 2's is 0; after
// four, every value is finite.
inline void expect_overflowing_r2_pulls_nothing(const VariantDescriptor& variant, int map_size) {
    const PhysicsConstants constants{};
    const double expected = constants.dt * constants.G / std::pow(1.0 + constants.eps2(), 1.5);
    for (const Workload& workload : all_workloads()) {
        if (workload.integrator != Integrator::euler) continue;
        dispatch_precision(workload.precision, [&]<class Real>() {
            BodiesT<Real> bodies(3, workload.dim);
            bodies.position(0)[1] = Real(1);
            bodies.position(0)[2] = static_cast<Real>(std::is_same_v<Real, float> ? 2e19 : 2e154);
            for (std::size_t i = 0; i < 3; ++i) bodies.m[i] = Real(1);
            const Problem problem{.n = 3, .d = map_size, .constants = constants, .workload = workload,
                                  .distribution = {}};
            auto sim = variant.create(problem, Registry::resolve_tuning(variant, {}));
            sim->upload(HostState(bodies));
            sim->advance(1);
            HostState state = BodiesT<Real>{};
            std::vector<float> map;
            sim->download(state, map);
            const auto& after = std::get<BodiesT<Real>>(state);
            const std::string what = variant.id + " " + to_string(workload);
            EXPECT_NEAR(static_cast<double>(after.velocity(0)[0]), expected, 1e-5 * expected) << what;
            EXPECT_NEAR(static_cast<double>(after.velocity(0)[1]), -expected, 1e-5 * expected) << what;
            EXPECT_EQ(after.velocity(0)[2], Real(0)) << what;
            sim->advance(3);
            sim->download(state, map);
            const auto& later = std::get<BodiesT<Real>>(state);
            for (int axis = 0; axis < workload.dim; ++axis)
                for (std::size_t i = 0; i < 3; ++i)
                    EXPECT_TRUE(std::isfinite(later.position(axis)[i]) && std::isfinite(later.velocity(axis)[i]))
                        << what << " body " << i << " axis " << axis;
        });
    }
}

}  // namespace nbody::testing
