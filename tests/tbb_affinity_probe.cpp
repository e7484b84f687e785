// What TBB's threads run on in this process, printed as "key value" lines for test_thread_binding
// (which starts it with and without OMP_PROC_BIND=close OMP_PLACES=cores):
//   start_cpus L           the CPUs the process started on (start_affinity.hpp)
//   main_cpus L            the main thread's CPUs once OpenMP has started, before any variant runs
//                          (one CPU under OpenMP's binding: a runtime binds it at load or at its
//                          first parallel region, so the probe opens one first)
//   openmp_threads T       omp_get_max_threads()
// for each TBB variant of the build (execution space "tbb"), after 3 steps of N = 4096:
//   variant ID new_threads K new_thread_cpus L;..   the threads created since before the first
//                                                   variant ran (TBB's workers) and their CPUs
//                                                   (distinct lists)
//   variant ID main_cpus L                          the main thread's CPUs after the run
// then the arena itself:
//   arena_concurrency C    the TBB arena the host models run in
//   arena_running R        how many of C tasks, each waiting for all C, ran at once in that arena
//   arena_task_cpus L;..   the CPUs of the threads those tasks ran on (distinct lists)
#include <dirent.h>
#include <omp.h>
#include <sched.h>
#include <tbb/parallel_for.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "nbody/generator.hpp"
#include "nbody/registry.hpp"
#include "nbody/start_affinity.hpp"
#include "nbody/tbb_start_arena.hpp"

namespace {

std::string cpus_of(pid_t thread) {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (sched_getaffinity(thread, sizeof mask, &mask) != 0) return "unreadable";
    return nbody::cpu_list(mask);
}

std::string joined(const std::set<std::string>& lists) {
    std::string text;
    for (const std::string& list : lists) text += (text.empty() ? "" : ";") + list;
    return text.empty() ? "-" : text;
}

std::set<pid_t> threads_of_this_process() {
    std::set<pid_t> threads;
    if (DIR* tasks = opendir("/proc/self/task")) {
        while (const dirent* entry = readdir(tasks))
            if (entry->d_name[0] != '.') threads.insert(static_cast<pid_t>(std::stoi(entry->d_name)));
        closedir(tasks);
    }
    return threads;
}

}  // namespace

int main() {
    std::printf("start_cpus %s\n", nbody::cpu_list(nbody::start_affinity()).c_str());
    int openmp_threads = 0;
#pragma omp parallel
    {
#pragma omp single
        openmp_threads = omp_get_num_threads();
    }
    std::printf("main_cpus %s\n", cpus_of(0).c_str());
    std::printf("openmp_threads %d\n", openmp_threads);

    const nbody::Workload workload;  // 2D float32 Euler
    const nbody::Registry& registry = nbody::builtin_registry();
    const std::set<pid_t> before = threads_of_this_process();  // before TBB's first use
    for (const nbody::VariantDescriptor& variant : registry.all()) {
        if (variant.execution_space != "tbb" || !variant.availability().available || !variant.workloads.supports(workload)) continue;
        nbody::Problem problem;
        problem.n = 4096;
        problem.d = 16;
        problem.workload = workload;
        auto simulation = variant.create(problem, nbody::Registry::resolve_tuning(variant, {}));
        simulation->upload(nbody::generate_state(workload, problem.n));
        simulation->advance(3);
        simulation->synchronize();
        std::set<std::string> new_thread_cpus;
        int new_threads = 0;
        for (pid_t thread : threads_of_this_process())
            if (!before.count(thread)) {
                ++new_threads;
                new_thread_cpus.insert(cpus_of(thread));
            }
        std::printf("variant %s new_threads %d new_thread_cpus %s\n", variant.id.c_str(), new_threads, joined(new_thread_cpus).c_str());
        std::printf("variant %s main_cpus %s\n", variant.id.c_str(), cpus_of(0).c_str());
    }
    const int concurrency = nbody::start_affinity_arena().max_concurrency();
    std::printf("arena_concurrency %d\n", concurrency);
    std::atomic<int> arrived{0};
    std::atomic<int> running_when_first_left{-1};
    std::mutex lists_lock;
    std::set<std::string> task_cpus;
    nbody::in_start_affinity_arena([&] {
        tbb::parallel_for(
            tbb::blocked_range<int>(0, concurrency, 1),
            [&](const tbb::blocked_range<int>&) {
                {
                    std::lock_guard lock(lists_lock);
                    task_cpus.insert(cpus_of(0));
                }
                ++arrived;
                // Wait (at most 10 s) for every task: all C arrive only when C threads run them at once.
                const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
                while (arrived.load() < concurrency && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
                int unset = -1;
                running_when_first_left.compare_exchange_strong(unset, arrived.load());
            },
            tbb::simple_partitioner());
    });
    std::printf("arena_running %d\n", running_when_first_left.load());
    std::printf("arena_task_cpus %s\n", joined(task_cpus).c_str());
    return 0;
}
