// cuda.float4: cuda.tiled with each body packed as one 4-vector, (x, y, m, 0) in 2D and
// (x, y, z, m) in 3D: one 16-byte shared-memory load per interaction in float32 instead of one
// per field. Kernel in tiled_float4.cuh (unroll left to nvcc). This file also holds the
// simulation the whole float4 family shares (packing, slicing, launch).
#include <algorithm>
#include <string>

#include "nbody/errors.hpp"
#include "slice_count.hpp"
#include "tiled_float4.cuh"
#include "variants.cuh"

namespace nbody::cuda {

template <class Real, int Dim>
TiledFloat4Kernel<Real, Dim> compiler_unrolled_kernel() {
    return kernel_of<Real, Dim, 0, 1>();
}

namespace {

template <class Real, int Dim>
__global__ void pack_bodies(DeviceBodies<Real, Dim> bodies, PackedBody<Real>* __restrict__ packed, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    packed[i] = pack_body<Real, Dim>(bodies.position_of(i), bodies.mass[i]);
}

// The `slices` tuning: absent means 1, "auto" (0 here) means as many as fill the GPU.
unsigned int slices_of(const TuningValues& t) {
    const auto it = t.find("slices");
    if (it == t.end()) return 1;
    return it->second == "auto" ? 0 : static_cast<unsigned int>(std::stoul(it->second));
}

// The `exchange` tuning (cuda.sliced): absent means the plain all-gather.
bool overlaps_exchange_of(const TuningValues& t) {
    const auto it = t.find("exchange");
    if (it == t.end() || it->second == "allgather") return false;
    if (it->second == "overlap") return true;
    throw UsageError("exchange must be allgather or overlap, got '" + it->second + "'");
}

// The `source_layout` tuning (cuda.sliced): whether the pull reads the bodies j from the position
// axes, packing each as it is staged (as a rank must: its positions arrive by axis from the gather),
// or, in one process, from a packed copy made each step. Absent (the ladder's other rungs): packed
// in one process.
bool reads_axes_of(const Problem& p, const TuningValues& t) {
    const auto it = t.find("source_layout");
    const bool over_ranks = p.distribution.device != nullptr;
    if (it == t.end()) return over_ranks;
    if (it->second == "axes") return true;
    if (it->second != "packed") throw UsageError("source_layout must be axes or packed, got '" + it->second + "'");
    if (over_ranks)
        throw UsageError("source_layout=packed runs in one process only: over several ranks the bodies j are read "
                         "from the gathered position axes (source_layout=axes)");
    return false;
}

// The `bodies_per_thread` tuning; auto by the owned block (slice_count.hpp).
long bodies_per_thread_of(const Problem& p, const TuningValues& t) {
    if (t.at("bodies_per_thread") != "auto") return tuning_int(t, "bodies_per_thread");
    return auto_bodies_per_thread(owned_block(p).count);
}

// The tuned kernels' values are checked against the workload before the base class touches the device.
template <class Real, int Dim>
const TuningValues& checked(const Problem& p, const TuningValues& t, const std::string& id, TiledFloat4Kernels kernels) {
    reads_axes_of(p, t);  // a source_layout the problem cannot run is refused here too
    if (kernels == TiledFloat4Kernels::compiler_unrolled) return t;
    using Tunings = TiledFloat4Tunings<Real, Dim>;
    require_offered(id, p.workload, "unroll", tuning_int(t, "unroll"), Tunings::Unrolls::list());
    require_offered(id, p.workload, "bodies_per_thread", bodies_per_thread_of(p, t), Tunings::BodiesPerThread::list());
    return t;
}

template <class Real, int Dim>
TiledFloat4Kernel<Real, Dim> kernel_for(const Problem& p, const TuningValues& t, TiledFloat4Kernels kernels) {
    if (kernels == TiledFloat4Kernels::compiler_unrolled) return compiler_unrolled_kernel<Real, Dim>();
    const long unroll = tuning_int(t, "unroll"), bodies = bodies_per_thread_of(p, t);
    if constexpr (std::is_same_v<Real, float>) {
        if (kernels == TiledFloat4Kernels::tuned_fast_math) return fast_math_tuned_kernel<Dim>(unroll, bodies);
    }
    return precise_tuned_kernel<Real, Dim>(unroll, bodies);  // float64: --use_fast_math would change nothing
}

template <class Real, int Dim>
class TiledFloat4 final : public SoaSimulation<Real, Dim> {
public:
    TiledFloat4(const Problem& p, const TuningValues& t, const std::string& id, TiledFloat4Kernels kernels)
        : SoaSimulation<Real, Dim>(p, checked<Real, Dim>(p, t, id, kernels)),
          block_(block_size_of(t)),
          kernel_(kernel_for<Real, Dim>(p, t, kernels)),
          slices_(slices_of(t)),
          overlaps_exchange_(overlaps_exchange_of(t)),
          reads_axes_(reads_axes_of(p, t)),
          packed_(reads_axes_ ? 0 : p.n) {
        require_block_fits(pull_kernel(), block_, id);
        if (slices_ == 0) slices_ = slices_filling_the_gpu();
    }

private:
    // 32 waves of resident blocks in a power of two, at most one slice per tile (slice_count.hpp).
    unsigned int slices_filling_the_gpu() const {
        int resident = 0;
        NBODY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, pull_kernel(),
                                                                       static_cast<int>(block_), shared_bytes(block_)));
        return slice_count(body_blocks(block_), blocks_for(this->problem_.n, block_),
                           static_cast<unsigned int>(multiprocessor_count()), static_cast<unsigned int>(resident));
    }
    // Blocks of `block` threads over the bodies i: the owned block's (all N in one process).
    unsigned int body_blocks(unsigned int block) const {
        return blocks_for(static_cast<std::size_t>(this->owned().count()),
                          block * static_cast<unsigned int>(kernel_.bodies_per_thread));
    }
    static std::size_t shared_bytes(unsigned int block) { return block * sizeof(PackedBody<Real>); }
    // The kernel reading the axes over the owned range, or the packed bodies over all N (see tiled_float4_pull).
    const void* pull_kernel() const { return reads_axes_ ? kernel_.ranged_function : kernel_.function; }

