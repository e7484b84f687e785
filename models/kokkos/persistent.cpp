// kokkos.persistent: the whole of advance(k) as one TeamPolicy kernel, cuda.persistent's structure
// in portable Kokkos, for small N where a step costs microseconds and each dependent kernel ~2.5 of
// them (docs/performance-kokkos.md). The teams stay in the kernel for all k steps and meet at one
// grid-wide barrier per step (GridBarrier: Kokkos has no cooperative launch, so the first meeting
// is a bounded rendezvous that refuses, with an error after the kernel, to go on when the teams
// are not all running at once). Each team thread owns one body at a time (on the GPU a warp: the
// thread's 32 vector lanes split the j sum, each into its own partial in scratch, which the body's
// thread adds up), the team stages the positions in level-0 scratch (all of them when they fit,
// else tile by tile), and the body's
// thread ends its step: it advances the body, rewrites the map cells of its previous move, moves
// its count (map=incremental) and writes its position into the other of two buffers, which no team
// reads until the next barrier. Leapfrog's first half kick of the next step follows in the same
// thread, from the same pull. Teams: one per multiprocessor on the GPU (a team of at most 1024
// threads always fits one), one per thread on host spaces; bodies per team from N. One rank.
#include <algorithm>
#include <string>

#ifdef KOKKOS_ENABLE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "kokkos_simulation.hpp"
#include "nbody/registry.hpp"

namespace nbody {
namespace kokkos {

// A team's scratch: the staged bodies (all of them when they fit, else tile by tile) and its lanes'
// partial pulls, 40 KiB together at most, or what the space offers. A GPU block has 48 KiB, and
// Kokkos keeps some of it for itself: with 48 KiB of bodies no team size could launch (measured).
// The bodies get what the partials leave: 2431 float32 bodies at N = 1024 (8 bodies per team),
// 2303 at 2048 (16), 2047 from 4096 (32).
inline constexpr std::size_t kScratchBytes = 40 * 1024;
// The largest team: 32 threads of 32 lanes, a CUDA block's 1024 threads.
inline constexpr int kMaxPersistentTeamSize = 32;

// Vector lanes per team thread: a warp on the GPU, one on host spaces.
template <class Space>
inline constexpr int kPersistentLanes = kRunsOnGpu<Space> ? 32 : 1;

// nvcc unrolls a lane's loop over the staged bodies by 4, as cuda.persistent's (independent
// interactions in flight; a ThreadVectorRange over the bodies themselves is not unrolled: 5.3 us per
// step at N = 1024, measured); host compilers get no pragma.
#if defined(__CUDA_ARCH__)
#define NBODY_KOKKOS_UNROLL_LANE _Pragma("unroll 4")
#define NBODY_KOKKOS_UNROLL_BATCH _Pragma("unroll")
#else
#define NBODY_KOKKOS_UNROLL_LANE
#define NBODY_KOKKOS_UNROLL_BATCH
#endif

// Bodies a team lane loads before it stores any of them while staging.
inline constexpr int kStageBatch = 4;

// Bodies [start, start + count) of `from` into `staged`. Each team lane loads kStageBatch bodies
// before it stores one, so that their round trips to memory overlap: a loop that stored each body
// as it came waited for one round trip after another, 0.96 us of a 4.3 us step at N = 1024 on the
// GPU (Nsight Compute, docs/performance-kokkos.md).
template <class Member, class Staged, class Positions, class Masses>
KOKKOS_INLINE_FUNCTION void stage_bodies(const Member& team, const Staged& staged, const Positions& from,
                                         const Masses& m, int start, int count) {
    using Body = typename Staged::non_const_value_type;
    const int rows = (count + kStageBatch - 1) / kStageBatch;
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, rows), [&](const int row) {
        Body body[kStageBatch];
        NBODY_KOKKOS_UNROLL_BATCH
        for (int b = 0; b < kStageBatch; ++b)
            if (row + b * rows < count) body[b] = tile_body(from, m, start + row + b * rows);
        NBODY_KOKKOS_UNROLL_BATCH
        for (int b = 0; b < kStageBatch; ++b)
            if (row + b * rows < count) staged(row + b * rows) = body[b];
    });
}

