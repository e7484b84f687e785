// Every variant holds to the reproducibility class it declares (docs/results-format.md,
// "Reproducibility classes"). Run twice from the same state in every workload it runs: a bitwise or
// order-fixed variant repeats its state and map bit for bit, a run-to-run one agrees within
// verify's thresholds; a bitwise CPU variant also gives the same bits on one thread, in a child
// process of this test pinned to one CPU with OMP_NUM_THREADS=1 (every threaded runtime of the
// build, OpenMP, Kokkos's OpenMP space and TBB, then starts one thread). Test-only variants that
// break a bitwise declaration show that the checks fail when they should.
#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <ostream>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "nbody/generator.hpp"
#include "nbody/registry.hpp"
#include "test_support.hpp"
#include "verify/verification.hpp"

namespace nbody {
namespace {

constexpr std::size_t kBodies = 300;
constexpr int kMapSize = 16;
constexpr int kSteps = 4;
constexpr std::uint64_t kSeed = 2718;
// Set in the one-thread child: the file its digests go to.
constexpr const char* kChildOutput = "NBODY_REPRODUCIBILITY_ONE_THREAD_OUTPUT";

struct Run {
    HostState state;
    std::vector<float> map;
};

Run run_once(const VariantDescriptor& v, const Workload& w) {
    const Problem problem{.n = kBodies, .d = kMapSize, .constants = {}, .workload = w, .distribution = {}};
    const auto simulation = v.create(problem, Registry::resolve_tuning(v, {}));
    std::vector<Snapshot> snapshots = snapshots_at(*simulation, generate_state(w, kBodies, kSeed), {kSteps});
    return {std::move(snapshots.at(0).state), std::move(snapshots.at(0).map)};
}

// FNV-1a over the bytes of `values`, continuing from `hash`.
template <class T>
std::uint64_t fnv1a(const std::vector<T>& values, std::uint64_t hash = 14695981039346656037ull) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(values.data());
    for (std::size_t k = 0; k < values.size() * sizeof(T); ++k) hash = (hash ^ bytes[k]) * 1099511628211ull;
    return hash;
}

// The bits of a run: its positions and velocities, and its map.
struct Digest {
    std::uint64_t state = 0;
    std::uint64_t map = 0;
    bool operator==(const Digest&) const = default;
};

Digest digest_of(const Run& run) {
    Digest d;
    d.state = std::visit(
        [](const auto& b) {
            std::uint64_t hash = 14695981039346656037ull;
            for (const auto* axis : {&b.x, &b.y, &b.z, &b.vx, &b.vy, &b.vz}) hash = fnv1a(*axis, hash);
            return hash;
        },
        run.state);
    d.map = fnv1a(run.map);
    return d;
}

// Why two runs of `v` from the same state in workload `w` break its declared class; "" when they
// do not.
std::string two_run_violation(const VariantDescriptor& v, const Workload& w) {
    const Run first = run_once(v, w);
    const Run second = run_once(v, w);
    if (v.reproducibility == Reproducibility::run_to_run) {
        const CheckResult check = compare_states(kSteps, second.state, second.map, first.state, kMapSize,
                                                 default_thresholds(w.precision));
        return check.passed ? "" : "two runs differ beyond verify's thresholds: " + check.failure;
    }
    const Digest a = digest_of(first), b = digest_of(second);
    if (a == b) return "";
    return std::string("declared ") + to_string(v.reproducibility) + ", but two runs from the same state differ in " +
           (a.state != b.state ? "positions or velocities" : "the map");
}

std::vector<Workload> workloads_of(const VariantDescriptor& v) {
    std::vector<Workload> out;
    for (const Workload& w : testing::workloads_under_test())
        if (v.workloads.supports(w)) out.push_back(w);
    return out;
}

// CPUs this process may run on.
int usable_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    return CPU_COUNT(&set);
}

bool in_one_thread_child() { return std::getenv(kChildOutput) != nullptr; }

// In the one-thread child: writes `v`'s digest in each of its workloads, a line each.
void write_one_thread_digests(const VariantDescriptor& v) {
    std::ofstream out(std::getenv(kChildOutput));
    for (const Workload& w : workloads_of(v)) {
        const Digest d = digest_of(run_once(v, w));
        out << to_string(w) << ' ' << d.state << ' ' << d.map << '\n';
    }
}