    void compute_pull() override {
        if (this->owned().count() == 0) return;  // an empty trailing block: nothing to pull
        const int n = this->constants_.n;
        if (!reads_axes_) pack(n);
        launch_pull({.first = 0, .end = n, .skipped_first = n, .skipped_count = 0, .accumulate = false});
    }

    bool overlaps_exchange() const override { return overlaps_exchange_; }
    // The owned bodies' positions are this rank's own: pulled before the others arrive, added to
    // the pull the step left zero (no memset before the sliced partials), in blocks of
    // owned_part_block() threads (slice_count.hpp).
    void compute_pull_from_owned_block() override {
        const BodyRange own = this->owned();
        if (own.count() == 0) return;
        launch_pull({.first = own.first, .end = own.end, .skipped_first = this->constants_.n, .skipped_count = 0,
                     .accumulate = true},
                    owned_part_block(block_, kernel_.bodies_per_thread));
    }
    void compute_pull_from_other_blocks() override {
        const BodyRange own = this->owned();
        if (own.count() == 0) return;
        const int n = this->constants_.n;
        if (own.count() == n) return;  // one block holds every body
        launch_pull({.first = 0, .end = n - own.count(), .skipped_first = own.first, .skipped_count = own.count(),
                     .accumulate = true});
    }

    // source_layout=packed (one process): the kernel reads the bodies from this copy.
    void pack(int n) {
        pack_bodies<Real, Dim><<<blocks_for(static_cast<std::size_t>(n), block_), block_>>>(this->bodies(),
                                                                                            packed_.data(), n);
        NBODY_CUDA_CHECK_LAUNCH();
    }

