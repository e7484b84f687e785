#include "platform/energy.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <regex>
#include <span>
#include <thread>
#include <type_traits>

#include "nbody/start_affinity.hpp"
#include "platform/distributed.hpp"

namespace nbody {

// The few NVML declarations used, from NVML's API reference (nvml.h is not needed to build):
// nvmlReturn_t is an enum whose NVML_SUCCESS is 0, nvmlDevice_t an opaque pointer, and
// nvmlClockType_t's NVML_CLOCK_SM is 1.
namespace {
struct NvmlDeviceOpaque;
using NvmlDevice = NvmlDeviceOpaque*;
using NvmlReturn = int;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;
using Clock = std::chrono::steady_clock;
double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }
}  // namespace

struct NvmlLibrary::Functions {
    NvmlReturn (*init)() = nullptr;                                                  // nvmlInit_v2
    NvmlReturn (*shutdown)() = nullptr;                                              // nvmlShutdown
    NvmlReturn (*handle_by_pci_bus_id)(const char*, NvmlDevice*) = nullptr;          // nvmlDeviceGetHandleByPciBusId_v2
    NvmlReturn (*total_energy_consumption)(NvmlDevice, unsigned long long*) = nullptr;  // mJ since the driver loaded
    NvmlReturn (*clock_info)(NvmlDevice, int, unsigned int*) = nullptr;              // MHz
    const char* (*error_string)(NvmlReturn) = nullptr;                               // optional: the status's text
};

std::string NvmlLibrary::default_path() {
    const char* path = std::getenv("NBODY_NVML_LIBRARY");
    return path != nullptr && *path != '\0' ? path : "libnvidia-ml.so.1";
}

std::shared_ptr<NvmlLibrary> NvmlLibrary::process_library() {
    static const std::shared_ptr<NvmlLibrary> library = std::make_shared<NvmlLibrary>(default_path());
    return library;
}

NvmlLibrary::NvmlLibrary(const std::string& path) : functions_(std::make_unique<Functions>()) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
        const char* why = dlerror();
        reason_ = fmt::format("NVML not loaded: {}", why != nullptr ? why : path + " could not be opened");
        return;
    }
    std::string missing;
    const auto bind = [&](auto& function, const char* name) {
        if (void* symbol = dlsym(handle_, name))
            function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(symbol);
        else
            missing += (missing.empty() ? "" : ", ") + std::string(name);
    };
    bind(functions_->init, "nvmlInit_v2");
    bind(functions_->shutdown, "nvmlShutdown");
    bind(functions_->handle_by_pci_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
    bind(functions_->total_energy_consumption, "nvmlDeviceGetTotalEnergyConsumption");
    bind(functions_->clock_info, "nvmlDeviceGetClockInfo");
    if (!missing.empty()) {
        reason_ = fmt::format("NVML at {} lacks {}", path, missing);
        return;
    }
    functions_->error_string = reinterpret_cast<const char* (*)(NvmlReturn)>(dlsym(handle_, "nvmlErrorString"));
    if (const NvmlReturn status = functions_->init(); status != kNvmlSuccess) {
        reason_ = error_text("nvmlInit_v2", status);
        return;
    }
    initialised_ = true;
}

NvmlLibrary::~NvmlLibrary() {
    if (initialised_) functions_->shutdown();
    if (handle_ != nullptr) dlclose(handle_);
}

std::string NvmlLibrary::error_text(const char* function, int status) const {
    const char* text = functions_->error_string != nullptr ? functions_->error_string(status) : nullptr;
    return text != nullptr ? fmt::format("{}: {} (NVML status {})", function, text, status)
                           : fmt::format("{}: NVML status {}", function, status);
}

std::uint64_t counter_delta(std::uint64_t start, std::uint64_t end, std::uint64_t range) {
    return end >= start ? end - start : range - start + end;
}

cpu_set_t sampler_affinity(const cpu_set_t& started_on, const cpu_set_t& caller) {
    cpu_set_t others;
    CPU_ZERO(&others);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &started_on) && !CPU_ISSET(cpu, &caller)) CPU_SET(cpu, &others);
    return CPU_COUNT(&others) > 0 ? others : started_on;
}

