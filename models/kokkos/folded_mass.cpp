// kokkos.folded_mass: cuda.folded_mass's folded interaction in kokkos.team_tiled's structure. Once
// per step a kernel packs every body j as physics.hpp's scale_by_mass (s_j = m_j^(-1/2), s_j p_j,
// eps2 s_j^2), and the pull kernel sums accumulate_scaled_pull over those: one multiply fewer per
// interaction than accumulate_pull, the subtraction an FMA (physics.hpp). The rest is
// team_tiled's: each team owns a block of `tile` bodies i and walks the packed j bodies in tiles of
// `tile` staged in level-0 scratch; one, two or four bodies i per thread share each staged load
// (register blocking); `slices` teams per block split the j tiles and add their partial pulls
// atomically, so that small N still fill the GPU; step_end=fused ends the step in the pull kernel.
// The j == i term is fl(s p_i) - s p_i, a rounding error rather than SPEC's exact zero: each team
// recomputes it for the bodies whose own tile it summed and takes it out again (as
// cuda.folded_mass). Masses outside the range that keeps the fold finite are refused at upload
// (foldable_masses.hpp's MassRangeChecked). One rank: the variant is not distributed.
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "bound_flag.hpp"
#include "kokkos_simulation.hpp"
#include "nbody/errors.hpp"
#include "nbody/foldable_masses.hpp"
#include "nbody/registry.hpp"
#include "nbody/vector_lanes.hpp"
#include "team_shape.hpp"

namespace nbody {
namespace kokkos {
namespace folded {

// 2D: one staged body is (s x, s y, s, eps2 s^2); 3D: (s x, s y, s z, s), with eps2 s^2 in an
// array of its own. Four reals keep a body one 16-byte shared load in float32, two in float64
// (separate loads per interaction saturate the shared-memory pipe: cuda.float4 against
// cuda.tiled); a fifth slot would break that alignment, and eight would double the tile's scratch
// and staging traffic for one real. cuda.folded_mass's layout.
template <int Dim>
inline constexpr bool kSofteningApart = Dim == 3;

template <class Real, int Dim>
struct FoldedBody : PackedBody<Real, Dim> {
    KOKKOS_INLINE_FUNCTION Real scale() const { return this->c[Dim]; }
};

// The packed bodies of a step; `softening` holds eps2 s^2 in 3D only (empty in 2D).
template <class Space, class Real, int Dim>
struct FoldedBodies {
    Kokkos::View<FoldedBody<Real, Dim>*, typename Space::memory_space> body;
    DeviceReals<Space, Real> softening;

