#pragma once
// The end of a step and the activity map on a Kokkos space: advance before and after the force, the
// map counted incrementally or recounted (the `map` tuning), the end of a step fused into a pull
// kernel (StepEndInPullKernel), and what a variant's one kernel per advance() reads and writes.
#include <Kokkos_Core.hpp>
#include <Kokkos_ScatterView.hpp>

#include "kokkos_variant.hpp"

namespace nbody::kokkos {

// Advance before force on the owned bodies (leapfrog only: Euler has nothing to do then). Public
// free functions: nvcc's extended lambdas must not live in private member functions.
template <class Space, class Real, int Dim>
void advance_before_force_owned(Dispatch<Space>& dispatch, Motion<Space, Real, Dim> s, OwnedRange owned,
                                Integrator integrator, Real G, Real dt) {
    dispatch.parallel_for(
        "nbody::kokkos::advance_before_force", Kokkos::RangePolicy<Space>(dispatch.space(), owned.first, owned.end),
        KOKKOS_LAMBDA(const int i) {
            Vec<Real, Dim> p = load(s.p, i), v = load(s.v, i);
            advance_before_force(integrator, p, v, load(s.pull, i), G, dt);
            store(s.p, i, p);
            store(s.v, i, v);
        });
}

// What the kernel after the pulls does to each owned body besides finding its cell: one kernel per
// step instead of one per half and one to clear the pulls. The other ranks' bodies (over several
// ranks) only have their cell found, from the positions gathered this step.
template <class Real>
struct StepEnd {
    Integrator integrator;
    Real G, dt;
    bool advance;            // advance after force (false at upload: the map of the initial positions)
    bool next_before_force;  // leapfrog: the next step's first half too, with the same pull
    bool zero_pulls;         // leave the pulls zero for a pull kernel that adds into them
    OwnedRange owned;
};

// A body's end of step (StepEnd) on its position and velocity; returns the activity cell of its
// position after the step.
template <class Real, int Dim>
KOKKOS_INLINE_FUNCTION int end_step_of(Vec<Real, Dim>& p, Vec<Real, Dim>& v, const Vec<Real, Dim>& pull, int d,
                                       const StepEnd<Real>& e) {
    if (e.advance) advance_after_force(e.integrator, p, v, pull, e.G, e.dt);
    const int cell = activity_cell(p[0], p[1], d);
    if (e.next_before_force) advance_before_force(e.integrator, p, v, pull, e.G, e.dt);
    return cell;
}

// Body i's end of step (StepEnd) in place; returns the activity cell of its positions after the step.
template <class Space, class Real, int Dim>
KOKKOS_INLINE_FUNCTION int end_step(const Motion<Space, Real, Dim>& s, int i, int d, const StepEnd<Real>& e) {
    // Another rank's body, or a map-only end (which may run beside a pull still adding into the pulls).
    if (!e.owned.contains(i) || !(e.advance || e.next_before_force || e.zero_pulls))
        return activity_cell(s.p[0](i), s.p[1](i), d);
    Vec<Real, Dim> p = load(s.p, i), v = load(s.v, i);
    const int cell = end_step_of(p, v, load(s.pull, i), d, e);
    if (e.advance || e.next_before_force) {
        store(s.p, i, p);
        store(s.v, i, v);
    }
    if (e.zero_pulls) store(s.pull, i, Vec<Real, Dim>{});
    return cell;
}

// The moves of one step (map=incremental): the cell each body left and entered, `from` kStayed
// when it kept its cell.
template <class Space>
struct Moves {
    DeviceCounts<Space> from, to;
};

// The counts and map of one simulation. `cell` (each body's cell, -1 outside) and `moved` (the
// moves of the last step) exist for map=incremental only.
template <class Space>
struct MapState {
    DeviceCounts<Space> counts, cell;
    Moves<Space> moved;
    DeviceReals<Space, float> map;
    float scale;
};

inline constexpr int kStayed = -2;  // cells are >= -1

// Body i's place in map=incremental's bookkeeping: the cell it is counted in and its last move in
// a Moves (left kStayed when it kept its cell). kokkos.persistent reads it before the pull sum, so
// that the round trip to memory overlaps the sum instead of following it.
struct CountedBody {
    int cell, left, entered;
};

template <class Space>
KOKKOS_INLINE_FUNCTION CountedBody counted_body(const MapState<Space>& m, const Moves<Space>& moves, int i) {
    return {m.cell(i), moves.from(i), moves.to(i)};
}

// map=incremental: body i, counted in `before` and now in `cell`, moves one count if it changed
// cell, and records its move in `moves`.
template <class Space>
KOKKOS_INLINE_FUNCTION void move_count(const MapState<Space>& m, const Moves<Space>& moves, int i, int cell,
                                       int before) {
    if (cell != before) {
        if (before >= 0) Kokkos::atomic_add(&m.counts(before), -1);
        if (cell >= 0) Kokkos::atomic_add(&m.counts(cell), 1);
        m.cell(i) = cell;
        moves.to(i) = cell;
    }
    moves.from(i) = cell != before ? before : kStayed;
}

template <class Space>
KOKKOS_INLINE_FUNCTION void move_count(const MapState<Space>& m, const Moves<Space>& moves, int i, int cell) {
    move_count(m, moves, i, cell, m.cell(i));
}

// map = count * scale (normalise_map's expression) in the cells a move left and entered (nothing
// for kStayed). The counts are read atomically (relaxed), as the next step may be moving them
// already (step_end=fused, kokkos.persistent), and both before either cell is written: one round
// trip to memory, not two; bodies sharing a cell write it atomically (relaxed): plain stores from
// several threads to one cell are a data race (ThreadSanitizer, tsan preset). On the GPU
// relaxed loads and stores, not read-modify-writes (relaxed_load, relaxed_store).
template <class Space>
KOKKOS_INLINE_FUNCTION void rewrite_cells(const MapState<Space>& m, int left, int entered) {
    if (left == kStayed) return;
    const int left_count = left >= 0 ? relaxed_load(&m.counts(left)) : 0;
    const int entered_count = entered >= 0 ? relaxed_load(&m.counts(entered)) : 0;
    if (left >= 0) relaxed_store(&m.map(left), static_cast<float>(left_count) * m.scale);
    if (entered >= 0) relaxed_store(&m.map(entered), static_cast<float>(entered_count) * m.scale);
}

// The cells body i's move in `moves` left and entered, rewritten.
template <class Space>
KOKKOS_INLINE_FUNCTION void rewrite_cells_of(const MapState<Space>& m, const Moves<Space>& moves, int i) {
    const int left = moves.from(i);
    if (left != kStayed) rewrite_cells(m, left, moves.to(i));
}

// A full recount: counts cleared, every body counted; with `record_cells` each body's cell kept
// for later incremental steps.
template <class Space, class Real, int Dim>
void end_step_and_count_atomic(Dispatch<Space>& dispatch, Motion<Space, Real, Dim> s, MapState<Space> m, int n,
                               int d, StepEnd<Real> e, bool record_cells) {
    Kokkos::deep_copy(dispatch.space(), m.counts, 0);
    dispatch.parallel_for(
        "nbody::kokkos::end_step_count_atomic", Kokkos::RangePolicy<Space>(dispatch.space(), 0, n),
        KOKKOS_LAMBDA(const int i) {
            const int cell = end_step(s, i, d, e);
            if (cell >= 0) Kokkos::atomic_add(&m.counts(cell), 1);
            if (record_cells) {
                m.cell(i) = cell;
                m.moved.from(i) = kStayed;
            }
        },
        Touches::bodies_and_map);
}

template <class Space, class Real, int Dim>
void end_step_and_count_scatter(Dispatch<Space>& dispatch, Motion<Space, Real, Dim> s, MapState<Space> m,
                                CountScatter<Space> scatter_counts, int n, int d, StepEnd<Real> e) {
    Kokkos::deep_copy(dispatch.space(), m.counts, 0);
    scatter_counts.reset(dispatch.space());
    dispatch.parallel_for(
        "nbody::kokkos::end_step_count_scatter", Kokkos::RangePolicy<Space>(dispatch.space(), 0, n),
        KOKKOS_LAMBDA(const int i) {
            const int cell = end_step(s, i, d, e);
            if (cell >= 0) {
                auto access = scatter_counts.access();
                access(cell) += 1;
            }
        },
        Touches::bodies_and_map);
    Kokkos::Experimental::contribute(m.counts, scatter_counts);
}

// The whole map from the counts.
template <class Space>
void normalise_map(Dispatch<Space>& dispatch, MapState<Space> m) {
    dispatch.parallel_for(
        "nbody::kokkos::normalise_map",
        Kokkos::RangePolicy<Space>(dispatch.space(), 0, static_cast<int>(m.map.extent(0))),
        KOKKOS_LAMBDA(const int c) { m.map(c) = static_cast<float>(m.counts(c)) * m.scale; }, Touches::map);
}

// An incremental step: a body whose cell changed moves one count from the cell it left to the one
// it entered. The map cannot be rewritten in the same kernel (a cell's count is final only once
// every body has moved), hence rewrite_moved_cells.
template <class Space, class Real, int Dim>
void end_step_and_move_counts(Dispatch<Space>& dispatch, Motion<Space, Real, Dim> s, MapState<Space> m, int n,
                              int d, StepEnd<Real> e) {
    dispatch.parallel_for(
        "nbody::kokkos::end_step_move_counts", Kokkos::RangePolicy<Space>(dispatch.space(), 0, n),
        KOKKOS_LAMBDA(const int i) { move_count(m, m.moved, i, end_step(s, i, d, e)); }, Touches::bodies_and_map);
}

// The cells bodies left or entered in the last step rewritten (rewrite_cells_of); the other cells
// keep counts and values. Recorded beside the next step's pull kernel (Touches::map).
template <class Space>
void rewrite_moved_cells(Dispatch<Space>& dispatch, MapState<Space> m, int n) {
    dispatch.parallel_for(
        "nbody::kokkos::rewrite_moved_cells", Kokkos::RangePolicy<Space>(dispatch.space(), 0, n),
        KOKKOS_LAMBDA(const int i) { rewrite_cells_of(m, m.moved, i); }, Touches::map);
}

// step_end=fused: the rest of a step done by the pull kernel itself, so that a step is one kernel
// (one dependent kernel per step instead of two: each costs ~2.5 us on the GPU whatever its work,
// docs/performance-kokkos.md). The pull kernel's teams, `slices` per block of bodies, each add their
// partial pulls and count themselves in (an acquire-release count of arrivals, arrive_at: the "last
// block" pattern, no waiting). The last team to arrive ends the block's step: its bodies advance,
// their new positions go to `p_next` (the other teams may still be reading `s.p`: positions are
// double-buffered) and they move their map counts, recording the moves in `next_moved` (double-
// buffered too). The first team to arrive, idle otherwise, rewrites the map cells of the block's
// moves in the previous step (`m.moved`), so that no kernel of its own is needed either: a cell
// rewritten while this step still moves counts is rewritten again by a later step or by the
// rewrite kernel after an advance()'s last step.
template <class Space, class Real, int Dim>
struct StepEndInPullKernel {
    Motion<Space, Real, Dim> s;           // p: the step's positions, read by every team
    DeviceAxes<Space, Real, Dim> p_next;  // the positions after the step
    MapState<Space> m;                    // m.moved: the previous step's moves
    Moves<Space> next_moved;              // this step's moves
    DeviceCounts<Space> arrivals;         // per block of bodies: the teams that have added their pulls
    StepEnd<Real> e;                      // e.zero_pulls: take_added_pull() leaves the added pulls zero
    int d;

