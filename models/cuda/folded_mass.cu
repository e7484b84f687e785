// cuda.folded_mass: cuda.sliced's tiling (4 bodies i per thread, one 16-byte shared load of body j
// serving the four) with the mass of body j folded into its coordinates, one multiply fewer per
// interaction, and the work handed out in chunks from a counter so that every SM stays busy to
// the end. Float32 only.
//
// The fold: with s_j = m_j^(-1/2), d' = s_j p_j - s_j p_i = s_j d (one FFMA per axis, s_j p_j packed
// once per step), r2' = |d'|^2 + eps2 s_j^2 = s_j^2 (|d|^2 + eps2), q = rsqrt(r2'), and
// q^3 d' = m_j (|d|^2 + eps2)^(-3/2) d, the pull of SPEC §1: 2 FMUL + 1 MUFU where
// accumulate_pull takes 3 FMUL + 1 MUFU; the subtraction becomes an FFMA. 11 FP32 instructions
// per interaction in 3D (12 counted by the limit), 8 in 2D (9). d' rounds s_j p_j once, so its
// error is an ulp of s_j p_j rather than of d: the same size for the workloads' bodies in the unit
// square (docs/performance-cuda.md compares both kernels' errors). q^3 stays a normal float while
// m_j / (r^2 + eps2) lies within about 1e-25..1e25.
//
// Chunks: a unit of work is (a block of 1024 bodies i, a run of tiles of 256 bodies j); blocks
// take units from a global counter until none is left, each adding its partial pulls with
// atomicAdd. A static split of the same units left some blocks finishing early (achieved
// occupancy 34 % of 50 %, H100); short runs also keep the float32 partial sums short.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cuda_common.cuh"
#include "nbody/errors.hpp"
#include "nbody/workload_dispatch.hpp"
#include "simulation_base.cuh"
#include "variants.cuh"

namespace nbody::cuda {
namespace {

constexpr int kBlock = 256;          // threads per block, bodies j per tile
constexpr int kBodiesPerThread = 4;  // bodies i per thread
constexpr int kUnroll = 16;
// Chunks per resident block on average: enough for the counter to even out the blocks' ends,
// few enough that the atomicAdd of partial pulls stays negligible.
constexpr long long kChunksPerBlock = 64;

// Registers: 64 in 3D (4 blocks of 256 per SM); in 2D the unbounded schedule (71 registers, 3
// blocks) measured 3 % faster than 48 registers and 5 blocks (H100).
template <int Dim>
constexpr int kMinBlocks = Dim == 3 ? 4 : 1;

__device__ __forceinline__ float rsqrt_approx(float v) {
    float y;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(v));
    return y;
}

// Body j scaled by s = m^(-1/2): 2D (s x, s y, s, eps2 s^2); 3D (s x, s y, s z, s), and eps2 s^2 apart.
// s in double, so that s^2 m = 1 to float rounding.
template <int Dim>
__global__ void pack_folded(DeviceBodies<float, Dim> bodies, float4* __restrict__ scaled,
                            float* __restrict__ softening, int n, float eps2) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float s = static_cast<float>(1.0 / sqrt(static_cast<double>(bodies.mass[i])));
    const float e = static_cast<float>(static_cast<double>(eps2) * s * s);
    const Vec<float, Dim> p = bodies.position_of(i);
    if constexpr (Dim == 2) {
        scaled[i] = {s * p[0], s * p[1], s, e};
    } else {
        scaled[i] = {s * p[0], s * p[1], s * p[2], s};
        softening[i] = e;
    }
}

struct ChunkLayout {
    int tiles;             // tiles of kBlock bodies j
    int chunk_tiles;       // tiles per chunk
    int chunks_per_group;  // chunks per group of kBlock * kBodiesPerThread bodies i
    int chunks;            // all of them
};