    KOKKOS_INLINE_FUNCTION void store(int j, const ScaledBody<Real, Dim>& scaled) const {
        FoldedBody<Real, Dim> b;
        NBODY_UNROLL_AXES
        for (int k = 0; k < Dim; ++k) b.c[k] = scaled.position[k];
        b.c[Dim] = scaled.scale;
        if constexpr (kSofteningApart<Dim>)
            softening(j) = scaled.softening;
        else
            b.c[3] = scaled.softening;
        body(j) = b;
    }
    KOKKOS_INLINE_FUNCTION Real softening_of(int j) const {
        if constexpr (kSofteningApart<Dim>)
            return softening(j);
        else
            return body(j).c[3];
    }
};

// The padding past N: s = 0 (d' = 0) with a softening of 1 (a finite q), so no pull.
template <class Real, int Dim>
KOKKOS_INLINE_FUNCTION FoldedBody<Real, Dim> padding_body() {
    return {{Real(0), Real(0), Real(0), kSofteningApart<Dim> ? Real(0) : Real(1)}};
}

// eps2 s^2 of the staged body t: its fourth real in 2D, the array apart in 3D.
template <class Real, int Dim, class StagedSoftening>
KOKKOS_INLINE_FUNCTION Real staged_softening_of(const FoldedBody<Real, Dim>& b, const StagedSoftening& apart, int t) {
    if constexpr (kSofteningApart<Dim>)
        return apart(t);
    else
        return b.c[3];
}

template <class Real, int Dim>
KOKKOS_INLINE_FUNCTION Vec<Real, Dim> negated(const Vec<Real, Dim>& v) {
    Vec<Real, Dim> out;
    NBODY_UNROLL_AXES
    for (int k = 0; k < Dim; ++k) out[k] = -v[k];
    return out;
}

// Every body j of the step packed as scale_by_mass (s computed in double there); on a host space
// the bound flag set where a coordinate passes `bound` (the GPU's reciprocal square root needs no
// check).
template <class Space, class Real, int Dim>
void pack_folded_bodies(Dispatch<Space>& dispatch, DeviceAxes<Space, Real, Dim> p, DeviceReals<Space, Real> m,
                        FoldedBodies<Space, Real, Dim> folded, int n, Real eps2, BoundFlag<Space> beyond_bound,
                        Real bound) {
    if constexpr (!kRunsOnGpu<Space>)
        dispatch.parallel_for("nbody::kokkos::folded_mass_clear_bound", Kokkos::RangePolicy<Space>(dispatch.space(), 0, 1),
                              ClearBoundFlag<Space>{beyond_bound});
    dispatch.parallel_for(
        "nbody::kokkos::folded_mass_pack", Kokkos::RangePolicy<Space>(dispatch.space(), 0, n),
        KOKKOS_LAMBDA(const int j) {
            const Vec<Real, Dim> pj = load(p, j);
            folded.store(j, scale_by_mass(pj, m(j), eps2));
            flag_beyond_bound(beyond_bound, pj, bound);
        });
}

// Scratch of one team: the staged tile (and its softenings in 3D) and the block's partial sums.
template <class Space, class Real, int Dim>
std::size_t scratch_bytes(int tile) {
    return Scratch<Space, FoldedBody<Real, Dim>>::shmem_size(tile) +
           Scratch<Space, Real>::shmem_size(kSofteningApart<Dim> ? tile : 0) +
           Scratch<Space, Pull<Real, Dim>>::shmem_size(tile);
}

// nvcc unrolls the loop over a staged tile by 8 and a thread's loop over its bodies completely (their
// positions and sums in registers), as team_tiled; host compilers get neither pragma: the loop over
// a thread's bodies is the one they vectorise.
#if defined(__CUDA_ARCH__)
#define NBODY_KOKKOS_FOLDED_UNROLL_TILE _Pragma("unroll 8")
#define NBODY_KOKKOS_FOLDED_UNROLL_BODIES _Pragma("unroll")
#else
#define NBODY_KOKKOS_FOLDED_UNROLL_TILE
#define NBODY_KOKKOS_FOLDED_UNROLL_BODIES
#endif

// The pull kernel's ending: nothing, or a StepEndInPullKernel (step_end=fused).
struct NoStepEnd {};
// Namespace scope: nvcc refuses a function's local constant as an extended lambda's first
// "capture" inside an if constexpr.
template <class Ending>
inline constexpr bool kEndsStep = !std::is_same_v<Ending, NoStepEnd>;

// team_tiled_pulls on the packed bodies: the bodies `owned` against all n, BodiesPerThread bodies
// per thread; with slices > 1 it adds into pulls zeroed before. Given `largest_team`, only stores
// there the largest team size Kokkos can launch it with.
template <int BodiesPerThread, class Ending, class Space, class Real, int Dim>
void folded_pulls(Dispatch<Space>& dispatch, DeviceAxes<Space, Real, Dim> p, FoldedBodies<Space, Real, Dim> folded,
                  BoundFlag<Space> beyond_bound, DeviceAxes<Space, Real, Dim> pull, int n, OwnedRange owned,
                  int team_size, int tile, int slices, const Ending& ending, int* largest_team = nullptr) {
    using Policy = Kokkos::TeamPolicy<Space>;
    using Member = typename Policy::member_type;
    using Body = FoldedBody<Real, Dim>;
    using Sum = Pull<Real, Dim>;
    constexpr bool EndsStep = kEndsStep<Ending>;
    const int blocks = (owned.end - owned.first + tile - 1) / tile;
    const int tiles_per_slice = ((n + tile - 1) / tile + slices - 1) / slices;
    const auto pulls_policy = Policy(dispatch.space(), blocks * slices, team_size, 1)
                                  .set_scratch_size(0, Kokkos::PerTeam(scratch_bytes<Space, Real, Dim>(tile)));
    // As team_tiled: the kernel ending the step captures ~20 more Views, over Kokkos' 512 bytes
    // for a functor in the kernel's parameters; "light weight" keeps it there.
    const auto policy = [&] {
        if constexpr (EndsStep)
            return Kokkos::Experimental::require(pulls_policy, Kokkos::Experimental::WorkItemProperty::HintLightWeight);
        else
            return pulls_policy;
    }();
    const auto kernel = KOKKOS_LAMBDA(const Member& team) {
        // Captured here: nvcc refuses an extended lambda's first capture inside an if constexpr.
        const Ending end_of_step = ending;
        const Scratch<Space, Body> staged(team.team_scratch(0), tile);
        const Scratch<Space, Real> staged_softening(team.team_scratch(0), kSofteningApart<Dim> ? tile : 0);
        const Scratch<Space, Sum> partial(team.team_scratch(0), tile);
        const int block = team.league_rank() % blocks;
        const int block_start = owned.first + block * tile;
        const int block_size = owned.end - block_start < tile ? owned.end - block_start : tile;
        const int slice_start = (team.league_rank() / blocks) * tiles_per_slice * tile;
        const int slice_stop = slice_start + tiles_per_slice * tile;
        const int slice_end = slice_stop < n ? slice_stop : n;
        Kokkos::parallel_for(Kokkos::TeamVectorRange(team, block_size), [&](const int k) { partial(k) = Sum{}; });
        for (int tile_start = slice_start; tile_start < slice_end; tile_start += tile) {
            Kokkos::parallel_for(Kokkos::TeamVectorRange(team, tile), [&](const int k) {
                const int j = tile_start + k;
                staged(k) = j < n ? folded.body(j) : padding_body<Real, Dim>();
                if constexpr (kSofteningApart<Dim>) staged_softening(k) = j < n ? folded.softening(j) : Real(1);
            });
            team.team_barrier();
            // Thread k takes the block's bodies k, k + groups, ...; a short last group sums zeros for
            // its missing bodies and keeps nothing. Their positions and sums by axis, then body: on
            // the GPU registers (the body loop unrolled), on a host space the lanes of vector
            // registers (the body loop is what the compiler vectorises).
            const int groups = (block_size + BodiesPerThread - 1) / BodiesPerThread;
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, groups), [&](const int k) {
                Vec<Real, Dim> position[BodiesPerThread];
                Sum summed[BodiesPerThread];
                NBODY_KOKKOS_FOLDED_UNROLL_BODIES
                for (int u = 0; u < BodiesPerThread; ++u) {
                    const int body = k + u * groups;
                    position[u] = body < block_size ? load(p, block_start + body) : Vec<Real, Dim>{};
                    summed[u] = body < block_size ? partial(body) : Sum{};
                }
                // Whole bodies first, then by axis: nvcc then emits the loads and the tile loop as when
                // the thread kept Vec bodies (measured: 5 % faster in 3D float32 than loads by axis).
                Real pi[Dim][BodiesPerThread], sum[Dim][BodiesPerThread];
                NBODY_KOKKOS_FOLDED_UNROLL_BODIES
                for (int u = 0; u < BodiesPerThread; ++u) {
                    NBODY_UNROLL_AXES
                    for (int axis = 0; axis < Dim; ++axis) {
                        pi[axis][u] = position[u][axis];
                        sum[axis][u] = summed[u][axis];
                    }
                }
                with_hardware_or_portable_inv_sqrt<InvSqrt>(beyond_bound, [&](const auto inv_sqrt) {
                    NBODY_KOKKOS_FOLDED_UNROLL_TILE
                    for (int t = 0; t < tile; ++t) {
                        const Body b = staged(t);
                        const Vec<Real, Dim> scaled_pj = b.position();
                        const Real scale = b.scale();
                        const Real softening = staged_softening_of(b, staged_softening, t);
                        NBODY_KOKKOS_FOLDED_UNROLL_BODIES
                        for (int u = 0; u < BodiesPerThread; ++u) {
                            Vec<Real, Dim> body, body_sum;
                            NBODY_UNROLL_AXES
                            for (int axis = 0; axis < Dim; ++axis) {
                                body[axis] = pi[axis][u];
                                body_sum[axis] = sum[axis][u];
                            }
                            accumulate_scaled_pull(body, scaled_pj, scale, softening, body_sum, inv_sqrt);
                            NBODY_UNROLL_AXES
                            for (int axis = 0; axis < Dim; ++axis) sum[axis][u] = body_sum[axis];
                        }
                    }
                });
                NBODY_KOKKOS_FOLDED_UNROLL_BODIES
                for (int u = 0; u < BodiesPerThread; ++u) {
                    NBODY_UNROLL_AXES
                    for (int axis = 0; axis < Dim; ++axis) summed[u][axis] = sum[axis][u];
                }
                NBODY_KOKKOS_FOLDED_UNROLL_BODIES
                for (int u = 0; u < BodiesPerThread; ++u)
                    if (k + u * groups < block_size) partial(k + u * groups) = summed[u];
            });
            team.team_barrier();
        }
        // The j == i term out again where this team summed it: with p_i and s p_i negated, d' is
        // exactly the sum's d' negated and r2' the same, so the same instructions subtract the term
        // the sum added (a += q^3 d' as a -= q^3 d', one FMA per axis on the GPU).
        Kokkos::parallel_for(Kokkos::TeamVectorRange(team, block_size), [&](const int k) {
            const int i = block_start + k;
            if (i >= slice_start && i < slice_end) {
                const Body b = folded.body(i);
                Sum sum = partial(k);
                with_hardware_or_portable_inv_sqrt<InvSqrt>(beyond_bound, [&](const auto inv_sqrt) {
                    accumulate_scaled_pull(negated(load(p, i)), negated(b.position()), b.scale(),
                                           folded.softening_of(i), sum, inv_sqrt);
                });
                partial(k) = sum;
            }
        });
        team.team_barrier();
        end_tiled_team<kEndsStep<Ending>>(team, end_of_step, partial, pull, block, block_start, block_size, slices,
                                          [&](const int i, const Sum& value) { store(pull, i, value); });
    };
    if (largest_team != nullptr)
        *largest_team = policy.team_size_max(kernel, Kokkos::ParallelForTag());
    else if (blocks > 0)
        dispatch.parallel_for(EndsStep ? "nbody::kokkos::folded_mass_step" : "nbody::kokkos::folded_mass", policy,
                              kernel, EndsStep ? Touches::bodies_and_map : Touches::bodies);
}

// body_mapping=auto (GPU): one body per thread below N = 4096, two from there (team_tiled's rule
// before its four per thread from 16384, not measured here); lanes (the host spaces' default): a
// host vector group of bodies, vector_lanes.hpp's kLanes. Tile, team size and slices: team_shape.hpp.
// `bodies`: those whose pulls are summed.
template <class Real, int Dim>
int bodies_per_thread_of(const std::string& mapping, int bodies) {
    if (mapping == "auto") return bodies < 4096 ? 1 : 2;
    if (mapping == "pair") return 2;
    if (mapping == "quad") return 4;
    if (mapping == "lanes") return kLanes<Real, Dim>;
    return 1;  // "thread"
}

template <class Space, class Real, int Dim>
class FoldedMass final : public KokkosSimulation<Space, Real, Dim> {
public:
    FoldedMass(const Problem& problem, const TuningValues& tuning)
        : KokkosSimulation<Space, Real, Dim>(problem, tuning),
          tile_(tuning.at("tile") == "auto" ? auto_tile_that_fits(owned_bodies())
                                            : static_cast<int>(tuning_int(tuning, "tile"))),
          bodies_per_thread_(bodies_per_thread_of<Real, Dim>(tuning.at("body_mapping"), owned_bodies())),
          team_size_(tuning.at("team_size") == "auto" ? auto_team_size(tile_, bodies_per_thread_)
                                                      : static_cast<int>(tuning_int(tuning, "team_size"))),
          slices_(tuning.at("slices") == "auto" ? auto_slices(kRunsOnGpu<Space>, this->space().concurrency(), owned_bodies(),
                                                              this->n(), team_size_, tile_)
                                                : static_cast<int>(tuning_int(tuning, "slices"))),
          folded_{Kokkos::View<FoldedBody<Real, Dim>*, typename Space::memory_space>(
                      Kokkos::view_alloc(Kokkos::WithoutInitializing, "nbody::kokkos::folded_mass::bodies"), this->n()),
                  DeviceReals<Space, Real>(
                      Kokkos::view_alloc(Kokkos::WithoutInitializing, "nbody::kokkos::folded_mass::softening"),
                      kSofteningApart<Dim> ? this->n() : 0)} {
        check_team_threads<Space>(team_size_, 1);
        const std::size_t limit = Kokkos::TeamPolicy<Space>::scratch_size_max(0);
        const std::size_t bytes = scratch_bytes<Space, Real, Dim>(tile_);
        if (bytes > limit)
            throw UsageError("tuning tile=" + std::to_string(tile_) + " needs " + std::to_string(bytes) +
                             " bytes of level-0 scratch; " + SpaceName<Space>::value + " offers " +
                             std::to_string(limit));
        // Both kernels a simulation may launch: the pulls alone, and with step_end=fused the pulls
        // that end the step.
        int largest = 0;
        pull_kernel(NoStepEnd{}, &largest);
        if (this->fuses_step_end()) {
            int largest_fused = 0;
            pull_kernel(StepEndInPullKernel<Space, Real, Dim>{}, &largest_fused);  // empty Views: only sized
            largest = largest_fused < largest ? largest_fused : largest;
        }
        check_team_size<Space>(largest, team_size_, 1, this->workload());
    }