    // The map cells the block's bodies [first, first + count) left and entered in the previous step.
    template <class Member>
    KOKKOS_INLINE_FUNCTION void rewrite_last_moves(const Member& team, int first, int count) const {
        Kokkos::parallel_for(Kokkos::TeamVectorRange(team, count),
                             [&](const int k) { rewrite_cells_of(m, m.moved, first + k); });
    }

    // After the team has added its partial pulls: its place among the `slices` teams of `block`
    // (0 first, slices - 1 last); the last sees every team's additions (each releases them as it
    // counts itself in).
    template <class Member>
    KOKKOS_INLINE_FUNCTION int arrive(const Member& team, int block, int slices) const {
        team.team_barrier();
        int place = 0;
        Kokkos::single(
            Kokkos::PerTeam(team),
            [&](int& arrived_before) {
                arrived_before = arrive_at(&arrivals(block)) - 1;
                if (arrived_before == slices - 1) arrivals(block) = 0;  // every team is in: ready for the next step
            },
            place);
        return place;
    }

    // Body i's summed pull as the teams added it; zeroed for the next step unless kept. Read-modify-
    // writes although every adding team has been acquired: a relaxed load and store instead measured
    // 3 % slower at N = 1024 on the H100 (docs/performance-kokkos.md).
    KOKKOS_INLINE_FUNCTION Vec<Real, Dim> take_added_pull(int i) const {
        Vec<Real, Dim> pull;
        NBODY_UNROLL_AXES
        for (int k = 0; k < Dim; ++k)
            pull[k] = e.zero_pulls ? Kokkos::atomic_exchange(&s.pull[k](i), Real(0)) : atomic_read(&s.pull[k](i));
        return pull;
    }

