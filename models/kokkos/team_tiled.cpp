// kokkos.team_tiled: the shared-memory tiling of cuda.tiled/cuda.float4 (GPU Gems 3, ch. 31) written
// with a TeamPolicy and level-0 scratch. Each team owns a block of `tile` bodies and walks the j
// bodies in tiles of `tile`, staged (position, mass) in scratch by the whole team; the block's bodies are
// spread over the team's threads (one each when team_size == tile, the GPU case; all on one thread
// with team_size 1, the host case, where the tile is a cache block). The partial sums live in
// scratch too, so any team size works with any tile. `body_mapping` pair and quad have each
// thread sum two or four bodies against each staged load (register blocking, as cuda.unrolled:
// independent dependency chains, fewer loads per interaction), and on the GPU lanes2/lanes4 split
// a body's sum over a tile across vector lanes (a ThreadVectorRange reduction; measured slower,
// kept as the hierarchical alternative). The last tile is padded with zero-mass bodies, whose pull
// is exactly zero, so every thread reaches every barrier. `slices` splits the j tiles over several
// teams per block (as cuda.sliced), each adding its partial pulls atomically, so that small N still
// give every SM (or host thread) teams to run. Over several ranks the blocks cover only the rank's
// own bodies (KokkosSimulation::owned_range()) and the tiles all N: the variant is distributed. On
// CUDA the overlapped exchange (`exchange`) pulls from the owned block while the others are
// gathered, then from the others: the same kernel over part of the bodies j (PullFromPart).
#include <string>
#include <type_traits>

#include "kokkos_simulation.hpp"
#include "nbody/registry.hpp"
#include "team_shape.hpp"