// The teams of one kernel and their bodies.
struct PersistentShape {
    int teams;      // the league
    int team_size;  // threads per team, one body each at a time
    int capacity;   // bodies staged at once
};

// A lane pair's alignment: the largest power of two dividing its size, at most 16 bytes (the widest
// shared load).
template <class Sum>
inline constexpr std::size_t kLanePairAlign = std::min<std::size_t>(16, (2 * sizeof(Sum)) & (~(2 * sizeof(Sum)) + 1));

// Two vector lanes' partial pulls side by side, aligned so that the body's thread reads both with
// wide shared loads: in 2D float32 one 16-byte load, where a Pull alone, 4-byte aligned, took one
// load per component (64 loads per body on the GPU, measured).
template <class Sum>
struct alignas(kLanePairAlign<Sum>) LanePair {
    Sum lane[2];
};

// The lane pairs of one team thread (one pair, half used, on host spaces).
template <class Space>
inline constexpr int kLanePairs = (kPersistentLanes<Space> + 1) / 2;

// The scratch bytes of a team's lanes' partial pulls: one per vector lane of each team thread.
template <class Space, class Real, int Dim>
std::size_t lane_partials_bytes(int team_size) {
    return Scratch<Space, LanePair<Pull<Real, Dim>>>::shmem_size(static_cast<std::size_t>(team_size) *
                                                                  kLanePairs<Space>);
}

// The lanes' partial pulls of one body added up, in lane order: four chains of adds in flight, then
// the chains.
template <int Lanes, class Sum>
KOKKOS_INLINE_FUNCTION Sum sum_of_lanes(const LanePair<Sum>* pairs) {
    constexpr int chains = Lanes < 4 ? Lanes : 4;
    Sum chain[chains];
    for (int p = 0; 2 * p < Lanes; ++p) {
        const LanePair<Sum> pair = pairs[p];
        for (int half = 0; half < 2 && 2 * p + half < Lanes; ++half) {
            const int l = 2 * p + half;
            if (l < chains) chain[l] = pair.lane[half];
            else chain[l % chains] += pair.lane[half];
        }
    }
    for (int c = 1; c < chains; ++c) chain[0] += chain[c];
    return chain[0];
}