// Runs the current test again in a child process pinned to one CPU with OMP_NUM_THREADS=1, which
// writes its digests (write_one_thread_digests); returns them by workload, or fails the test.
std::map<std::string, Digest> one_thread_digests() {
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::string filter = std::string("--gtest_filter=") + test->test_suite_name() + "." + test->name();
    testing::TempDir dir;
    const std::string output = dir.file("digests"), log = dir.file("log");
    // The child's environment: this one's, with one OpenMP thread and the output file.
    std::vector<std::string> environment = {"OMP_NUM_THREADS=1", std::string(kChildOutput) + "=" + output};
    for (char** entry = environ; *entry != nullptr; ++entry)
        if (std::strncmp(*entry, "OMP_NUM_THREADS=", 16) != 0 && std::strncmp(*entry, kChildOutput, std::strlen(kChildOutput)) != 0)
            environment.emplace_back(*entry);
    std::vector<char*> envp;
    for (std::string& entry : environment) envp.push_back(entry.data());
    envp.push_back(nullptr);
    std::string program = "test_reproducibility", filter_argument = filter;
    char* const argv[] = {program.data(), filter_argument.data(), nullptr};
    const pid_t child = fork();
    if (child == 0) {  // only async-signal-safe calls until exec
        cpu_set_t set, one;
        CPU_ZERO(&one);
        if (sched_getaffinity(0, sizeof set, &set) == 0)
            for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
                if (CPU_ISSET(cpu, &set)) {
                    CPU_SET(cpu, &one);
                    break;
                }
        if (sched_setaffinity(0, sizeof one, &one) != 0) _exit(126);
        const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execve("/proc/self/exe", argv, envp.data());
        _exit(127);
    }
    int status = 0;
    EXPECT_GT(child, 0) << "fork failed";
    if (child <= 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        ADD_FAILURE() << "the one-thread child failed (status " << status << "):\n" << testing::read_text(log);
        return {};
    }
    std::map<std::string, Digest> digests;
    std::istringstream lines(testing::read_text(output));
    std::string workload;
    Digest d;
    while (lines >> workload >> d.state >> d.map) digests[workload] = d;
    return digests;
}

// Why `v`'s runs on one thread differ from those of this process's threads; "" when they do not.
// Called in the child as well (the same test body runs there): there it writes its digests.
std::vector<std::string> one_thread_violations(const VariantDescriptor& v) {
    if (in_one_thread_child()) {
        write_one_thread_digests(v);
        return {};
    }
    const std::map<std::string, Digest> on_one_thread = one_thread_digests();
    std::vector<std::string> violations;
    for (const Workload& w : workloads_of(v)) {
        const auto found = on_one_thread.find(to_string(w));
        if (found == on_one_thread.end()) {
            violations.push_back(to_string(w) + ": the one-thread child wrote no digest");
        } else if (!(found->second == digest_of(run_once(v, w)))) {
            violations.push_back(to_string(w) + ": declared bitwise, but 1 thread and " + std::to_string(usable_cpus()) +
                                 " CPUs give different bits");
        }
    }
    return violations;
}

// ---- Every variant of the build ----

// A test name per variant: its id in letters, digits and underscores; GPU variants end in
// `_on_gpu` (they skip where no GPU is, tests/skip_allowlist.txt).
std::string instance_name(const VariantDescriptor& v) {
    std::string name = v.id;
    for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return name + (v.runs_on_gpu ? "_on_gpu" : "");
}

// The parameter of the tests over the registry: a variant, printed (and so named to ctest) by its id.
struct VariantParam {
    const VariantDescriptor* variant;
};
void PrintTo(const VariantParam& p, std::ostream* os) { *os << p.variant->id; }

std::vector<VariantParam> variants_under_test(bool bitwise_on_host_only) {
    std::vector<VariantParam> out;
    for (const VariantDescriptor& v : builtin_registry().all()) {
        if (!testing::variant_under_test(v) || (v.max_n != 0 && v.max_n < kBodies)) continue;
        if (bitwise_on_host_only && (v.runs_on_gpu || v.reproducibility != Reproducibility::bitwise)) continue;
        out.push_back({&v});
    }
    return out;
}

std::string name_of(const ::testing::TestParamInfo<VariantParam>& info) { return instance_name(*info.param.variant); }

class EveryVariant : public ::testing::TestWithParam<VariantParam> {};

TEST_P(EveryVariant, RepeatsAsItsClassPromises) {
    const VariantDescriptor& v = *GetParam().variant;
    const Availability availability = v.availability();
    if (!availability.available) GTEST_SKIP() << v.id << ": " << availability.reason;
    for (const Workload& w : workloads_of(v)) {
        const std::string violation = two_run_violation(v, w);
        EXPECT_EQ(violation, "") << v.id << " " << to_string(w);
    }
}

INSTANTIATE_TEST_SUITE_P(Reproducibility, EveryVariant, ::testing::ValuesIn(variants_under_test(false)), name_of);

class BitwiseVariant : public ::testing::TestWithParam<VariantParam> {};