template <int Dim>
__global__ void __launch_bounds__(kBlock, kMinBlocks<Dim>)
folded_pull(DeviceBodies<float, Dim> bodies, const float4* __restrict__ scaled, const float* __restrict__ softening,
            Vec<float, Dim>* __restrict__ pull_out, int n, ChunkLayout layout, unsigned int* __restrict__ next_chunk) {
    constexpr bool kSofteningApart = Dim == 3;
    // Two tiles: a thread stores tile t + 1 while others may still read tile t.
    __shared__ float4 tile[2][kBlock];
    __shared__ float tile_softening[kSofteningApart ? 2 : 1][kSofteningApart ? kBlock : 1];
    __shared__ int chunk_of_block;
    // Past N: s = 0 (d' = 0) and a softening of 1 (finite q), so no pull.
    const float4 padding{0.f, 0.f, 0.f, Dim == 2 ? 1.f : 0.f};
    int parity = 0;
    for (;;) {
        if (threadIdx.x == 0) chunk_of_block = static_cast<int>(atomicAdd(next_chunk, 1u));
        __syncthreads();
        const int chunk = chunk_of_block;  // rewritten only after the next tile's barrier
        if (chunk >= layout.chunks) break;
        const int group = chunk / layout.chunks_per_group;
        const int tile_first = (chunk - group * layout.chunks_per_group) * layout.chunk_tiles;
        const int tile_end = min(layout.tiles, tile_first + layout.chunk_tiles);
        const int first = group * kBlock * kBodiesPerThread + threadIdx.x;
        float pi[kBodiesPerThread][Dim], a[kBodiesPerThread][Dim];
#pragma unroll
        for (int b = 0; b < kBodiesPerThread; ++b) {
            const int i = first + b * kBlock;
#pragma unroll
            for (int k = 0; k < Dim; ++k) {
                pi[b][k] = i < n ? bodies.position[k][i] : 0.f;
                a[b][k] = 0.f;
            }
        }
        int j = tile_first * kBlock + threadIdx.x;
        float4 next = j < n ? scaled[j] : padding;
        float next_softening = 1.f;
        if constexpr (kSofteningApart) next_softening = j < n ? softening[j] : 1.f;
        for (int t = tile_first; t < tile_end; ++t) {
            tile[parity][threadIdx.x] = next;
            if constexpr (kSofteningApart) tile_softening[parity][threadIdx.x] = next_softening;
            __syncthreads();
            j += kBlock;
            if (t + 1 < tile_end) {  // the next tile's load overlaps this tile's sums
                next = j < n ? scaled[j] : padding;
                if constexpr (kSofteningApart) next_softening = j < n ? softening[j] : 1.f;
            }
            const float4* bodies_j = tile[parity];
#pragma unroll kUnroll
            for (int k = 0; k < kBlock; ++k) {
                const float4 body_j = bodies_j[k];
                float s, e;
                if constexpr (Dim == 2) {
                    s = body_j.z;
                    e = body_j.w;
                } else {
                    s = body_j.w;
                    e = tile_softening[parity][k];
                }
                const float scaled_j[3] = {body_j.x, body_j.y, body_j.z};
#pragma unroll
                for (int b = 0; b < kBodiesPerThread; ++b) {
                    float d[Dim];
#pragma unroll
                    for (int axis = 0; axis < Dim; ++axis) d[axis] = fmaf(-s, pi[b][axis], scaled_j[axis]);
                    float r2 = e;
#pragma unroll
                    for (int axis = Dim - 1; axis >= 0; --axis) r2 = fmaf(d[axis], d[axis], r2);
                    const float q = rsqrt_approx(r2);
                    const float q3 = q * q * q;
#pragma unroll
                    for (int axis = 0; axis < Dim; ++axis) a[b][axis] = fmaf(q3, d[axis], a[b][axis]);
                }
            }
            parity ^= 1;
        }
#pragma unroll
        for (int b = 0; b < kBodiesPerThread; ++b) {
            const int i = first + b * kBlock;
            if (i >= n) continue;
            // The term j == i is fl(s p_i) - s p_i, a rounding error rather than SPEC's exact zero: where
            // this chunk summed it, the same instructions recompute it and take it out again.
            if (i >= tile_first * kBlock && i < tile_end * kBlock) {
                const float4 body_i = scaled[i];
                const float scaled_i[3] = {body_i.x, body_i.y, body_i.z};
                const float s = Dim == 2 ? body_i.z : body_i.w;
                float r2 = Dim == 2 ? body_i.w : softening[i];
                float d[Dim];
#pragma unroll
                for (int axis = 0; axis < Dim; ++axis) d[axis] = fmaf(-s, pi[b][axis], scaled_i[axis]);
#pragma unroll
                for (int axis = Dim - 1; axis >= 0; --axis) r2 = fmaf(d[axis], d[axis], r2);
                const float q = rsqrt_approx(r2);
                const float q3 = q * q * q;
#pragma unroll
                for (int axis = 0; axis < Dim; ++axis) a[b][axis] = fmaf(-q3, d[axis], a[b][axis]);
            }
#pragma unroll
            for (int axis = 0; axis < Dim; ++axis) atomicAdd(&pull_out[i][axis], a[b][axis]);
        }
    }
}

