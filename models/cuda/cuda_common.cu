#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "cuda_common.cuh"
#include "nbody/errors.hpp"

namespace nbody::cuda {

void throw_cuda_error(cudaError_t error, const char* call, const char* file, int line) {
    throw std::runtime_error(std::string("CUDA error ") + cudaGetErrorName(error) + " (" +
                             cudaGetErrorString(error) + ") from " + call + " at " + file + ":" +
                             std::to_string(line));
}

template <class Real>
DeviceConstants<Real> device_constants(const Problem& problem) {
    return {.n = static_cast<int>(problem.n),
            .d = problem.d,
            .G = static_cast<Real>(problem.constants.G),
            .dt = static_cast<Real>(problem.constants.dt),
            .eps2 = static_cast<Real>(problem.constants.eps2())};
}
template DeviceConstants<float> device_constants<float>(const Problem&);
template DeviceConstants<double> device_constants<double>(const Problem&);

Availability cuda_availability() {
    int count = 0;
    const cudaError_t error = cudaGetDeviceCount(&count);
    if (error != cudaSuccess) {
        cudaGetLastError();  // not a sticky error: reset it so later calls start clean
        return {false, std::string("no CUDA device: ") + cudaGetErrorString(error)};
    }
    if (count == 0) return {false, "no CUDA device: cudaGetDeviceCount found 0 devices"};
    return {true, ""};
}

std::string describe_device(int device) {
    cudaDeviceProp properties{};
    NBODY_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
    char bus_id[32] = {};
    NBODY_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device));
    return std::string(properties.name) + ", PCI " + bus_id;
}

void require_ranks(const BlockDecomposition& decomposition, int ranks, const std::string& collective) {
    if (decomposition.ranks() != ranks)
        throw UsageError(collective + " over " + std::to_string(ranks) + " ranks was given a decomposition over " +
                         std::to_string(decomposition.ranks()));
}

int fp32_lanes_per_sm(int major, int minor) {
    switch (major) {
        case 6: return minor == 0 ? 64 : 128;
        case 7: return 64;
        case 8: return minor == 0 ? 64 : 128;
        default: return 128;  // 9.x Hopper, 10.x/12.x Blackwell
    }
}

namespace {
std::string cuda_version_text(int version) {
    return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}
}  // namespace

std::optional<GpuInfo> probe_gpu() {
    if (!cuda_availability().available) return std::nullopt;
    int device = 0;
    NBODY_CUDA_CHECK(cudaGetDevice(&device));
    cudaDeviceProp properties{};
    NBODY_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
    // cudaDeviceProp::clockRate is gone in CUDA 13: the attributes give the rated clocks (kHz).
    int sm_clock_khz = 0, memory_clock_khz = 0, bus_width_bits = 0;
    NBODY_CUDA_CHECK(cudaDeviceGetAttribute(&sm_clock_khz, cudaDevAttrClockRate, device));
    NBODY_CUDA_CHECK(cudaDeviceGetAttribute(&memory_clock_khz, cudaDevAttrMemoryClockRate, device));
    NBODY_CUDA_CHECK(cudaDeviceGetAttribute(&bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, device));
    int driver = 0, runtime = 0;
    NBODY_CUDA_CHECK(cudaDriverGetVersion(&driver));
    NBODY_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    GpuInfo info;
    info.name = properties.name;
    info.compute_capability = std::to_string(properties.major) + "." + std::to_string(properties.minor);
    info.sm_count = properties.multiProcessorCount;
    info.sm_clock_hz = sm_clock_khz * 1e3;
    info.fp32_lanes_per_sm = fp32_lanes_per_sm(properties.major, properties.minor);
    info.memory_clock_hz = memory_clock_khz * 1e3;
    info.memory_bus_width_bits = bus_width_bits;
    info.driver_version = cuda_version_text(driver);
    info.runtime_version = cuda_version_text(runtime);
    char bus_id[32] = {};
    NBODY_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device));
    info.pci_bus_id = bus_id;
    return info;
}

TuningParameter block_size_tuning(const std::string& default_value) {
    return {.name = "block_size",
            .description = "threads per block",
            .default_value = default_value,
            .allowed_values = {"32", "64", "128", "256", "512", "1024"}};
}

TuningParameter map_tuning() {
    return {.name = "map",
            .description = "activity map: recounted every step with global atomics | shared-memory privatised "
                           "histograms (D*D ints within 48 KiB) | CUB DeviceHistogram; or incremental (counts kept "
                           "on the device, only the bodies that changed cell move a count, only those cells "
                           "rewritten)",
            .default_value = "incremental",
            .allowed_values = {"atomic", "shared", "cub", "incremental"}};
}

std::string joined(const std::vector<long>& values) {
    std::string text;
    for (long v : values) {
        if (!text.empty()) text += '|';
        text += std::to_string(v);
    }
    return text;
}

void require_offered(const std::string& variant_id, const Workload& workload, const std::string& tuning, long value,
                     const std::vector<long>& offered) {
    if (std::find(offered.begin(), offered.end(), value) != offered.end()) return;
    throw UsageError(variant_id + ": tuning " + tuning + "=" + std::to_string(value) + " is not compiled for the " +
                     to_string(workload) + " workload (it offers " + tuning + "=" + joined(offered) +
                     "; every value only in 2d/fp32)");
}

int multiprocessor_count() {
    int device = 0, sms = 0;
    NBODY_CUDA_CHECK(cudaGetDevice(&device));
    NBODY_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return sms;
}

void require_block_fits(const void* kernel, unsigned int threads, const std::string& variant_id) {
    cudaFuncAttributes attributes{};
    NBODY_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
    if (threads > static_cast<unsigned int>(attributes.maxThreadsPerBlock))
        throw UsageError(variant_id + ": blocks of " + std::to_string(threads) + " threads do not fit this kernel (" +
                         std::to_string(attributes.numRegs) + " registers per thread: at most " +
                         std::to_string(attributes.maxThreadsPerBlock) + " threads per block)");
}

VariantDescriptor cuda_descriptor(std::string id, std::string description, std::vector<TuningParameter> tunings,
                                  std::function<std::unique_ptr<Simulation>(const Problem&, const TuningValues&)> create,
                                  CudaVariantFacts facts) {
    // The checked create needs the id and the workloads only; a copy of them keeps it self-contained.
    VariantDescriptor identity;
    identity.id = id;
    identity.workloads = facts.workloads;
    auto checked_create = [identity = std::move(identity), create = std::move(create)](const Problem& problem,
                                                                                        const TuningValues& tuning) {
        require_workload(identity, problem.workload);
        return create(problem, tuning);
    };
    return {.id = std::move(id),
            .backend = "cuda",
            .execution_space = "cuda",
            .description = std::move(description),
            .tunings = std::move(tunings),
            .max_n = facts.max_n,
            .runs_on_gpu = true,
            .distributed = facts.distributed,
            .workloads = std::move(facts.workloads),
            .availability = cuda_availability,
            .create = std::move(checked_create),
            .expected_efficiency = facts.expected_efficiency,
            .full_rate_bodies = facts.full_rate_bodies,
            .step_overhead_s = facts.step_overhead_s,
            .reproducibility = facts.reproducibility};
}

}  // namespace nbody::cuda
