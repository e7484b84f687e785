#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "host_staged_communicator.cuh"
#include "nbody/errors.hpp"
#include "nbody/registry.hpp"
#include "peer_communicator.cuh"
#include "variants.cuh"
#if defined(NBODY_WITH_NCCL)
#include "nccl_communicator.cuh"
#endif

namespace nbody {
namespace {

// The registry's device-communicator factory (registry.hpp): NCCL where this build has it,
// host-staged and peer always (they need only the host communicator).
std::unique_ptr<DeviceCommunicator> make_device_communicator(Communicator& host, DeviceCollectives kind) {
    switch (kind) {
        case DeviceCollectives::host_staged:
            return std::make_unique<cuda::HostStagedDeviceCommunicator>(host);
        case DeviceCollectives::peer:
            return cuda::make_peer_communicator(host);
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

}  // namespace

void register_cuda_variants(Registry& registry) {
    using namespace cuda;
    for (auto* variant : {baseline_aos_variant, rsqrt_variant, soa_ldg_variant, tiled_variant, nxn_atomic_variant,
                          force_matrix_variant, tiled2d_variant, float4_variant, unrolled_variant, fastmath_variant,
                          sliced_variant, folded_mass_variant})
        registry.add(variant());
    for (auto* variant : {pairwise_variant, tiled2d_stepwise_variant})  // the 2D tiling ladder
        registry.add(variant());
    // The id of committed results written before the variant was named by its technique.
    registry.add_alias("cuda.tiled2d_seed004", "cuda.tiled2d_stepwise");
    registry.add(persistent_variant());
    registry.set_gpu_probe(probe_gpu);
    registry.set_device_communicator_factory(make_device_communicator);
    registry.add_build_fact("cuda_runtime", std::to_string(CUDART_VERSION / 1000) + "." +
                                                std::to_string((CUDART_VERSION % 1000) / 10));
    registry.add_build_fact("cuda_architectures", NBODY_CUDA_ARCHITECTURES);
}

}  // namespace nbody