// pull_only: the pulls of the current positions into w.s.pull, nothing else (leapfrog's upload; no
// barrier). Otherwise w.steps steps, meeting at `barrier`. Given `largest_team`, only stores there
// the largest team size Kokkos can launch the kernel with (the check at creation).
template <class Space, class Real, int Dim>
void persistent_kernel(const Space& space, const WholeAdvance<Space, Real, Dim>& w, const GridBarrier<Space>& barrier,
                       const PersistentShape& shape, Real eps2, bool pull_only, int* largest_team = nullptr) {
    using Policy = Kokkos::TeamPolicy<Space>;
    using Member = typename Policy::member_type;
    using Body = TileBody<Real, Dim>;
    using Sum = Pull<Real, Dim>;
    // The kernel captures ~20 Views: "light weight" keeps its functor in the kernel's parameters
    // (above 512 bytes Kokkos would launch it through constant memory; team_tiled measured 7 % lost).
    const auto policy = Kokkos::Experimental::require(
        Policy(space, shape.teams, largest_team != nullptr ? 1 : shape.team_size, kPersistentLanes<Space>)
            .set_scratch_size(0, Kokkos::PerTeam(Scratch<Space, Body>::shmem_size(shape.capacity) +
                                                 lane_partials_bytes<Space, Real, Dim>(shape.team_size))),
        Kokkos::Experimental::WorkItemProperty::HintLightWeight);
    const int capacity = shape.capacity;
    const int steps = pull_only ? 1 : w.steps;
    const auto kernel = KOKKOS_LAMBDA(const Member& team) {
        constexpr int lanes = kPersistentLanes<Space>;
        constexpr int pairs = kLanePairs<Space>;
        const Scratch<Space, Body> staged(team.team_scratch(0), capacity);
        // Lane l of team thread r adds its part of the body's pull into lane_pairs(r * pairs + l / 2).lane[l % 2].
        const Scratch<Space, LanePair<Sum>> lane_pairs(team.team_scratch(0), team.team_size() * pairs);
        const int n = w.n;
        const bool resident = n <= capacity;
        const int groups = (n + team.team_size() - 1) / team.team_size();
        int barriers = 0;
        // Body i of the team's group, or n (none) in the last group.
        const auto body_of = [&](int group) {
            const int i = group * team.team_size() + team.team_rank();
            return i < n ? i : n;
        };
        if (!pull_only) {
            if (!barrier.wait(team, ++barriers, true)) return;  // not all running: the host throws
            if (w.e.next_before_force) {  // leapfrog: the first step's first half kick
                for (int group = team.league_rank(); group < groups; group += team.league_size()) {
                    const int i = body_of(group);
                    if (i == n) continue;
                    Kokkos::single(Kokkos::PerThread(team), [&]() {
                        Vec<Real, Dim> p = load(w.s.p, i), v = load(w.s.v, i);
                        advance_before_force(w.e.integrator, p, v, load(w.s.pull, i), w.e.G, w.e.dt);
                        store(w.s.p, i, p);
                        store(w.s.v, i, v);
                    });
                }
                barrier.wait(team, ++barriers, false);
            }
        }
        for (int step = 0; step < steps; ++step) {
            const DeviceAxes<Space, Real, Dim>& from = step % 2 == 0 ? w.s.p : w.p_next;
            const DeviceAxes<Space, Real, Dim>& to = step % 2 == 0 ? w.p_next : w.s.p;
            if (resident) {
                stage_bodies(team, staged, from, w.m, 0, n);
                team.team_barrier();
            }
            for (int group = team.league_rank(); group < groups; group += team.league_size()) {
                const int i = body_of(group);
                const Vec<Real, Dim> pi = i < n ? load(from, i) : Vec<Real, Dim>{};
                // What the body's thread needs after the sum, read now so that the round trip to
                // memory overlaps the sum (one dependent round trip less per step; measured in
                // docs/performance-kokkos.md).
                const bool ends_step = i < n && !pull_only;
                const Vec<Real, Dim> vi = ends_step ? load(w.s.v, i) : Vec<Real, Dim>{};
                const CountedBody counted = ends_step ? counted_body(w.map, w.map.moved, i) : CountedBody{};
                for (int start = 0; start < n; start += capacity) {
                    const int count = n - start < capacity ? n - start : capacity;
                    if (!resident) {
                        team.team_barrier();
                        stage_bodies(team, staged, from, w.m, start, count);
                        team.team_barrier();
                    }
                    // Each vector lane sums the staged bodies lane, lane + lanes, ... into its own
                    // partial in scratch (over every tile); the body's thread adds the partials up
                    // after the loop. A ThreadVectorRange parallel_for ends with its lanes in step and
                    // their writes seen by each other (Kokkos' CUDA backend syncs the warp there,
                    // kokkos/kokkos#1520): no barrier, where parallel_reduce's generic shuffle loop
                    // cost 0.3 us per step more than CUDA's five shuffles (docs/performance-kokkos.md).
                    Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, i < n ? lanes : 0), [&](const int lane) {
                        Sum& partial = lane_pairs(team.team_rank() * pairs + lane / 2).lane[lane % 2];
                        Sum lane_sum = start == 0 ? Sum{} : partial;
                        NBODY_KOKKOS_UNROLL_LANE
                        for (int t = lane; t < count; t += lanes) {
                            const Body b = staged(t);
                            accumulate_pull(pi, b.position(), b.mass(), eps2, lane_sum, InvSqrt{});
                        }
                        partial = lane_sum;
                    });
                }
                if (i == n) continue;
                Kokkos::single(Kokkos::PerThread(team), [&]() {
                    const Sum pull = sum_of_lanes<lanes>(&lane_pairs(team.team_rank() * pairs));
                    store(w.s.pull, i, pull);
                    if (pull_only) return;
                    StepEnd<Real> e = w.e;
                    e.next_before_force = e.next_before_force && step + 1 < steps;
                    Vec<Real, Dim> p = pi, v = vi;
                    const int cell = end_step_of(p, v, pull, w.d, e);
                    // The previous step's move of body i is rewritten before its next, by this thread.
                    rewrite_cells(w.map, counted.left, counted.entered);
                    move_count(w.map, w.map.moved, i, cell, counted.cell);
                    store(to, i, p);
                    store(w.s.v, i, v);
                });
            }
            if (pull_only) return;
            barrier.wait(team, ++barriers, false);  // every position of `to` written, every count moved
        }
        // The last step's moves are complete: the cells they touched rewritten.
        for (int group = team.league_rank(); group < groups; group += team.league_size()) {
            const int i = body_of(group);
            if (i < n) Kokkos::single(Kokkos::PerThread(team), [&]() { rewrite_cells_of(w.map, w.map.moved, i); });
        }
    };
    if (largest_team != nullptr)
        *largest_team = policy.team_size_max(kernel, Kokkos::ParallelForTag());
    else
        Kokkos::parallel_for(pull_only ? "nbody::kokkos::persistent_pulls" : "nbody::kokkos::persistent_advance",
                             policy, kernel);
}