namespace nbody {
namespace kokkos {

// Scratch of one team: the staged tile and the block's partial sums.
template <class Space, class Real, int Dim>
std::size_t team_tiled_scratch_bytes(int tile) {
    return Scratch<Space, TileBody<Real, Dim>>::shmem_size(tile) + Scratch<Space, Pull<Real, Dim>>::shmem_size(tile);
}

// nvcc unrolls the loop over a staged tile by this much (the tile length is a run-time tuning);
// host compilers get no pragma.
#if defined(__CUDA_ARCH__)
#define NBODY_KOKKOS_UNROLL_TILE _Pragma("unroll 8")
#else
#define NBODY_KOKKOS_UNROLL_TILE
#endif

// nvcc unrolls a thread's loop over its bodies completely (host compilers: NBODY_UNROLL_AXES's
// choice), so that their positions and sums stay in registers.
#define NBODY_KOKKOS_UNROLL_BODIES NBODY_UNROLL_AXES

// Launches the pull kernel on the bodies `owned` (against all n, or a PullFromPart's bodies j, in
// tiles staged by the team; with slices > 1, or a part that accumulates, it adds into the pulls,
// zeroed before where nothing else wrote them); given `largest_team`, only stores there the largest
// team size Kokkos can launch it with (the check at creation). Each thread sums BodiesPerThread
// bodies against every staged load (register blocking, as cuda.unrolled's i-unroll): one kernel
// per count, so that the registers of the larger counts do not lower the occupancy of the smaller.
// Ending (step_end=fused): a StepEndInPullKernel, and the kernel ends the step too; PullFromPart:
// no step end, and the bodies j are those of its SourceBodies, not all n; NoStepEnd otherwise.
// The part is a type of its own rather than a range argument, so that the whole-N kernels stay the
// code they were: a run-time range made the one-rank step 8.7 % slower at N = 65536 in 2D float32
// on an H200 (ptxas gave the fused pair kernel 32 registers instead of 40, another schedule).
struct NoStepEnd {};
struct PullFromPart {
    SourceBodies sources;
};
// Namespace-scope constants: nvcc refuses a function's local one as an extended lambda's first
// "capture" inside an if constexpr.
template <class Ending>
inline constexpr bool kPullsFromPart = std::is_same_v<Ending, PullFromPart>;
template <class Ending>
inline constexpr bool kEndsStep = !std::is_same_v<Ending, NoStepEnd> && !kPullsFromPart<Ending>;

// The kernel's bodies j by the staged index: [first_source, source_end), body source_body(j); all n
// but for a PullFromPart. Overloads, not if constexpr: nvcc refuses a lambda's first capture of
// the Views inside one. Written so, the whole-N kernels compile to the sm_90 code and parameters
// they had before the part existed, byte for byte (cubins compared; an inline `+=` branch in the
// kernel instead moved its parameters by 8 bytes).
template <class Ending>
KOKKOS_INLINE_FUNCTION int first_source(const Ending&) { return 0; }
KOKKOS_INLINE_FUNCTION int first_source(const PullFromPart& part) { return part.sources.first; }
template <class Ending>
KOKKOS_INLINE_FUNCTION int source_end(const Ending&, int n) { return n; }
KOKKOS_INLINE_FUNCTION int source_end(const PullFromPart& part, int) { return part.sources.end; }
template <class Ending>
KOKKOS_INLINE_FUNCTION int source_body(const Ending&, int j) { return j; }
KOKKOS_INLINE_FUNCTION int source_body(const PullFromPart& part, int v) { return part.sources.body(v); }
// With one team per body: the body's pull stored, or added for a part that accumulates (no other
// writer).
template <class Ending, class View, int Dim, class Value>
KOKKOS_INLINE_FUNCTION void write_pull(const Ending&, const Axes<View, Dim>& pull, int i, const Value& value) {
    store(pull, i, value);
}
template <class View, int Dim, class Value>
KOKKOS_INLINE_FUNCTION void write_pull(const PullFromPart& part, const Axes<View, Dim>& pull, int i, const Value& value) {
    if (part.sources.accumulate) {
        NBODY_UNROLL_AXES
        for (int axis = 0; axis < Dim; ++axis) pull[axis](i) += value[axis];
    } else {
        store(pull, i, value);
    }
}

template <int BodiesPerThread, class Ending, class Space, class Real, int Dim>
void team_tiled_pulls(Dispatch<Space>& dispatch, DeviceAxes<Space, Real, Dim> p, DeviceReals<Space, Real> m,
                      DeviceAxes<Space, Real, Dim> pull, int n, OwnedRange owned, Real eps2, int team_size, int tile,
                      int vector_length, int slices, const Ending& ending, int* largest_team = nullptr) {
    using Policy = Kokkos::TeamPolicy<Space>;
    using Member = typename Policy::member_type;
    using Body = TileBody<Real, Dim>;
    using Sum = Pull<Real, Dim>;
    constexpr bool EndsStep = kEndsStep<Ending>;
    const int blocks = (owned.end - owned.first + tile - 1) / tile;
    const int source_count = source_end(ending, n) - first_source(ending);
    const int tiles_per_slice = ((source_count + tile - 1) / tile + slices - 1) / slices;
    const auto pulls_policy = Policy(dispatch.space(), blocks * slices, team_size, vector_length)
                                  .set_scratch_size(0, Kokkos::PerTeam(team_tiled_scratch_bytes<Space, Real, Dim>(tile)));
    // The kernel ending the step captures ~20 more Views: over Kokkos' 512 bytes, a functor is
    // launched through constant memory (a copy before each launch) or, in a graph, read from global
    // memory (7 % slower at N = 65536, measured); "light weight" keeps it in the kernel's parameters
    // (up to 4 KiB).
    const auto policy = [&] {
        if constexpr (EndsStep)
            return Kokkos::Experimental::require(pulls_policy, Kokkos::Experimental::WorkItemProperty::HintLightWeight);
        else
            return pulls_policy;
    }();
    const auto kernel = KOKKOS_LAMBDA(const Member& team) {
        // Captured here: nvcc refuses an extended lambda's first capture inside the if constexpr below.
        const Real softening2 = eps2;
        const int lanes = vector_length;
        const Ending end_of_step = ending;
        const Scratch<Space, Body> staged(team.team_scratch(0), tile);
        const Scratch<Space, Sum> partial(team.team_scratch(0), tile);
        const int block = team.league_rank() % blocks;
        const int block_start = owned.first + block * tile;
        const int block_size = owned.end - block_start < tile ? owned.end - block_start : tile;
        const int slice_start = (team.league_rank() / blocks) * tiles_per_slice * tile + first_source(end_of_step);
        const int slice_stop = slice_start + tiles_per_slice * tile;
        const int sources_end = source_end(end_of_step, n);
        const int slice_end = slice_stop < sources_end ? slice_stop : sources_end;
        Kokkos::parallel_for(Kokkos::TeamVectorRange(team, block_size), [&](const int k) { partial(k) = Sum{}; });
        for (int tile_start = slice_start; tile_start < slice_end; tile_start += tile) {
            Kokkos::parallel_for(Kokkos::TeamVectorRange(team, tile),
                                 [&](const int k) {
                                     const int j = tile_start + k;
                                     staged(k) = j < sources_end ? tile_body(p, m, source_body(end_of_step, j)) : Body{};
                                 });
            team.team_barrier();
            // Thread k takes the block's bodies k, k + groups, ... (neighbouring threads, neighbouring
            // bodies); a short last group sums zeros for its missing bodies and keeps nothing.
            const int groups = (block_size + BodiesPerThread - 1) / BodiesPerThread;
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, groups), [&](const int k) {
                if constexpr (BodiesPerThread == 1) {
                    const Vec<Real, Dim> pi = load(p, block_start + k);
                    Sum sum = partial(k);
                    if (lanes > 1) {  // the thread's vector lanes split the tile, then combine
                        Sum tile_sum;
                        Kokkos::parallel_reduce(
                            Kokkos::ThreadVectorRange(team, tile),
                            [&](const int t, Sum& lane_sum) {
                                const Body b = staged(t);
                                accumulate_pull(pi, b.position(), b.mass(), softening2, lane_sum, InvSqrt{});
                            },
                            tile_sum);
                        sum += tile_sum;
                    } else {  // a plain loop the compiler unrolls
                        NBODY_KOKKOS_UNROLL_TILE
                        for (int t = 0; t < tile; ++t) {
                            const Body b = staged(t);
                            accumulate_pull(pi, b.position(), b.mass(), softening2, sum, InvSqrt{});
                        }
                    }
                    Kokkos::single(Kokkos::PerThread(team), [&]() { partial(k) = sum; });
                } else {
                    Vec<Real, Dim> pi[BodiesPerThread];
                    Sum sum[BodiesPerThread];
                    NBODY_KOKKOS_UNROLL_BODIES
                    for (int u = 0; u < BodiesPerThread; ++u) {
                        const int body = k + u * groups;
                        pi[u] = body < block_size ? load(p, block_start + body) : Vec<Real, Dim>{};
                        sum[u] = body < block_size ? partial(body) : Sum{};
                    }
                    NBODY_KOKKOS_UNROLL_TILE
                    for (int t = 0; t < tile; ++t) {
                        const Body b = staged(t);
                        NBODY_KOKKOS_UNROLL_BODIES
                        for (int u = 0; u < BodiesPerThread; ++u)
                            accumulate_pull(pi[u], b.position(), b.mass(), softening2, sum[u], InvSqrt{});
                    }
                    NBODY_KOKKOS_UNROLL_BODIES
                    for (int u = 0; u < BodiesPerThread; ++u)
                        if (k + u * groups < block_size) partial(k + u * groups) = sum[u];
                }
            });
            team.team_barrier();
        }
        end_tiled_team<kEndsStep<Ending>>(team, end_of_step, partial, pull, block, block_start, block_size, slices,
                                          [&](const int i, const Sum& value) { write_pull(end_of_step, pull, i, value); });
    };
    if (largest_team != nullptr)
        *largest_team = policy.team_size_max(kernel, Kokkos::ParallelForTag());
    else if (blocks > 0)
        dispatch.parallel_for(EndsStep ? "nbody::kokkos::team_tiled_step" : "nbody::kokkos::team_tiled", policy, kernel,
                              EndsStep ? Touches::bodies_and_map : Touches::bodies);
}

