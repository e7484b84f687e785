#pragma once
// Energy over a timed phase (SPEC §3, docs/results-format.md): a GPU's total-energy counter and SM
// clock from NVML, a CPU's package energy from RAPL. Neither is a build dependency: NVML is loaded
// at run time (dlopen of libnvidia-ml.so.1, or NBODY_NVML_LIBRARY when set), RAPL is read from
// sysfs; where either is absent or unreadable the reading says "not available" and why.
//
// How each figure is taken:
//  - GPU energy: nvmlDeviceGetTotalEnergyConsumption (mJ since the driver loaded, Volta and later).
//    The counter moves in updates a fixed period apart (100 ms on an H200), and a read of it holds
//    the driver for milliseconds: read every 10 ms beside a run that synchronises often (the
//    OpenMP offload variants), it made the run 40 % slower, from this process or another. So it is
//    read only outside the phase: start() waits for an update and the phase starts at it; stop()
//    reads the counter and waits for the next update. Between them lie a whole number of periods
//    (the period is learnt once per GPU and process, over four updates); the energy is the power
//    over those inside the phase (or over the one that holds a shorter phase) times the phase's
//    window. Where no update comes within the wait, it is the counter's difference over the phase.
//  - GPU SM clock: nvmlDeviceGetClockInfo(NVML_CLOCK_SM), sampled at the phase's start, every
//    sample period (10 ms) by a sampler thread while it runs, and at its end; the mean of the
//    samples.
//  - CPU energy: the sum over packages of /sys/class/powercap/intel-rapl:N/energy_uj, read at the
//    phase's start and end and every second between (so a counter that wraps at
//    max_energy_range_uj is followed through each wrap).
#include <sched.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nbody/communicator.hpp"

namespace nbody {

// What a meter read over one phase.
struct EnergyReading {
    std::string meter;          // "nvml" or "rapl"
    bool available = false;
    std::string reason;         // why not, when !available
    double energy_j = 0.0;
    double window_s = 0.0;      // the timed phase as the meter's own clock saw it
    double mean_sm_clock_mhz = 0.0;  // GPU: the mean of the clock samples; 0 where none
    int clock_samples = 0;
    int counter_updates = 0;    // GPU: the energy counter's updates inside the phase (1 or more: energy from their power)
    std::string device;         // the GPU's PCI bus id, or the RAPL packages read
    double mean_power_w() const { return window_s > 0 ? energy_j / window_s : 0.0; }
};

// Reads energy over a phase: start() right before it, stop() right after. Not thread-safe; one
// phase at a time.
class EnergyMeter {
public:
    virtual ~EnergyMeter() = default;
    virtual void start() = 0;
    virtual EnergyReading stop() = 0;
};

// The NVML functions the meters use, loaded from one shared library. Every symbol is looked up on
// load; a missing library, symbol or a failing nvmlInit_v2 leaves it unavailable with the reason.
class NvmlLibrary {
public:
    // The path NBODY_NVML_LIBRARY names, else "libnvidia-ml.so.1" (the driver's).
    static std::string default_path();
    // The process's library, loaded once from default_path().
    static std::shared_ptr<NvmlLibrary> process_library();
    explicit NvmlLibrary(const std::string& path);
    ~NvmlLibrary();
    NvmlLibrary(const NvmlLibrary&) = delete;
    NvmlLibrary& operator=(const NvmlLibrary&) = delete;

    bool available() const { return reason_.empty(); }
    const std::string& reason() const { return reason_; }

    struct Functions;
    const Functions& functions() const { return *functions_; }
    // "nvmlX: <NVML's text for status>".
    std::string error_text(const char* function, int status) const;

private:
    void* handle_ = nullptr;
    bool initialised_ = false;
    std::unique_ptr<Functions> functions_;
    std::string reason_;
};

// The CPUs a meter's sampler thread runs on: those the process started on (start_affinity) less the
// caller's, else all of them. Under OMP_PROC_BIND the timing thread is pinned to one CPU; a sampler
// sharing it took 20-35 % off host-bound runs when it still read NVML's energy counter (a read
// holds the CPU for milliseconds).
cpu_set_t sampler_affinity(const cpu_set_t& started_on, const cpu_set_t& caller);

// What a GPU meter's waits for its counter's updates add to each phase, on average: half a period
// before it and half after (the H200's counter moves every 100 ms).
inline constexpr double kNvmlMeterWaitSeconds = 0.1;

// A meter for the GPU at `pci_bus_id` ("0000:1B:00.0", as cudaDeviceGetPCIBusId writes it: the
// CUDA device, whatever CUDA_VISIBLE_DEVICES renumbered). Its readings say "not available" when
// the library is, when no GPU has that bus id, or when the GPU has no energy counter. It waits at
// most `update_wait` for each counter update (twice the period once that is known).
std::unique_ptr<EnergyMeter> make_nvml_meter(std::shared_ptr<NvmlLibrary> library, const std::string& pci_bus_id,
                                             std::chrono::milliseconds sample_period = std::chrono::milliseconds(10),
                                             std::chrono::milliseconds update_wait = std::chrono::seconds(1));

// A meter for the CPU packages under `powercap_root` (sysfs' /sys/class/powercap; tests pass a
// folder of their own).
std::unique_ptr<EnergyMeter> make_rapl_meter(const std::string& powercap_root = "/sys/class/powercap",
                                             std::chrono::milliseconds sample_period = std::chrono::seconds(1));

// A meter whose readings are "not available" for `reason` (energy reading switched off).
std::unique_ptr<EnergyMeter> make_unavailable_meter(const std::string& meter, const std::string& reason);

// The meter of a variant's device: NVML on the GPU at `gpu_pci_bus_id` (the process's library) for
// a GPU variant, RAPL for a host one; with `read` false, one whose readings say it is switched off.
std::unique_ptr<EnergyMeter> make_device_meter(bool runs_on_gpu, const std::string& gpu_pci_bus_id, bool read);

// The energy counted from `start` to `end` by a counter that wraps to 0 after `range` (RAPL's
// max_energy_range_uj): end < start means it wrapped once.
std::uint64_t counter_delta(std::uint64_t start, std::uint64_t end, std::uint64_t range);

// Every rank's reading in rank order (a collective: every rank calls it).
std::vector<EnergyReading> gather_energy_readings(Communicator& communicator, const EnergyReading& mine);

// The ranks' readings as one: energy summed, window the longest, clock the mean of the ranks'
// (weighted by none: one GPU each); available only when every rank's is (else the first reason).
EnergyReading total_over_ranks(const std::vector<EnergyReading>& ranks);

// What an entry records from an available total reading over `steps` timed steps of `n` bodies
// (docs/results-format.md).
struct EnergyFigures {
    double energy_j = 0.0;
    double energy_per_step_j = 0.0;        // energy_j / steps
    double mean_power_w = 0.0;             // energy_j / the meter's window
    double interactions_per_joule = 0.0;   // n^2 / energy_per_step_j
    double mean_sm_clock_mhz = 0.0;        // 0: no clock sampled (a CPU, or every sample failed)
};
EnergyFigures energy_figures(const EnergyReading& total, std::size_t n, int steps);

// The fraction of the limit reached at the clock the device held (SPEC §3): interactions/s ÷
// (limit × mean clock ÷ the clock the limit was computed at). 0 when an input is unknown.
double efficiency_at_clock(double interactions_per_second, double limit, double limit_clock_hz, double mean_clock_mhz);

}  // namespace nbody