template <int Dim>
class FoldedMass final : public SoaSimulation<float, Dim> {
public:
    FoldedMass(const Problem& p, const TuningValues& t)
        : SoaSimulation<float, Dim>(p, t),
          scaled_(p.n),
          softening_(Dim == 3 ? p.n : 0),
          next_chunk_(1) {
        require_block_fits(reinterpret_cast<const void*>(folded_pull<Dim>), kBlock, "cuda.folded_mass");
        int resident = 0;
        NBODY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, folded_pull<Dim>, kBlock, 0));
        const int groups = static_cast<int>(blocks_for(p.n, kBlock * kBodiesPerThread));
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
        const DeviceBodies<float, Dim> bodies = this->bodies();
        pack_folded<Dim><<<blocks_for(n, kBlock), kBlock>>>(bodies, scaled_.data(), softening_.data(), n,
                                                            this->constants_.eps2);
        NBODY_CUDA_CHECK_LAUNCH();
        NBODY_CUDA_CHECK(cudaMemsetAsync(this->pull(), 0, static_cast<std::size_t>(n) * sizeof(Vec<float, Dim>)));
        NBODY_CUDA_CHECK(cudaMemsetAsync(next_chunk_.data(), 0, sizeof(unsigned int)));
        folded_pull<Dim><<<grid_, kBlock>>>(bodies, scaled_.data(), softening_.data(), this->pull(), n, layout_,
                                            next_chunk_.data());
        NBODY_CUDA_CHECK_LAUNCH();
    }

    DeviceBuffer<float4> scaled_;
    DeviceBuffer<float> softening_;
    DeviceBuffer<unsigned int> next_chunk_;
    ChunkLayout layout_{};
    unsigned int grid_ = 1;
};

// The fold keeps eps2 s_j^2 = eps2 / m_j and q^3 <= m_j / eps^3 as normal floats only for masses
// within a range of the softening: a state with a mass outside it is refused at upload, before any
// step, rather than pulled as 0 or infinity. The range: both within [1e-30, 1e30].
class MassRangeChecked final : public SimulationOf<float> {
public:
    MassRangeChecked(std::unique_ptr<SimulationOf<float>> folded, double softening)
        : folded_(std::move(folded)), softening_(softening) {}

    using SimulationOf<float>::upload;
    using SimulationOf<float>::download;
    void upload(const BodiesT<float>& initial) override {
        const double eps2 = softening_ * softening_;
        for (std::size_t j = 0; j < initial.size(); ++j) {
            const double m = initial.m[j];
            const double softening_scaled = eps2 / m, largest_weight = m / (eps2 * softening_);
            if (!(softening_scaled >= 1e-30 && softening_scaled <= 1e30 && largest_weight >= 1e-30 &&
                  largest_weight <= 1e30))
                throw UsageError("cuda.folded_mass: body " + std::to_string(j) + "'s mass " + shortest(m) +
                                 " with softening " + shortest(softening_) +
                                 " is outside the range its m^-1/2 scaling keeps in float32 (eps^2/m and m/eps^3 "
                                 "within 1e-30..1e30); cuda.sliced runs it");
        }
        folded_->upload(initial);
    }
    void advance(int steps) override { folded_->advance(steps); }
    void synchronize() override { folded_->synchronize(); }
    void download(BodiesT<float>& state, std::vector<float>& activity_map) override {
        folded_->download(state, activity_map);
    }

private:
    static std::string shortest(double value) {
        char text[32];
        std::snprintf(text, sizeof text, "%.6g", value);
        return text;
    }

    std::unique_ptr<SimulationOf<float>> folded_;
    double softening_;
};

}  // namespace

VariantDescriptor folded_mass_variant() {
    WorkloadSupport float32;
    float32.dims = {2, 3};
    float32.precisions = {Precision::fp32};
    float32.integrators = {Integrator::euler, Integrator::leapfrog};
    return cuda_descriptor(
        "cuda.folded_mass",
        "cuda.sliced's tiles with body j scaled by m^-1/2 (one multiply fewer per interaction), work in chunks from a counter",
        {map_tuning()},
        [](const Problem& p, const TuningValues& t) -> std::unique_ptr<Simulation> {
            auto folded = dispatch_dim(p.workload.dim, [&]<int Dim>() -> std::unique_ptr<SimulationOf<float>> {
                return std::make_unique<FoldedMass<Dim>>(p, t);
            });
            return std::make_unique<MassRangeChecked>(std::move(folded), p.constants.softening);
        },
        // 0.747 (3D) and 0.753 (2D) of the limit at N = 262144 in the pull-kernel lab, 0.727 at 65536
        {.workloads = float32, .expected_efficiency = 0.44});
}

}  // namespace nbody::cuda
