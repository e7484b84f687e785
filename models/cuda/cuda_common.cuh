#pragma once
// Pieces every CUDA variant shares: the checked-call macro, an owning device buffer, the
// availability check, the GPU probe, launch arithmetic and the tunings most variants offer.
#include <cuda_runtime.h>

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "nbody/registry.hpp"
#include "nbody/variant.hpp"

namespace nbody::cuda {

// Throws std::runtime_error naming the call, the CUDA error and the source line.
[[noreturn]] void throw_cuda_error(cudaError_t error, const char* call, const char* file, int line);

#define NBODY_CUDA_CHECK(call)                                                                  \
    do {                                                                                        \
        const cudaError_t nbody_cuda_status_ = (call);                                          \
        if (nbody_cuda_status_ != cudaSuccess)                                                  \
            ::nbody::cuda::throw_cuda_error(nbody_cuda_status_, #call, __FILE__, __LINE__);     \
    } while (0)

// After every kernel launch: launch-configuration errors surface here.
#define NBODY_CUDA_CHECK_LAUNCH() NBODY_CUDA_CHECK(cudaGetLastError())

// Owns `count` elements of device memory; move-only.
template <class T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t count) : count_(count) {
        if (count_ != 0) NBODY_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), count_ * sizeof(T)));
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
        DeviceBuffer(std::move(other)).swap(*this);
        return *this;
    }
    ~DeviceBuffer() {
        if (data_ != nullptr) cudaFree(data_);  // no throw from a destructor
    }

    T* data() const { return data_; }
    std::size_t size() const { return count_; }
    void copy_from_host(const T* host) { copy_from_host(host, count_); }
    void copy_to_host(T* host) const { copy_to_host(host, count_); }
    // The first `count` elements (a buffer may hold padding past the bodies).
    void copy_from_host(const T* host, std::size_t count) {
        require_within(count);
        NBODY_CUDA_CHECK(cudaMemcpy(data_, host, count * sizeof(T), cudaMemcpyHostToDevice));
    }
    void copy_to_host(T* host, std::size_t count) const {
        require_within(count);
        NBODY_CUDA_CHECK(cudaMemcpy(host, data_, count * sizeof(T), cudaMemcpyDeviceToHost));
    }

private:
    void require_within(std::size_t count) const {
        if (count > count_)
            throw std::logic_error("a copy of " + std::to_string(count) + " elements to or from a device buffer of " +
                                   std::to_string(count_));
    }
    void swap(DeviceBuffer& other) noexcept {
        std::swap(data_, other.data_);
        std::swap(count_, other.count_);
    }
    T* data_ = nullptr;
    std::size_t count_ = 0;
};

// The workload's constants as the kernels use them, in the workload's precision (SPEC §1, §2).
template <class Real>
struct DeviceConstants {
    int n = 0;
    int d = 0;
    Real G = 0;
    Real dt = 0;
    Real eps2 = 0;
};
template <class Real>
DeviceConstants<Real> device_constants(const Problem& problem);

// Available when cudaGetDeviceCount finds a device; otherwise the reason, "no CUDA device: ...".
Availability cuda_availability();

// The current device's properties read at run time; empty without a device.
std::optional<GpuInfo> probe_gpu();

// "NVIDIA H100 80GB HBM3, PCI 0000:1b:00.0": a device as the results name it.
std::string describe_device(int device);

// UsageError unless `decomposition` spans the `ranks` ranks of the communicator `collective` names.
void require_ranks(const BlockDecomposition& decomposition, int ranks, const std::string& collective);

// FP32 lanes per SM of a compute capability (CUDA programming guide's arithmetic table).
int fp32_lanes_per_sm(int major, int minor);

inline unsigned int blocks_for(std::size_t items, unsigned int per_block) {
    return static_cast<unsigned int>((items + per_block - 1) / per_block);
}

// Tunings that select a compiled kernel (unroll factors, bodies per thread) are compiled with
// every allowed value for the 2D float32 workloads and with a few values for the others, which
// bounds the build time; the others are refused with a UsageError (require_offered).
template <class Real, int Dim>
inline constexpr bool kEveryKernelTuning = std::is_same_v<Real, float> && Dim == 2;

// A compile-time list of tuning values with kernels behind them.
template <int First, int... Rest>
struct CompiledValues {
    static std::vector<long> list() { return {First, Rest...}; }
    // f.template operator()<V>() for the V equal to `value`.
    template <class F>
    static auto select(long value, F&& f) {
        using Result = decltype(f.template operator()<First>());
        std::optional<Result> result;
        ((value == First && (result = f.template operator()<First>(), true)) ||
         ((value == Rest && (result = f.template operator()<Rest>(), true)) || ...));
        if (!result) throw std::logic_error("no kernel compiled for tuning value " + std::to_string(value));
        return *result;
    }
};

// UsageError naming the variant, the tuning, the workload and `offered` when `value` is not in it.
void require_offered(const std::string& variant_id, const Workload& workload, const std::string& tuning, long value,
                     const std::vector<long>& offered);

// "1|2|4"
std::string joined(const std::vector<long>& values);

// Tunings offered by most variants.
TuningParameter block_size_tuning(const std::string& default_value);
TuningParameter map_tuning();

// Dynamic shared memory a block gets without opting in (cudaFuncAttributeMaxDynamicSharedMemorySize).
inline constexpr std::size_t kDefaultSharedBytes = 48 * 1024;

// The current device's multiprocessors (SMs).
int multiprocessor_count();

// UsageError when a kernel compiled with its registers cannot run blocks of `threads` threads.
void require_block_fits(const void* kernel, unsigned int threads, const std::string& variant_id);

// What a CUDA variant's descriptor says beyond its id, description, tunings and create (the
// VariantDescriptor fields of the same names).
struct CudaVariantFacts {
    WorkloadSupport workloads = {};  // default: 2d/fp32/euler only
    std::size_t max_n = 0;
    bool distributed = false;
    // The run-time estimate's rate model, VariantDescriptor's fields of the same names (fitted to the
    // GPU sweep of docs/estimates.md); 0: the model's defaults.
    double expected_efficiency = 0;
    double full_rate_bodies = 0;
    double step_overhead_s = 0;
    Reproducibility reproducibility = Reproducibility::run_to_run;
};

// A descriptor with the fields every CUDA variant shares filled in. Its create refuses (UsageError,
// before any device call) a problem whose workload is not in `facts.workloads`.
VariantDescriptor cuda_descriptor(std::string id, std::string description, std::vector<TuningParameter> tunings,
                                  std::function<std::unique_ptr<Simulation>(const Problem&, const TuningValues&)> create,
                                  CudaVariantFacts facts = {});

}  // namespace nbody::cuda