// The barriers a launch of `steps` steps meets: the rendezvous, leapfrog's first half kick, one per step.
inline int barriers_per_advance(int steps, bool leapfrog) { return 1 + (leapfrog ? 1 : 0) + steps; }

// The teams that run at once with one per multiprocessor (GPU) or per thread (host spaces).
template <class Space>
int concurrent_team_slots(const Space& space) {
#ifdef KOKKOS_ENABLE_CUDA
    if constexpr (kRunsOnGpu<Space>) {
        int multiprocessors = 0;
        const cudaError_t status =
            cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, space.cuda_device());
        if (status != cudaSuccess)
            throw std::runtime_error(std::string("kokkos.persistent: cudaDeviceGetAttribute(MultiProcessorCount): ") +
                                     cudaGetErrorString(status));
        return multiprocessors;
    }
#endif
    return space.concurrency();
}

// team_size=auto (GPU): the fewest bodies per team that give every team slot one group, a power of
// two up to kMaxPersistentTeamSize and up to `largest`, the most the kernel's registers allow (28
// in 2D float64, 24 in 3D: 16 then); host teams are one thread.
template <class Space>
int auto_persistent_team_size(int n, int slots, int largest) {
    if (!kRunsOnGpu<Space>) return 1;
    return fewest_per_slot_covering(n, slots, largest < kMaxPersistentTeamSize ? largest : kMaxPersistentTeamSize);
}

template <class Space, class Real, int Dim>
class Persistent final : public KokkosSimulation<Space, Real, Dim> {
public:
    Persistent(const Problem& problem, const TuningValues& tuning)
        : KokkosSimulation<Space, Real, Dim>(problem, tuning, StepKernels::one_per_advance),
          barrier_{typename GridBarrier<Space>::Arrivals("arrivals", 1), 0, 1} {
        const int n = this->n();
        const int slots = concurrent_team_slots(this->space());
        const auto setting = [&](const char* name) {
            const auto found = tuning.find(name);
            return found == tuning.end() || found->second == "auto" ? 0 : static_cast<int>(tuning_int(tuning, name));
        };
        const std::size_t per_body = sizeof(TileBody<Real, Dim>);
        const std::size_t limit = Kokkos::TeamPolicy<Space>::scratch_size_max(0);
        const std::size_t budget = kScratchBytes < limit ? kScratchBytes : limit;
        // The bodies staged beside the lane partials of `team_size` threads (one body's worth left for
        // the scratch Views' alignment), at least one.
        const auto capacity_for = [&](int team_size) {
            const std::size_t partials = lane_partials_bytes<Space, Real, Dim>(team_size);
            const std::size_t staged = partials + 2 * per_body <= budget ? (budget - partials) / per_body - 1 : 1;
            return static_cast<int>(static_cast<std::size_t>(n) < staged ? n : staged);
        };
        // The largest team Kokkos can launch the kernel with (its registers and scratch), then the team
        // size, the bodies its scratch stages, and the check with that scratch.
        shape_.team_size = shape_.teams = 1;
        shape_.capacity = capacity_for(1);
        int largest = 0;
        const auto find_largest_team = [&]() {
            persistent_kernel(this->space(), WholeAdvance<Space, Real, Dim>{}, barrier_, shape_, this->eps2(), false,
                              &largest);
        };
        find_largest_team();
        shape_.team_size =
            setting("team_size") > 0 ? setting("team_size") : auto_persistent_team_size<Space>(n, slots, largest);
        check_team_threads<Space>(shape_.team_size, kPersistentLanes<Space>);
        shape_.capacity = capacity_for(shape_.team_size);
        find_largest_team();
        check_team_size<Space>(largest, shape_.team_size, kPersistentLanes<Space>, this->workload());
        const int groups = (n + shape_.team_size - 1) / shape_.team_size;
        const int most_teams = setting("teams") > 0 ? setting("teams") : slots;
        shape_.teams = groups < most_teams ? groups : most_teams;
        if (shape_.teams < 1) shape_.teams = 1;
        barrier_.teams = shape_.teams;
    }

private:
    void compute_pulls() override {
        WholeAdvance<Space, Real, Dim> w{};
        w.s.p = this->positions();
        w.s.pull = this->pulls();
        w.m = this->masses();
        w.n = this->n();
        persistent_kernel(this->space(), w, barrier_, shape_, this->eps2(), true);
    }

