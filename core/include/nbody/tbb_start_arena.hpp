#pragma once
// The TBB arena the host models on TBB (stdpar, thrust@tbb) run their parallel algorithms in: one
// slot per CPU the process started on, and every thread that works in it on those CPUs
// (start_affinity.hpp). Left to itself TBB takes its concurrency and its workers' mask from the
// thread that first uses it, and under OMP_PROC_BIND the OpenMP runtime pins that thread to one
// core (at load or at its first parallel region): every worker would share that core. Include only where TBB is linked.
#include <sched.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <tbb/task_scheduler_observer.h>

#include <cstddef>
#include <utility>

#include "nbody/start_affinity.hpp"

namespace nbody {

namespace detail {

// Gives every thread that enters the arena the start mask: a worker keeps it (it only ever works
// for TBB), the thread that calls execute() gets its own mask back when it leaves.
class StartAffinityObserver final : public tbb::task_scheduler_observer {
public:
    explicit StartAffinityObserver(tbb::task_arena& arena) : tbb::task_scheduler_observer(arena) { observe(true); }
    ~StartAffinityObserver() override { observe(false); }

    void on_scheduler_entry(bool is_worker) override {
        ThreadMask& thread = this_thread();
        if (is_worker) {
            if (!thread.on_start_mask) sched_setaffinity(0, sizeof(cpu_set_t), &start_affinity());
            thread.on_start_mask = true;
            return;
        }
        if (thread.depth++ == 0) {
            thread.saved = sched_getaffinity(0, sizeof thread.mask, &thread.mask) == 0;
            sched_setaffinity(0, sizeof(cpu_set_t), &start_affinity());
        }
    }

    void on_scheduler_exit(bool is_worker) override {
        ThreadMask& thread = this_thread();
        if (is_worker || thread.depth == 0) return;
        if (--thread.depth == 0 && thread.saved) sched_setaffinity(0, sizeof thread.mask, &thread.mask);
    }

private:
    struct ThreadMask {
        bool on_start_mask = false;  // a worker, placed once
        int depth = 0;               // an external thread's nested entries
        bool saved = false;
        cpu_set_t mask;              // an external thread's own mask, restored on leaving
    };
    static ThreadMask& this_thread() {
        thread_local ThreadMask thread;
        return thread;
    }
};

struct StartAffinityArena {
    // The pool may hold a worker per start CPU, whatever concurrency TBB read from a pinned thread.
    tbb::global_control workers{tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(start_cpu_count())};
    tbb::task_arena arena{start_cpu_count()};
    StartAffinityObserver observer{arena};
};

}  // namespace detail

// The arena (created at the first call): max_concurrency() is start_cpu_count().
inline tbb::task_arena& start_affinity_arena() {
    static detail::StartAffinityArena shared;
    return shared.arena;
}

// `work()` in that arena: the parallel algorithms it calls run there.
template <class Work>
decltype(auto) in_start_affinity_arena(Work&& work) {
    return start_affinity_arena().execute(std::forward<Work>(work));
}

}  // namespace nbody