// The pull from a part of the bodies j (the overlapped exchange) when each thread keeps its bodies
// for the whole slice (team_size x BodiesPerThread == tile, one vector lane, every shape tile=auto
// and team_size=auto give from pair on): the sums stay in registers across the slice's tiles and
// are stored, or added, straight from them, as cuda.sliced's kernel does, with no partial sums in
// scratch. 4 x H200, N = 16384 over 4 GPUs: 40.5 against 41.4 us per step in 2D float32, 94.2
// against 96.2 in 3D float64 (results/h200x4-part-registers.txt part C). A kernel of its own: the
// same path as a branch of team_tiled_pulls made its whole-N kernels, the one-GPU step, 8 % slower.
// Blocks of `tile` bodies i, tiles of `source_tile` bodies j (other_blocks_shape). `largest_team`:
// as there.
template <int BodiesPerThread, class Space, class Real, int Dim>
void team_tiled_part_pulls(Dispatch<Space>& dispatch, DeviceAxes<Space, Real, Dim> p, DeviceReals<Space, Real> m,
                           DeviceAxes<Space, Real, Dim> pull, OwnedRange owned, Real eps2, int tile, int source_tile,
                           int slices, const PullFromPart& part, int* largest_team = nullptr) {
    using Policy = Kokkos::TeamPolicy<Space>;
    using Member = typename Policy::member_type;
    using Body = TileBody<Real, Dim>;
    const int team_size = tile / BodiesPerThread;
    const int blocks = (owned.end - owned.first + tile - 1) / tile;
    const SourceBodies sources = part.sources;
    const int tiles_per_slice = ((sources.count() + source_tile - 1) / source_tile + slices - 1) / slices;
    const auto policy = Policy(dispatch.space(), blocks * slices, team_size, 1)
                            .set_scratch_size(0, Kokkos::PerTeam(Scratch<Space, Body>::shmem_size(source_tile)));
    const auto kernel = KOKKOS_LAMBDA(const Member& team) {
        const Scratch<Space, Body> staged(team.team_scratch(0), source_tile);
        const int block_start = owned.first + (team.league_rank() % blocks) * tile;
        const int block_size = owned.end - block_start < tile ? owned.end - block_start : tile;
        const int slice_start = sources.first + (team.league_rank() / blocks) * tiles_per_slice * source_tile;
        const int slice_stop = slice_start + tiles_per_slice * source_tile;
        const int slice_end = slice_stop < sources.end ? slice_stop : sources.end;
        // Thread k sums the block's bodies k, k + team_size, ...; missing ones sum zeros and keep nothing.
        const int k = team.team_rank();
        Vec<Real, Dim> pi[BodiesPerThread];
        Pull<Real, Dim> sum[BodiesPerThread];
        NBODY_KOKKOS_UNROLL_BODIES
        for (int u = 0; u < BodiesPerThread; ++u) {
            const int body = k + u * team_size;
            pi[u] = body < block_size ? load(p, block_start + body) : Vec<Real, Dim>{};
            sum[u] = Pull<Real, Dim>{};
        }
        for (int tile_start = slice_start; tile_start < slice_end; tile_start += source_tile) {
            Kokkos::parallel_for(Kokkos::TeamVectorRange(team, source_tile), [&](const int t) {
                const int j = tile_start + t;
                staged(t) = j < sources.end ? tile_body(p, m, sources.body(j)) : Body{};
            });
            team.team_barrier();
            NBODY_KOKKOS_UNROLL_TILE
            for (int t = 0; t < source_tile; ++t) {
                const Body b = staged(t);
                NBODY_KOKKOS_UNROLL_BODIES
                for (int u = 0; u < BodiesPerThread; ++u)
                    accumulate_pull(pi[u], b.position(), b.mass(), eps2, sum[u], InvSqrt{});
            }
            team.team_barrier();
        }
        NBODY_KOKKOS_UNROLL_BODIES
        for (int u = 0; u < BodiesPerThread; ++u) {
            const int body = k + u * team_size;
            if (body >= block_size) continue;
            if (slices == 1) {
                write_pull(part, pull, block_start + body, sum[u]);
            } else {
                NBODY_UNROLL_AXES
                for (int axis = 0; axis < Dim; ++axis)
                    Kokkos::atomic_add(&pull[axis](block_start + body), sum[u][axis]);
            }
        }
    };
    if (largest_team != nullptr)
        *largest_team = policy.team_size_max(kernel, Kokkos::ParallelForTag());
    else if (blocks > 0)
        dispatch.parallel_for("nbody::kokkos::team_tiled_part", policy, kernel, Touches::bodies);
}

