// cuda.tiled2d: the published 2D tiling study's 2D tiling. A block of width x length threads owns `width`
// bodies i and one chunk of `chunk` bodies j, staged once in shared memory (zero-mass padding
// past N, one barrier every thread reaches). Thread row ty sums chunk/length of the chunk,
// the rows are folded in shared memory, and each block writes one partial pull per body:
// partial[i][blockIdx.y]. A second step sums each body's partials (hand kernel, CUB or cuBLAS).
// Many more blocks than cuda.tiled at small N, at the price of N^2/chunk partials.
#include <string>

#include "interaction.cuh"
#include "nbody/errors.hpp"
#include "row_reduction.cuh"
#include "simulation_base.cuh"
#include "variants.cuh"

namespace nbody::cuda {
namespace {

template <class Real, int Dim, int Unroll>
__global__ void tiled2d_partials(DeviceBodies<Real, Dim> bodies, int chunk, PartialRows<Real, Dim> partials,
                                 DeviceConstants<Real> c) {
    // Dim + 1 arrays of `chunk` values (axis k at k * chunk, the masses last), then one pull per thread.
    extern __shared__ __align__(16) unsigned char shared[];
    Real* chunk_values = reinterpret_cast<Real*>(shared);
    Real* chunk_m = chunk_values + Dim * chunk;
    Vec<Real, Dim>* row_sums = reinterpret_cast<Vec<Real, Dim>*>(chunk_m + chunk);  // blockDim.x * blockDim.y

    const int thread = threadIdx.y * blockDim.x + threadIdx.x;
    const int chunk_start = blockIdx.y * chunk;
    for (int k = thread; k < chunk; k += blockDim.x * blockDim.y) {
        const int j = chunk_start + k;
NBODY_UNROLL_AXES
        for (int axis = 0; axis < Dim; ++axis) chunk_values[axis * chunk + k] = j < c.n ? bodies.position[axis][j] : Real(0);
        chunk_m[k] = j < c.n ? bodies.mass[j] : Real(0);
    }
    __syncthreads();

    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const bool owns_body = i < c.n;
    const Vec<Real, Dim> pi = owns_body ? bodies.position_of(i) : Vec<Real, Dim>{};
    const int per_row = chunk / blockDim.y;
    const int begin = threadIdx.y * per_row;
    Vec<Real, Dim> a{};
#pragma unroll Unroll
    for (int k = begin; k < begin + per_row; ++k) {
        Vec<Real, Dim> pj;
NBODY_UNROLL_AXES
        for (int axis = 0; axis < Dim; ++axis) pj[axis] = chunk_values[axis * chunk + k];
        pull(pi, pj, chunk_m[k], c.eps2, a);
    }

    row_sums[thread] = a;
    __syncthreads();
    if (threadIdx.y == 0 && owns_body) {
        for (int r = 1; r < blockDim.y; ++r) {
NBODY_UNROLL_AXES
            for (int axis = 0; axis < Dim; ++axis) a[axis] += row_sums[r * blockDim.x + threadIdx.x][axis];
        }
        partials.store(i, blockIdx.y, a);
    }
}

TuningParameter power_of_two_tuning(std::string name, std::string description, std::string default_value,
                                    std::vector<std::string> values) {
    return {.name = std::move(name),
            .description = std::move(description),
            .default_value = std::move(default_value),
            .allowed_values = std::move(values)};
}

// The `unroll` values compiled per workload (kEveryKernelTuning): all in 2D float32, elsewhere
// none and the default.
template <class Real, int Dim>
using Tiled2dUnrolls = std::conditional_t<kEveryKernelTuning<Real, Dim>, CompiledValues<1, 2, 4, 8>, CompiledValues<1, 4>>;

// Checked before the base class touches the device.
template <class Real, int Dim>
const TuningValues& checked(const Problem& p, const TuningValues& t) {
    const long width = tuning_int(t, "width"), length = tuning_int(t, "length"), chunk = tuning_int(t, "chunk");
    if (width * length > 1024)
        throw UsageError("cuda.tiled2d: width*length = " + std::to_string(width * length) + " exceeds 1024 threads");
    if (chunk < length)
        throw UsageError("cuda.tiled2d: chunk=" + std::to_string(chunk) + " is smaller than length=" +
                         std::to_string(length));
    require_offered("cuda.tiled2d", p.workload, "unroll", tuning_int(t, "unroll"), Tiled2dUnrolls<Real, Dim>::list());
    return t;
}

template <class Real, int Dim>
class Tiled2d final : public SoaSimulation<Real, Dim> {
public:
    Tiled2d(const Problem& p, const TuningValues& t)
        : SoaSimulation<Real, Dim>(p, checked<Real, Dim>(p, t)),
          block_(static_cast<unsigned int>(tuning_int(t, "width")), static_cast<unsigned int>(tuning_int(t, "length"))),
          chunk_(static_cast<int>(tuning_int(t, "chunk"))),
          chunks_(blocks_for(p.n, static_cast<unsigned int>(chunk_))),
          shared_bytes_((Dim + 1) * chunk_ * sizeof(Real) + block_.x * block_.y * sizeof(Vec<Real, Dim>)),
          kernel_(Tiled2dUnrolls<Real, Dim>::select(tuning_int(t, "unroll"),
                                                    [&]<int Unroll>() { return tiled2d_partials<Real, Dim, Unroll>; })),
          reducer_(p.n, chunks_, t.at("reduction")) {
        require_block_fits(reinterpret_cast<const void*>(kernel_), block_.x * block_.y, "cuda.tiled2d");
        if (shared_bytes_ > kDefaultSharedBytes)  // large chunks: opt in above the default 48 KiB
            NBODY_CUDA_CHECK(cudaFuncSetAttribute(kernel_, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  static_cast<int>(shared_bytes_)));
    }

private:
    using Kernel = void (*)(DeviceBodies<Real, Dim>, int, PartialRows<Real, Dim>, DeviceConstants<Real>);

