// The incremental activity map (`map=incremental`) of every variant that offers it in its `map`
// tuning and is available here (CPU variants in CI, GPU variants on the device): after many steps
// the map handed back equals a full recount of the positions handed back (host_cell_counts and
// normalised_map, the reference's own map) bit for bit, in 2D and 3D, float32 and float64 (the
// cell is computed in the workload's precision; the integrator changes only the motion), with
// bodies that leave
// and re-enter the unit square and bodies that cross cells most steps, at D = 1 and at a D whose
// cells are smaller than a step's move.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "nbody/reference.hpp"
#include "nbody/registry.hpp"
#include "test_support.hpp"

namespace nbody {
namespace {

constexpr std::size_t kBodies = 211;  // a multiple of no lane, block or tile size
// Softening 1: inside the cloud the softened pull is nearly linear in the distance, a harmonic
// well with omega^2 ~ G M / eps^3 = 9.8, a period of about 2 time units (200 steps of dt = 0.01).
constexpr PhysicsConstants kConstants{.G = 9.8, .dt = 0.01, .softening = 1.0};
// The map is compared after each of these advance() calls: 212 steps, a period.
constexpr int kAdvances[] = {1, 1, 10, 50, 150};
// D = 1: one cell, changed only by bodies leaving or entering the square. D = 1024: cells 1e-3
// wide, crossed most steps by the bodies of both initial states below.
constexpr int kMapSizes[] = {1, 1024};

// Variants offering map=incremental that can run here.
std::vector<const VariantDescriptor*> incremental_variants() {
    std::vector<const VariantDescriptor*> out;
    for (const VariantDescriptor& v : builtin_registry().all()) {
        if (!v.availability().available || (v.max_n != 0 && v.max_n < kBodies)) continue;
        for (const TuningParameter& t : v.tunings)
            if (t.name == "map" && std::ranges::find(t.allowed_values, "incremental") != t.allowed_values.end())
                out.push_back(&v);
    }
    return out;
}

// The initial states (positions in the workload's dimension, random velocities, equal masses):
// - wide: positions over [-0.2, 1.2)^dim, velocities up to 0.5 per axis: swinging through the
//   well, bodies leave the unit square and come back (checked below), moving several cells a step;
// - tight: every body in a box 1e-3 wide, velocities up to 0.05 per axis (5e-4 per step): bodies
//   share cells and wander across the cell borders near them.
enum class Start { wide, tight };

template <class Real>
BodiesT<Real> initial_state(Start start, int dim) {
    std::mt19937_64 random(2024);
    const double low = start == Start::wide ? -0.2 : 0.4995, width = start == Start::wide ? 1.4 : 1e-3;
    const double speed = start == Start::wide ? 0.5 : 0.05;
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    BodiesT<Real> b(kBodies, dim);
    for (std::size_t i = 0; i < kBodies; ++i) {
        for (int k = 0; k < dim; ++k) {
            b.position(k)[i] = static_cast<Real>(low + width * unit(random));
            b.velocity(k)[i] = static_cast<Real>(speed * (2 * unit(random) - 1));
        }
        b.m[i] = Real(1) / static_cast<Real>(kBodies);
    }
    return b;
}

template <class Real>
std::size_t bodies_inside(const BodiesT<Real>& b) {
    std::size_t inside = 0;
    for (std::size_t i = 0; i < b.size(); ++i) inside += activity_cell(b.x[i], b.y[i], 1) == 0;
    return inside;
}

// "" when `map` equals the full recount of `state` bit for bit; else how many cells differ and
// the first one (a D x D map printed whole would bury the message).
template <class Real>
std::string difference_from_recount(const std::vector<float>& map, const BodiesT<Real>& state, int d) {
    const std::vector<float> recount = normalised_map(host_cell_counts(state, d), state.size(), d);
    if (map.size() != recount.size())
        return "map has " + std::to_string(map.size()) + " cells, not " + std::to_string(recount.size());
    std::size_t differing = 0, first = 0;
    for (std::size_t c = 0; c < map.size(); ++c) {
        if (std::bit_cast<std::uint32_t>(map[c]) == std::bit_cast<std::uint32_t>(recount[c])) continue;
        if (differing++ == 0) first = c;
    }
    if (differing == 0) return "";
    return std::to_string(differing) + " cells differ, first cell " + std::to_string(first) + ": " +
           std::to_string(map[first]) + " instead of " + std::to_string(recount[first]);
}

struct Observed {
    std::size_t checkpoints_where_the_map_changed = 0;
    bool someone_left = false;     // fewer bodies inside the unit square than at the last checkpoint
    bool someone_returned = false;  // more
};

// Runs one variant from `initial`, checking the map after the upload and after each advance.
template <class Real>
Observed check_variant(const VariantDescriptor& v, const Workload& w, const BodiesT<Real>& initial, int d,
                       const std::string& what) {
    auto sim = v.create(Problem{.n = kBodies, .d = d, .constants = kConstants, .workload = w, .distribution = {}},
                        Registry::resolve_tuning(v, {{"map", "incremental"}}));
    sim->upload(initial);
    Observed seen;
    BodiesT<Real> state(kBodies, w.dim);
    std::vector<float> map, previous_map;
    sim->download(state, map);
    EXPECT_EQ(difference_from_recount(map, state, d), "") << what << " after the upload";
    std::size_t inside = bodies_inside(state);
    int steps = 0;
    for (const int advance : kAdvances) {
        sim->advance(advance);
        steps += advance;
        previous_map = map;
        sim->download(state, map);
        EXPECT_EQ(difference_from_recount(map, state, d), "") << what << " after " << steps << " steps";
        seen.checkpoints_where_the_map_changed += map != previous_map;
        const std::size_t now_inside = bodies_inside(state);
        seen.someone_left |= now_inside < inside;
        seen.someone_returned |= now_inside > inside;
        inside = now_inside;
    }
    return seen;
}

TEST(IncrementalActivityMap, CpuVariantsOfferIt) {
    std::vector<std::string> ids;
    for (const VariantDescriptor* v : incremental_variants()) ids.push_back(v->id);
    for (const char* id : {"serial.reference", "omp.static", "omp.edge_sharing", "omp.simd"}) {
        if (builtin_registry().find(id) != nullptr) {
            EXPECT_NE(std::ranges::find(ids, id), ids.end()) << id << " lists no map=incremental";
        }
    }
}

TEST(IncrementalActivityMap, EqualsAFullRecountAfterManySteps) {
    const std::vector<const VariantDescriptor*> variants = incremental_variants();
    ASSERT_FALSE(variants.empty());
    const Workload workloads[] = {{.dim = 2, .precision = Precision::fp32, .integrator = Integrator::euler},
                                  {.dim = 2, .precision = Precision::fp64, .integrator = Integrator::leapfrog},
                                  {.dim = 3, .precision = Precision::fp32, .integrator = Integrator::leapfrog},
                                  {.dim = 3, .precision = Precision::fp64, .integrator = Integrator::euler}};
    for (const Workload& w : workloads) {
        if (!testing::workload_under_test(w)) continue;
        const auto run = [&]<class Real>() {
            for (const Start start : {Start::wide, Start::tight}) {
                const BodiesT<Real> initial = initial_state<Real>(start, w.dim);
                for (const int d : kMapSizes) {
                    for (const VariantDescriptor* v : variants) {
                        if (!v->workloads.supports(w) || !testing::variant_under_test(*v)) continue;
                        const std::string what = v->id + " " + to_string(w) + (start == Start::wide ? " wide" : " tight") +
                                                 " D=" + std::to_string(d);
                        const Observed seen = check_variant(*v, w, initial, d, what);
                        // The states do what they are for (else the test would check little).
                        if (start == Start::wide) {
                            EXPECT_TRUE(seen.someone_left && seen.someone_returned) << what;
                        }
                        if (d > 1) {
                            EXPECT_EQ(seen.checkpoints_where_the_map_changed, std::size(kAdvances)) << what;
                        }
                    }
                }
            }
        };
        if (w.precision == Precision::fp64)
            run.template operator()<double>();
        else
            run.template operator()<float>();
    }
}

}  // namespace
}  // namespace nbody
