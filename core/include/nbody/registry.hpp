#pragma once
// The list of variants this build contains (SPEC §4).
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nbody/variant.hpp"

namespace nbody {

// The GPU a model found, for results' context and the efficiency limit of SPEC §3.
struct GpuInfo {
    std::string name;
    std::string compute_capability;  // "9.0"
    int sm_count = 0;
    double sm_clock_hz = 0.0;        // as read from the device at run time
    int fp32_lanes_per_sm = 0;       // 128 on Hopper
    double memory_clock_hz = 0.0;
    int memory_bus_width_bits = 0;
    double memory_bytes = 0.0;       // the device's global memory; 0 when unknown
    std::string driver_version;      // e.g. "13.0" (the CUDA version the driver supports)
    std::string runtime_version;
    std::string pci_bus_id;          // "0000:1B:00.0": names the device to NVML whatever CUDA numbered it
};

// A programming model (an id's "<backend>" part) or one of its execution spaces (an id's "@<space>"
// part) that the suite has, whether this build compiled it or not: a matrix may name one that this
// build left out, which is not a typo.
struct ModelPart {
    std::string model;       // "cuda", "kokkos", ...
    std::string space;       // "" for the model itself; else a space of `model` ("openmp" in kokkos.*@openmp)
    bool in_build = false;
    std::string why_absent;  // the configure step's reason when !in_build
};

class Registry {
public:
    // Throws std::logic_error on a duplicate or malformed id.
    void add(VariantDescriptor descriptor);
    const std::vector<VariantDescriptor>& all() const { return variants_; }
    // nullptr when absent. A former id (add_alias) finds the variant that now carries it.
    const VariantDescriptor* find(const std::string& id) const;
    // Keeps a renamed variant's former id readable (results files and matrices that use it); glob
    // patterns match current ids only. Throws std::logic_error when `id` is not registered or
    // `former_id` is taken.
    void add_alias(const std::string& former_id, const std::string& id);
    // Variants whose id matches a comma-separated list of glob patterns (`*`, `?`).
    std::vector<const VariantDescriptor*> match(const std::string& patterns) const;
    // The comma-separated parts of a pattern list, empty parts dropped.
    static std::vector<std::string> pattern_parts(const std::string& patterns);

    // The models and spaces of the suite (declared by builtin_registry(); tests declare their own).
    void declare(ModelPart part) { parts_.push_back(std::move(part)); }
    const std::vector<ModelPart>& declared_parts() const { return parts_; }
    // For one pattern (no comma) that matches no variant: why, when it names a model or space this
    // build left out ("model cuda is not in this build: ..."); "" when it names nothing the suite has
    // left out (a typo, or a variant that does not exist).
    std::string absent_from_build(const std::string& pattern) const;
    // "serial, omp, cuda, ...": every model declared, for messages.
    std::string declared_models() const;

    // Defaults overlaid with `overrides`; UsageError naming the variant and parameter on an
    // unknown name or a value outside the allowed set.
    static TuningValues resolve_tuning(const VariantDescriptor& variant, const TuningValues& overrides);

    // Versions and settings a model contributes to results' context ("kokkos_version", ...).
    void add_build_fact(const std::string& key, const std::string& value) { build_facts_[key] = value; }
    const std::map<std::string, std::string>& build_facts() const { return build_facts_; }

    // A model that can see GPUs installs a probe; gpu() is empty without one or without a GPU.
    void set_gpu_probe(std::function<std::optional<GpuInfo>()> probe) { gpu_probe_ = std::move(probe); }
    std::optional<GpuInfo> gpu() const { return gpu_probe_ ? gpu_probe_() : std::nullopt; }

    // A model that can move data between GPUs installs the factory of its device communicator: a
    // collective over every rank of `host`, which also selects this rank's GPU (the local rank's;
    // with host_staged, local rank modulo the node's GPUs). Throws UsageError for a kind this build
    // lacks (nccl without NCCL).
    using DeviceCommunicatorFactory =
        std::function<std::unique_ptr<DeviceCommunicator>(Communicator& host, DeviceCollectives kind)>;
    void set_device_communicator_factory(DeviceCommunicatorFactory factory) { device_communicator_factory_ = std::move(factory); }
    // nullptr when no model installed one (a build without CUDA).
    const DeviceCommunicatorFactory* device_communicator_factory() const {
        return device_communicator_factory_ ? &device_communicator_factory_ : nullptr;
    }

private:
    std::vector<VariantDescriptor> variants_;
    std::map<std::string, std::string> aliases_;  // former id -> current id
    std::vector<ModelPart> parts_;
    std::map<std::string, std::string> build_facts_;
    std::function<std::optional<GpuInfo>()> gpu_probe_;
    DeviceCommunicatorFactory device_communicator_factory_;
};

bool glob_match(const std::string& pattern, const std::string& text);

// Every variant compiled into this build; each model contributes through its own
// register_<model>_variants(), listed in the generated suite_models() (model_registration.hpp).
Registry& builtin_registry();

}  // namespace nbody