TEST_P(BitwiseVariant, SameBitsOnOneThread) {
    if (!in_one_thread_child() && usable_cpus() < 2) GTEST_SKIP() << "one CPU: no other thread count to compare";
    const VariantDescriptor& v = *GetParam().variant;
    for (const std::string& violation : one_thread_violations(v)) ADD_FAILURE() << v.id << " " << violation;
}

INSTANTIATE_TEST_SUITE_P(Reproducibility, BitwiseVariant, ::testing::ValuesIn(variants_under_test(true)), name_of);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BitwiseVariant);

// ---- The checks fail when a declaration does not hold ----

// serial.reference with one velocity component of one body moved by a unit in the last place after
// every step, as another summation order moves it; `pick_body(n)` chooses the body.
class LastPlaceMoves final : public Simulation {
public:
    LastPlaceMoves(std::unique_ptr<Simulation> inner, std::function<std::size_t(std::size_t)> pick_body)
        : inner_(std::move(inner)), pick_body_(std::move(pick_body)) {}

    using Simulation::download;
    using Simulation::upload;
    void upload(const BodiesT<float>& initial) override { keep_and_upload(initial); }
    void upload(const BodiesT<double>& initial) override { keep_and_upload(initial); }
    void download(BodiesT<float>& state, std::vector<float>& map) override { inner_->download(state, map); }
    void download(BodiesT<double>& state, std::vector<float>& map) override { inner_->download(state, map); }

    void advance(int steps) override {
        for (int s = 0; s < steps; ++s) {
            inner_->advance(1);
            inner_->download(state_, map_);
            std::visit(
                [&](auto& b) {
                    auto& v = b.vx.at(pick_body_(b.size()));
                    v = std::nextafter(v, std::numeric_limits<std::decay_t<decltype(v)>>::infinity());
                    inner_->upload(b);
                },
                state_);
        }
    }

private:
    template <class Real>
    void keep_and_upload(const BodiesT<Real>& initial) {
        state_ = initial;
        inner_->upload(initial);
    }

    std::unique_ptr<Simulation> inner_;
    std::function<std::size_t(std::size_t)> pick_body_;
    HostState state_;
    std::vector<float> map_;
};

// A test-only variant (never in the registry): serial.reference moved by LastPlaceMoves.
VariantDescriptor moved_variant(std::string id, Reproducibility declared, std::function<std::size_t(std::size_t)> pick_body) {
    VariantDescriptor v = testing::registered_variant("serial.reference");
    v.id = std::move(id);
    v.reproducibility = declared;
    v.create = [serial = v.create, pick_body](const Problem& p, const TuningValues& t) -> std::unique_ptr<Simulation> {
        return std::make_unique<LastPlaceMoves>(serial(p, t), pick_body);
    };
    return v;
}

// A body chosen at random on every call: two runs move different bodies.
std::size_t random_body(std::size_t n) {
    static std::random_device device;
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(device);
}

const Workload kTwoWorkloads[] = {
    {.dim = 2, .precision = Precision::fp32, .integrator = Integrator::euler},
    {.dim = 3, .precision = Precision::fp64, .integrator = Integrator::leapfrog},
};

TEST(ReproducibilityCheck, FailsAVariantDeclaredBitwiseWhoseRunsDiffer) {
    for (const Workload& w : kTwoWorkloads) {
        for (const Reproducibility declared : {Reproducibility::bitwise, Reproducibility::order_fixed})
            EXPECT_NE(two_run_violation(moved_variant("test.random_last_place", declared, random_body), w), "")
                << to_string(declared) << " " << to_string(w);
        // The same runs are within rounding: as run-to-run the variant passes.
        EXPECT_EQ(two_run_violation(moved_variant("test.random_last_place", Reproducibility::run_to_run, random_body), w), "")
            << to_string(w);
        // And the control, unmoved: serial.reference repeats bit for bit.
        EXPECT_EQ(two_run_violation(testing::registered_variant("serial.reference"), w), "") << to_string(w);
    }
}

TEST(ReproducibilityCheck, FailsAVariantDeclaredBitwiseWhoseBitsFollowTheThreadCount) {
    if (!in_one_thread_child() && usable_cpus() < 2) GTEST_SKIP() << "one CPU: no other thread count to compare";
    // The body moved is the number of CPUs: the same on every run, another on one thread.
    const VariantDescriptor v = moved_variant("test.cpu_count_last_place", Reproducibility::bitwise,
                                              [](std::size_t n) { return static_cast<std::size_t>(usable_cpus()) % n; });
    EXPECT_EQ(two_run_violation(v, kTwoWorkloads[0]), "");
    const std::vector<std::string> violations = one_thread_violations(v);
    if (!in_one_thread_child()) {
        EXPECT_EQ(violations.size(), workloads_of(v).size());
    }
}

}  // namespace
}  // namespace nbody
