// cuda.tiled: shared-memory tiling (GPU Gems 3, ch. 31). Each block stages one tile of
// blockDim bodies (each position axis and the mass, one array each) in shared memory, every
// thread sums over it, next tile. The last tile is padded with zero-mass bodies, whose pull is
// exactly zero, so every thread of the block reaches every barrier whatever N is (no
// conditional __syncthreads). Every workload: one kernel per precision and dimension.
#include "interaction.cuh"
#include "simulation_base.cuh"
#include "variants.cuh"

namespace nbody::cuda {
namespace {

template <class Real, int Dim>
__global__ void tiled_pull(DeviceBodies<Real, Dim> bodies, Vec<Real, Dim>* __restrict__ pull_out,
                           DeviceConstants<Real> c) {
    // Dim + 1 arrays of blockDim values: axis k at tile + k * blockDim.x, the masses last.
    extern __shared__ __align__(16) unsigned char shared[];
    Real* tile = reinterpret_cast<Real*>(shared);
    Real* tile_m = tile + Dim * blockDim.x;
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const bool owns_body = i < c.n;
    const Vec<Real, Dim> pi = owns_body ? bodies.position_of(i) : Vec<Real, Dim>{};
    Vec<Real, Dim> a{};
    for (int tile_start = 0; tile_start < c.n; tile_start += blockDim.x) {
        const int j = tile_start + threadIdx.x;
NBODY_UNROLL_AXES
        for (int k = 0; k < Dim; ++k) tile[k * blockDim.x + threadIdx.x] = j < c.n ? bodies.position[k][j] : Real(0);
        tile_m[threadIdx.x] = j < c.n ? bodies.mass[j] : Real(0);
        __syncthreads();
        for (int t = 0; t < blockDim.x; ++t) {
            Vec<Real, Dim> pj;
NBODY_UNROLL_AXES
            for (int k = 0; k < Dim; ++k) pj[k] = tile[k * blockDim.x + t];
            pull(pi, pj, tile_m[t], c.eps2, a);
        }
        __syncthreads();
    }
    if (owns_body) pull_out[i] = a;
}

template <class Real, int Dim>
class Tiled final : public SoaSimulation<Real, Dim> {
public:
    Tiled(const Problem& p, const TuningValues& t) : SoaSimulation<Real, Dim>(p, t), block_(block_size_of(t)) {
        require_block_fits(reinterpret_cast<const void*>(tiled_pull<Real, Dim>), block_, "cuda.tiled");
    }

private:
    void compute_pull() override {
        const std::size_t shared_bytes = (Dim + 1) * block_ * sizeof(Real);
        tiled_pull<Real, Dim><<<blocks_for(this->problem_.n, block_), block_, shared_bytes>>>(
            this->bodies(), this->pull(), this->constants_);
        NBODY_CUDA_CHECK_LAUNCH();
    }
    unsigned int block_;
};

}  // namespace

VariantDescriptor tiled_variant() {
    return cuda_descriptor("cuda.tiled", "SoA, shared-memory tiles of blockDim bodies (GPU Gems 3 ch. 31), rsqrtf (fp64: rsqrt)",
                           {block_size_tuning("256"), map_tuning()},
                           [](const Problem& p, const TuningValues& t) { return make_for_workload<Tiled>(p, t); },
                           // lowest measured 0.383; tiles in index order, one thread per body
                           {.workloads = WorkloadSupport::every(), .expected_efficiency = 0.404, .step_overhead_s = 2e-06,
                            .reproducibility = Reproducibility::bitwise});
}

}  // namespace nbody::cuda
