#include <cuda_runtime.h>

#include <map>
#include <stdexcept>
#include <string>

#include "host_staged_communicator.cuh"
#include "nbody/errors.hpp"
#include "nbody/model_registration.hpp"
#include "variants.cuh"
#if defined(NBODY_WITH_NCCL)
#include "nccl_communicator.cuh"
#endif

namespace nbody {
namespace {

// The registry's device-communicator factory (registry.hpp): NCCL where this build has it,
// host-staged always (it needs only the host communicator).
std::unique_ptr<DeviceCommunicator> make_device_communicator(Communicator& host, DeviceCollectives kind) {
    switch (kind) {
        case DeviceCollectives::host_staged:
            return std::make_unique<cuda::HostStagedDeviceCommunicator>(host);
        case DeviceCollectives::nccl:
#if defined(NBODY_WITH_NCCL)
            return cuda::make_nccl_communicator(host);
#else
            throw UsageError("device collectives nccl: this build has no NCCL (configure needs MPI and NCCL beside CUDA, "
                             "see docs/scaling.md); --device-collectives host-staged runs without it");
#endif
    }
    throw std::logic_error("unknown DeviceCollectives kind");
}

// VariantDescriptor::expected_efficiency of the variants measured at N >= 65536 (results/*.json):
// about 0.6 of the lowest fraction of the limit each reached there, in any workload (the rungs
// without such results keep the model's default, the slowest rung's).
double expected_efficiency(const std::string& id) {
    static const std::map<std::string, double> known = {
        {"cuda.sliced", 0.33},        // lowest 0.547 (3D float64), 0.65-0.75 in float32
        {"cuda.fastmath", 0.29},      // 0.481
        {"cuda.unrolled", 0.27},      // 0.458
        {"cuda.float4", 0.26},        // 0.434
        {"cuda.tiled", 0.23},         // 0.383
        {"cuda.persistent", 0.19},    // 0.316
        {"cuda.tiled2d", 0.12},       // 0.206
        {"cuda.tiled2d_stepwise", 0.1},  // 0.166
        {"cuda.pairwise", 0.06},      // 0.105
    };
    const auto it = known.find(id);
    return it == known.end() ? 0.0 : it->second;
}

VariantDescriptor with_expected_efficiency(VariantDescriptor descriptor) {
    descriptor.expected_efficiency = expected_efficiency(descriptor.id);
    return descriptor;
}

}  // namespace

void register_cuda_variants(Registry& registry) {
    using namespace cuda;
    for (auto* variant : {baseline_aos_variant, rsqrt_variant, soa_ldg_variant, tiled_variant, nxn_atomic_variant,
                          force_matrix_variant, tiled2d_variant, float4_variant, unrolled_variant, fastmath_variant,
                          sliced_variant})
        registry.add(with_expected_efficiency(variant()));
    for (auto* variant : {pairwise_variant, tiled2d_stepwise_variant})  // the 2D tiling ladder
        registry.add(with_expected_efficiency(variant()));
    // The id of committed results written before the variant was named by its technique.
    registry.add_alias("cuda.tiled2d_seed004", "cuda.tiled2d_stepwise");
    registry.add(with_expected_efficiency(persistent_variant()));
    registry.set_gpu_probe(probe_gpu);
    registry.set_device_communicator_factory(make_device_communicator);
    registry.add_build_fact("cuda_runtime", std::to_string(CUDART_VERSION / 1000) + "." +
                                                std::to_string((CUDART_VERSION % 1000) / 10));
    registry.add_build_fact("cuda_architectures", NBODY_CUDA_ARCHITECTURES);
}

}  // namespace nbody