    // The host spaces' position bound (foldable_masses.hpp), from the bodies' masses, which never
    // change: called before upload.
    void bound_positions_for(const BodiesT<Real>& bodies) { position_bound_ = folded_position_bound(bodies, this->eps2()); }

private:
    void compute_pulls() override {
        pack();
        pull_kernel(NoStepEnd{});
    }
    void compute_pulls_and_end_step(const StepEndInPullKernel<Space, Real, Dim>& end) override {
        pack();
        pull_kernel(end);
    }
    bool adds_into_pulls() const override { return slices_ > 1; }

    int owned_bodies() const { return this->owned_range().end - this->owned_range().first; }

    // tile=auto: team_tiled's from N on the GPU, 512 on host spaces (a cache block, team_tiled's
    // default there), halved while the team's scratch exceeds the space's: in 3D float64 512 bodies
    // take 32832 bytes, over a host space's 32 KiB (the softenings apart cost 8 bytes a body).
    static int auto_tile_that_fits(int bodies) {
        const auto limit = static_cast<std::size_t>(Kokkos::TeamPolicy<Space>::scratch_size_max(0));
        int tile = kRunsOnGpu<Space> ? auto_tile(bodies) : 512;
        while (tile > 32 && scratch_bytes<Space, Real, Dim>(tile) > limit) tile /= 2;
        return tile;
    }