    void compute_pull() override {
        const dim3 grid(blocks_for(this->problem_.n, block_.x), chunks_);
        kernel_<<<grid, block_, shared_bytes_>>>(this->bodies(), chunk_, reducer_.destination(), this->constants_);
        NBODY_CUDA_CHECK_LAUNCH();
        reducer_.sum(this->pull());
    }

    dim3 block_;
    int chunk_;
    unsigned int chunks_;
    std::size_t shared_bytes_;
    Kernel kernel_;
    RowReducer<Real, Dim> reducer_;  // owns the partials
};

}  // namespace

VariantDescriptor tiled2d_variant() {
    return cuda_descriptor(
        "cuda.tiled2d", "2D tiling: chunks of j in shared memory, partial sums, second-step row sum",
        {power_of_two_tuning("width", "threads (bodies i) per block along x; width*length <= 1024", "128",
                             {"32", "64", "128", "256", "512"}),
         power_of_two_tuning("length", "thread rows per block, each summing chunk/length bodies j", "2", {"1", "2", "4", "8"}),
         power_of_two_tuning("chunk", "bodies j per block ((dim + 1) reals each in shared memory)", "2048",
                             {"256", "512", "1024", "2048", "4096"}),
         power_of_two_tuning("unroll",
                             "unroll factor of the inner loop (other than 2d/fp32: " +
                                 joined(Tiled2dUnrolls<double, 3>::list()) + ")",
                             "4", {"1", "2", "4", "8"}),
         map_tuning(), reduction_tuning()},
        [](const Problem& p, const TuningValues& t) { return make_for_workload<Tiled2d>(p, t); },
        // lowest measured 0.206; the chunks' partials summed in a grouping the tunings fix
        {.workloads = WorkloadSupport::every(), .expected_efficiency = 0.382, .full_rate_bodies = 8192, .step_overhead_s = 3e-05, .reproducibility = Reproducibility::order_fixed});
}

}  // namespace nbody::cuda