// The `body_mapping` tuning: how a team's threads share its bodies. One choice rather than two
// numbers, because vector lanes and several bodies per thread exclude each other.
struct BodyMapping {
    int vector_length;
    int bodies_per_thread;
};

// body_mapping=auto (GPU): one body per thread below N = 4096, where a team of 32 or 64 threads
// per small tile gives the most teams (6.05 us per step at N = 1024 against 8.45 with pairs), two
// from there, four from 16384, where the tile of 128 or more still gives four per thread teams of
// 32 threads or more (H100, one GPU: 4 % faster in 2D float32 and 5 % in 3D float64 at N = 262144,
// within 0.5 % at worst from 16384; two per thread 0.5-11 % faster at 8192;
// docs/performance-kokkos.md). `bodies`: those whose pulls this rank sums.
inline BodyMapping body_mapping_of(const std::string& name, int bodies) {
    if (name == "auto") return body_mapping_of(bodies < 4096 ? "thread" : bodies < 16384 ? "pair" : "quad", bodies);
    if (name == "pair") return {1, 2};
    if (name == "quad") return {1, 4};
    if (name == "lanes2") return {2, 1};
    if (name == "lanes4") return {4, 1};
    return {1, 1};  // "thread"
}

// The `exchange` tuning, as cuda.sliced's; UsageError naming the allowed values for any other.
inline bool overlaps_exchange_of(const std::string& exchange) {
    if (exchange == "overlap") return true;
    if (exchange == "allgather") return false;
    throw UsageError("exchange must be allgather or overlap, got '" + exchange + "'");
}