    void pack() {
        pack_folded_bodies(this->dispatch(), this->positions(), this->masses(), folded_, this->n(), this->eps2(),
                           beyond_bound_, position_bound_);
    }

    template <class Ending>
    void pull_kernel(const Ending& end, int* largest_team = nullptr) {
        if constexpr (!kRunsOnGpu<Space>)
            if (bodies_per_thread_ == kLanes<Real, Dim>) return launch<kLanes<Real, Dim>>(end, largest_team);
        switch (bodies_per_thread_) {
            case 2: return launch<2>(end, largest_team);
            case 4: return launch<4>(end, largest_team);
            default: return launch<1>(end, largest_team);
        }
    }
    template <int BodiesPerThread, class Ending>
    void launch(const Ending& end, int* largest_team) {
        folded_pulls<BodiesPerThread>(this->dispatch(), this->positions(), folded_, beyond_bound_, this->pulls(),
                                      this->n(), this->owned_range(), team_size_, tile_, slices_, end, largest_team);
    }

    int tile_;
    int bodies_per_thread_;
    int team_size_;
    int slices_;  // teams per block of bodies, each summing its share of the j tiles
    FoldedBodies<Space, Real, Dim> folded_;
    BoundFlag<Space> beyond_bound_{"nbody::kokkos::folded_mass::beyond_bound"};
    Real position_bound_ = 0;  // set from the masses at upload
};

// FoldedMass behind foldable_masses.hpp's mass check, built from (problem, tuning) as
// register_for_each_space builds a variant.
template <class Space, class Real, int Dim>
class CheckedFoldedMass final : public nbody::MassRangeChecked<Real, FoldedMass<Space, Real, Dim>> {
public:
    CheckedFoldedMass(const Problem& problem, const TuningValues& tuning)
        : nbody::MassRangeChecked<Real, FoldedMass<Space, Real, Dim>>(
              std::string("kokkos.folded_mass@") + SpaceName<Space>::value,
              std::string("kokkos.team_tiled@") + SpaceName<Space>::value, problem.constants.softening, problem,
              tuning) {}
};

}  // namespace folded
}  // namespace kokkos

