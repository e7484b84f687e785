// cuda.folded_mass: cuda.sliced's tiling (4 bodies i per thread, one wide shared load of body j
// serving the four) with the mass of body j folded into its coordinates, one multiply fewer per
// interaction, and the work handed out in chunks from a counter so that every SM stays busy to
// the end. Float32 and float64.
//
// The fold (physics.hpp's scale_by_mass and accumulate_scaled_pull): with s_j = m_j^(-1/2), body j
// is packed once per step as s_j p_j, s_j and eps2 s_j^2, and the pull is 2 multiplies + 1 rsqrt
// where accumulate_pull takes 3 + 1; the subtraction becomes a fused multiply-add. 11 FP32
// instructions per interaction in 3D (12 counted by the limit), 8 in 2D (9); float64 16 FP64 in 3D
// (cuda.sliced's 17), the rsqrt refined as interaction.cuh's rsqrt_of_normal. d' rounds s_j p_j
// once, so its error is an ulp of s_j p_j rather than of d: the same size for the workloads' bodies
// in the unit square (docs/performance-cuda.md compares both kernels' errors). q^3 stays a normal
// number while m_j / (r^2 + eps2) lies within the range MassRangeChecked enforces.
//
// Chunks: a unit of work is (a block of 1024 (float64: 512) bodies i, a run of tiles of 256 bodies j); blocks
// take units from a global counter until none is left, each adding its partial pulls with
// atomicAdd. A static split of the same units left some blocks finishing early (achieved
// occupancy 34 % of 50 %, H100); short runs also keep the partial sums short.
#include <algorithm>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "cuda_common.cuh"
#include "interaction.cuh"
#include "nbody/foldable_masses.hpp"
#include "nbody/workload_dispatch.hpp"
#include "simulation_base.cuh"
#include "variants.cuh"

