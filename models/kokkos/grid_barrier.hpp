#pragma once
// A barrier across all the teams of one TeamPolicy kernel, for kokkos.persistent (a whole advance()
// in one kernel). Kokkos has no cooperative launch: nothing promises that the league's teams run at
// once, and a barrier waiting for a team that cannot start until another finishes would hang. So
// the first barrier of a launch is a rendezvous with a bounded wait: a team that has waited
// kRendezvousSpins reads without every team arriving marks the counter abandoned (one compare-
// exchange, so that it cannot happen once the last team has arrived), and every team that sees the
// mark leaves without touching the simulation's state; the host finds the mark after the kernel and
// throws. Teams that have all met once are all running, and running teams make progress (GPU
// blocks resident on their SMs, host threads scheduled by the OS), so the later barriers wait
// without bound, as CUDA's grid.sync() does. Valid for Kokkos 3.4 through 4.x.
#include <Kokkos_Core.hpp>

#include <type_traits>

namespace nbody::kokkos {

// A relaxed read of a value other threads change atomically meanwhile: an atomic add of zero, the
// one atomic read every Kokkos from 3.4 on offers publicly (3.4 keeps atomic_load internal, and 4.x's
// is a compare-exchange loop on the GPU: team_tiled's fused step measured 13 % slower with it).
template <class T>
KOKKOS_INLINE_FUNCTION T atomic_read(T* value) {
    return Kokkos::atomic_fetch_add(value, T(0));
}

// A 32-bit int or float that other threads write atomically meanwhile: on the GPU a relaxed load
// (ld.relaxed.gpu, a strong load: no data race, the cost of a plain load), where atomic_read is a
// read-modify-write through L2's atomic unit; elsewhere atomic_read.
template <class T>
KOKKOS_INLINE_FUNCTION T relaxed_load(T* value) {
    static_assert(std::is_same_v<T, int> || std::is_same_v<T, float>, "a 32-bit int or float");
#if defined(__CUDA_ARCH__)
    T seen;
    if constexpr (std::is_same_v<T, int>)
        asm volatile("ld.relaxed.gpu.b32 %0, [%1];" : "=r"(seen) : "l"(value));
    else
        asm volatile("ld.relaxed.gpu.b32 %0, [%1];" : "=f"(seen) : "l"(value));
    return seen;
#else
    return atomic_read(value);
#endif
}

// `value` into `target`, which other threads may write at the same time: on the GPU a relaxed store
// (st.relaxed.gpu: strong, so concurrent writes are no data race), where atomic_exchange is a
// read-modify-write; elsewhere atomic_exchange.
template <class T>
KOKKOS_INLINE_FUNCTION void relaxed_store(T* target, T value) {
    static_assert(std::is_same_v<T, int> || std::is_same_v<T, float>, "a 32-bit int or float");
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<T, int>)
        asm volatile("st.relaxed.gpu.b32 [%0], %1;" ::"l"(target), "r"(value));
    else
        asm volatile("st.relaxed.gpu.b32 [%0], %1;" ::"l"(target), "f"(value));
#else
    Kokkos::atomic_exchange(target, value);
#endif
}

// A team's arrival, counted in `counter` (one thread of the team calls it after a team barrier): the
// team's writes before it are released to the teams that later see the count, and the writes of the
// teams counted before are acquired; returns the count after it. On the GPU one acquire-release
// atomic add, what CUDA's grid.sync() compiles to, instead of Kokkos::memory_fence(), a sequentially
// consistent fence (membar.gl): with two of those per team and barrier, kokkos.persistent's step at
// N = 1024 cost 43 us with 128 teams (measured). On the host the same acquire-release add, as the
// compiler's atomic builtin (fences around a relaxed add order the same, but ThreadSanitizer, which
// checks the host spaces in CI, does not model fences and reported every barrier as a race).
template <class T>
KOKKOS_INLINE_FUNCTION T arrive_at(T* counter) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "a 32- or 64-bit counter");
#if defined(__CUDA_ARCH__)
    T before;
    if constexpr (sizeof(T) == 8)
        asm volatile("atom.acq_rel.gpu.add.u64 %0, [%1], 1;" : "=l"(before) : "l"(counter) : "memory");
    else
        asm volatile("atom.acq_rel.gpu.add.u32 %0, [%1], 1;" : "=r"(before) : "l"(counter) : "memory");
    return before + 1;
#else
    return __atomic_add_fetch(counter, T(1), __ATOMIC_ACQ_REL);
#endif
}

// The counter as a waiting team reads it again; once it shows every arrival, the other teams'
// writes before their arrivals are seen (acquire).
KOKKOS_INLINE_FUNCTION unsigned long long read_arrivals(unsigned long long* counter) {
#if defined(__CUDA_ARCH__)
    unsigned long long seen;
    asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(seen) : "l"(counter) : "memory");
    return seen;
#else
    return __atomic_load_n(counter, __ATOMIC_ACQUIRE);
#endif
}

template <class Space>
struct GridBarrier {
    using Counter = unsigned long long;
    // The arrivals counter's mark of an abandoned rendezvous (far above any count of arrivals).
    static constexpr Counter kAbandoned = Counter{1} << 62;
    // Reads of the counter a team makes at the rendezvous before it gives up, about a second: teams
    // that can all run meet within microseconds on a GPU (a read there is ~0.5 us), but host threads
    // may wait for a busy OS to schedule them (a read there is 1-6 ns; 2^20 of them, milliseconds,
    // gave up on a loaded 2-core machine).
#if defined(__CUDA_ARCH__)
    static constexpr long kRendezvousSpins = 1L << 21;
#else
    static constexpr long kRendezvousSpins = 1L << 28;
#endif

    using Arrivals = Kokkos::View<Counter*, typename Space::memory_space>;

    Arrivals arrivals;  // one element: every arrival so far
    Counter before = 0;  // arrivals before this launch: teams x the barriers of earlier launches
    int teams = 1;       // the league size

    // The team's wait at the launch's `barrier`-th barrier (1 the first). The team's writes before it
    // are seen by every team after it. `rendezvous`: the bounded first wait; false when it was
    // abandoned (the team must leave without touching the state).
    template <class Member>
    KOKKOS_INLINE_FUNCTION bool wait(const Member& team, int barrier, bool rendezvous) const {
        team.team_barrier();
        int met = 1;
        Kokkos::single(
            Kokkos::PerTeam(team),
            [&](int& all_met) {
                const Counter target = before + static_cast<Counter>(barrier) * static_cast<Counter>(teams);
                Counter seen = arrive_at(&arrivals(0));
                long spins = 0;
                all_met = 1;
                while (true) {
                    if (seen & kAbandoned) {
                        all_met = 0;
                        break;
                    }
                    if (seen >= target) break;
                    if (rendezvous && ++spins > kRendezvousSpins &&
                        Kokkos::atomic_compare_exchange(&arrivals(0), seen, seen | kAbandoned) == seen) {
                        all_met = 0;
                        break;
                    }
                    seen = read_arrivals(&arrivals(0));
                }
            },
            met);
        team.team_barrier();
        return met != 0;
    }
};

}  // namespace nbody::kokkos