void register_kokkos_folded_mass(Registry& registry) {
    // team_tiled's tunings without the vector-lane mappings (measured slower there); GPU defaults
    // from N (auto_tile, bodies_per_thread_of, auto_team_size): from N = 65536 256
    // threads of 2 bodies each on 512-body tiles. Host spaces run teams of one thread.
    kokkos::register_for_each_space<kokkos::folded::CheckedFoldedMass>(
        registry, "folded_mass",
        "team_tiled's tiles with body j scaled by m^-1/2 once per step (one multiply fewer per interaction)",
        [](bool gpu) {
            TuningParameter mapping{.name = "body_mapping",
                                    .description = "thread: one body per thread; pair/quad: two/four per thread, "
                                                   "sharing each staged load (independent dependency chains)",
                                    .default_value = gpu ? "auto" : "lanes",
                                    .allowed_values = {"thread", "pair", "quad"},
                                    .min_value = 0,
                                    .max_value = 0};
            TuningParameter team_size =
                kokkos::power_of_two_tuning("team_size", "threads per team", gpu ? 32 : 1, gpu ? 1024 : 1, 1);
            TuningParameter tile =
                kokkos::power_of_two_tuning("tile", "bodies per tile (and per team's block of bodies)", 32, 1024, 512);
            tile.description += gpu ? " (auto: 32 below N = 2048, 64 below 8192, 128 below 32768, 256 below 65536, "
                                      "else 512; halved while over the level-0 scratch)"
                                    : " (auto: 512, halved while over the level-0 scratch)";
            tile.default_value = "auto";
            tile.allowed_values.insert(tile.allowed_values.begin(), "auto");
            if (!gpu) {
                mapping.description += "; lanes: a group of bodies in the lanes of vector registers, the loop over "
                                       "them vectorised (64 floats or 16-24 doubles with AVX-512, 128 bytes elsewhere)";
                mapping.allowed_values.push_back("lanes");
            } else {
                mapping.description += " (auto: thread below N = 4096, else pair)";
                mapping.allowed_values.insert(mapping.allowed_values.begin(), "auto");
                team_size.description += " (auto: tile / 2 with body_mapping=pair, tile / 4 with quad, else min(tile, 256))";
                team_size.default_value = "auto";
                team_size.allowed_values.insert(team_size.allowed_values.begin(), "auto");
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
                kokkos::step_end_tuning()};
        },
        // Not measured yet: team_tiled's (its kernel with one multiply fewer per interaction); to be set
        // from results/*.json once measured.
        // @openmp with body_mapping=lanes reached 0.16-0.23 on the H200's 16-core host
        // (results/h200-one-source.txt)
        {.gpu = 0.453, .host = 0.10, .gpu_full_rate_bodies = 8192, .gpu_step_overhead_s = 2e-06},
        // slices > 1 (auto: by the threads) add partials by atomic_add
        {.gpu = Reproducibility::run_to_run, .host = Reproducibility::run_to_run});
}

}  // namespace nbody