    // The owned bodies' pull from `sources`, in slices of at most the tuned count (no more than the
    // sources have tiles); the first part of a pull (not accumulating) zeroes it for sliced partials.
    void launch_pull(SourceBodies sources) { launch_pull(sources, block_); }
    void launch_pull(SourceBodies sources, unsigned int block) {
        BodyRange targets = this->owned();
        const unsigned int slices =
            std::max(1u, std::min(slices_, blocks_for(static_cast<std::size_t>(sources.count()), block)));
        Vec<Real, Dim>* pull_out = this->pull();
        if (slices > 1 && !sources.accumulate)
            NBODY_CUDA_CHECK(cudaMemsetAsync(pull_out + targets.first, 0, targets.count() * sizeof(Vec<Real, Dim>),
                                             cudaStreamPerThread));
        const PackedBody<Real>* packed = packed_.data();
        DeviceBodies<Real, Dim> by_axis = this->bodies();
        DeviceConstants<Real> constants = this->constants_;
        void* source = reads_axes_ ? static_cast<void*>(&by_axis) : static_cast<void*>(&packed);
        void* arguments[] = {source, &pull_out, &targets, &sources, &constants};
        NBODY_CUDA_CHECK(cudaLaunchKernel(pull_kernel(), dim3(body_blocks(block), slices), dim3(block), arguments,
                                          shared_bytes(block), cudaStreamPerThread));
    }

    unsigned int block_;
    TiledFloat4Kernel<Real, Dim> kernel_;
    unsigned int slices_;
    bool overlaps_exchange_;
    bool reads_axes_;
    DeviceBuffer<PackedBody<Real>> packed_;
};

}  // namespace

template TiledFloat4Kernel<float, 2> compiler_unrolled_kernel<float, 2>();
template TiledFloat4Kernel<float, 3> compiler_unrolled_kernel<float, 3>();
template TiledFloat4Kernel<double, 2> compiler_unrolled_kernel<double, 2>();
template TiledFloat4Kernel<double, 3> compiler_unrolled_kernel<double, 3>();

std::unique_ptr<Simulation> make_tiled_float4(const Problem& problem, const TuningValues& tuning,
                                              const std::string& variant_id, TiledFloat4Kernels kernels) {
    return make_for_workload<TiledFloat4>(problem, tuning, variant_id, kernels);
}

std::vector<TuningParameter> tuned_float4_tunings(const std::string& unroll_default, const std::string& bodies_default,
                                                  const std::string& slices_default) {
    const std::string elsewhere = " (other than 2d/fp32: " +
                                  joined(TiledFloat4Tunings<double, 3>::Unrolls::list()) + ")";
    return {block_size_tuning("256"),
            {.name = "unroll",
             .description = "unroll factor of the loop over a tile" + elsewhere,
             .default_value = unroll_default,
             .allowed_values = {"1", "2", "4", "8", "16"}},
            {.name = "bodies_per_thread",
             .description = "bodies i per thread, each staged body j reused from registers (auto: 4, or 1 for fewer "
                            "than 8192 bodies i, a rank's or all N)",
             .default_value = bodies_default,
             .allowed_values = {"auto", "1", "2", "4"}},
            {.name = "slices",
             .description = "split the bodies j over this many blocks per body block (auto: 32 waves of resident blocks in a power of two, at most one per tile)",
             .default_value = slices_default,
             .allowed_values = {"auto", "1", "2", "4", "8", "16", "32", "64", "128", "256"}},
            map_tuning()};
}

VariantDescriptor float4_variant() {
    return cuda_descriptor("cuda.float4", "cuda.tiled with float4-packed bodies (one LDS.128 per interaction)",
                           {block_size_tuning("256"), map_tuning()},
                           [](const Problem& p, const TuningValues& t) {
                               return make_tiled_float4(p, t, "cuda.float4", TiledFloat4Kernels::compiler_unrolled);
                           },
                           // lowest measured 0.434; no slices: one thread per body, tiles in index order
                           {.workloads = WorkloadSupport::every(), .expected_efficiency = 0.404, .step_overhead_s = 1e-06,
                            .reproducibility = Reproducibility::bitwise});
}

}  // namespace nbody::cuda
