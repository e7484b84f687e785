#pragma once
// A model's own test of a simulation against the more exact reference, by the verifier's rounding
// rule with an exact map: the reference of the generator's seed-42 state, cached per workload
// (one reference serves every variant and tuning of a test file), and the check itself.
#include <gtest/gtest.h>

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "nbody/generator.hpp"
#include "verify/verification.hpp"

namespace nbody::testing {

inline const ReferenceSolution& cached_reference(const Workload& w, std::size_t bodies, int steps) {
    static std::map<std::tuple<Workload, std::size_t, int>, std::unique_ptr<ReferenceSolution>> cache;
    auto& entry = cache[{w, bodies, steps}];
    if (!entry)
        entry = std::make_unique<ReferenceSolution>(generate_state(w, bodies, 42), PhysicsConstants{}, w.integrator,
                                                    std::vector<int>{steps}, VerificationSettings{});
    return *entry;
}

// Runs `sim` (made for `bodies` bodies of workload `w` and a map of `map_size`) from the seed-42
// state for `steps` steps and checks it; `tight_positions`: positions also within 1e-5 (float32) or
// 1e-13 (float64) of the reference, for variants that sum in the reference's order.
inline void expect_agrees_with_reference(Simulation& sim, const Workload& w, std::size_t bodies, int steps, int map_size,
                                         const std::string& name, bool tight_positions) {
    const auto results = verify_simulation(sim, generate_state(w, bodies, 42), cached_reference(w, bodies, steps),
                                           map_size);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_TRUE(results[0].passed) << name << ": " << results[0].failure;
    if (tight_positions) {
        EXPECT_LT(results[0].errors.max_pos_err, w.precision == Precision::fp32 ? 1e-5 : 1e-13) << name;
    }
    EXPECT_EQ(results[0].errors.map_diff, 0.0) << name;
}

}  // namespace nbody::testing
