// models/kokkos/grid_barrier.hpp, kokkos.persistent's barrier across the teams of one kernel: on every
// space this Kokkos has, teams that all run at once see each other's writes after each barrier,
// across launches (the arrivals count on); and where the teams cannot all run at once (Serial runs
// them one after another) the first barrier gives up, every team leaves, and the counter says so,
// instead of the kernel hanging.
#include <gtest/gtest.h>

#include <string>

#include "grid_barrier.hpp"
#include "kokkos_simulation.hpp"

namespace nbody::kokkos {
namespace {

// Free functions, not TEST bodies: nvcc refuses extended lambdas in a private member function.

// `rounds` rounds in which each team marks its slot, meets the others, and checks every team's mark
// of the round; returns the marks found wrong.
template <class Space>
int marks_missed_across_barriers(GridBarrier<Space>& barrier, int rounds) {
    using Policy = Kokkos::TeamPolicy<Space>;
    const int teams = barrier.teams;
    Kokkos::View<int*, typename Space::memory_space> marks("marks", static_cast<std::size_t>(rounds) * teams);
    Kokkos::View<int, typename Space::memory_space> missed("missed");
    const GridBarrier<Space> b = barrier;
    Kokkos::parallel_for(
        "grid_barrier_test", Policy(teams, kRunsOnGpu<Space> ? 32 : 1),
        KOKKOS_LAMBDA(const typename Policy::member_type& team) {
            if (!b.wait(team, 1, true)) {
                Kokkos::single(Kokkos::PerTeam(team), [&]() { Kokkos::atomic_add(&missed(), 1000000); });
                return;
            }
            for (int round = 0; round < rounds; ++round) {
                Kokkos::single(Kokkos::PerTeam(team),
                               [&]() { marks(round * teams + team.league_rank()) = round + 1; });
                b.wait(team, round + 2, false);
                Kokkos::parallel_for(Kokkos::TeamThreadRange(team, teams), [&](const int other) {
                    if (marks(round * teams + other) != round + 1) Kokkos::atomic_add(&missed(), 1);
                });
            }
        });
    int host_missed = 0;
    Kokkos::deep_copy(host_missed, missed);
    barrier.before += static_cast<typename GridBarrier<Space>::Counter>(teams) * (rounds + 1);
    return host_missed;
}

template <class Space>
typename GridBarrier<Space>::Counter arrivals_of(const GridBarrier<Space>& barrier) {
    return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), barrier.arrivals)(0);
}

// Teams that cannot all run at once: each records whether its rendezvous passed.
template <class Space>
int rendezvous_passed(const GridBarrier<Space>& b) {
    using Policy = Kokkos::TeamPolicy<Space>;
    Kokkos::View<int, typename Space::memory_space> passed("passed");
    Kokkos::parallel_for(
        "grid_barrier_abandon_test", Policy(b.teams, 1), KOKKOS_LAMBDA(const typename Policy::member_type& team) {
            const bool met = b.wait(team, 1, true);
            Kokkos::single(Kokkos::PerTeam(team), [&]() {
                if (met) Kokkos::atomic_add(&passed(), 1);
            });
        });
    int host_passed = 0;
    Kokkos::deep_copy(host_passed, passed);
    return host_passed;
}

// The teams that surely run at once: every host thread, or a few small teams on a GPU.
template <class Space>
int teams_running_at_once() {
    return kRunsOnGpu<Space> ? 8 : Space().concurrency();
}

TEST(GridBarrier, TeamsSeeEachOtherAfterEveryBarrierAcrossLaunches) {
    ensure_initialized();
    for_each_space([](auto tag) {
        using Space = typename decltype(tag)::type;
        GridBarrier<Space> barrier{typename GridBarrier<Space>::Arrivals("arrivals", 1), 0,
                                   teams_running_at_once<Space>()};
        for (int launch = 0; launch < 3; ++launch) {
            EXPECT_EQ(marks_missed_across_barriers(barrier, 40), 0) << SpaceName<Space>::value << " launch " << launch;
            EXPECT_EQ(arrivals_of(barrier), barrier.before) << SpaceName<Space>::value;
        }
    });
}

TEST(GridBarrier, ARendezvousOfTeamsThatCannotAllRunIsAbandoned) {
    ensure_initialized();
#ifdef KOKKOS_ENABLE_SERIAL
    // Serial runs the teams one after another: the first waits for the others in vain, gives up and
    // marks the counter; the later ones see the mark as they arrive.
    using Space = Kokkos::Serial;
    const GridBarrier<Space> barrier{typename GridBarrier<Space>::Arrivals("arrivals", 1), 0, 3};
    EXPECT_EQ(rendezvous_passed(barrier), 0);
    const auto arrivals = arrivals_of(barrier);
    EXPECT_NE(arrivals & GridBarrier<Space>::kAbandoned, 0u);
    EXPECT_EQ(arrivals & ~GridBarrier<Space>::kAbandoned, 3u);  // every team came, none went on
    // One team alone meets itself at once.
    const GridBarrier<Space> alone{typename GridBarrier<Space>::Arrivals("arrivals", 1), 0, 1};
    EXPECT_EQ(rendezvous_passed(alone), 1);
#else
    GTEST_SKIP() << "this Kokkos has no Serial space";
#endif
}

}  // namespace
}  // namespace nbody::kokkos
