// The Kokkos variants: every space this Kokkos has is registered; every variant runs every
// workload (2D/3D, float32/float64, Euler/leapfrog) on every space within its precision's bound of
// the reference, with the map of the positions it hands back; host spaces (hardware rsqrt
// estimate + Newton, reordered sums) repeat themselves exactly on Serial; team_tiled gives the same
// pulls whether the j tiles are split over teams or not; every map strategy gives the map of the
// handed-back positions, and map=incremental equals a full recount bit for bit over many steps of
// bodies leaving and re-entering the unit square; tunings outside a space's limits are refused;
// team_tiled with one, two and four bodies per thread follows the reference; and team_tiled over
// several ranks (forked processes standing in for MPI ranks on Serial) hands back the single-rank
// state, with uneven blocks and an empty trailing block; folded_mass refuses masses outside its
// fold's range at upload, follows the reference at the range's edges, and takes its j == i term out.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <regex>
#include <span>
#include <sstream>
#include <type_traits>
#include <variant>

#include "forked_ranks.hpp"
#include "nbody/communicator.hpp"
#include "nbody/errors.hpp"
#include "nbody/generator.hpp"
#include "nbody/reference.hpp"
#include "nbody/registry.hpp"
#include "team_shape.hpp"
#include "test_support.hpp"
#include "verify/verification.hpp"