template <class Space, class Real, int Dim>
class TeamTiled final : public KokkosSimulation<Space, Real, Dim> {
public:
    TeamTiled(const Problem& problem, const TuningValues& tuning)
        : KokkosSimulation<Space, Real, Dim>(problem, tuning),
          tile_(tuning.at("tile") == "auto" ? auto_tile_of_rank(owned_bodies(), this->n())
                                            : static_cast<int>(tuning_int(tuning, "tile"))),
          mapping_(body_mapping_of(tuning.at("body_mapping"), owned_bodies())),
          team_size_(tuning.at("team_size") == "auto" ? auto_team_size(tile_, mapping_.bodies_per_thread)
                                                      : static_cast<int>(tuning_int(tuning, "team_size"))),
          slices_(tuning.at("slices") == "auto"
                      ? auto_slices(kRunsOnGpu<Space>, this->space().concurrency(), owned_bodies(), this->n(),
                                    team_size_, tile_)
                      : static_cast<int>(tuning_int(tuning, "slices"))),
          overlaps_exchange_(overlaps_exchange_of(tuning.at("exchange"))),
          others_(other_blocks_shape(tile_, mapping_.bodies_per_thread,
                                     mapping_.vector_length == 1 && tuning.at("tile") == "auto" &&
                                         tuning.at("team_size") == "auto" && tuning.at("body_mapping") == "auto" &&
                                         tuning.at("slices") == "auto",
                                     std::is_same_v<Real, float>)),
          others_slices_(others_.block == tile_ && others_.bodies_per_thread == mapping_.bodies_per_thread
                             ? slices_
                             : auto_slices(kRunsOnGpu<Space>, this->space().concurrency(), owned_bodies(), this->n(),
                                           others_.block / others_.bodies_per_thread, others_.block,
                                           others_.source_tile)) {
        check_team_threads<Space>(team_size_, mapping_.vector_length);
        const std::size_t limit = Kokkos::TeamPolicy<Space>::scratch_size_max(0);
        const std::size_t bytes = team_tiled_scratch_bytes<Space, Real, Dim>(tile_);
        if (bytes > limit)
            throw UsageError("tuning tile=" + std::to_string(tile_) + " needs " + std::to_string(bytes) +
                             " bytes of level-0 scratch; " +
                             SpaceName<Space>::value + " offers " + std::to_string(limit));
        // Both kernels a simulation may launch: the pulls alone (upload, and every step unless
        // step_end=fused) and, with step_end=fused, the pulls that end the step.
        int largest = 0;
        pull_kernel(NoStepEnd{}, &largest);
        if (this->fuses_step_end()) {
            int largest_fused = 0;
            pull_kernel(StepEndInPullKernel<Space, Real, Dim>{}, &largest_fused);  // empty Views: only sized
            largest = largest_fused < largest ? largest_fused : largest;
        }
        if constexpr (kRunsOnGpu<Space>) {
            if (overlaps_exchange_ && problem.distribution.spans_ranks()) {  // the overlapped exchange's kernel
                for (const bool other_blocks : {false, true}) {
                    int largest_part = 0;
                    part_kernel(PullFromPart{all_sources(this->n())}, other_blocks, 1, &largest_part);  // only sized
                    largest = largest_part < largest ? largest_part : largest;
                }
            }
        }
        check_team_size<Space>(largest, team_size_, mapping_.vector_length, this->workload());
    }

private:
    void compute_pulls() override { pull_kernel(NoStepEnd{}); }
    void compute_pulls_and_end_step(const StepEndInPullKernel<Space, Real, Dim>& end) override { pull_kernel(end); }
    bool adds_into_pulls() const override { return slices_ > 1; }  // the slices add their partial pulls
    bool overlaps_exchange() const override { return overlaps_exchange_; }
    bool reports_step_breakdown() const override { return true; }
    // A part of the bodies j, at most one slice per tile of it: the owned block holds 1/ranks of the
    // tiles the slices were chosen for, and a slice without tiles would only add zeros. CUDA only:
    // the host spaces gather before the pull, and compile no part kernel.
    void compute_pulls_from(const SourceBodies& sources) override {
        if constexpr (kRunsOnGpu<Space>) {
            if (sources.count() == 0 && sources.accumulate) return;
            const bool other_blocks = sources.accumulate;  // the pull that adds to the owned block's
            const int source_tile = other_blocks ? others_.source_tile : tile_;
            const int slices = other_blocks ? others_slices_ : slices_;
            const int tiles = (sources.count() + source_tile - 1) / source_tile;
            part_kernel(PullFromPart{sources}, other_blocks, tiles < slices ? (tiles > 1 ? tiles : 1) : slices);
        } else {
            throw std::logic_error("team_tiled pulls from part of the bodies on the CUDA space only");
        }
    }