namespace {

// Calls `tick` every `period` on a thread of its own from start() to stop(), off the caller's CPUs
// (sampler_affinity).
class PeriodicSampler {
public:
    explicit PeriodicSampler(std::chrono::milliseconds period) : period_(period) {}
    ~PeriodicSampler() { stop(); }
    void start(std::function<void()> tick) {
        stopping_ = false;
        cpu_set_t caller;
        const bool pinned = pthread_getaffinity_np(pthread_self(), sizeof caller, &caller) == 0;
        const cpu_set_t cpus = sampler_affinity(start_affinity(), pinned ? caller : start_affinity());
        thread_ = std::thread([this, cpus, tick = std::move(tick)] {
            pthread_setaffinity_np(pthread_self(), sizeof cpus, &cpus);  // refused: the caller's CPUs, as before
            std::unique_lock lock(mutex_);
            while (!wake_.wait_for(lock, period_, [this] { return stopping_; })) {
                lock.unlock();
                tick();
                lock.lock();
            }
        });
    }
    void stop() {
        if (!thread_.joinable()) return;
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_all();
        thread_.join();
    }

private:
    std::chrono::milliseconds period_;
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
};

// What a meter's stop() returns before reading anything: its name and device, and `reason` when it
// cannot read at all (then this is the whole reading).
EnergyReading unread_reading(const char* meter, const std::string& device, const std::string& reason) {
    EnergyReading reading;
    reading.meter = meter;
    reading.device = device;
    reading.reason = reason;
    return reading;
}

class UnavailableMeter final : public EnergyMeter {
public:
    UnavailableMeter(std::string meter, std::string reason) {
        reading_.meter = std::move(meter);
        reading_.reason = std::move(reason);
    }
    void start() override {}
    EnergyReading stop() override { return reading_; }

private:
    EnergyReading reading_;
};

// The update periods of the GPUs' energy counters (by PCI bus id), learnt by the process's first
// meter of each GPU and refined by every phase after it.
class CounterPeriods {
public:
    double get(const std::string& bus_id) {
        std::lock_guard lock(mutex_);
        const auto it = seconds_.find(bus_id);
        return it == seconds_.end() ? 0.0 : it->second;
    }
    void set(const std::string& bus_id, double seconds) {
        std::lock_guard lock(mutex_);
        seconds_[bus_id] = seconds;
    }

private:
    std::mutex mutex_;
    std::map<std::string, double> seconds_;
};

CounterPeriods& counter_periods() {
    static CounterPeriods periods;
    return periods;
}

class NvmlMeter final : public EnergyMeter {
public:
    NvmlMeter(std::shared_ptr<NvmlLibrary> library, const std::string& pci_bus_id, std::chrono::milliseconds period,
              std::chrono::milliseconds update_wait)
        : library_(std::move(library)), bus_id_(pci_bus_id), update_wait_(update_wait), sampler_(period) {
        if (!library_->available()) {
            reason_ = library_->reason();
            return;
        }
        if (bus_id_.empty()) {
            reason_ = "the GPU's PCI bus id is unknown (no CUDA device probe in this build)";
            return;
        }
        const auto& f = library_->functions();
        if (const NvmlReturn status = f.handle_by_pci_bus_id(bus_id_.c_str(), &device_); status != kNvmlSuccess) {
            reason_ = fmt::format("no NVML device at PCI bus id {}: {}", bus_id_,
                                  library_->error_text("nvmlDeviceGetHandleByPciBusId_v2", status));
            return;
        }
        unsigned long long millijoules = 0;
        if (const NvmlReturn status = f.total_energy_consumption(device_, &millijoules); status != kNvmlSuccess)
            reason_ = library_->error_text("nvmlDeviceGetTotalEnergyConsumption", status);
    }

    // Waits for a counter update (learning the counter's period first, once per GPU and process),
    // so that the phase starts at a known update.
    void start() override {
        if (!reason_.empty()) return;
        phase_failure_.clear();
        double period_s = counter_periods().get(bus_id_);
        CounterUpdate update = next_update(read_energy_mj(), update_wait_);
        if (update.seen && period_s <= 0) {
            constexpr int kIntervals = 4;
            const CounterUpdate first = update;
            for (int i = 0; i < kIntervals && update.seen; ++i) update = next_update(update.millijoules, update_wait_);
            if (update.seen) {
                period_s = seconds_between(first.time, update.time) / kIntervals;
                counter_periods().set(bus_id_, period_s);
            }
        }
        start_update_ = update;
        {
            std::lock_guard lock(mutex_);
            clock_sum_mhz_ = 0.0;
            clock_samples_ = 0;
        }
        sample_clock();
        sampler_.start([this] { sample_clock(); });
        start_time_ = Clock::now();
    }