    void advance_in_one_kernel(const WholeAdvance<Space, Real, Dim>& w) override {
        persistent_kernel(this->space(), w, barrier_, shape_, this->eps2(), false);
        const auto arrived = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), barrier_.arrivals);
        const auto expected = barrier_.before + static_cast<typename GridBarrier<Space>::Counter>(shape_.teams) *
                                                    barriers_per_advance(w.steps, w.e.next_before_force);
        if (arrived(0) & GridBarrier<Space>::kAbandoned) {
            Kokkos::deep_copy(barrier_.arrivals, 0);
            barrier_.before = 0;
            throw std::runtime_error(
                std::string("kokkos.persistent@") + SpaceName<Space>::value + ": its " + std::to_string(shape_.teams) +
                " teams of " + std::to_string(shape_.team_size * kPersistentLanes<Space>) +
                " threads did not all run at once, so the steps were not taken (the first grid barrier gave up "
                "waiting); another program may be holding the device's processors, or teams x team_size asks for "
                "more than run at once: leave teams=auto");
        }
        if (arrived(0) != expected)
            throw std::logic_error("kokkos.persistent: " + std::to_string(arrived(0)) +
                                   " arrivals at the grid barrier, expected " + std::to_string(expected));
        barrier_.before = expected;
    }

    GridBarrier<Space> barrier_;
    PersistentShape shape_{};
};

}  // namespace kokkos

void register_kokkos_persistent(Registry& registry) {
    kokkos::register_for_each_space<kokkos::Persistent>(
        registry, "persistent",
        "advance(k) as one TeamPolicy kernel meeting at a grid barrier per step (a bounded first rendezvous "
        "instead of a cooperative launch): a thread (on the GPU a warp) per body sums over bodies staged in "
        "scratch; integration and the incremental activity map in the same kernel",
        [](bool gpu) {
            if (!gpu) return std::vector<TuningParameter>{};  // one team per host thread, one thread per team
            TuningParameter team_size = kokkos::power_of_two_tuning(
                "team_size", "bodies per team, one per thread of 32 vector lanes (a warp)", 1,
                kokkos::kMaxPersistentTeamSize, 1);
            team_size.description += " (auto: the fewest that give each multiprocessor one team's worth of bodies)";
            team_size.default_value = "auto";
            team_size.allowed_values.insert(team_size.allowed_values.begin(), "auto");
            TuningParameter teams = kokkos::power_of_two_tuning(
                "teams", "at most this many teams, which must all run at once (auto: one per multiprocessor)", 1,
                4096, 1);
            teams.default_value = "auto";
            teams.allowed_values.insert(teams.allowed_values.begin(), "auto");
            return std::vector<TuningParameter>{team_size, teams};
        },
        {.gpu = 0.228, .host = 0.015, .gpu_full_rate_bodies = 2048, .gpu_step_overhead_s = 1e-06},  // @openmp reached 0.013-0.019 (16 cores), 0.023 (2)
        // the GPU: a warp's lane partials added by the body's thread; a host thread sums a body alone
        {.gpu = Reproducibility::order_fixed, .host = Reproducibility::bitwise},
        /*distributed=*/false, kokkos::StepKernels::one_per_advance);
}

}  // namespace nbody