    int owned_bodies() const { return this->owned_range().end - this->owned_range().first; }

    // The launch, or the team size check (see team_tiled_pulls); with a StepEndInPullKernel, of the
    // kernel that ends the step too; with a PullFromPart, of the kernel over part of the bodies j.
    // `slices`: the tuned ones unless given.
    template <class Ending>
    void pull_kernel(const Ending& end, int* largest_team = nullptr, int slices = 0) {
        switch (mapping_.bodies_per_thread) {
            case 2: return launch<2>(end, largest_team, slices > 0 ? slices : slices_);
            case 4: return launch<4>(end, largest_team, slices > 0 ? slices : slices_);
            default: return launch<1>(end, largest_team, slices > 0 ? slices : slices_);
        }
    }
    // The pull from a part of the bodies j, in `slices`: team_tiled_part_pulls where the shape keeps
    // each thread's sums in registers (`other_blocks`: in others_' shape), else team_tiled_pulls.
    // `largest_team`: only sized, as there.
    void part_kernel(const PullFromPart& part, bool other_blocks, int slices, int* largest_team = nullptr) {
        if (mapping_.vector_length != 1 || team_size_ * mapping_.bodies_per_thread != tile_)
            return pull_kernel(part, largest_team, slices);
        const PartPullShape shape =
            other_blocks ? others_ : PartPullShape{tile_, mapping_.bodies_per_thread, tile_};
        const auto launch_part = [&]<int BodiesPerThread>() {
            team_tiled_part_pulls<BodiesPerThread>(this->dispatch(), this->positions(), this->masses(), this->pulls(),
                                                   this->owned_range(), this->eps2(), shape.block, shape.source_tile,
                                                   slices, part, largest_team);
        };
        switch (shape.bodies_per_thread) {
            case 2: return launch_part.template operator()<2>();
            case 4: return launch_part.template operator()<4>();
            default: return launch_part.template operator()<1>();
        }
    }
    template <int BodiesPerThread, class Ending>
    void launch(const Ending& end, int* largest_team, int slices) {
        team_tiled_pulls<BodiesPerThread>(this->dispatch(), this->positions(), this->masses(), this->pulls(), this->n(),
                                          this->owned_range(), this->eps2(), team_size_, tile_,
                                          mapping_.vector_length, slices, end, largest_team);
    }

    int tile_;
    BodyMapping mapping_;
    int team_size_;
    int slices_;  // teams per block of bodies, each summing its share of the j tiles
    bool overlaps_exchange_;
    PartPullShape others_;  // of the pull from the other blocks (exchange=overlap)
    int others_slices_;
};

}  // namespace kokkos