    // Body i's end of step from its pull: the new position into p_next, its count moved.
    KOKKOS_INLINE_FUNCTION void end_body(int i, const Vec<Real, Dim>& pull) const {
        Vec<Real, Dim> p = load(s.p, i), v = load(s.v, i);
        const int cell = end_step_of(p, v, pull, d, e);
        store(p_next, i, p);
        store(s.v, i, v);
        move_count(m, next_moved, i, cell);
    }
};

// The end of a team of a tiled pull kernel (team_tiled, folded_mass), after the team summed its
// share of the j tiles into `partial`, the pulls of the block's bodies [block_start, block_start +
// block_size): with one slice `write(i, pull)` keeps each (unless the kernel ends the step, which
// keeps them below), with several the team adds them atomically. Where the kernel ends the step
// (EndsStep: `end_of_step` is a StepEndInPullKernel), the last of the block's `slices` teams then
// ends its bodies' step and the first rewrites their last moves.
template <bool EndsStep, class Member, class Ending, class Partial, class View, int Dim, class Write>
KOKKOS_INLINE_FUNCTION void end_tiled_team(const Member& team, const Ending& end_of_step, const Partial& partial,
                                           const Axes<View, Dim>& pull, int block, int block_start, int block_size,
                                           int slices, const Write& write) {
    Kokkos::parallel_for(Kokkos::TeamVectorRange(team, block_size), [&](const int k) {
        if (slices == 1) {
            if (!EndsStep) write(block_start + k, partial(k));
        } else {
            NBODY_UNROLL_AXES
            for (int axis = 0; axis < Dim; ++axis)
                Kokkos::atomic_add(&pull[axis](block_start + k), partial(k)[axis]);
        }
    });
    if constexpr (EndsStep) {
        const int place = slices > 1 ? end_of_step.arrive(team, block, slices) : 0;
        if (place == slices - 1) {
            Kokkos::parallel_for(Kokkos::TeamVectorRange(team, block_size), [&](const int k) {
                const int i = block_start + k;
                Vec<typename View::non_const_value_type, Dim> body_pull = partial(k);
                if (slices > 1) {
                    body_pull = end_of_step.take_added_pull(i);
                } else {
                    store(pull, i, body_pull);  // kept as compute_pulls() keeps it
                }
                end_of_step.end_body(i, body_pull);
            });
        }
        if (place == 0) end_of_step.rewrite_last_moves(team, block_start, block_size);
    }
}

// StepKernels::one_per_advance: what the variant's one kernel for `steps` steps reads and writes.
// Steps alternate the positions between s.p (the current ones at the start) and p_next; a body's
// previous move in m.moved is rewritten by the thread that moves it next (one thread per body, so
// the moves are not double-buffered). e: advance after force; e.next_before_force: leapfrog, whose
// first half kick of the first step the kernel does too, from s.pull (kept for the next advance()).
template <class Space, class Real, int Dim>
struct WholeAdvance {
    Motion<Space, Real, Dim> s;
    DeviceAxes<Space, Real, Dim> p_next;
    DeviceReals<Space, Real> m;  // masses
    MapState<Space> map;
    StepEnd<Real> e;
    int n, d, steps;
};

// The end of step of the owned bodies without counting (Euler over several ranks: the map waits
// for the positions gathered after it).
template <class Space, class Real, int Dim>
void end_step_owned(Dispatch<Space>& dispatch, Motion<Space, Real, Dim> s, int d, StepEnd<Real> e) {
    dispatch.parallel_for(
        "nbody::kokkos::end_step_owned", Kokkos::RangePolicy<Space>(dispatch.space(), e.owned.first, e.owned.end),
        KOKKOS_LAMBDA(const int i) { end_step(s, i, d, e); });
}

// Every pull zero, one kernel (a graph node, where deep_copy is not).
template <class Space, class Real, int Dim>
void zero_pulls_of(Dispatch<Space>& dispatch, DeviceAxes<Space, Real, Dim> pull, int n) {
    dispatch.parallel_for(
        "nbody::kokkos::zero_pulls", Kokkos::RangePolicy<Space>(dispatch.space(), 0, n),
        KOKKOS_LAMBDA(const int i) { store(pull, i, Vec<Real, Dim>{}); });
}

}  // namespace nbody::kokkos