    EnergyReading stop() override {
        EnergyReading reading = unread_reading("nvml", bus_id_, reason_);
        if (!reason_.empty()) return reading;
        const auto end_time = Clock::now();
        const unsigned long long end_mj = read_energy_mj();
        sampler_.stop();
        sample_clock();
        if (phase_failure_.empty() && end_mj < start_update_.millijoules)  // 64 bits of mJ never wrap: the driver was reloaded
            phase_failure_ = fmt::format("the GPU's energy counter went back from {} to {} mJ",
                                         start_update_.millijoules, end_mj);
        const double period_s = counter_periods().get(bus_id_);
        const CounterUpdate after = start_update_.seen && period_s > 0 && phase_failure_.empty()
                                        ? next_update(end_mj, std::chrono::duration_cast<std::chrono::milliseconds>(
                                                                  std::chrono::duration<double>(2 * period_s)))
                                        : CounterUpdate{};
        if (!phase_failure_.empty()) {
            reading.reason = phase_failure_;
            return reading;
        }
        reading.available = true;
        reading.window_s = seconds_between(start_time_, end_time);
        reading.energy_j = static_cast<double>(end_mj - start_update_.millijoules) * 1e-3;  // unaligned: the difference
        if (after.seen) {
            // The updates from the one the phase started at to the first after it: a whole number of
            // periods. The energy is the power over the whole periods inside the phase (or over the
            // one that holds it) times the phase's window.
            const double span_s = seconds_between(start_update_.time, after.time);
            const int periods = std::max(1, static_cast<int>(std::lround(span_s / period_s)));
            const double measured_period_s = span_s / periods;
            if (std::abs(measured_period_s - period_s) < 0.1 * period_s) counter_periods().set(bus_id_, measured_period_s);
            const bool whole_periods_inside = periods >= 2 && end_mj > start_update_.millijoules;
            const double millijoules = static_cast<double>((whole_periods_inside ? end_mj : after.millijoules) -
                                                           start_update_.millijoules);
            const double seconds = whole_periods_inside ? span_s - measured_period_s : span_s;
            reading.energy_j = millijoules * 1e-3 / seconds * reading.window_s;
            reading.counter_updates = periods - 1;
        }
        std::lock_guard lock(mutex_);
        reading.clock_samples = clock_samples_;
        reading.mean_sm_clock_mhz = clock_samples_ > 0 ? clock_sum_mhz_ / clock_samples_ : 0.0;
        return reading;
    }

private:
    struct CounterUpdate {
        bool seen = false;  // false: no update within the wait
        unsigned long long millijoules = 0;
        Clock::time_point time;  // midway between the read before the update and the read after it
    };

