// The energy meters (harness/platform/energy.hpp): NVML loaded at run time, tried against a test
// library (tests/fake_nvml.c) that implements the functions they use; RAPL read from a powercap tree
// in a temporary folder; the figures and the results fields they give.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "matrix/matrix_runner.hpp"
#include "matrix_results_support.hpp"
#include "nbody/errors.hpp"
#include "nbody/model_registration.hpp"
#include "nbody/start_affinity.hpp"
#include "platform/energy.hpp"
#include "results/results.hpp"
#include "thread_ranks.hpp"

namespace nbody {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

constexpr const char* kBusId = "0000:1b:00.0";  // the fake's GPU (NVML compares bus ids without case)
constexpr auto kNoPeriodicSample = std::chrono::hours(1);  // the phase's start and end samples only
constexpr auto kNoUpdateWait = 5ms;  // a fake counter that stays still: no alignment to its updates

// The fake's control: its energy counter (mJ), SM clock (MHz) and the status the counter returns.
std::shared_ptr<NvmlLibrary> fake_library() {
    static const auto library = std::make_shared<NvmlLibrary>(FAKE_NVML_PATH);
    return library;
}

// Calls the fake's control function `name` in the meters' copy of the library (loaded by NvmlLibrary).
template <class Result, class... Args>
Result call_fake(const char* name, Args... args) {
    fake_library();
    void* handle = dlopen(FAKE_NVML_PATH, RTLD_NOW | RTLD_NOLOAD);
    if (handle == nullptr) throw std::logic_error("the fake NVML is not loaded");
    const auto function = reinterpret_cast<Result (*)(Args...)>(dlsym(handle, name));
    dlclose(handle);  // NvmlLibrary still holds it
    if (function == nullptr) throw std::logic_error(std::string("the fake NVML has no ") + name);
    return function(args...);
}

void set_fake_gpu(unsigned long long millijoules, unsigned clock_mhz, int energy_status = 0) {
    call_fake<void>("fake_nvml_set", millijoules, clock_mhz, energy_status);
}

unsigned long long fake_energy_reads() { return call_fake<unsigned long long>("fake_nvml_energy_reads"); }

// A GPU whose counter moves every `period` by `period` x `watts`, on a fixed schedule, while it lives.
class TickingFakeGpu {
public:
    TickingFakeGpu(std::chrono::milliseconds period, double watts) {
        set_fake_gpu(0, 1500);
        thread_ = std::thread([this, period, watts] {
            auto next = std::chrono::steady_clock::now();
            unsigned long long millijoules = 0;
            while (!stopping_) {
                next += period;
                std::this_thread::sleep_until(next);
                millijoules += static_cast<unsigned long long>(watts * std::chrono::duration<double>(period).count() * 1e3);
                set_fake_gpu(millijoules, 1500);
            }
        });
    }
    ~TickingFakeGpu() {
        stopping_ = true;
        thread_.join();
    }

private:
    std::atomic<bool> stopping_ = false;
    std::thread thread_;
};

TEST(NvmlMeter, ReadsTheEnergyCounterAndTheMeanSmClockOverAPhase) {
    const auto library = fake_library();
    ASSERT_TRUE(library->available()) << library->reason();
    set_fake_gpu(1'000, 1400);
    const auto meter = make_nvml_meter(library, kBusId, kNoPeriodicSample, kNoUpdateWait);
    meter->start();
    std::this_thread::sleep_for(20ms);
    set_fake_gpu(6'250, 1600);
    const EnergyReading reading = meter->stop();
    ASSERT_TRUE(reading.available) << reading.reason;
    EXPECT_EQ(reading.meter, "nvml");
    EXPECT_EQ(reading.device, kBusId);
    EXPECT_DOUBLE_EQ(reading.energy_j, 5.25);
    EXPECT_EQ(reading.clock_samples, 2);  // at the start (1400) and at the end (1600)
    EXPECT_DOUBLE_EQ(reading.mean_sm_clock_mhz, 1500.0);
    EXPECT_GE(reading.window_s, 0.02);
    EXPECT_DOUBLE_EQ(reading.mean_power_w(), 5.25 / reading.window_s);

    // A second phase on the same meter counts from its own start.
    meter->start();
    set_fake_gpu(7'250, 1600);
    const EnergyReading second = meter->stop();
    ASSERT_TRUE(second.available);
    EXPECT_DOUBLE_EQ(second.energy_j, 1.0);
    EXPECT_DOUBLE_EQ(second.mean_sm_clock_mhz, 1600.0);
}

TEST(NvmlMeter, SamplesTheClockPeriodicallyWhileThePhaseRuns) {
    set_fake_gpu(0, 1000);
    const auto meter = make_nvml_meter(fake_library(), kBusId, 1ms, kNoUpdateWait);
    meter->start();
    std::this_thread::sleep_for(50ms);
    const EnergyReading reading = meter->stop();
    ASSERT_TRUE(reading.available) << reading.reason;
    EXPECT_GT(reading.clock_samples, 2);
    EXPECT_DOUBLE_EQ(reading.mean_sm_clock_mhz, 1000.0);
}

// The counter moves in updates a period apart (20 ms here, 2 J each: 100 W), and a read of it
// holds a real driver for milliseconds: the meter reads it only before and after the phase. It
// waits for an update to start at, and for the first after the phase, and takes the power over the
// whole periods inside the phase; its difference over the phase would be off by up to a period at
// each end.
TEST(NvmlMeter, ReadsTheCounterOnlyOutsideThePhaseAndTakesThePowerOverItsWholePeriods) {
    const TickingFakeGpu gpu(20ms, 100.0);
    const auto meter = make_nvml_meter(fake_library(), kBusId, 1ms);
    for (const auto phase : {115ms, 200ms, 7ms}) {
        meter->start();
        const unsigned long long reads_at_start = fake_energy_reads();
        std::this_thread::sleep_for(phase);
        EXPECT_EQ(fake_energy_reads(), reads_at_start) << "no read inside the phase";
        const EnergyReading reading = meter->stop();
        ASSERT_TRUE(reading.available) << reading.reason;
        EXPECT_NEAR(reading.mean_power_w(), 100.0, 15.0) << reading.energy_j << " J over " << reading.window_s << " s";
        if (phase > 100ms) {
            EXPECT_GE(reading.counter_updates, 4) << "updates inside the phase";
        }
        EXPECT_GT(reading.clock_samples, 2);
    }
}

// The sampler thread keeps off the CPUs of the thread that times (pinned to one under
// OMP_PROC_BIND), on the others the process started with; where none is left, on all of them.
TEST(SamplerAffinity, KeepsOffTheCallersCpus) {
    const auto cpus = [](std::initializer_list<int> list) {
        cpu_set_t set;
        CPU_ZERO(&set);
        for (int cpu : list) CPU_SET(cpu, &set);
        return set;
    };
    const cpu_set_t started_on = cpus({0, 1, 2, 3});
    EXPECT_EQ(cpu_list(sampler_affinity(started_on, cpus({2}))), "0-1,3");
    EXPECT_EQ(cpu_list(sampler_affinity(started_on, started_on)), "0-3");  // an unpinned caller
    EXPECT_EQ(cpu_list(sampler_affinity(cpus({5}), cpus({5}))), "5");      // one CPU: shared
}

TEST(NvmlMeter, SaysWhyWhenItCannotRead) {
    // No library at that path.
    const auto absent = std::make_shared<NvmlLibrary>("/nonexistent/libnvidia-ml.so.1");
    EXPECT_FALSE(absent->available());
    EXPECT_NE(absent->reason().find("NVML not loaded"), std::string::npos) << absent->reason();
    const EnergyReading none = make_nvml_meter(absent, kBusId)->stop();
    EXPECT_FALSE(none.available);
    EXPECT_EQ(none.reason, absent->reason());

    // A library without the energy counter's symbol.
    const auto partial = std::make_shared<NvmlLibrary>(FAKE_NVML_WITHOUT_ENERGY_PATH);
    EXPECT_FALSE(partial->available());
    EXPECT_NE(partial->reason().find("lacks nvmlDeviceGetTotalEnergyConsumption"), std::string::npos) << partial->reason();
    EXPECT_EQ(partial->reason().find("nvmlInit_v2"), std::string::npos) << "only the missing symbol is named";

    // No GPU at that bus id, and no bus id.
    const EnergyReading elsewhere = make_nvml_meter(fake_library(), "0000:2a:00.0")->stop();
    EXPECT_FALSE(elsewhere.available);
    EXPECT_NE(elsewhere.reason.find("no NVML device at PCI bus id 0000:2a:00.0"), std::string::npos) << elsewhere.reason;
    EXPECT_NE(elsewhere.reason.find("Not Found"), std::string::npos) << elsewhere.reason;
    EXPECT_NE(make_nvml_meter(fake_library(), "")->stop().reason.find("PCI bus id is unknown"), std::string::npos);

    // A GPU without the counter (before Volta): NVML_ERROR_NOT_SUPPORTED.
    set_fake_gpu(0, 1000, 3);
    const EnergyReading unsupported = make_nvml_meter(fake_library(), kBusId)->stop();
    set_fake_gpu(0, 1000);
    EXPECT_FALSE(unsupported.available);
    EXPECT_NE(unsupported.reason.find("nvmlDeviceGetTotalEnergyConsumption: Not Supported"), std::string::npos)
        << unsupported.reason;
}

TEST(NvmlLibrary, TheProcessLibraryPathComesFromTheEnvironment) {
    ASSERT_EQ(setenv("NBODY_NVML_LIBRARY", "/opt/test/libnvml.so", 1), 0);
    EXPECT_EQ(NvmlLibrary::default_path(), "/opt/test/libnvml.so");
    ASSERT_EQ(unsetenv("NBODY_NVML_LIBRARY"), 0);
    EXPECT_EQ(NvmlLibrary::default_path(), "libnvidia-ml.so.1");
}

// A reading that is available.
EnergyReading read_reading(double energy_j, double window_s, double mean_sm_clock_mhz, int clock_samples,
                           const std::string& device = "") {
    EnergyReading reading;
    reading.meter = "nvml";
    reading.available = true;
    reading.energy_j = energy_j;
    reading.window_s = window_s;
    reading.mean_sm_clock_mhz = mean_sm_clock_mhz;
    reading.clock_samples = clock_samples;
    reading.device = device;
    return reading;
}

TEST(EnergyOverRanks, TheTotalIsEachRanksSum) {
    // Two ranks as threads: each reads its own GPU's counter; every rank gathers both.
    std::vector<std::vector<EnergyReading>> gathered(2);
    testing::on_thread_ranks(2, [&](testing::ThreadRanks& shared, int rank) {
        testing::ThreadCommunicator communicator(shared, rank);
        EnergyReading mine = read_reading(3.0 + rank, 2.0, 1400.0 + 200 * rank, 10, "gpu" + std::to_string(rank));
        mine.counter_updates = 30 + rank;
        gathered[static_cast<std::size_t>(rank)] = gather_energy_readings(communicator, mine);
    });
    for (const auto& readings : gathered) {
        ASSERT_EQ(readings.size(), 2u);
        EXPECT_DOUBLE_EQ(readings[1].energy_j, 4.0);
        EXPECT_EQ(readings[1].device, "gpu1");
        const EnergyReading total = total_over_ranks(readings);
        ASSERT_TRUE(total.available);
        EXPECT_DOUBLE_EQ(total.energy_j, 7.0);
        EXPECT_DOUBLE_EQ(total.mean_power_w(), 3.5);
        EXPECT_DOUBLE_EQ(total.mean_sm_clock_mhz, 1500.0);
        EXPECT_EQ(total.clock_samples, 20);
        EXPECT_EQ(total.counter_updates, 61);
    }
    // One rank that could not read: the total is not available, for that rank's reason.
    std::vector<EnergyReading> one_short = gathered[0];
    one_short[1] = EnergyReading();
    one_short[1].meter = "nvml";
    one_short[1].reason = "no NVML device at PCI bus id x";
    const EnergyReading total = total_over_ranks(one_short);
    EXPECT_FALSE(total.available);
    EXPECT_EQ(total.reason, "no NVML device at PCI bus id x");
    const json detail = energy_json(total, one_short);
    EXPECT_EQ(detail["ranks"][1]["reason"], "no NVML device at PCI bus id x");
    EXPECT_DOUBLE_EQ(detail["ranks"][0]["energy_j"].get<double>(), 3.0);
}

TEST(EnergyFigures, PerStepPowerInteractionsPerJouleAndEfficiencyAtTheClockHeld) {
    const EnergyReading total = read_reading(8.0, 2.0, 990.0, 5);
    const EnergyFigures f = energy_figures(total, 1000, 4);
    EXPECT_DOUBLE_EQ(f.energy_per_step_j, 2.0);
    EXPECT_DOUBLE_EQ(f.energy_per_step_j * 4, f.energy_j);  // the steps' energies make the counter's total
    EXPECT_DOUBLE_EQ(f.mean_power_w, 4.0);
    EXPECT_DOUBLE_EQ(f.interactions_per_joule, 1e6 / 2.0);
    EXPECT_DOUBLE_EQ(f.mean_sm_clock_mhz, 990.0);
    // A limit of 1e13 interactions/s at 1980 MHz is 5e12 at 990 MHz: 5e12 interactions/s reach all of it.
    EXPECT_DOUBLE_EQ(efficiency_at_clock(5e12, 1e13, 1980e6, 990.0), 1.0);
    EXPECT_EQ(efficiency_at_clock(5e12, 1e13, 1980e6, 0.0), 0.0);  // no clock: unknown
    EXPECT_EQ(efficiency_at_clock(5e12, 0.0, 1980e6, 990.0), 0.0);  // no limit: unknown
}

// A powercap tree of RAPL zones in a temporary folder.
class RaplTree : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = std::filesystem::temp_directory_path() / ("nbody_powercap_" + std::to_string(::getpid()));
        std::filesystem::remove_all(root_);
        std::filesystem::create_directories(root_);
    }
    void TearDown() override { std::filesystem::remove_all(root_); }
    // Whole or not at all, as sysfs shows a counter: the meter's sampler thread may read it meanwhile.
    void write(const std::string& file, const std::string& text) {
        std::filesystem::create_directories((root_ / file).parent_path());
        const std::filesystem::path partial = root_ / (file + ".partial");
        std::ofstream(partial) << text << "\n";
        std::filesystem::rename(partial, root_ / file);
    }
    void zone(const std::string& folder, const std::string& name, unsigned long long energy_uj, unsigned long long range_uj) {
        write(folder + "/name", name);
        write(folder + "/energy_uj", std::to_string(energy_uj));
        write(folder + "/max_energy_range_uj", std::to_string(range_uj));
    }
    std::filesystem::path root_;
};

TEST_F(RaplTree, SumsThePackagesAndFollowsACounterThroughItsWrap) {
    zone("intel-rapl:0", "package-0", 1'000'000, 262'143'328'850);
    zone("intel-rapl:1", "package-1", 262'143'000'000, 262'143'328'850);  // about to wrap
    zone("intel-rapl:0:0", "core", 0, 262'143'328'850);                   // a sub-zone: inside package-0, not added
    const auto meter = make_rapl_meter(root_.string(), kNoPeriodicSample);
    meter->start();
    write("intel-rapl:0/energy_uj", "4000000");              // 3 J
    write("intel-rapl:1/energy_uj", "671150");               // 0.32885 J to the range, then 0.67115 J: 1 J
    write("intel-rapl:0:0/energy_uj", "999000000000");
    const EnergyReading reading = meter->stop();
    ASSERT_TRUE(reading.available) << reading.reason;
    EXPECT_EQ(reading.meter, "rapl");
    EXPECT_EQ(reading.device, "package-0+package-1");
    EXPECT_NEAR(reading.energy_j, 4.0, 1e-9);
    EXPECT_EQ(reading.clock_samples, 0);
    EXPECT_EQ(counter_delta(10, 3, 12), 5u);
    EXPECT_EQ(counter_delta(3, 10, 12), 7u);
}

TEST_F(RaplTree, SamplesOftenEnoughToFollowSeveralWraps) {
    zone("intel-rapl:0", "package-0", 0, 1000);
    const auto meter = make_rapl_meter(root_.string(), 1ms);
    meter->start();
    // Three laps of 600 µJ of a 1000 µJ counter, each seen by a periodic read before the next.
    for (const char* value : {"600", "200", "800"}) {
        write("intel-rapl:0/energy_uj", value);
        std::this_thread::sleep_for(50ms);
    }
    const EnergyReading reading = meter->stop();
    ASSERT_TRUE(reading.available) << reading.reason;
    EXPECT_NEAR(reading.energy_j, 1800e-6, 1e-12);
}

TEST_F(RaplTree, SaysWhyWhenItCannotRead) {
    const EnergyReading no_folder = make_rapl_meter((root_ / "absent").string())->stop();
    EXPECT_FALSE(no_folder.available);
    EXPECT_NE(no_folder.reason.find("no powercap folder"), std::string::npos) << no_folder.reason;

    const EnergyReading no_zone = make_rapl_meter(root_.string())->stop();
    EXPECT_NE(no_zone.reason.find("no RAPL package zone"), std::string::npos) << no_zone.reason;

    zone("intel-rapl:0", "package-0", 0, 1000);
    write("intel-rapl:0/energy_uj", "not a count");
    const EnergyReading garbled = make_rapl_meter(root_.string())->stop();
    EXPECT_FALSE(garbled.available);
    EXPECT_NE(garbled.reason.find("energy_uj does not hold a count"), std::string::npos) << garbled.reason;

    write("intel-rapl:0/energy_uj", "5");
    std::filesystem::remove(root_ / "intel-rapl:0/max_energy_range_uj");
    const std::string no_range = make_rapl_meter(root_.string())->stop().reason;
    EXPECT_NE(no_range.find("cannot read"), std::string::npos) << no_range;
}

TEST(EnergyMeter, SwitchedOffSaysSo) {
    const EnergyReading off = make_device_meter(true, kBusId, false)->stop();
    EXPECT_FALSE(off.available);
    EXPECT_EQ(off.meter, "nvml");
    EXPECT_EQ(off.reason, "energy reading switched off (--energy off)");
}

// A results file of a host variant records its meter, and the checker holds the figures to energy_j.
class EnergyResults : public ::testing::Test {
protected:
    static json run_tiny_matrix(bool read_energy) {
        MatrixRunOptions o;
        o.read_energy = read_energy;
        return nbody::testing::run_serial_matrix(R"({"name": "t", "steps": 2, "repetitions": 2,
            "groups": [{"variants": ["serial.reference"], "n": [40], "d": [4]}]})", o);
    }
};

TEST_F(EnergyResults, EveryTimedEntryRecordsItsMeterAndTheCheckerHoldsTheFigures) {
    json document = run_tiny_matrix(true);
    ASSERT_TRUE(check_results(document).empty()) << check_results(document).front();
    json* iteration = nullptr;
    for (json& e : document["benchmarks"])
        if (e["run_type"] == "iteration") {
            ASSERT_TRUE(e.contains("energy")) << e.dump();
            EXPECT_EQ(e["energy"]["meter"], "rapl");
            // This host's RAPL may or may not be readable: either its energy or the reason.
            EXPECT_EQ(e["energy"]["available"].get<bool>(), e.contains("energy_j"));
            if (!e["energy"]["available"].get<bool>()) {
                EXPECT_FALSE(e["energy"]["reason"].get<std::string>().empty());
            }
            iteration = &e;
        }
    ASSERT_NE(iteration, nullptr);

    // The figures of a reading of 10 J over a 2 s window, written in place of whatever the host read.
    json& e = *iteration;
    const double steps = e["timed_steps"], n = e["n"];
    e["energy"] = {{"meter", "rapl"}, {"available", true}, {"device", "package-0"}, {"window_s", 2.0}};
    e["energy_j"] = 10.0;
    e["energy_per_step_j"] = 10.0 / steps;
    e["mean_power_w"] = 5.0;
    e["interactions_per_joule"] = n * n * steps / 10.0;
    ASSERT_TRUE(check_results(document).empty()) << check_results(document).front();

    const auto problems_after = [&](auto&& corrupt) {
        json copy = document;
        json* entry = nullptr;
        for (json& c : copy["benchmarks"])
            if (c.value("energy_j", 0.0) == 10.0) entry = &c;
        corrupt(*entry);
        const auto problems = check_results(copy);
        return problems.empty() ? std::string() : problems.front();
    };
    EXPECT_NE(problems_after([](json& c) { c["energy_per_step_j"] = 1.0; }).find("energy_per_step_j is not"), std::string::npos);
    EXPECT_NE(problems_after([](json& c) { c["interactions_per_joule"] = 1.0; }).find("interactions_per_joule is not"),
              std::string::npos);
    EXPECT_NE(problems_after([](json& c) { c["mean_power_w"] = 4.0; }).find("mean_power_w is not"), std::string::npos);
    EXPECT_NE(problems_after([](json& c) { c["energy"]["available"] = false; c["energy"]["reason"] = "x"; })
                  .find("energy_j recorded by a meter that was not available"),
              std::string::npos);
    EXPECT_NE(problems_after([](json& c) {
                  c.erase("energy_j");
                  c["energy"]["available"] = false;
              }).find("missing required field \"reason\""),
              std::string::npos);
    EXPECT_NE(problems_after([](json& c) {
                  c["energy"]["ranks"] = {{{"device", "a"}, {"available", true}, {"energy_j", 4.0}},
                                          {{"device", "b"}, {"available", true}, {"energy_j", 5.0}}};
              }).find("energy_j is not the sum of energy.ranks' energy_j"),
              std::string::npos);
    EXPECT_EQ(problems_after([](json& c) {
                  c["energy"]["ranks"] = {{{"device", "a"}, {"available", true}, {"energy_j", 4.0}},
                                          {{"device", "b"}, {"available", true}, {"energy_j", 6.0}}};
              }),
              "");
    // A CPU entry's limit has no SM clock: no efficiency at the clock held.
    EXPECT_NE(problems_after([](json& c) { c["efficiency_at_clock"] = 0.5; }).find("efficiency_at_clock is not"),
              std::string::npos);
    // A file written before energy was recorded has none of these fields.
    EXPECT_EQ(problems_after([](json& c) {
                  for (const char* key : {"energy", "energy_j", "energy_per_step_j", "mean_power_w", "interactions_per_joule"})
                      c.erase(key);
              }),
              "");
}

TEST_F(EnergyResults, SwitchedOffTheEntriesSaySo) {
    const json document = run_tiny_matrix(false);
    ASSERT_TRUE(check_results(document).empty()) << check_results(document).front();
    for (const json& e : document["benchmarks"]) {
        EXPECT_FALSE(e.contains("energy_j"));
        if (e["run_type"] == "iteration") {
            EXPECT_EQ(e["energy"]["reason"], "energy reading switched off (--energy off)");
        }
    }
}

}  // namespace
}  // namespace nbody