namespace nbody::cuda {
namespace {

constexpr int kBlock = 256;          // threads per block, bodies j per tile
// Bodies i per thread: 4 in float32; 2 in float64, as cuda.sliced (82 registers at 4).
template <class Real>
constexpr int kBodiesPerThread = std::is_same_v<Real, float> ? 4 : 2;
constexpr int kUnroll = 16;
// Chunks per resident block on average: enough for the counter to even out the blocks' ends,
// few enough that the atomicAdd of partial pulls stays negligible.
constexpr long long kChunksPerBlock = 64;

// Registers: float32 3D at 64 (4 blocks of 256 per SM); in 2D the unbounded schedule (71
// registers, 3 blocks) measured 3 % faster than 48 registers and 5 blocks (H100). Float64 unbounded:
// its 24 live doubles per thread would spill at 64.
template <class Real, int Dim>
constexpr int kMinBlocks = std::is_same_v<Real, float> && Dim == 3 ? 4 : 1;

// Body j scaled by s = m^(-1/2): 2D (s x, s y, s, eps2 s^2); 3D (s x, s y, s z, s), and eps2 s^2 apart.
template <class Real, int Dim>
__global__ void pack_folded(DeviceBodies<Real, Dim> bodies, PackedBody<Real>* __restrict__ scaled,
                            Real* __restrict__ softening, int n, Real eps2) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const ScaledBody<Real, Dim> b = scale_by_mass(bodies.position_of(i), bodies.mass[i], eps2);
    if constexpr (Dim == 2) {
        scaled[i] = {b.position[0], b.position[1], b.scale, b.softening};
    } else {
        scaled[i] = {b.position[0], b.position[1], b.position[2], b.scale};
        softening[i] = b.softening;
    }
}

// Body j of a tile as physics.hpp's scaled body.
template <class Real, int Dim>
__device__ __forceinline__ void unpack_folded(const PackedBody<Real>& packed, Real softening_apart, Vec<Real, Dim>& position,
                                              Real& scale, Real& softening) {
    position[0] = packed.x;
    position[1] = packed.y;
    if constexpr (Dim == 2) {
        scale = packed.z;
        softening = packed.w;
    } else {
        position[2] = packed.z;
        scale = packed.w;
        softening = softening_apart;
    }
}

struct ChunkLayout {
    int tiles;             // tiles of kBlock bodies j
    int chunk_tiles;       // tiles per chunk
    int chunks_per_group;  // chunks per group of kBlock * kBodiesPerThread bodies i
    int chunks;            // all of them
};

template <class Real, int Dim>
__global__ void __launch_bounds__(kBlock, kMinBlocks<Real, Dim>)
folded_pull(DeviceBodies<Real, Dim> bodies, const PackedBody<Real>* __restrict__ scaled, const Real* __restrict__ softening,
            Vec<Real, Dim>* __restrict__ pull_out, int n, ChunkLayout layout, unsigned int* __restrict__ next_chunk) {
    constexpr bool kSofteningApart = Dim == 3;
    // Two tiles: a thread stores tile t + 1 while others may still read tile t.
    __shared__ PackedBody<Real> tile[2][kBlock];
    __shared__ Real tile_softening[kSofteningApart ? 2 : 1][kSofteningApart ? kBlock : 1];
    __shared__ int chunk_of_block;
    // Past N: s = 0 (d' = 0) and a softening of 1 (finite q), so no pull.
    const PackedBody<Real> padding{Real(0), Real(0), Real(0), Dim == 2 ? Real(1) : Real(0)};
    int parity = 0;
    for (;;) {
        if (threadIdx.x == 0) chunk_of_block = static_cast<int>(atomicAdd(next_chunk, 1u));
        __syncthreads();
        const int chunk = chunk_of_block;  // rewritten only after the next tile's barrier
        if (chunk >= layout.chunks) break;
        const int group = chunk / layout.chunks_per_group;
        const int tile_first = (chunk - group * layout.chunks_per_group) * layout.chunk_tiles;
        const int tile_end = min(layout.tiles, tile_first + layout.chunk_tiles);
        const int first = group * kBlock * kBodiesPerThread<Real> + threadIdx.x;
        Vec<Real, Dim> pi[kBodiesPerThread<Real>], a[kBodiesPerThread<Real>];
#pragma unroll
        for (int b = 0; b < kBodiesPerThread<Real>; ++b) {
            const int i = first + b * kBlock;
#pragma unroll
            for (int k = 0; k < Dim; ++k) {
                pi[b][k] = i < n ? bodies.position[k][i] : Real(0);
                a[b][k] = Real(0);
            }
        }
        int j = tile_first * kBlock + threadIdx.x;
        PackedBody<Real> next = j < n ? scaled[j] : padding;
        Real next_softening = 1;
        if constexpr (kSofteningApart) next_softening = j < n ? softening[j] : Real(1);
        for (int t = tile_first; t < tile_end; ++t) {
            tile[parity][threadIdx.x] = next;
            if constexpr (kSofteningApart) tile_softening[parity][threadIdx.x] = next_softening;
            __syncthreads();
            j += kBlock;
            if (t + 1 < tile_end) {  // the next tile's load overlaps this tile's sums
                next = j < n ? scaled[j] : padding;
                if constexpr (kSofteningApart) next_softening = j < n ? softening[j] : Real(1);
            }
            const PackedBody<Real>* bodies_j = tile[parity];
            const Real* softening_j = tile_softening[kSofteningApart ? parity : 0];
#pragma unroll kUnroll
            for (int k = 0; k < kBlock; ++k) {
                const PackedBody<Real> body_j = bodies_j[k];
                Vec<Real, Dim> scaled_j;
                Real s, e;
                unpack_folded<Real, Dim>(body_j, kSofteningApart ? softening_j[k] : Real(0), scaled_j, s, e);
#pragma unroll
                for (int b = 0; b < kBodiesPerThread<Real>; ++b)
                    accumulate_scaled_pull(pi[b], scaled_j, s, e, a[b], NormalRsqrt{});
            }
            parity ^= 1;
        }
#pragma unroll
        for (int b = 0; b < kBodiesPerThread<Real>; ++b) {
            const int i = first + b * kBlock;
            if (i >= n) continue;
            // The term j == i is fl(s p_i) - s p_i, a rounding error rather than SPEC's exact zero: where
            // this chunk summed it, the same instructions recompute it and take it out again.
            if (i >= tile_first * kBlock && i < tile_end * kBlock) {
                Vec<Real, Dim> scaled_i, self{};
                Real s, e;
                unpack_folded<Real, Dim>(scaled[i], kSofteningApart ? softening[i] : Real(0), scaled_i, s, e);
                accumulate_scaled_pull(pi[b], scaled_i, s, e, self, NormalRsqrt{});
#pragma unroll
                for (int axis = 0; axis < Dim; ++axis) a[b][axis] -= self[axis];
            }
#pragma unroll
            for (int axis = 0; axis < Dim; ++axis) atomicAdd(&pull_out[i][axis], a[b][axis]);
        }
    }
}

template <class Real, int Dim>
class FoldedMass final : public SoaSimulation<Real, Dim> {
public:
    FoldedMass(const Problem& p, const TuningValues& t)
        : SoaSimulation<Real, Dim>(p, t),
          scaled_(p.n),
          softening_(Dim == 3 ? p.n : 0),
          next_chunk_(1) {
        require_block_fits(reinterpret_cast<const void*>(folded_pull<Real, Dim>), kBlock, "cuda.folded_mass");
        int resident = 0;
        NBODY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, folded_pull<Real, Dim>, kBlock, 0));
        const int groups = static_cast<int>(blocks_for(p.n, kBlock * kBodiesPerThread<Real>));
        layout_.tiles = static_cast<int>(blocks_for(p.n, kBlock));
        const long long resident_blocks = static_cast<long long>(multiprocessor_count()) * resident;
        const long long units = static_cast<long long>(groups) * layout_.tiles;
        layout_.chunk_tiles = static_cast<int>(
            std::clamp(units / (resident_blocks * kChunksPerBlock), 1LL, static_cast<long long>(layout_.tiles)));
        layout_.chunks_per_group = static_cast<int>(blocks_for(layout_.tiles, layout_.chunk_tiles));
        layout_.chunks = groups * layout_.chunks_per_group;
        grid_ = static_cast<unsigned int>(std::min<long long>(resident_blocks, layout_.chunks));
    }