    unsigned long long read_energy_mj() {
        unsigned long long millijoules = 0;
        if (const NvmlReturn status = library_->functions().total_energy_consumption(device_, &millijoules);
            status != kNvmlSuccess && phase_failure_.empty())
            phase_failure_ = library_->error_text("nvmlDeviceGetTotalEnergyConsumption", status);
        return millijoules;
    }
    // Reads the counter until it moves from `from`, for at most `wait`. The GPU is idle meanwhile:
    // a read holds the driver for milliseconds, which is why none is made inside the phase.
    CounterUpdate next_update(unsigned long long from, std::chrono::milliseconds wait) {
        auto before = Clock::now();
        const auto deadline = before + wait;
        for (;;) {
            const unsigned long long millijoules = read_energy_mj();
            const auto after = Clock::now();
            if (!phase_failure_.empty() || (millijoules == from && after >= deadline))
                return {.seen = false, .millijoules = from, .time = after};
            if (millijoules != from) return {.seen = true, .millijoules = millijoules, .time = before + (after - before) / 2};
            before = after;
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
    void sample_clock() {
        unsigned int mhz = 0;
        if (library_->functions().clock_info(device_, kNvmlClockSm, &mhz) != kNvmlSuccess) return;  // a sample fewer
        std::lock_guard lock(mutex_);
        clock_sum_mhz_ += mhz;
        ++clock_samples_;
    }

    std::shared_ptr<NvmlLibrary> library_;
    std::string bus_id_;
    std::chrono::milliseconds update_wait_;
    NvmlDevice device_ = nullptr;
    std::string reason_;         // why no phase can be read
    std::string phase_failure_;  // why this phase could not
    CounterUpdate start_update_;
    Clock::time_point start_time_;
    std::mutex mutex_;  // the clock samples: the sampler thread adds to them
    double clock_sum_mhz_ = 0.0;
    int clock_samples_ = 0;
    PeriodicSampler sampler_;
};

// The first line of `path` as an unsigned count; the error's text (strerror, or "not a number")
// in `error` when it cannot be read.
std::uint64_t read_counter(const std::string& path, std::string& error) {
    errno = 0;
    std::ifstream in(path);
    if (!in) {
        error = errno == EACCES ? fmt::format("permission denied reading {} (readable by root only on this kernel)", path)
                                : fmt::format("cannot read {}: {}", path, std::strerror(errno != 0 ? errno : ENOENT));
        return 0;
    }
    std::uint64_t value = 0;
    if (!(in >> value)) error = fmt::format("{} does not hold a count", path);
    return value;
}

class RaplMeter final : public EnergyMeter {
public:
    RaplMeter(const std::string& root, std::chrono::milliseconds period) : sampler_(period) {
        namespace fs = std::filesystem;
        std::error_code ec;
        if (!fs::is_directory(root, ec)) {
            reason_ = fmt::format("no powercap folder {} (the kernel exposes no RAPL counters here)", root);
            return;
        }
        static const std::regex package_zone("intel-rapl:[0-9]+");  // not the sub-zones intel-rapl:N:M
        std::vector<std::string> folders;
        for (const auto& entry : fs::directory_iterator(root, ec))
            if (std::regex_match(entry.path().filename().string(), package_zone)) folders.push_back(entry.path().string());
        std::sort(folders.begin(), folders.end());
        if (folders.empty()) {
            reason_ = fmt::format("no RAPL package zone (intel-rapl:N) in {}", root);
            return;
        }
        for (const std::string& folder : folders) {
            Zone zone{.energy_path = folder + "/energy_uj"};
            zone.range = read_counter(folder + "/max_energy_range_uj", reason_);
            read_counter(zone.energy_path, reason_);
            if (!reason_.empty()) return;
            std::ifstream name_file(folder + "/name");
            std::string name;
            if (!(name_file >> name)) name = fs::path(folder).filename().string();
            device_ += (device_.empty() ? "" : "+") + name;
            zones_.push_back(zone);
        }
    }

    void start() override {
        if (!reason_.empty()) return;
        phase_failure_.clear();
        for (Zone& zone : zones_) {
            zone.last = read_counter(zone.energy_path, phase_failure_);
            zone.counted = 0;
        }
        start_time_ = Clock::now();
        sampler_.start([this] { accumulate(); });
    }

    EnergyReading stop() override {
        EnergyReading reading = unread_reading("rapl", device_, reason_);
        if (!reason_.empty()) return reading;
        sampler_.stop();
        accumulate();
        reading.window_s = seconds_between(start_time_, Clock::now());
        if (!phase_failure_.empty()) {
            reading.reason = phase_failure_;
            return reading;
        }
        reading.available = true;
        for (const Zone& zone : zones_) reading.energy_j += static_cast<double>(zone.counted) * 1e-6;
        return reading;
    }

private:
    struct Zone {
        std::string energy_path;
        std::uint64_t range = 0;  // max_energy_range_uj: the counter wraps to 0 after it
        std::uint64_t last = 0;
        std::uint64_t counted = 0;  // µJ since start()
    };
    // Adds each zone's energy since its last read: called often enough that no counter wraps twice.
    void accumulate() {
        std::lock_guard lock(mutex_);
        for (Zone& zone : zones_) {
            std::string error;
            const std::uint64_t now = read_counter(zone.energy_path, error);
            if (!error.empty()) {
                if (phase_failure_.empty()) phase_failure_ = error;
                continue;
            }
            zone.counted += counter_delta(zone.last, now, zone.range);
            zone.last = now;
        }
    }

    std::vector<Zone> zones_;
    std::string device_;
    std::string reason_;
    std::string phase_failure_;
    Clock::time_point start_time_;
    std::mutex mutex_;  // the zones: the sampler thread accumulates into them
    PeriodicSampler sampler_;
};

}  // namespace

std::unique_ptr<EnergyMeter> make_nvml_meter(std::shared_ptr<NvmlLibrary> library, const std::string& pci_bus_id,
                                             std::chrono::milliseconds sample_period, std::chrono::milliseconds update_wait) {
    return std::make_unique<NvmlMeter>(std::move(library), pci_bus_id, sample_period, update_wait);
}

std::unique_ptr<EnergyMeter> make_rapl_meter(const std::string& powercap_root, std::chrono::milliseconds sample_period) {
    return std::make_unique<RaplMeter>(powercap_root, sample_period);
}

std::unique_ptr<EnergyMeter> make_unavailable_meter(const std::string& meter, const std::string& reason) {
    return std::make_unique<UnavailableMeter>(meter, reason);
}

std::unique_ptr<EnergyMeter> make_device_meter(bool runs_on_gpu, const std::string& gpu_pci_bus_id, bool read) {
    const char* meter = runs_on_gpu ? "nvml" : "rapl";
    if (!read) return make_unavailable_meter(meter, "energy reading switched off (--energy off)");
    return runs_on_gpu ? make_nvml_meter(NvmlLibrary::process_library(), gpu_pci_bus_id) : make_rapl_meter();
}

std::vector<EnergyReading> gather_energy_readings(Communicator& communicator, const EnergyReading& mine) {
    constexpr std::size_t kValues = 6;  // available, energy_j, window_s, mean_sm_clock_mhz, clock_samples, counter_updates
    const int ranks = communicator.size();
    const BlockDecomposition decomposition(kValues * static_cast<std::size_t>(ranks), ranks);
    std::vector<double> values(decomposition.bodies(), 0.0);
    const std::size_t own = decomposition.block(communicator.rank()).first;
    values[own] = mine.available ? 1.0 : 0.0;
    values[own + 1] = mine.energy_j;
    values[own + 2] = mine.window_s;
    values[own + 3] = mine.mean_sm_clock_mhz;
    values[own + 4] = mine.clock_samples;
    values[own + 5] = mine.counter_updates;
    communicator.allgather_in_place(std::span<double>(values), decomposition);
    const std::vector<std::string> reasons = allgather_strings(communicator, mine.reason);
    const std::vector<std::string> devices = allgather_strings(communicator, mine.device);
    std::vector<EnergyReading> all;
    for (int r = 0; r < ranks; ++r) {
        const std::size_t first = decomposition.block(r).first;
        EnergyReading reading;
        reading.meter = mine.meter;  // every rank runs the same variant
        reading.available = values[first] != 0.0;
        reading.energy_j = values[first + 1];
        reading.window_s = values[first + 2];
        reading.mean_sm_clock_mhz = values[first + 3];
        reading.clock_samples = static_cast<int>(values[first + 4]);
        reading.counter_updates = static_cast<int>(values[first + 5]);
        reading.reason = reasons[r];
        reading.device = devices[r];
        all.push_back(reading);
    }
    return all;
}

EnergyReading total_over_ranks(const std::vector<EnergyReading>& ranks) {
    EnergyReading total;
    if (ranks.empty()) return total;
    total.meter = ranks.front().meter;
    total.available = true;
    double clock_sum = 0.0;
    int clocked = 0;
    for (const EnergyReading& r : ranks) {
        if (!r.available) {
            total.available = false;
            total.reason = r.reason;
            break;
        }
        total.energy_j += r.energy_j;
        total.window_s = std::max(total.window_s, r.window_s);
        total.clock_samples += r.clock_samples;
        total.counter_updates += r.counter_updates;
        if (r.clock_samples > 0) {
            clock_sum += r.mean_sm_clock_mhz;
            ++clocked;
        }
        total.device += (total.device.empty() ? "" : " ") + r.device;
    }
    if (!total.available) {  // none of the readings' numbers: the reason alone
        EnergyReading none;
        none.meter = total.meter;
        none.reason = total.reason;
        return none;
    }
    total.mean_sm_clock_mhz = clocked > 0 ? clock_sum / clocked : 0.0;
    return total;
}

EnergyFigures energy_figures(const EnergyReading& total, std::size_t n, int steps) {
    EnergyFigures figures;
    if (!total.available || steps <= 0) return figures;
    const double nn = static_cast<double>(n) * static_cast<double>(n);
    figures.energy_j = total.energy_j;
    figures.energy_per_step_j = total.energy_j / steps;
    figures.mean_power_w = total.mean_power_w();
    figures.interactions_per_joule = figures.energy_per_step_j > 0 ? nn / figures.energy_per_step_j : 0.0;
    figures.mean_sm_clock_mhz = total.clock_samples > 0 ? total.mean_sm_clock_mhz : 0.0;
    return figures;
}

double efficiency_at_clock(double interactions_per_second, double limit, double limit_clock_hz, double mean_clock_mhz) {
    if (!(limit > 0) || !(limit_clock_hz > 0) || !(mean_clock_mhz > 0)) return 0.0;
    return interactions_per_second / (limit * mean_clock_mhz * 1e6 / limit_clock_hz);
}

}  // namespace nbody
