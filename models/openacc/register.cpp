// The OpenACC variants' registration: each variant twice, openacc.<name> (the GPU) and
// openacc.<name>@host (the same code, `if` clauses false). Compiled without -fopenacc; the compute
// code is in nbody_openacc_kernels (openacc.hpp).
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "nbody/errors.hpp"
#include "nbody/libgomp_device.hpp"
#include "nbody/registry.hpp"
#include "openacc.hpp"

namespace nbody {
namespace openacc {
namespace {

struct VariantEntry {
    std::string name;
    std::string description;
    std::vector<TuningParameter> tunings;
    std::function<std::unique_ptr<Simulation>(const Problem&, const TuningValues&, bool on_gpu)> create;
    // On the GPU: VariantDescriptor's, fitted to the GPU sweep (docs/estimates.md).
    double expected_efficiency = 0;
    double full_rate_bodies = 0;
    double step_overhead_s = 0;
    Reproducibility reproducibility = Reproducibility::run_to_run;  // on the GPU and the host alike
};

const std::vector<VariantEntry>& entries() {
    static const std::vector<VariantEntry> all = {
        {.name = "naive",
         .description = "parallel loop gang vector over the bodies i, the j sum inside (loop seq)",
         .tunings = {},
         .create = [](const Problem& p, const TuningValues&, bool on_gpu) { return make_naive(p, on_gpu); },
         .expected_efficiency = 0.122,
         .step_overhead_s = 5e-5,
         .reproducibility = Reproducibility::bitwise},  // each body's j sum by one lane, `loop seq`
        {.name = "multi_i",
         .description = "parallel loop gang vector over groups of bodies i, each lane summing several "
                        "(`bodies`), each body j loaded once for all of them",
         .tunings = {{.name = "bodies",
                      .description = "bodies i per vector lane",
                      .default_value = "4",
                      .allowed_values = {"1", "2", "4"},
                      .min_value = 0,
                      .max_value = 0}},
         .create = [](const Problem& p, const TuningValues& t, bool on_gpu) {
             return make_multi_i(p, static_cast<int>(tuning_int(t, "bodies")), on_gpu);
         },
         .expected_efficiency = 0.153,
         .full_rate_bodies = 262144,
         .step_overhead_s = 1e-5,
         .reproducibility = Reproducibility::bitwise},
    };
    return all;
}

}  // namespace

Availability gpu_availability() {
#ifdef NBODY_OPENACC_OFFLOAD
    if (nvidia_devices() > 0) return {};
    return {false,
            "no OpenACC device: libgomp found no NVIDIA GPU (it needs its nvptx plugin libgomp-plugin-nvptx.so.1 "
            "beside the binary or on the library path, the CUDA driver libcuda.so.1 and an NVIDIA GPU); the same "
            "code on the host is openacc.<variant>@host"};
#else
    return {false, "this build has no OpenACC offload compiler: " NBODY_OPENACC_WHY_HOST};
#endif
}

std::unique_ptr<Simulation> create_simulation(const std::string& name, const Problem& problem,
                                              const TuningValues& tuning, Target target) {
    if (target == Target::gpu_required) {
        const Availability a = gpu_availability();
        if (!a.available) throw std::runtime_error("openacc GPU variant cannot run here: " + a.reason);
    }
    if (target != Target::host) initialise_gpu();
    for (const VariantEntry& entry : entries())
        if (entry.name == name) return entry.create(problem, tuning, target != Target::host);
    throw std::logic_error(name + " is not an openacc variant");
}

}  // namespace openacc

void register_openacc_variants(Registry& registry) {
    for (const openacc::VariantEntry& entry : openacc::entries()) {
        // Both always: without the offload compiler the GPU variant is listed as unavailable, saying why.
        for (const bool gpu : {true, false}) {
            const std::string id = "openacc." + entry.name + (gpu ? "" : "@host");
            const std::string name = entry.name;
            registry.add({.id = id,
                          .backend = "openacc",
                          // The host runs each compute region on one thread (the estimate counts one core).
                          .execution_space = gpu ? "openacc" : "serial",
                          .description = entry.description +
                                         (gpu ? " [" NBODY_OPENACC_COMPILER "]"
                                              : " [" NBODY_OPENACC_COMPILER ", host: `if` clauses false, one thread]"),
                          .tunings = entry.tunings,
                          .max_n = 0,
                          .runs_on_gpu = gpu,
                          .distributed = false,
                          .workloads = WorkloadSupport::every(),
                          .availability = gpu ? openacc::gpu_availability : std::function<Availability()>{},
                          .create = [id, name, gpu](const Problem& p, const TuningValues& t) {
                              if (p.distribution.spans_ranks())
                                  throw UsageError(id + " runs on one rank only, asked for " +
                                                   std::to_string(p.distribution.ranks()));
                              return openacc::create_simulation(
                                  name, p, t, gpu ? openacc::Target::gpu_required : openacc::Target::host);
                          },
                          // The host, one core: both reached 0.064-0.076 (H100 host), 0.07 (2-core host).
                          .expected_efficiency = gpu ? entry.expected_efficiency : 0.06,
                          .full_rate_bodies = gpu ? entry.full_rate_bodies : 0.0,
                          .step_overhead_s = gpu ? entry.step_overhead_s : 0.0,
                          .reproducibility = entry.reproducibility});
        }
    }
    registry.add_build_fact("openacc_compiler", NBODY_OPENACC_COMPILER);
    set_openacc_device_initialiser(openacc::initialise_gpu);
}

}  // namespace nbody
