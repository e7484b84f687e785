// The host models on TBB under OpenMP's thread binding (OMP_PROC_BIND=close OMP_PLACES=threads, which
// pins the main thread to one CPU, at load or at the first parallel region): TBB's concurrency and the CPUs its threads run on
// are those of an unbound run, in the arena alone and in every TBB variant of the build
// (tbb_affinity_probe prints both); a matrix records each CPU entry's threads and binding.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>

#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "nbody/start_affinity.hpp"
#include "test_support.hpp"

namespace {

using nbody::testing::TempDir;

// One CPU per place whatever the topology (with OMP_PLACES=cores two hardware threads of one core
// would form one place, and the main thread would keep both).
const std::string binding = "OMP_PROC_BIND=close OMP_PLACES=threads ";
const std::string unbound = "env -u OMP_PROC_BIND -u OMP_PLACES ";

// The probe's "key value" lines; the value is the rest of the line.
std::map<std::string, std::string> probe(const std::string& environment, const TempDir& dir) {
    const std::string out = dir.file("probe.txt");
    const int raw = std::system((environment + NBODY_TBB_AFFINITY_PROBE_PATH + " >" + out + " 2>&1").c_str());
    const std::string text = nbody::testing::read_text(out);
    EXPECT_TRUE(WIFEXITED(raw) && WEXITSTATUS(raw) == 0) << text;
    std::map<std::string, std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        // "variant ID key value": keyed by "variant ID key".
        std::size_t key_end = line.find(' ');
        if (line.rfind("variant ", 0) == 0) key_end = line.find(' ', line.find(' ', 8) + 1);
        if (key_end == std::string::npos) continue;
        lines[line.substr(0, key_end)] = line.substr(key_end + 1);
    }
    return lines;
}

std::string this_process_cpus() {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    sched_getaffinity(0, sizeof mask, &mask);
    return nbody::cpu_list(mask);
}

int this_process_cpu_count() {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    sched_getaffinity(0, sizeof mask, &mask);
    return CPU_COUNT(&mask);
}

TEST(ThreadBinding, TbbRunsOnTheCpusOfAnUnboundRunUnderOpenMpBinding) {
    if (this_process_cpu_count() < 2) GTEST_SKIP() << "one CPU: binding cannot narrow it";
    TempDir dir;
    const auto free = probe(unbound, dir);
    const auto bound = probe(binding, dir);
    const std::string all = this_process_cpus();
    // The binding took effect (else this test would prove nothing): the main thread has one CPU.
    EXPECT_EQ(free.at("main_cpus"), all);
    EXPECT_NE(bound.at("main_cpus"), all) << "OMP_PROC_BIND=close did not pin the main thread";
    EXPECT_EQ(bound.at("start_cpus"), all);

    for (const auto* run : {&free, &bound}) {
        const int concurrency = std::stoi(run->at("arena_concurrency"));
        EXPECT_EQ(concurrency, this_process_cpu_count());
        EXPECT_EQ(run->at("arena_running"), run->at("arena_concurrency")) << "not every slot of the arena ran at once";
        EXPECT_EQ(run->at("arena_task_cpus"), all);
    }
    // Every TBB variant: the same workers on the same CPUs, bound or not; the main thread keeps
    // OpenMP's binding outside the variant.
    int variants = 0;
    for (const auto& [key, value] : free) {
        if (key.rfind("variant ", 0) != 0 || key.find(" new_threads") == std::string::npos) continue;
        ++variants;
        const std::string id = key.substr(8, key.find(' ', 8) - 8);
        ASSERT_TRUE(bound.count(key)) << id << " did not run under the binding";
        EXPECT_EQ(bound.at(key), value) << id << " (unbound: " << value << ")";
        EXPECT_NE(value.find("new_thread_cpus " + all), std::string::npos) << id << ": " << value;
        EXPECT_EQ(bound.at("variant " + id + " main_cpus"), bound.at("main_cpus")) << id;
    }
    EXPECT_GT(variants, 0) << "no TBB variant in this build";
}

TEST(ThreadBinding, AMatrixRecordsEachCpuEntrysThreadsAndBinding) {
    TempDir dir;
    const std::string matrix = dir.write("m.json", R"({"name": "threads", "steps": 1, "warmup_steps": 0, "repetitions": 1,
        "groups": [{"variants": ["stdpar.plain", "omp.simd", "serial.reference"], "n": [256], "d": [4]}]})");
    const std::string results = dir.file("r.json");
    const int raw = std::system((binding + NBODY_BENCH_PATH + " matrix " + matrix + " --out " + results + " >" +
                                 dir.file("out.txt") + " 2>&1")
                                    .c_str());
    ASSERT_TRUE(WIFEXITED(raw) && WEXITSTATUS(raw) == 0) << nbody::testing::read_text(dir.file("out.txt"));
    const auto document = nlohmann::json::parse(nbody::testing::read_text(results));
    std::map<std::string, std::pair<int, std::string>> seen;
    for (const auto& entry : document["benchmarks"])
        seen[entry["variant"]] = {entry["host_threads"].get<int>(), entry["thread_binding"].get<std::string>()};
    ASSERT_EQ(seen.size(), 3u) << document.dump();
    EXPECT_EQ(seen["stdpar.plain"], std::make_pair(this_process_cpu_count(), std::string("none")));
    EXPECT_EQ(seen["omp.simd"].second, "close");
    EXPECT_EQ(seen["serial.reference"], std::make_pair(1, std::string("close")));
}

}  // namespace