private:
    void compute_pull() override {
        const int n = this->constants_.n;
        const DeviceBodies<Real, Dim> bodies = this->bodies();
        pack_folded<Real, Dim><<<blocks_for(n, kBlock), kBlock>>>(bodies, scaled_.data(), softening_.data(), n,
                                                            this->constants_.eps2);
        NBODY_CUDA_CHECK_LAUNCH();
        NBODY_CUDA_CHECK(cudaMemsetAsync(this->pull(), 0, static_cast<std::size_t>(n) * sizeof(Vec<Real, Dim>)));
        NBODY_CUDA_CHECK(cudaMemsetAsync(next_chunk_.data(), 0, sizeof(unsigned int)));
        folded_pull<Real, Dim><<<grid_, kBlock>>>(bodies, scaled_.data(), softening_.data(), this->pull(), n, layout_,
                                            next_chunk_.data());
        NBODY_CUDA_CHECK_LAUNCH();
    }

    DeviceBuffer<PackedBody<Real>> scaled_;
    DeviceBuffer<Real> softening_;
    DeviceBuffer<unsigned int> next_chunk_;
    ChunkLayout layout_{};
    unsigned int grid_ = 1;
};

}  // namespace

VariantDescriptor folded_mass_variant() {
    return cuda_descriptor(
        "cuda.folded_mass",
        "cuda.sliced's tiles with body j scaled by m^-1/2 (one multiply fewer per interaction), work in chunks from a counter",
        {map_tuning()},
        [](const Problem& p, const TuningValues& t) -> std::unique_ptr<Simulation> {
            return dispatch_workload(p.workload, [&]<class Real, int Dim>() -> std::unique_ptr<Simulation> {
                return std::make_unique<MassRangeChecked<Real, FoldedMass<Real, Dim>>>(
                    "cuda.folded_mass", "cuda.sliced", p.constants.softening, p, t);
            });
        },
        // 0.747 (3D) and 0.753 (2D) of the limit at N = 262144 in the pull-kernel lab, 0.727 at 65536
        // chunks taken from a counter, partials added by atomicAdd
        {.workloads = WorkloadSupport::every(), .expected_efficiency = 0.603, .full_rate_bodies = 8192, .step_overhead_s = 1e-05, .reproducibility = Reproducibility::run_to_run});
}

}  // namespace nbody::cuda