void register_kokkos_team_tiled(Registry& registry) {
    // Host spaces run teams of one thread (Kokkos' host team size is the threads of one core).
    // GPU defaults: tile, bodies per thread and team size from N (auto_tile, body_mapping_of,
    // auto_team_size): from N = 65536 128 threads, each summing 4 of the team's 512 bodies against
    // 512-body tiles, the fastest measured there in every workload; smaller tiles, two bodies per
    // thread below 16384 and one below 4096 (docs/performance-kokkos.md).
    // Distributed: the pull kernel sums the rank's owned block only; on CUDA exchange=overlap hides
    // the gather of the positions behind the owned block's pull, and the pull from the other blocks
    // may take a shape of its own (other_blocks_shape; docs/scaling.md).
    kokkos::register_for_each_space<kokkos::TeamTiled>(
        registry, "team_tiled", "TeamPolicy, j tiles staged in level-0 scratch by the team (the shared-memory tiling)",
        [](bool gpu) {
            TuningParameter mapping{.name = "body_mapping",
                                    .description = "thread: one body per thread; pair/quad: two/four per thread, "
                                                   "sharing each staged load (independent dependency chains); "
                                                   "lanes2/lanes4: a body's tile split over 2/4 vector lanes",
                                    .default_value = gpu ? "auto" : "thread",
                                    .allowed_values = {"thread", "pair", "quad"},
                                    .min_value = 0,
                                    .max_value = 0};
            if (gpu) {
                mapping.description += " (auto: thread below N = 4096, pair below 16384, else quad; with every shape "
                                       "tuning auto, a float32 rank's pull from the other blocks takes quad in teams "
                                       "of 32 where its own takes pair)";
                mapping.allowed_values = {"auto", "thread", "pair", "quad", "lanes2", "lanes4"};
            }
            TuningParameter team_size =
                kokkos::power_of_two_tuning("team_size", "threads per team", gpu ? 32 : 1, gpu ? 1024 : 1, 1);
            TuningParameter tile =
                kokkos::power_of_two_tuning("tile", "bodies per tile (and per team's block of bodies)", 32, 1024, 512);
            if (gpu) {
                team_size.description += " (auto: tile / 2 with body_mapping=pair, tile / 4 with quad, else min(tile, 256))";
                team_size.default_value = "auto";
                team_size.allowed_values.insert(team_size.allowed_values.begin(), "auto");
                tile.description += " (auto: 32 below N = 2048, 64 below 8192, 128 below 32768, 256 below 65536, else 512; "
                                    "a rank of 8192 bodies or more: twice the tile of its own count, at most N's; fewer: "
                                    "by its own count)";
                tile.default_value = "auto";
                tile.allowed_values.insert(tile.allowed_values.begin(), "auto");
            }
            return std::vector<TuningParameter>{
                team_size,
                tile,
                mapping,
                {.name = "slices",
                 .description = gpu ? "teams per block of bodies, splitting the j tiles between them (auto: eight "
                                      "waves of full teams in a power of two, at most one per tile)"
                                    : "teams per block of bodies, splitting the j tiles between them (auto: two "
                                      "teams per thread the space runs at once, at most one per block)",
                 .default_value = "auto",
                 .allowed_values = {"auto", "1", "2", "4", "8", "16", "32", "64", "128", "256"}},
                kokkos::step_end_tuning(),
                {.name = "exchange",
                 .description = gpu ? "over several ranks: overlap (pull from the owned block while the other blocks "
                                      "are gathered on a second stream) or allgather (gather, then pull); one rank: "
                                      "no effect"
                                    : "over several ranks on the CUDA space: overlap (pull from the owned block while "
                                      "the other blocks are gathered on a second stream) or allgather (gather, then "
                                      "pull); one rank, and this host space (the host communicator's gather, then "
                                      "pull): no effect",
                 .default_value = "overlap",
                 .allowed_values = {"overlap", "allgather"}}};
        },
        {.gpu = 0.48, .host = 0.025, .gpu_full_rate_bodies = 8192, .gpu_step_overhead_s = 1e-06},  // @openmp reached 0.019-0.039 (16 cores), 0.046 (2)
        // slices > 1 (auto: by the threads) add partials by atomic_add
        {.gpu = Reproducibility::run_to_run, .host = Reproducibility::run_to_run},
        /*distributed=*/true);
}

}  // namespace nbody