namespace nbody {
namespace {

using testing::max_position_error;

constexpr const char* kVariants[] = {"naive", "team_tiled", "hierarchical", "persistent", "folded_mass"};

// Whether a variant's steps are kernels the harness launches or records (the `dispatch` tuning),
// rather than one kernel per advance() (kokkos.persistent).
bool dispatches_steps(const VariantDescriptor& v) {
    return std::any_of(v.tunings.begin(), v.tunings.end(), [](const TuningParameter& t) { return t.name == "dispatch"; });
}

std::vector<std::string> kokkos_spaces() {
    std::vector<std::string> spaces;
    std::stringstream list(builtin_registry().build_facts().at("kokkos_spaces"));
    for (std::string space; std::getline(list, space, ',');) spaces.push_back(space);
    return spaces;
}

template <class Real>
struct Outcome {
    BodiesT<Real> state;
    std::vector<float> map;
};

// `initial` (its dimension and precision) simulated by variant `id` with `tuning`, in advance()
// calls of `chunks` steps; the state and map after each call.
template <class Real>
std::vector<Outcome<Real>> simulate_in_chunks(const VariantDescriptor& v, const BodiesT<Real>& initial,
                                              const Workload& workload, int d, const std::vector<int>& chunks,
                                              const TuningValues& tuning) {
    auto sim = v.create({.n = initial.size(), .d = d, .constants = {}, .workload = workload, .distribution = {}},
                        Registry::resolve_tuning(v, tuning));
    sim->upload(initial);
    std::vector<Outcome<Real>> after;
    for (const int chunk : chunks) {
        sim->advance(chunk);
        sim->synchronize();
        Outcome<Real>& out = after.emplace_back();
        sim->download(out.state, out.map);
    }
    return after;
}

// `steps` steps of `initial` (its dimension and precision) by variant `id`.
template <class Real>
Outcome<Real> simulate(const std::string& id, const BodiesT<Real>& initial, int d, int steps,
                       const TuningValues& tuning = {}, Integrator integrator = Integrator::euler) {
    const VariantDescriptor* variant = builtin_registry().find(id);
    if (variant == nullptr) throw std::logic_error("no variant " + id);
    const Workload workload{.dim = initial.dim,
                            .precision = std::is_same_v<Real, double> ? Precision::fp64 : Precision::fp32,
                            .integrator = integrator};
    return simulate_in_chunks(*variant, initial, workload, d, {steps}, tuning).back();
}

// The available Kokkos variants under test, only the host spaces' when host_only.
std::vector<const VariantDescriptor*> available_kokkos(bool host_only) {
    std::vector<const VariantDescriptor*> out;
    for (const VariantDescriptor* v : builtin_registry().match("kokkos.*"))
        if (v->availability().available && !(host_only && v->runs_on_gpu) && testing::variant_under_test(*v))
            out.push_back(v);
    return out;
}

// slices=auto and tile=auto over ranks (team_shape.hpp), on an H100's or H200's CUDA space
// (132 SMs x 2048 threads) and a host space of 64 threads.
TEST(KokkosTeamShape, SlicesForEightWavesOnTheGpuTwoTeamsPerThreadOnHosts) {
    using kokkos::auto_slices;
    const long gpu_threads = 132L * 2048;
    // One GPU, teams of 128 threads with 512-body tiles: 16896 teams for eight waves.
    EXPECT_EQ(auto_slices(true, gpu_threads, 262144, 262144, 128, 512), 64);   // 512 blocks: 33
    EXPECT_EQ(auto_slices(true, gpu_threads, 65536, 65536, 128, 512), 128);    // 128 blocks: 132, 128 tiles
    EXPECT_EQ(auto_slices(true, gpu_threads, 1048576, 1048576, 128, 512), 16);  // 2048 blocks: 8.25
    // A rank of 4 GPUs: its blocks of bodies i, the tiles of all N.
    EXPECT_EQ(auto_slices(true, gpu_threads, 65536, 262144, 128, 512), 256);
    EXPECT_EQ(auto_slices(true, gpu_threads, 16384, 65536, 64, 256), 256);  // 64 blocks: 528, 256 tiles
    EXPECT_EQ(auto_slices(true, gpu_threads, 4096, 16384, 32, 64), 256);    // 64 blocks: 1056, 256 tiles
    EXPECT_EQ(auto_slices(true, gpu_threads, 0, 16384, 32, 64), 1);         // an empty block
    // Host: two teams per thread, not a power of two, at most one slice per block of bodies i.
    EXPECT_EQ(auto_slices(false, 64, 65536, 65536, 1, 512), 1);  // 128 blocks for 128 teams
    EXPECT_EQ(auto_slices(false, 64, 8192, 8192, 1, 512), 8);    // 16 blocks: 8 slices
    EXPECT_EQ(auto_slices(false, 64, 40960, 40960, 1, 512), 2);  // 80 blocks: 1.6
    EXPECT_EQ(auto_slices(false, 64, 512, 2048, 1, 512), 1);     // a rank's one block
    // Tiles of bodies j sized apart from the blocks: 32 blocks of 128, 256 tiles of 64.
    EXPECT_EQ(auto_slices(true, gpu_threads, 4096, 16384, 32, 128, 64), 256);
    EXPECT_EQ(auto_slices(true, gpu_threads, 4096, 16384, 32, 128, 0), 128);  // 0: the block's tile
}

// A float32 rank's pull from the other blocks: four bodies per thread in teams of 32 where the
// rank's auto shape takes two; its own shape otherwise (a tuned shape, one or four per thread,
// float64).
TEST(KokkosTeamShape, OtherBlocksTakeFourPerThreadWhereTheRanksAutoShapeTakesTwo) {
    using kokkos::other_blocks_shape;
    const auto shape = [](int tile, int per_thread, bool auto_shape, bool float32 = true) {
        const kokkos::PartPullShape s = other_blocks_shape(tile, per_thread, auto_shape, float32);
        return std::vector<int>{s.block, s.bodies_per_thread, s.source_tile};
    };
    EXPECT_EQ(shape(64, 2, true), (std::vector<int>{128, 4, 64}));          // 4096 of 16384 over 4 ranks
    EXPECT_EQ(shape(128, 2, true), (std::vector<int>{128, 4, 128}));        // 8192 of 16384 over 2 ranks
    EXPECT_EQ(shape(64, 2, true, false), (std::vector<int>{64, 2, 64}));    // float64
    EXPECT_EQ(shape(64, 2, false), (std::vector<int>{64, 2, 64}));          // a tuned shape is kept
    EXPECT_EQ(shape(256, 4, true), (std::vector<int>{256, 4, 256}));        // quad already
    EXPECT_EQ(shape(32, 1, true), (std::vector<int>{32, 1, 32}));           // one per thread: small ranks
}

TEST(KokkosTeamShape, RankTileTwiceItsOwnAtMostTheTileOfN) {
    using kokkos::auto_tile_of_rank;
    EXPECT_EQ(auto_tile_of_rank(65536, 65536), 512);   // one process: the tile of N
    EXPECT_EQ(auto_tile_of_rank(16384, 16384), 128);
    EXPECT_EQ(auto_tile_of_rank(16384, 65536), 256);   // 4 GPUs at 2^16: twice 128, under N's 512
    EXPECT_EQ(auto_tile_of_rank(65536, 262144), 512);  // 4 GPUs at 2^18: N's
    EXPECT_EQ(auto_tile_of_rank(32768, 65536), 512);   // 2 GPUs at 2^16: twice 256 is N's
    EXPECT_EQ(auto_tile_of_rank(8192, 16384), 128);    // 2 GPUs at 2^14: N's, under twice 128
    EXPECT_EQ(auto_tile_of_rank(4096, 16384), 64);     // below 8192 bodies: its own
}

TEST(Kokkos, RegistersEveryVariantForEverySpaceItHas) {
    const auto& facts = builtin_registry().build_facts();
    ASSERT_TRUE(facts.count("kokkos_version"));
    EXPECT_TRUE(std::regex_match(facts.at("kokkos_version"), std::regex(R"(\d+\.\d+\.\d+)")));
    const auto spaces = kokkos_spaces();
    ASSERT_FALSE(spaces.empty());
    for (const auto& space : spaces)
        for (const char* variant : kVariants) {
            const std::string id = std::string("kokkos.") + variant + "@" + space;
            const VariantDescriptor* v = builtin_registry().find(id);
            ASSERT_NE(v, nullptr) << id;
            EXPECT_EQ(v->backend, "kokkos");
            EXPECT_EQ(v->execution_space, space);
            EXPECT_EQ(v->runs_on_gpu, space == "cuda");
        }
    // kokkos.simd (vector units of a CPU) on each host space only.
    std::size_t host_spaces = 0;
    for (const auto& space : spaces)
        if (space != "cuda") {
            ++host_spaces;
            EXPECT_NE(builtin_registry().find("kokkos.simd@" + space), nullptr) << space;
        }
    EXPECT_EQ(builtin_registry().find("kokkos.simd@cuda"), nullptr);
    EXPECT_EQ(builtin_registry().match("kokkos.*").size(), spaces.size() * std::size(kVariants) + host_spaces);
}

TEST(Kokkos, HostSpacesStayCloseToTheFloat64Reference) {
    // N = 37 is no multiple of any tile; 10 steps as verify's default.
    constexpr int kSteps = 10, kMapSize = 8;
    const Bodies initial = generate_bodies(37, 7);
    BodiesT<double> reference = BodiesT<double>::converted_from(initial);
    reference_advance(reference, PhysicsConstants{}, Integrator::euler, kSteps);
    const auto reference_map = normalised_map(host_cell_counts(reference, kMapSize), initial.size(), kMapSize);
    const auto variants = available_kokkos(true);
    // A CUDA-enabled Kokkos cannot start any space without a GPU (docs/kokkos.md).
    if (variants.empty()) GTEST_SKIP() << builtin_registry().match("kokkos.*").front()->availability().reason;
    for (const VariantDescriptor* v : variants) {
        const auto got = simulate(v->id, initial, kMapSize, kSteps);
        // SPEC §5's float32 threshold after 10 steps is 1e-4; float32 storage alone gives ~1e-7.
        EXPECT_LT(max_position_error(got.state, reference), 1e-5) << v->id;
        EXPECT_EQ(got.map, reference_map) << v->id;
        if (v->execution_space == "serial") {
            const auto again = simulate(v->id, initial, kMapSize, kSteps);
            EXPECT_EQ(again.state.x, got.state.x) << v->id << " repeats itself";
            EXPECT_EQ(again.state.vy, got.state.vy) << v->id << " repeats itself";
        }
    }
}

// The truth a workload is compared with (SPEC §5): double for float32, long double for float64.
template <class Real>
using ReferenceReal = std::conditional_t<std::is_same_v<Real, float>, double, long double>;

// The largest difference from the reference over every body and axis.
struct Errors {
    double position = 0.0, velocity = 0.0;
};

template <class Real, class Ref>
Errors errors_against(const BodiesT<Real>& got, const BodiesT<Ref>& reference) {
    auto difference = [](Real value, Ref truth) { return static_cast<double>(std::abs(Ref(value) - truth)); };
    Errors e;
    for (int axis = 0; axis < reference.dim; ++axis)
        for (std::size_t i = 0; i < reference.size(); ++i) {
            e.position = std::max(e.position, difference(got.position(axis)[i], reference.position(axis)[i]));
            e.velocity = std::max(e.velocity, difference(got.velocity(axis)[i], reference.velocity(axis)[i]));
        }
    return e;
}

// Bounds after at most 10 steps: the verifier's default thresholds of the precision (one source of
// truth: `verify`'s max_pos_err and max_vel_err, justified in docs/verification.md; float64's sit
// far below the error of any float32 arithmetic in a float64 variant).
template <class Real>
Errors bounds() {
    const Thresholds t = default_thresholds(std::is_same_v<Real, float> ? Precision::fp32 : Precision::fp64);
    return {.position = t.max_pos_err, .velocity = t.max_vel_err};
}

// Runs every variant on `initial` for 1, then 9 more steps, checking the state against the
// reference after 1 and after 10 steps, and the map against the positions handed back; adds the
// worst errors per variant to `worst`.
// The reference state after each of `steps` (increasing) steps from `initial`.
template <class Real>
std::vector<BodiesT<ReferenceReal<Real>>> reference_states(const BodiesT<Real>& initial, Integrator integrator,
                                                           const std::vector<int>& steps) {
    using Ref = ReferenceReal<Real>;
    std::vector<BodiesT<Ref>> out;
    BodiesT<Ref> state = BodiesT<Ref>::converted_from(initial);
    int done = 0;
    for (const int s : steps) {
        reference_advance(state, PhysicsConstants{}, integrator, s - done);
        done = s;
        out.push_back(state);
    }
    return out;
}

// Simulates `initial` with variant v and `tuning`, downloading after each of `steps` (the same
// increasing counts as `references`): the state within bounds of the reference, masses unchanged,
// the map that of the positions handed back. Returns the worst errors.
template <class Real>
Errors expect_follows_the_reference(const VariantDescriptor& v, const TuningValues& tuning,
                                    const BodiesT<Real>& initial, const Workload& workload,
                                    const std::vector<int>& steps,
                                    const std::vector<BodiesT<ReferenceReal<Real>>>& references) {
    constexpr int kMapSize = 10;
    std::string what = v.id + " " + to_string(workload) + " N=" + std::to_string(initial.size());
    for (const auto& [name, value] : tuning) what += " " + name + "=" + value;
    auto sim = v.create({.n = initial.size(), .d = kMapSize, .constants = {}, .workload = workload, .distribution = {}},
                        Registry::resolve_tuning(v, tuning));
    sim->upload(initial);
    const Errors bound = bounds<Real>();
    Errors worst;
    int done = 0;
    for (std::size_t k = 0; k < steps.size(); ++k) {
        sim->advance(steps[k] - done);
        done = steps[k];
        sim->synchronize();
        BodiesT<Real> got;
        std::vector<float> map;
        sim->download(got, map);
        const std::string when = what + " after " + std::to_string(done) + " steps";
        EXPECT_EQ(got.dim, workload.dim) << when;
        EXPECT_EQ(got.m, initial.m) << when;
        if (got.size() != initial.size()) {
            ADD_FAILURE() << when << ": " << got.size() << " bodies handed back";
            return worst;
        }
        const Errors e = errors_against(got, references[k]);
        EXPECT_LT(e.position, bound.position) << when;
        EXPECT_LT(e.velocity, bound.velocity) << when;
        EXPECT_EQ(map, normalised_map(host_cell_counts(got, kMapSize), initial.size(), kMapSize)) << when;
        worst.position = std::max(worst.position, e.position);
        worst.velocity = std::max(worst.velocity, e.velocity);
    }
    return worst;
}

TEST(Kokkos, EveryVariantRunsEveryWorkloadOnEverySpace) {
    const auto variants = available_kokkos(false);
    if (variants.empty()) GTEST_SKIP() << builtin_registry().match("kokkos.*").front()->availability().reason;
    for (const VariantDescriptor* v : variants)
        for (const Workload& workload : all_workloads()) EXPECT_TRUE(v->workloads.supports(workload)) << v->id;
    // Per variant and workload, the worst errors over both N and both step counts.
    std::map<std::string, Errors> worst;
    // Neither N is a multiple of a tile; a leapfrog run without the initial pull fails at 1 step.
    const std::vector<int> steps = {1, 10};
    for (const Workload& workload : all_workloads())
        for (const std::size_t n : {std::size_t{257}, std::size_t{1000}})
            std::visit(
                [&](const auto& initial) {
                    const auto references = reference_states(initial, workload.integrator, steps);
                    for (const VariantDescriptor* v : variants) {
                        const Errors e = expect_follows_the_reference(*v, {}, initial, workload, steps, references);
                        Errors& w = worst[v->id + " " + to_string(workload)];
                        w.position = std::max(w.position, e.position);
                        w.velocity = std::max(w.velocity, e.velocity);
                    }
                },
                generate_state(workload, n, 5));
    for (const auto& [what, e] : worst)
        std::cout << "[ errors   ] " << what << ": position " << e.position << ", velocity " << e.velocity << "\n";
}

TEST(Kokkos, EveryTuningValueRunsEveryWorkload) {
    // Each listed value of each tuning other than its default (the kernels' other paths: thread,
    // lane and pair mappings, slices, tiles, ScatterView maps), on every workload. Values a space
    // refuses for a workload (level-0 scratch, threads per team) must say so with a UsageError.
    const auto variants = available_kokkos(false);
    if (variants.empty()) GTEST_SKIP() << builtin_registry().match("kokkos.*").front()->availability().reason;
    const std::vector<int> steps = {10};
    int checked = 0;
    std::vector<std::string> refused;
    for (const Workload& workload : testing::workloads_under_test())
        std::visit(
            [&](const auto& initial) {
                const auto references = reference_states(initial, workload.integrator, steps);
                for (const VariantDescriptor* v : variants)
                    for (const TuningParameter& t : v->tunings)
                        for (const std::string& value : t.allowed_values) {
                            if (value == t.default_value) continue;
                            try {
                                expect_follows_the_reference(*v, {{t.name, value}}, initial, workload, steps,
                                                             references);
                                ++checked;
                            } catch (const UsageError& e) {
                                const std::string message = e.what();
                                EXPECT_TRUE(message.find("level-0 scratch") != std::string::npos ||
                                            message.find("threads per team") != std::string::npos)
                                    << v->id << " " << t.name << "=" << value << ": " << message;
                                refused.push_back(v->id + " " + to_string(workload) + " " + t.name + "=" + value +
                                                  ": " + e.what());
                            }
                        }
            },
            generate_state(workload, 257, 9));
    EXPECT_GT(checked, 0);
    for (const std::string& r : refused) std::cout << "[ refused  ] " << r << "\n";
}

TEST(Kokkos, TeamTiledSlicesSumTheSamePulls) {
    // 100 bodies in tiles of 32: 4 tiles, split over 1, 2, 4 and 8 teams per block (8 > 4 tiles
    // leaves teams without j, which must add nothing).
    const Bodies initial = generate_bodies(100, 11);
    int checked = 0;
    for (const VariantDescriptor* v : available_kokkos(false)) {
        if (v->id.rfind("kokkos.team_tiled@", 0) != 0) continue;
        ++checked;
        const TuningValues base = {{"tile", "32"}, {"team_size", v->runs_on_gpu ? "32" : "1"}};
        auto with_slices = [&](const char* slices) {
            TuningValues t = base;
            t["slices"] = slices;
            return simulate(v->id, initial, 10, 1, t);
        };
        const auto whole = with_slices("1");
        for (const char* slices : {"2", "4", "8", "auto"}) {
            const auto split = with_slices(slices);
            for (std::size_t i = 0; i < initial.size(); ++i) {
                // Different summation order: equal to a few float32 roundings of the velocity change.
                EXPECT_NEAR(split.state.vx[i], whole.state.vx[i], 1e-6 + 1e-5 * std::abs(whole.state.vx[i]))
                    << v->id << " slices=" << slices << " body " << i;
                EXPECT_NEAR(split.state.vy[i], whole.state.vy[i], 1e-6 + 1e-5 * std::abs(whole.state.vy[i]))
                    << v->id << " slices=" << slices << " body " << i;
            }
        }
    }
    if (checked == 0) GTEST_SKIP() << "no team_tiled space can run here";
}

TEST(Kokkos, EveryMapStrategyGivesTheMapOfTheHandedBackPositions) {
    // Velocities push some bodies out of the unit square: they are simulated, not counted.
    Bodies initial = generate_bodies(200, 3);
    for (std::size_t i = 0; i < initial.size(); i += 5) initial.vx[i] = (i % 2 ? 60.0f : -60.0f);
    constexpr int kMapSize = 13;
    for (const VariantDescriptor* v : available_kokkos(false)) {
        // Each strategy the variant lists (kokkos.persistent: incremental only).
        const auto map = std::find_if(v->tunings.begin(), v->tunings.end(),
                                      [](const TuningParameter& t) { return t.name == "map"; });
        ASSERT_NE(map, v->tunings.end()) << v->id;
        for (const std::string& strategy : map->allowed_values) {
            for (int steps : {0, 2}) {
                const auto got = simulate(v->id, initial, kMapSize, steps, {{"map", strategy}});
                const auto expected = normalised_map(host_cell_counts(got.state, kMapSize), initial.size(), kMapSize);
                EXPECT_EQ(got.map, expected) << v->id << " map=" << strategy << " steps=" << steps;
            }
        }
        const auto moved = simulate(v->id, initial, kMapSize, 2);
        std::size_t outside = 0;
        for (std::size_t i = 0; i < moved.state.size(); ++i)
            outside += activity_cell(moved.state.x[i], moved.state.y[i], kMapSize) < 0;
        EXPECT_GT(outside, 0u) << "the test should push bodies out of the unit square";
    }
}

// Bodies oscillating through the unit square: the cloud spans [-1, 2]^2 around its centre of
// mass (0.5, 0.5) with random velocities, and G is raised so that the softened pull (nearly a
// harmonic well, omega^2 = G M / eps^3) brings them back about every 100 steps (Euler's growth of
// the amplitude stays below 1.5x in 200 steps). Every body leaves and
// re-enters the square and changes cell nearly every step on a fine grid.
template <class Real>
BodiesT<Real> oscillating_cloud(std::size_t n, int dim, std::uint64_t seed) {
    BodiesT<Real> b(n, dim);
    std::uint64_t state = seed;
    auto uniform = [&state] {  // SplitMix64, in [0, 1)
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
    };
    for (std::size_t i = 0; i < n; ++i) {
        for (int k = 0; k < dim; ++k) {
            b.position(k)[i] = static_cast<Real>(3.0 * uniform() - 1.0);
            b.velocity(k)[i] = static_cast<Real>(8.0 * uniform() - 4.0);
        }
        b.m[i] = static_cast<Real>(1.0 / static_cast<double>(n));
    }
    return b;
}

// One map=incremental simulation against full recounts of the positions it hands back, after
// each advance() of `chunks`; counts the bodies seen outside the square and then inside again.
template <class Real>
void expect_incremental_map_is_a_recount(const VariantDescriptor& v, const Workload& workload, int d,
                                         const std::vector<int>& chunks, const TuningValues& tuning,
                                         std::size_t& reentries) {
    constexpr std::size_t kBodies = 300;
    const BodiesT<Real> initial = oscillating_cloud<Real>(kBodies, workload.dim, 17 + d);
    const PhysicsConstants constants{.G = 300.0, .dt = 0.01, .softening = 2.0};
    auto sim = v.create({.n = kBodies, .d = d, .constants = constants, .workload = workload, .distribution = {}},
                        Registry::resolve_tuning(v, tuning));
    sim->upload(initial);
    std::vector<bool> was_outside(kBodies, false);
    int done = 0;
    for (const int chunk : chunks) {
        sim->advance(chunk);
        done += chunk;
        sim->synchronize();
        BodiesT<Real> got;
        std::vector<float> map;
        sim->download(got, map);
        const auto recount = normalised_map(host_cell_counts(got, d), kBodies, d);
        ASSERT_EQ(map.size(), recount.size());
        // Bit for bit: the cells that differ, if any, are named.
        std::size_t differing = 0;
        for (std::size_t c = 0; c < map.size(); ++c) differing += std::memcmp(&map[c], &recount[c], sizeof(float)) != 0;
        EXPECT_EQ(differing, 0u) << v.id << " " << to_string(workload) << " D=" << d << " after " << done
                                 << " steps" << (tuning.count("step_end") ? " step_end=" + tuning.at("step_end") : "");
        for (std::size_t i = 0; i < kBodies; ++i) {
            const bool outside = activity_cell(got.x[i], got.y[i], d) < 0;
            if (was_outside[i] && !outside) ++reentries;
            was_outside[i] = was_outside[i] || outside;
        }
    }
}

TEST(Kokkos, IncrementalMapEqualsAFullRecountBitForBit) {
    // D = 1 (one cell: inside or outside), D = 7 (crowded cells, counts moving both ways in one
    // step) and D = 1024 (every body changes cell every step); 200 steps in advance() calls of 1, 2, 7, 40 and 150 steps, so that the
    // map is checked after single steps and after long runs, each workload (leapfrog fuses the
    // next step's first half into the step's last kernel; float64 finds cells in double).
    const auto variants = available_kokkos(false);
    if (variants.empty()) GTEST_SKIP() << builtin_registry().match("kokkos.*").front()->availability().reason;
    // team_tiled also with the step ended in its pull kernel (step_end=fused: the map's rewrite of
    // a step runs in the next step's kernel), its j slices counting each other in.
    const std::vector<int> chunks = {1, 2, 7, 40, 150};
    for (const VariantDescriptor* v : variants) {
        std::vector<TuningValues> tunings = {{{"map", "incremental"}}};
        if (v->id.rfind("kokkos.team_tiled@", 0) == 0) {
            tunings[0]["step_end"] = "separate";
            tunings.push_back({{"map", "incremental"}, {"step_end", "fused"}, {"tile", "32"}, {"slices", "4"}});
            if (v->runs_on_gpu) tunings.back()["body_mapping"] = "thread";
        }
        for (const TuningValues& tuning : tunings)
            for (const Workload& workload : testing::workloads_under_test())
                for (const int d : {1, 7, 1024}) {
                    std::size_t reentries = 0;
                    if (workload.precision == Precision::fp64)
                        expect_incremental_map_is_a_recount<double>(*v, workload, d, chunks, tuning, reentries);
                    else
                        expect_incremental_map_is_a_recount<float>(*v, workload, d, chunks, tuning, reentries);
                    EXPECT_GT(reentries, 30u) << v->id << " " << to_string(workload) << " D=" << d
                                              << ": bodies should leave the square and come back";
                }
    }
}

// Two simulations' outcomes after each advance() call: bit for bit when `exact`, else positions and
// velocities within float32 roundings (threads adding partial pulls atomically sum in any order; two
// kernels compiled with the host's reassociating math flags round differently).
template <class Real>
void expect_same_outcomes(const std::vector<Outcome<Real>>& expected, const std::vector<Outcome<Real>>& got,
                          const Workload& workload, bool exact, const std::string& what) {
    ASSERT_EQ(got.size(), expected.size()) << what;
    for (std::size_t c = 0; c < expected.size(); ++c) {
        for (int k = 0; k < workload.dim; ++k)
            for (std::size_t i = 0; i < expected[c].state.size(); ++i) {
                const double want = expected[c].state.position(k)[i];
                const double have = got[c].state.position(k)[i];
                if (!exact) {
                    EXPECT_NEAR(have, want, 1e-5 * (1 + std::abs(want))) << what << " body " << i;
                    const double want_v = expected[c].state.velocity(k)[i];
                    EXPECT_NEAR(got[c].state.velocity(k)[i], want_v, 1e-5 * (1 + std::abs(want_v)))
                        << what << " body " << i;
                } else {
                    EXPECT_EQ(have, want) << what << " body " << i << " axis " << k;
                    EXPECT_EQ(got[c].state.velocity(k)[i], expected[c].state.velocity(k)[i])
                        << what << " body " << i << " axis " << k;
                }
            }
        if (exact) {
            EXPECT_EQ(got[c].map, expected[c].map) << what << " call " << c;
        }
    }
}

TEST(Kokkos, GraphDispatchRepeatsTheLaunchedSteps) {
    // dispatch=graphK replays graphs recorded once (K steps, one step, the last step) with every
    // advance() call: calls of 1, 2, 7 and 20 steps mix them all, and each must hand back the state
    // and map of the same steps launched kernel by kernel. Every workload (leapfrog's last step
    // keeps its pulls for the next call's first half kick); team_tiled with j slices adds into
    // pulls that the graphs must find zero. Bit for bit on Serial; with threads (OpenMP, the GPU)
    // the slices' atomic additions may sum in another order from run to run.
    const auto variants = available_kokkos(false);
    if (variants.empty()) GTEST_SKIP() << builtin_registry().match("kokkos.*").front()->availability().reason;
    const std::vector<int> chunks = {1, 2, 7, 20};
    constexpr int kMapSize = 16;
    int compared = 0;
    for (const VariantDescriptor* v : variants) {
        if (!dispatches_steps(*v)) continue;
        for (const Workload& workload : testing::workloads_under_test())
            std::visit(
                [&](const auto& initial) {
                    TuningValues launched = {{"dispatch", "launch"}};
                    if (v->id.rfind("kokkos.team_tiled@", 0) == 0) {
                        launched["tile"] = "32";
                        launched["slices"] = "4";
                        launched["team_size"] = v->runs_on_gpu ? "32" : "1";
                        if (v->runs_on_gpu) launched["body_mapping"] = "thread";
                    }
                    const auto expected = simulate_in_chunks(*v, initial, workload, kMapSize, chunks, launched);
                    for (const char* graph : {"graph1", "graph4"}) {
                        TuningValues t = launched;
                        t["dispatch"] = graph;
                        const auto got = simulate_in_chunks(*v, initial, workload, kMapSize, chunks, t);
                        // Not bit for bit even on Serial: a graph's kernels are their own
                        // instantiations, which the host's reassociating math flags let the
                        // compiler vectorise otherwise (1 ulp in kokkos.hierarchical@serial
                        // with -march=native); a missed or repeated step is far above it.
                        expect_same_outcomes(expected, got, workload, false,
                                             v->id + " " + to_string(workload) + " dispatch=" + graph);
                        ++compared;
                    }
                },
                generate_state(workload, 300, 21));
    }
    EXPECT_GT(compared, 0);
}

TEST(Kokkos, FusedStepEndRepeatsTheSeparateKernels) {
    // step_end=fused ends each step in team_tiled's pull kernel (the last of a block's j slices to
    // finish advances the block, positions double-buffered) and rewrites the map's moved cells in
    // the next step's kernel: the same steps as the separate kernels, launched or replayed as graphs
    // of 1 and 4 steps (the graphs are recorded per position buffer), in advance() calls of 1, 2, 7
    // and 20 steps, every workload, one slice (the team ends its own block) and four. Within
    // roundings: the end of step is compiled into another kernel, which the host spaces' math
    // flags may reassociate differently (v += dt G pull as (dt G) pull); the map is checked against
    // full recounts bit for bit in IncrementalMapEqualsAFullRecountBitForBit.
    int compared = 0;
    for (const VariantDescriptor* v : available_kokkos(false)) {
        if (v->id.rfind("kokkos.team_tiled@", 0) != 0) continue;
        const std::vector<int> chunks = {1, 2, 7, 20};
        constexpr int kMapSize = 16;
        for (const Workload& workload : testing::workloads_under_test())
            std::visit(
                [&](const auto& initial) {
                    for (const char* slices : {"1", "4"}) {
                        TuningValues separate = {{"dispatch", "launch"}, {"step_end", "separate"}, {"tile", "32"},
                                                 {"slices", slices}, {"team_size", v->runs_on_gpu ? "32" : "1"}};
                        if (v->runs_on_gpu) separate["body_mapping"] = "thread";
                        const auto expected = simulate_in_chunks(*v, initial, workload, kMapSize, chunks, separate);
                        for (const char* dispatch : {"launch", "graph1", "graph4"}) {
                            TuningValues fused = separate;
                            fused["step_end"] = "fused";
                            fused["dispatch"] = dispatch;
                            const auto got = simulate_in_chunks(*v, initial, workload, kMapSize, chunks, fused);
                            expect_same_outcomes(expected, got, workload, false,
                                                 v->id + " " + to_string(workload) + " slices=" + slices +
                                                     " step_end=fused dispatch=" + dispatch);
                            ++compared;
                        }
                    }
                },
                generate_state(workload, 300, 23));
    }
    if (compared == 0) GTEST_SKIP() << "no team_tiled space can run here";
}

TEST(Kokkos, FusedStepEndNeedsAnIncrementalMapOnOneRank) {
    const VariantDescriptor* v = builtin_registry().find("kokkos.team_tiled@serial");
    if (v == nullptr || !v->availability().available) GTEST_SKIP() << "no kokkos.team_tiled@serial here";
    const Problem problem{.n = 100, .d = 8, .constants = {}, .workload = {}, .distribution = {}};
    for (const char* map : {"atomic", "scatter"}) {
        try {
            v->create(problem, Registry::resolve_tuning(*v, {{"step_end", "fused"}, {"map", map}}));
            ADD_FAILURE() << "step_end=fused accepted with map=" << map;
        } catch (const UsageError& e) {
            EXPECT_NE(std::string(e.what()).find("step_end=fused ends steps in the pull kernel with map=incremental"),
                      std::string::npos)
                << e.what();
        }
        // auto falls back to the separate kernels where fusing cannot work.
        EXPECT_NO_THROW(v->create(problem, Registry::resolve_tuning(*v, {{"step_end", "auto"}, {"map", map}})));
    }
}

TEST(Kokkos, GraphDispatchNeedsAnIncrementalMapOnOneRank) {
    for (const VariantDescriptor* v : available_kokkos(false)) {
        if (!dispatches_steps(*v)) continue;
        const Problem problem{.n = 64, .d = 4, .constants = {}, .workload = {}, .distribution = {}};
        for (const char* map : {"atomic", "scatter"}) {
            try {
                v->create(problem, Registry::resolve_tuning(*v, {{"dispatch", "graph4"}, {"map", map}}));
                ADD_FAILURE() << v->id << " accepted dispatch=graph4 with map=" << map;
            } catch (const UsageError& e) {
                EXPECT_NE(std::string(e.what()).find("dispatch=graph4 records steps with map=incremental only"),
                          std::string::npos)
                    << e.what();
            }
        }
        // auto falls back to launches where graphs cannot record the steps.
        EXPECT_NO_THROW(v->create(problem, Registry::resolve_tuning(*v, {{"map", "atomic"}}))) << v->id;
    }
    for (const auto& space : kokkos_spaces())
        EXPECT_THROW(Registry::resolve_tuning(*builtin_registry().find("kokkos.naive@" + space), {{"dispatch", "graph3"}}),
                     UsageError);
}

TEST(Kokkos, RefusesTuningsBeyondTheSpaceLimits) {
    for (const auto& space : kokkos_spaces()) {
        const VariantDescriptor* tiled = builtin_registry().find("kokkos.team_tiled@" + space);
        ASSERT_NE(tiled, nullptr);
        EXPECT_THROW(Registry::resolve_tuning(*tiled, {{"tile", "96"}}), UsageError);
        EXPECT_THROW(Registry::resolve_tuning(*tiled, {{"map", "private"}}), UsageError);
        if (space != "cuda") {  // host teams are one thread, without vector lanes
            EXPECT_THROW(Registry::resolve_tuning(*tiled, {{"team_size", "2"}}), UsageError);
            EXPECT_THROW(Registry::resolve_tuning(*tiled, {{"body_mapping", "lanes2"}}), UsageError);
        }
        EXPECT_THROW(Registry::resolve_tuning(*tiled, {{"body_mapping", "triple"}}), UsageError);
    }
    // A CUDA team holds at most 1024 threads (team_size x vector lanes).
    const VariantDescriptor* hierarchical = builtin_registry().find("kokkos.hierarchical@cuda");
    const VariantDescriptor* tiled = builtin_registry().find("kokkos.team_tiled@cuda");
    if (hierarchical != nullptr && hierarchical->availability().available) {
        const Problem problem{.n = 64, .d = 4, .constants = {}, .workload = {}, .distribution = {}};
        EXPECT_THROW(hierarchical->create(problem, Registry::resolve_tuning(
                                                       *hierarchical, {{"team_size", "128"}, {"vector_length", "32"}})),
                     UsageError);
        EXPECT_THROW(tiled->create(problem, Registry::resolve_tuning(
                                                *tiled, {{"team_size", "512"}, {"body_mapping", "lanes4"}})),
                     UsageError);
    }
}

TEST(Kokkos, TeamTiledEveryBodiesPerThreadFollowsTheReference) {
    // N = 101 in tiles of 32: four blocks, the last of 5 bodies, so that groups of 2 and 4 bodies
    // per thread end short (a thread with fewer bodies than the count); slices 1 and 4 (the
    // partial sums added atomically), every workload.
    const std::vector<int> steps = {1, 10};
    int checked = 0;
    for (const VariantDescriptor* v : available_kokkos(false)) {
        if (v->id.rfind("kokkos.team_tiled@", 0) != 0) continue;
        for (const Workload& workload : all_workloads())
            std::visit(
                [&](const auto& initial) {
                    const auto references = reference_states(initial, workload.integrator, steps);
                    for (const char* mapping : {"thread", "pair", "quad"})
                        for (const char* slices : {"1", "4"}) {
                            // auto on the GPU: one thread per group of bodies (32 / bodies per thread).
                            const std::string team_size = v->runs_on_gpu ? "auto" : "1";
                            expect_follows_the_reference(*v,
                                                         {{"tile", "32"},
                                                          {"team_size", team_size},
                                                          {"body_mapping", mapping},
                                                          {"slices", slices}},
                                                         initial, workload, steps, references);
                            ++checked;
                        }
                },
                generate_state(workload, 101, 13));
    }
    if (checked == 0) GTEST_SKIP() << "no team_tiled space can run here";
}

// The distributed mode without MPI: one forked process per rank (forked_ranks.hpp), so that the
// Serial build checks the distributed step in CI.

// `steps` steps of `initial` over the problem's ranks: 1 step, then the others (leapfrog carries
// its first half kick across advance() calls, and fuses it into the step's last kernel within one).
template <class Real>
Outcome<Real> simulate_in_two_calls(const VariantDescriptor& v, const TuningValues& tuning, const Workload& workload,
                                    const BodiesT<Real>& initial, int steps, const Distribution& distribution) {
    const Problem problem{.n = initial.size(),
                          .d = kForkedMapSize,
                          .constants = {},
                          .workload = workload,
                          .distribution = distribution};
    auto sim = v.create(problem, Registry::resolve_tuning(v, tuning));
    sim->upload(initial);
    sim->advance(1);
    sim->advance(steps - 1);
    sim->synchronize();
    Outcome<Real> out;
    sim->download(out.state, out.map);
    return out;
}

// Rank `rank` of a distributed simulation (child process), its state written to its result.
template <class Real>
void run_forked_rank(ForkedArea& area, int rank, int ranks, const VariantDescriptor& v, const TuningValues& tuning,
                     const Workload& workload, const BodiesT<Real>& initial, int steps) {
    ForkedRankResult& out = area.result[rank];
    try {
        ForkedCommunicator communicator(area, rank, ranks);
        const auto [got, map] =
            simulate_in_two_calls(v, tuning, workload, initial, steps, {.host = &communicator, .device = nullptr});
        for (int k = 0; k < initial.dim; ++k)
            for (std::size_t i = 0; i < got.size(); ++i) {
                out.position[k][i] = got.position(k)[i];
                out.velocity[k][i] = got.velocity(k)[i];
            }
        std::copy(map.begin(), map.end(), out.map);
        out.finished = 1;
    } catch (const std::exception& e) {
        std::snprintf(out.error, sizeof(out.error), "%s", e.what());
    }
}

// Runs `ranks` forked ranks of variant v and checks each against the single-rank run: every
// position and the map equal on every rank, the velocities of its own block equal.
template <class Real>
void expect_distributed_equals_single_rank(const VariantDescriptor& v, const TuningValues& tuning,
                                           const Workload& workload, const BodiesT<Real>& initial, int ranks) {
    constexpr int kSteps = 5;
    std::string what = v.id + " " + to_string(workload) + " N=" + std::to_string(initial.size()) + " over " +
                       std::to_string(ranks) + " ranks";
    for (const auto& [name, value] : tuning) what += " " + name + "=" + value;
    ASSERT_LE(initial.size(), kMaxForkedBodies);
    ASSERT_LE(ranks, kMaxForkedRanks);
    // The single-rank run first: Kokkos is then started before the fork, in this process.
    const Outcome<Real> single = simulate_in_two_calls(v, tuning, workload, initial, kSteps, {});

    SharedForkedArea shared_area(ranks);
    ForkedArea* const area = &shared_area.area();
    const std::size_t running =
        run_forked_ranks(ranks, [&](int r) { run_forked_rank(*area, r, ranks, v, tuning, workload, initial, kSteps); });
    EXPECT_EQ(running, 0u) << what << ": ranks still running after 60 s";

    const BlockDecomposition decomposition(initial.size(), ranks);
    for (int r = 0; r < ranks; ++r) {
        const ForkedRankResult& got = area->result[r];
        const std::string rank = what + ", rank " + std::to_string(r);
        if (!got.finished) {
            ADD_FAILURE() << rank << " did not finish: " << got.error;
            continue;
        }
        // The ranks did exchange: positions and masses at upload, the positions after every step.
        EXPECT_GE(got.gathers, (initial.dim + 1) + kSteps * initial.dim) << rank;
        const BodyBlock own = decomposition.block(r);
        for (int k = 0; k < initial.dim; ++k)
            for (std::size_t i = 0; i < initial.size(); ++i) {
                // The same pulls in the same order as on one rank: equal to the last bit.
                EXPECT_EQ(got.position[k][i], static_cast<double>(single.state.position(k)[i]))
                    << rank << " axis " << k << " body " << i;
                if (i >= own.first && i < own.first + own.count) {
                    EXPECT_EQ(got.velocity[k][i], static_cast<double>(single.state.velocity(k)[i]))
                        << rank << " velocity axis " << k << " body " << i;
                }
            }
        EXPECT_TRUE(std::equal(single.map.begin(), single.map.end(), got.map)) << rank << ": activity map";
    }
}

TEST(Kokkos, TeamTiledOverSeveralRanksHandsBackTheSingleRankState) {
    if (const std::string missing = forked_team_tiled_missing(); !missing.empty()) GTEST_SKIP() << missing;
    const VariantDescriptor* v = builtin_registry().find("kokkos.team_tiled@serial");
    EXPECT_TRUE(v->distributed);
    // (N, ranks): even blocks; uneven (34, 34, 32); blocks of 2, 2, 1 and an empty one; tiles of 32
    // make the blocks start inside a tile. Every workload, both map kinds, one and four bodies per thread.
    const std::pair<std::size_t, int> shapes[] = {{100, 2}, {100, 3}, {5, 4}};
    for (const Workload& workload : all_workloads())
        for (const auto& [n, ranks] : shapes)
            for (const TuningValues& tuning :
                 {TuningValues{{"tile", "32"}},
                  TuningValues{{"tile", "32"}, {"body_mapping", "quad"}, {"slices", "2"}, {"map", "atomic"}}})
                std::visit(
                    [&](const auto& initial) { expect_distributed_equals_single_rank(*v, tuning, workload, initial, ranks); },
                    generate_state(workload, n, 21));
}

TEST(Kokkos, GraphDispatchAndFusedStepEndAreRefusedOverSeveralRanks) {
    // A host space's ranks gather positions through the host between kernels, which a graph cannot
    // hold (CUDA captures its steps with a collective that queues on the stream); no step in one
    // kernel holds a gather.
    const VariantDescriptor* v = builtin_registry().find("kokkos.team_tiled@serial");
    if (v == nullptr || !v->availability().available) GTEST_SKIP() << "no kokkos.team_tiled@serial here";
    auto area = std::make_unique<ForkedArea>();
    ForkedCommunicator communicator(*area, 0, 2);
    const Problem problem{.n = 64, .d = 4, .constants = {}, .workload = {},
                          .distribution = {.host = &communicator, .device = nullptr}};
    const std::pair<TuningValues, std::string> refused[] = {
        {{{"dispatch", "graph16"}}, "records steps over 2 ranks on the CUDA space with device collectives nccl or peer only"},
        {{{"step_end", "fused"}}, "over 2 ranks use step_end=separate"}};
    for (const auto& [tuning, why] : refused) {
        try {
            v->create(problem, Registry::resolve_tuning(*v, tuning));
            ADD_FAILURE() << tuning.begin()->first << "=" << tuning.begin()->second << " accepted over 2 ranks";
        } catch (const UsageError& e) {
            EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
        }
    }
    EXPECT_NO_THROW(v->create(problem, Registry::resolve_tuning(*v, {})));  // auto launches, separately
}

TEST(Kokkos, PersistentRepeatsTheSeparateKernels) {
    // kokkos.persistent runs each advance() as one kernel with a grid barrier per step: the same
    // steps as naive's kernels launched one by one (the same interaction, summed in another order:
    // within roundings), in advance() calls of 1, 2, 7 and 20 steps (each a launch, its barriers
    // counted on from the last), every workload (leapfrog's first half kick in the kernel, the
    // pulls kept for the next call). On the GPU also with 1 body per team (many teams, several
    // groups each: each team loops) and with the bodies staged tile by tile (N above what scratch
    // holds). The map against full recounts: IncrementalMapEqualsAFullRecountBitForBit.
    int compared = 0;
    for (const VariantDescriptor* v : available_kokkos(false)) {
        if (v->id.rfind("kokkos.persistent@", 0) != 0) continue;
        const VariantDescriptor* naive = builtin_registry().find("kokkos.naive@" + v->execution_space);
        ASSERT_NE(naive, nullptr);
        const std::vector<int> chunks = {1, 2, 7, 20};
        constexpr int kMapSize = 16;
        std::vector<TuningValues> tunings = {{}};
        if (v->runs_on_gpu) tunings.push_back({{"team_size", "1"}, {"teams", "4"}});
        for (const Workload& workload : all_workloads())
            for (const std::size_t n : {std::size_t{300}, v->runs_on_gpu ? std::size_t{3500} : std::size_t{0}}) {
                if (n == 0) continue;
                std::visit(
                    [&](const auto& initial) {
                        const auto expected = simulate_in_chunks(*naive, initial, workload, kMapSize, chunks,
                                                                 {{"dispatch", "launch"}});
                        for (const TuningValues& tuning : tunings) {
                            const auto got = simulate_in_chunks(*v, initial, workload, kMapSize, chunks, tuning);
                            expect_same_outcomes(expected, got, workload, false,
                                                 v->id + " " + to_string(workload) + " N=" + std::to_string(n) +
                                                     (tuning.empty() ? "" : " team_size=1 teams=4"));
                            ++compared;
                        }
                    },
                    generate_state(workload, n, 29));
            }
    }
    if (compared == 0) GTEST_SKIP() << "no kokkos.persistent space can run here";
}

TEST(Kokkos, PersistentTeamsThatCannotAllRunAreAnErrorNotAHang) {
    // On the GPU more teams of 512 threads than its multiprocessors hold at once: the first grid
    // barrier gives up, no step is taken, and advance() says why. (Host spaces run one team per
    // thread and list no `teams` tuning; the barrier itself is checked there by test_kokkos_grid_barrier.)
    const VariantDescriptor* v = builtin_registry().find("kokkos.persistent@cuda");
    if (v == nullptr || !v->availability().available) GTEST_SKIP() << "no kokkos.persistent@cuda here";
    const Workload workload{};
    const BodiesT<float> initial = std::get<BodiesT<float>>(generate_state(workload, 65536, 31));
    auto sim = v->create({.n = initial.size(), .d = 8, .constants = {}, .workload = workload, .distribution = {}},
                         Registry::resolve_tuning(*v, {{"team_size", "16"}, {"teams", "4096"}}));
    sim->upload(initial);
    try {
        sim->advance(3);
        ADD_FAILURE() << "4096 teams of 512 threads met at a grid barrier";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("did not all run at once"), std::string::npos) << e.what();
    }
    BodiesT<float> after;
    std::vector<float> map;
    sim->download(after, map);
    EXPECT_EQ(after.x, initial.x);  // no step was taken
}

// The available kokkos.folded_mass variants (one per space).
std::vector<const VariantDescriptor*> folded_mass_variants() {
    std::vector<const VariantDescriptor*> out;
    for (const VariantDescriptor* v : available_kokkos(false))
        if (v->id.rfind("kokkos.folded_mass@", 0) == 0) out.push_back(v);
    return out;
}

// The masses kokkos.folded_mass takes with the default softening: eps2/m and (m/eps2)^1.5 within
// 1/range..range (1e30 in float32, 1e300 in float64), i.e. eps2 range^(-2/3) <= m <= eps2 range^(2/3).
struct FoldRange {
    double lowest, highest;
};
template <class Real>
FoldRange fold_range() {
    const double eps2 = PhysicsConstants{}.eps2();
    const double range = std::is_same_v<Real, float> ? 1e30 : 1e300;
    return {eps2 * std::pow(range, -2.0 / 3.0), eps2 * std::pow(range, 2.0 / 3.0)};
}

// `n` generated bodies of `workload` at rest, every mass `mass` (or only body `only`'s, when >= 0).
template <class Real>
BodiesT<Real> at_rest_with_mass(const Workload& workload, std::size_t n, double mass, int only = -1) {
    BodiesT<Real> bodies = std::get<BodiesT<Real>>(generate_state(workload, n, 41));
    for (int axis = 0; axis < bodies.dim; ++axis) std::fill(bodies.velocity(axis).begin(), bodies.velocity(axis).end(), Real(0));
    for (std::size_t i = 0; i < n; ++i)
        if (only < 0 || static_cast<std::size_t>(only) == i) bodies.m[i] = static_cast<Real>(mass);
    return bodies;
}

// Success when every position and velocity of `state` is finite; else the first body and axis that is not.
template <class Real>
::testing::AssertionResult all_finite(const BodiesT<Real>& state) {
    for (int axis = 0; axis < state.dim; ++axis)
        for (std::size_t i = 0; i < state.size(); ++i)
            if (!std::isfinite(state.position(axis)[i]) || !std::isfinite(state.velocity(axis)[i]))
                return ::testing::AssertionFailure() << "body " << i << " axis " << axis << " is not finite";
    return ::testing::AssertionSuccess();
}

// A value of the workload's real type, for std::visit to pick the precision's code.
std::variant<float, double> real_of(const Workload& workload) {
    if (workload.precision == Precision::fp32) return 0.0f;
    return 0.0;
}

// check(v, workload, a value of the workload's Real) for every variant and every Euler workload.
template <class Check>
void for_each_euler_workload(const std::vector<const VariantDescriptor*>& variants, const Check& check) {
    for (const VariantDescriptor* v : variants)
        for (const Workload& workload : all_workloads())
            if (workload.integrator == Integrator::euler)
                std::visit([&](auto tag) { check(v, workload, tag); }, real_of(workload));
}

TEST(Kokkos, FoldedMassRefusesMassesOutsideItsRangeAtUpload) {
    // Just outside either edge, zero, negative and non-finite: upload, before any step, throws a
    // UsageError naming the body, its mass and the range; the same state with the mass back inside
    // uploads.
    const auto variants = folded_mass_variants();
    if (variants.empty()) GTEST_SKIP() << "no kokkos.folded_mass space can run here";
    constexpr int kBody = 7;
    for (const VariantDescriptor* v : variants)
        for (const Workload& workload : {Workload{2, Precision::fp32, Integrator::euler},
                                         Workload{3, Precision::fp64, Integrator::leapfrog}})
            std::visit(
                [&](auto tag) {
                    using Real = decltype(tag);
                    const FoldRange range = fold_range<Real>();
                    const std::string range_text = std::is_same_v<Real, float> ? "1e-30..1e+30" : "1e-300..1e+300";
                    const Problem problem{.n = 64, .d = 8, .constants = {}, .workload = workload, .distribution = {}};
                    for (const double mass : {range.lowest * 0.99, range.highest * 1.01, 0.0, -1.0 / 64,
                                              std::numeric_limits<double>::infinity(),
                                              std::numeric_limits<double>::quiet_NaN()}) {
                        const std::string what = v->id + " " + to_string(workload) + " m=" + std::to_string(mass);
                        auto sim = v->create(problem, Registry::resolve_tuning(*v, {}));
                        try {
                            sim->upload(at_rest_with_mass<Real>(workload, problem.n, mass, kBody));
                            ADD_FAILURE() << what << ": uploaded";
                        } catch (const UsageError& e) {
                            const std::string message = e.what();
                            EXPECT_NE(message.find(v->id + ": body " + std::to_string(kBody) + "'s mass"),
                                      std::string::npos) << what << ": " << message;
                            EXPECT_NE(message.find(range_text), std::string::npos) << what << ": " << message;
                        }
                    }
                    auto sim = v->create(problem, Registry::resolve_tuning(*v, {}));
                    EXPECT_NO_THROW(sim->upload(at_rest_with_mass<Real>(workload, problem.n, 1.0 / 64, kBody)))
                        << v->id << " " << to_string(workload);
                },
                real_of(workload));
}

TEST(Kokkos, FoldedMassAtTheEdgesOfItsRangeFollowsTheReference) {
    // Every body of the mass just inside either edge of the range, at rest: after one Euler step the
    // velocities are dt G times the pulls, which must follow the reference to the precision's
    // rounding (the fold's s^2 m = 1 and q^3 neither overflowed nor flushed); ten steps later
    // (bodies flung far apart at the upper edge) every value is still finite. Both dimensions and
    // precisions, N = 100 (no multiple of a tile).
    const auto variants = folded_mass_variants();
    if (variants.empty()) GTEST_SKIP() << "no kokkos.folded_mass space can run here";
    for_each_euler_workload(variants, [&](const VariantDescriptor* v, const Workload& workload, auto tag) {
        using Real = decltype(tag);
        const FoldRange range = fold_range<Real>();
        for (const double mass : {range.lowest * 1.01, range.highest * 0.99}) {
            const std::string what = v->id + " " + to_string(workload) + " m=" + std::to_string(mass);
            const BodiesT<Real> initial = at_rest_with_mass<Real>(workload, 100, mass);
            const auto reference = reference_states(initial, workload.integrator, {1});
            const auto got = simulate_in_chunks(*v, initial, workload, 8, {1, 10}, {});
            double largest = 0, worst = 0;
            for (int axis = 0; axis < workload.dim; ++axis)
                for (std::size_t i = 0; i < initial.size(); ++i) {
                    const double want = static_cast<double>(reference[0].velocity(axis)[i]);
                    largest = std::max(largest, std::abs(want));
                    worst = std::max(worst, std::abs(static_cast<double>(got[0].state.velocity(axis)[i]) - want));
                }
            ASSERT_GT(largest, 0.0) << what;
            const double bound = std::is_same_v<Real, float> ? 1e-5 : 1e-13;
            EXPECT_LT(worst / largest, bound) << what;
            ASSERT_TRUE(all_finite(got[1].state)) << what << " after 10 steps";
        }
    });
}

TEST(Kokkos, FoldedMassTakesOutTheTermOfEachBodyOnItself) {
    // A lone body away from the origin: in scaled coordinates its term on itself is fl(s p) - s p, a
    // rounding error (an FMA keeps it), which no pull may keep: at rest it stays at rest. Without the
    // term taken out its velocity would grow by up to dt G (m/eps^2)^1.5 ulp(s p)/2 per step (1e-3
    // after 10 steps here, measured). One slice, and four: three teams with no tile to sum, which
    // must take out nothing.
    const auto variants = folded_mass_variants();
    if (variants.empty()) GTEST_SKIP() << "no kokkos.folded_mass space can run here";
    for (const VariantDescriptor* v : variants)
        for (const Workload& workload : all_workloads())
            std::visit(
                [&](auto tag) {
                    using Real = decltype(tag);
                    BodiesT<Real> lone(1, workload.dim);
                    const double far = std::is_same_v<Real, float> ? 1e6 : 1e14;
                    for (int axis = 0; axis < workload.dim; ++axis)
                        lone.position(axis)[0] = static_cast<Real>(far * (1.1 + 0.37 * axis));
                    lone.m[0] = Real(0.3);
                    for (const char* slices : {"1", "4"}) {
                        const auto got = simulate_in_chunks(*v, lone, workload, 8, {10}, {{"slices", slices}});
                        for (int axis = 0; axis < workload.dim; ++axis)
                            EXPECT_LT(std::abs(static_cast<double>(got[0].state.velocity(axis)[0])), 1e-9)
                                << v->id << " " << to_string(workload) << " slices=" << slices << " axis " << axis;
                    }
                },
                real_of(workload));
}

TEST(Kokkos, PortableInverseSquareRootPullsNothingWhereRSquaredOverflows) {
    // A pair of bodies near the origin and a third so far along x that its r^2 with them (and, in
    // folded_mass's coordinates, r2') exceeds the largest Real: the portable estimate of 1/sqrt(inf)
    // is not 0, so the host kernels saturate r^2 in such a step. The pair's velocities after one
    // step must follow the reference (the far body pulls nothing measurable) and every value stays
    // finite. Every variant that takes the portable estimate on a host space, and folded_mass on
    // every space.
    std::vector<const VariantDescriptor*> variants;
    for (const VariantDescriptor* v : available_kokkos(false))
        if (v->id.rfind("kokkos.simd@", 0) == 0 || v->id.rfind("kokkos.folded_mass@", 0) == 0) variants.push_back(v);
    if (variants.empty()) GTEST_SKIP() << "no kokkos.simd or kokkos.folded_mass space can run here";
    for_each_euler_workload(variants, [&](const VariantDescriptor* v, const Workload& workload, auto tag) {
        using Real = decltype(tag);
        const double far = std::is_same_v<Real, float> ? 2e19 : 2e154;  // far^2 > the largest Real
        BodiesT<Real> bodies(3, workload.dim);
        bodies.position(0)[1] = Real(1);
        bodies.position(0)[2] = static_cast<Real>(far);
        for (std::size_t i = 0; i < 3; ++i) bodies.m[i] = Real(1);
        const std::string what = v->id + " " + to_string(workload);
        const auto reference = reference_states(bodies, workload.integrator, {1});
        const auto got = simulate_in_chunks(*v, bodies, workload, 8, {1, 3}, {});
        for (std::size_t i = 0; i < 2; ++i) {
            const double want = static_cast<double>(reference[0].velocity(0)[i]);
            ASSERT_GT(std::abs(want), 0.0) << what;
            EXPECT_NEAR(static_cast<double>(got[0].state.velocity(0)[i]), want, 1e-5 * std::abs(want))
                << what << " body " << i;
        }
        ASSERT_TRUE(all_finite(got[1].state)) << what << " after 4 steps";
    });
}

TEST(Kokkos, OnlyTeamTiledIsDistributed) {
    for (const VariantDescriptor* v : builtin_registry().match("kokkos.*"))
        EXPECT_EQ(v->distributed, v->id.rfind("kokkos.team_tiled@", 0) == 0) << v->id;
}

}  // namespace
}  // namespace nbody
