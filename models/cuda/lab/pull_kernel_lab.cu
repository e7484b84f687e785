// A standalone microbenchmark of float32 pull kernels (2D and 3D), outside the suite's build: the
// kernel of cuda.sliced beside the changes that led to cuda.folded_mass (even split over resident
// blocks, folded mass, work chunks from a counter), each checked against a float64 sum on sampled
// bodies. Build and run on a GPU machine (results/h100-pull-kernel-lab.txt holds an H100's output):
//   nvcc -arch=sm_90 -O3 -std=c++17 -lineinfo pull_kernel_lab.cu -o pull_kernel_lab
//   ./pull_kernel_lab [kernel-name-filter|all] [N,N,...] [repetitions]
//   python3 sass_loop_mix.py pull_kernel_lab [kernel-name-filter]   # opcode mix of each kernel's main loop
// baseline = cuda.sliced's tiled_float4_pull (B=4, unroll 16, block 256, slices auto)
// balanced = persistent grid (resident blocks only), work units (i-block, j-tile) split evenly,
//            double-buffered tiles with a register prefetch, atomicAdd flush per i-block.
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
#include <algorithm>
#include <random>
#include <string>
#include <functional>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1);} } while (0)

template <int Dim> struct V { float v[Dim]; };

__device__ __forceinline__ float rsq(float x) { float y; asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)); return y; }

// product arithmetic (accumulate_pull): d = pj - pi; r2 = eps2 + d[D-1]^2 ... + d0^2; w = m * (inv*inv*inv)
template <int Dim, int WeightOrder>
__device__ __forceinline__ void pull1(const float (&pi)[Dim], float4 bj, float eps2, float (&a)[Dim]) {
    float d[Dim];
    d[0] = bj.x - pi[0];
    d[1] = bj.y - pi[1];
    if constexpr (Dim == 3) d[2] = bj.z - pi[2];
    const float m = Dim == 3 ? bj.w : bj.z;
    float r2 = eps2;
#pragma unroll
    for (int k = Dim - 1; k >= 0; --k) r2 = d[k] * d[k] + r2;
    const float inv = rsqrtf(r2);
    float w;
    if constexpr (WeightOrder == 0) w = m * (inv * inv * inv);
    else w = (m * inv) * (inv * inv);
#pragma unroll
    for (int k = 0; k < Dim; ++k) a[k] += w * d[k];
}

// ---------------- baseline (copy of tiled_float4_pull, not ranged) ----------------
template <int Dim, int Unroll, int B>
__global__ void baseline_pull(const float4* __restrict__ bodies, V<Dim>* __restrict__ out, int n, float eps2) {
    extern __shared__ __align__(32) unsigned char tile_bytes[];
    float4* tile = reinterpret_cast<float4*>(tile_bytes);
    const int first = blockIdx.x * blockDim.x * B + threadIdx.x;
    float pi[B][Dim], a[B][Dim];
#pragma unroll
    for (int b = 0; b < B; ++b) {
        const int i = first + b * blockDim.x;
        float4 p = i < n ? bodies[i] : float4{};
        pi[b][0] = p.x; pi[b][1] = p.y; if constexpr (Dim == 3) pi[b][2] = p.z;
#pragma unroll
        for (int k = 0; k < Dim; ++k) a[b][k] = 0.f;
    }
    const int tiles = (n + blockDim.x - 1) / blockDim.x;
    const int tiles_per_slice = (tiles + gridDim.y - 1) / gridDim.y;
    const int slice_end = min(n, (int)((blockIdx.y + 1) * tiles_per_slice * blockDim.x));
    for (int ts = blockIdx.y * tiles_per_slice * blockDim.x; ts < slice_end; ts += blockDim.x) {
        const int j = ts + threadIdx.x;
        tile[threadIdx.x] = j < n ? bodies[j] : float4{};
        __syncthreads();
#pragma unroll Unroll
        for (int k = 0; k < blockDim.x; ++k) {
            const float4 bj = tile[k];
#pragma unroll
            for (int b = 0; b < B; ++b) pull1<Dim, 0>(pi[b], bj, eps2, a[b]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int b = 0; b < B; ++b) {
        const int i = first + b * blockDim.x;
        if (i >= n) continue;
        if (gridDim.y == 1) { for (int k = 0; k < Dim; ++k) out[i].v[k] = a[b][k]; }
        else { for (int k = 0; k < Dim; ++k) atomicAdd(&out[i].v[k], a[b][k]); }
    }
}

// ---------------- balanced persistent ----------------
// Tile = Block bodies j. Work unit = (i-block of Block*B bodies, one tile). Block g does units
// [total*g/grid, total*(g+1)/grid): contiguous, so consecutive units share the i-block.
template <int Dim, int B, int Block, int MinBlocks, int Unroll, int WeightOrder, bool DynLoop = false>
__global__ void __launch_bounds__(Block, MinBlocks)
balanced_pull(const float4* __restrict__ bodies, V<Dim>* __restrict__ out, int n, float eps2, int tiles, long long total) {
    __shared__ float4 tile[2][Block];
    const int g = blockIdx.x;
    long long u = total * g / gridDim.x;
    const long long u_end = total * (g + 1) / gridDim.x;
    int parity = 0;
    while (u < u_end) {
        const int ib = (int)(u / tiles);
        const int t0 = (int)(u - (long long)ib * tiles);
        const int t1 = (int)min((long long)tiles, t0 + (u_end - u));
        const int first = ib * Block * B + threadIdx.x;
        float pi[B][Dim], a[B][Dim];
#pragma unroll
        for (int b = 0; b < B; ++b) {
            const int i = first + b * Block;
            float4 p = i < n ? bodies[i] : float4{};
            pi[b][0] = p.x; pi[b][1] = p.y; if constexpr (Dim == 3) pi[b][2] = p.z;
#pragma unroll
            for (int k = 0; k < Dim; ++k) a[b][k] = 0.f;
        }
        int j = t0 * Block + threadIdx.x;
        float4 next = j < n ? bodies[j] : float4{};
        for (int t = t0; t < t1; ++t) {
            tile[parity][threadIdx.x] = next;
            __syncthreads();
            j += Block;
            if (t + 1 < t1) next = j < n ? bodies[j] : float4{};
            const float4* tp = tile[parity];
const int kend = DynLoop ? (int)blockDim.x : Block;
#pragma unroll Unroll
            for (int k = 0; k < kend; ++k) {
                const float4 bj = tp[k];
#pragma unroll
                for (int b = 0; b < B; ++b) pull1<Dim, WeightOrder>(pi[b], bj, eps2, a[b]);
            }
            parity ^= 1;
        }
#pragma unroll
        for (int b = 0; b < B; ++b) {
            const int i = first + b * Block;
            if (i < n) {
#pragma unroll
                for (int k = 0; k < Dim; ++k) atomicAdd(&out[i].v[k], a[b][k]);
            }
        }
        u += t1 - t0;
    }
}

struct Runner {
    std::string name;
    int dim;
    std::function<void(const float4*, void*, int, float, int sms)> launch;  // must zero `out` itself if needed
    const void* fn;
    int block;
};

template <int Dim, int B>
Runner make_baseline() {
    Runner r;
    r.name = "baseline_B" + std::to_string(B);
    r.dim = Dim; r.block = 256;
    r.fn = (const void*)baseline_pull<Dim, 16, B>;
    r.launch = [](const float4* bodies, void* out, int n, float eps2, int sms) {
        const int block = 256;
        int resident = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, baseline_pull<Dim, 16, B>, block, block * 16));
        unsigned bb = (n + block * B - 1) / (block * B);
        unsigned wanted = (2u * sms * resident + bb - 1) / bb;
        unsigned slices = std::max(1u, std::min(wanted, (unsigned)((n + block - 1) / block)));
        if (slices > 1) CK(cudaMemsetAsync(out, 0, sizeof(V<Dim>) * n));
        baseline_pull<Dim, 16, B><<<dim3(bb, slices), block, block * 16>>>(bodies, (V<Dim>*)out, n, eps2);
    };
    return r;
}

template <int Dim, int B, int Block, int MinBlocks, int Unroll, int WeightOrder, bool DynLoop = false>
Runner make_balanced() {
    Runner r;
    r.name = "bal_B" + std::to_string(B) + "_T" + std::to_string(Block) + "_m" + std::to_string(MinBlocks) +
             "_u" + std::to_string(Unroll) + "_w" + std::to_string(WeightOrder) + (DynLoop ? "_dyn" : "");
    r.dim = Dim; r.block = Block;
    auto k = balanced_pull<Dim, B, Block, MinBlocks, Unroll, WeightOrder, DynLoop>;
    r.fn = (const void*)k;
    r.launch = [k](const float4* bodies, void* out, int n, float eps2, int sms) {
        int resident = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, k, Block, 0));
        const int ib = (n + Block * B - 1) / (Block * B);
        const int tiles = (n + Block - 1) / Block;
        const long long total = (long long)ib * tiles;
        const int grid = (int)std::min<long long>(total, (long long)sms * resident);
        CK(cudaMemsetAsync(out, 0, sizeof(V<Dim>) * n));
        k<<<grid, Block>>>(bodies, (V<Dim>*)out, n, eps2, tiles, total);
    };
    return r;
}


// ---------------- folded mass: j scaled by s_j = m_j^(-1/2) ----------------
// d' = s_j p_j - s_j p_i (one FFMA per axis), r2' = |d'|^2 + eps2 s_j^2 = r2/m_j, q = rsqrt(r2'),
// q^3 d' = m_j r2^(-3/2) d: 11 FP32 + 1 MUFU per interaction instead of 12 + 1 (3D), 8 + 1 (2D).
// Packed j: 2D (s x, s y, s, eps2 s^2); 3D (s x, s y, s z, s) + e[j] = eps2 s^2 (EMode 0: a second
// shared array, one LDS.32 per j; EMode 1: eps2*s*s recomputed per j in registers).
__global__ void pack_folded(const float4* __restrict__ bodies, float4* __restrict__ scaled, float* __restrict__ e, int n, float eps2, int dim) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float4 b = bodies[i];
    const double m = dim == 3 ? b.w : b.z;
    const float sj = (float)(1.0 / sqrt(m));
    const float ej = (float)((double)eps2 * (double)sj * (double)sj);
    if (dim == 3) { scaled[i] = float4{sj * b.x, sj * b.y, sj * b.z, sj}; e[i] = ej; }
    else scaled[i] = float4{sj * b.x, sj * b.y, sj, ej};
}

template <int Dim, int B, int Block, int MinBlocks, int Unroll, int EMode, bool DynLoop>
__global__ void __launch_bounds__(Block, MinBlocks)
folded_pull(const float4* __restrict__ bodies, const float4* __restrict__ scaled, const float* __restrict__ e_in,
            V<Dim>* __restrict__ out, int n, float eps2, int tiles, long long total) {
    __shared__ float4 tile[2][Block];
    __shared__ float etile[EMode == 0 && Dim == 3 ? 2 : 1][EMode == 0 && Dim == 3 ? Block : 1];
    const int g = blockIdx.x;
    long long u = total * g / gridDim.x;
    const long long u_end = total * (g + 1) / gridDim.x;
    int parity = 0;
    while (u < u_end) {
        const int ib = (int)(u / tiles);
        const int t0 = (int)(u - (long long)ib * tiles);
        const int t1 = (int)min((long long)tiles, t0 + (u_end - u));
        const int first = ib * Block * B + threadIdx.x;
        float pi[B][Dim], a[B][Dim];
#pragma unroll
        for (int b = 0; b < B; ++b) {
            const int i = first + b * Block;
            float4 p = i < n ? bodies[i] : float4{};
            pi[b][0] = p.x; pi[b][1] = p.y; if constexpr (Dim == 3) pi[b][2] = p.z;
#pragma unroll
            for (int k = 0; k < Dim; ++k) a[b][k] = 0.f;
        }
        int j = t0 * Block + threadIdx.x;
        // zero-mass pads: s = 0 (d' = 0), eps2 term 1 (finite q): no pull
        float4 next = j < n ? scaled[j] : float4{0.f, 0.f, 0.f, Dim == 2 ? 1.f : 0.f};
        float enext = 1.f;
        if constexpr (EMode == 0 && Dim == 3) enext = j < n ? e_in[j] : 1.f;
        for (int t = t0; t < t1; ++t) {
            tile[parity][threadIdx.x] = next;
            if constexpr (EMode == 0 && Dim == 3) etile[parity][threadIdx.x] = enext;
            __syncthreads();
            j += Block;
            if (t + 1 < t1) {
                next = j < n ? scaled[j] : float4{0.f, 0.f, 0.f, Dim == 2 ? 1.f : 0.f};
                if constexpr (EMode == 0 && Dim == 3) enext = j < n ? e_in[j] : 1.f;
            }
            const float4* tp = tile[parity];
            const int kend = DynLoop ? (int)blockDim.x : Block;
#pragma unroll Unroll
            for (int k = 0; k < kend; ++k) {
                const float4 bj = tp[k];
                float sj, ej;
                if constexpr (Dim == 2) { sj = bj.z; ej = bj.w; }
                else if constexpr (EMode == 0) { sj = bj.w; ej = etile[parity][k]; }
                else { sj = bj.w; ej = bj.w == 0.f ? 1.f : eps2 * sj * sj; }
#pragma unroll
                for (int b = 0; b < B; ++b) {
                    float d[Dim];
                    d[0] = fmaf(-sj, pi[b][0], bj.x);
                    d[1] = fmaf(-sj, pi[b][1], bj.y);
                    if constexpr (Dim == 3) d[2] = fmaf(-sj, pi[b][2], bj.z);
                    float r2 = ej;
#pragma unroll
                    for (int kk = Dim - 1; kk >= 0; --kk) r2 = fmaf(d[kk], d[kk], r2);
                    const float q = rsq(r2);
                    const float q3 = q * q * q;
#pragma unroll
                    for (int kk = 0; kk < Dim; ++kk) a[b][kk] = fmaf(q3, d[kk], a[b][kk]);
                }
            }
            parity ^= 1;
        }
#pragma unroll
        for (int b = 0; b < B; ++b) {
            const int i = first + b * Block;
            if (i < n) {
#pragma unroll
                for (int k = 0; k < Dim; ++k) atomicAdd(&out[i].v[k], a[b][k]);
            }
        }
        u += t1 - t0;
    }
}

float4* g_scaled = nullptr; float* g_e = nullptr; int g_cap = 0;

template <int Dim, int B, int Block, int MinBlocks, int Unroll, int EMode, bool DynLoop = false>
Runner make_folded() {
    Runner r;
    r.name = "fold_B" + std::to_string(B) + "_T" + std::to_string(Block) + "_m" + std::to_string(MinBlocks) +
             "_u" + std::to_string(Unroll) + "_e" + std::to_string(EMode) + (DynLoop ? "_dyn" : "");
    r.dim = Dim; r.block = Block;
    auto k = folded_pull<Dim, B, Block, MinBlocks, Unroll, EMode, DynLoop>;
    r.fn = (const void*)k;
    r.launch = [k](const float4* bodies, void* out, int n, float eps2, int sms) {
        if (g_cap < n) { if (g_scaled) { cudaFree(g_scaled); cudaFree(g_e); } CK(cudaMalloc(&g_scaled, 16ull * n)); CK(cudaMalloc(&g_e, 4ull * n)); g_cap = n; }
        pack_folded<<<(n + 255) / 256, 256>>>(bodies, g_scaled, g_e, n, eps2, Dim);
        int resident = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, k, Block, 0));
        const int ib = (n + Block * B - 1) / (Block * B);
        const int tiles = (n + Block - 1) / Block;
        const long long total = (long long)ib * tiles;
        const int grid = (int)std::min<long long>(total, (long long)sms * resident);
        CK(cudaMemsetAsync(out, 0, sizeof(V<Dim>) * n));
        k<<<grid, Block>>>(bodies, g_scaled, g_e, (V<Dim>*)out, n, eps2, tiles, total);
    };
    return r;
}

// ---------------- dynamic chunks: blocks take (i-block, run of tiles) chunks from a counter ----------------
template <int Dim, int B, int Block, int MinBlocks, int Unroll, bool Folded>
__global__ void __launch_bounds__(Block, MinBlocks)
chunked_pull(const float4* __restrict__ bodies, const float4* __restrict__ scaled, const float* __restrict__ e_in,
             V<Dim>* __restrict__ out, int n, float eps2, int tiles, int chunks_per_iblock, int chunk_tiles,
             int total_chunks, unsigned* __restrict__ counter) {
    constexpr bool kE = Folded && Dim == 3;
    __shared__ float4 tile[2][Block];
    __shared__ float etile[kE ? 2 : 1][kE ? Block : 1];
    __shared__ int chunk_shared;
    const float4* jsrc = Folded ? scaled : bodies;
    const float4 pad = Folded ? float4{0.f, 0.f, 0.f, Dim == 2 ? 1.f : 0.f} : float4{};
    int parity = 0;
    for (;;) {
        if (threadIdx.x == 0) chunk_shared = (int)atomicAdd(counter, 1u);
        __syncthreads();
        const int c = chunk_shared;
        if (c >= total_chunks) break;
        const int ib = c / chunks_per_iblock;
        const int t0 = (c - ib * chunks_per_iblock) * chunk_tiles;
        const int t1 = min(tiles, t0 + chunk_tiles);
        const int first = ib * Block * B + threadIdx.x;
        float pi[B][Dim], a[B][Dim];
#pragma unroll
        for (int b = 0; b < B; ++b) {
            const int i = first + b * Block;
            float4 p = i < n ? bodies[i] : float4{};
            pi[b][0] = p.x; pi[b][1] = p.y; if constexpr (Dim == 3) pi[b][2] = p.z;
#pragma unroll
            for (int k = 0; k < Dim; ++k) a[b][k] = 0.f;
        }
        int j = t0 * Block + threadIdx.x;
        float4 next = j < n ? jsrc[j] : pad;
        float enext = 1.f;
        if constexpr (kE) enext = j < n ? e_in[j] : 1.f;
        for (int t = t0; t < t1; ++t) {
            tile[parity][threadIdx.x] = next;
            if constexpr (kE) etile[parity][threadIdx.x] = enext;
            __syncthreads();
            j += Block;
            if (t + 1 < t1) {
                next = j < n ? jsrc[j] : pad;
                if constexpr (kE) enext = j < n ? e_in[j] : 1.f;
            }
            const float4* tp = tile[parity];
#pragma unroll Unroll
            for (int k = 0; k < Block; ++k) {
                const float4 bj = tp[k];
                if constexpr (!Folded) {
#pragma unroll
                    for (int b = 0; b < B; ++b) pull1<Dim, 0>(pi[b], bj, eps2, a[b]);
                } else {
                    float sj, ej;
                    if constexpr (Dim == 2) { sj = bj.z; ej = bj.w; }
                    else { sj = bj.w; ej = etile[parity][k]; }
#pragma unroll
                    for (int b = 0; b < B; ++b) {
                        float d[Dim];
                        d[0] = fmaf(-sj, pi[b][0], bj.x);
                        d[1] = fmaf(-sj, pi[b][1], bj.y);
                        if constexpr (Dim == 3) d[2] = fmaf(-sj, pi[b][2], bj.z);
                        float r2 = ej;
#pragma unroll
                        for (int kk = Dim - 1; kk >= 0; --kk) r2 = fmaf(d[kk], d[kk], r2);
                        const float q = rsq(r2);
                        const float q3 = q * q * q;
#pragma unroll
                        for (int kk = 0; kk < Dim; ++kk) a[b][kk] = fmaf(q3, d[kk], a[b][kk]);
                    }
                }
            }
            parity ^= 1;
        }
#pragma unroll
        for (int b = 0; b < B; ++b) {
            const int i = first + b * Block;
            if (i < n) {
                if (Folded && i >= t0 * Block && i < t1 * Block) {  // take the j == i rounding term out
                    const float4 bi = scaled[i];
                    const float sci[3] = {bi.x, bi.y, bi.z};
                    const float s = Dim == 2 ? bi.z : bi.w;
                    float r2 = Dim == 2 ? bi.w : e_in[i];
                    float d[Dim];
#pragma unroll
                    for (int k = 0; k < Dim; ++k) d[k] = fmaf(-s, pi[b][k], sci[k]);
#pragma unroll
                    for (int k = Dim - 1; k >= 0; --k) r2 = fmaf(d[k], d[k], r2);
                    const float q = rsq(r2);
                    const float q3 = q * q * q;
#pragma unroll
                    for (int k = 0; k < Dim; ++k) a[b][k] = fmaf(-q3, d[k], a[b][k]);
                }
#pragma unroll
                for (int k = 0; k < Dim; ++k) atomicAdd(&out[i].v[k], a[b][k]);
            }
        }
    }
}

unsigned* g_counter = nullptr;
template <int Dim, int B, int Block, int MinBlocks, int Unroll, bool Folded, int ChunksPerBlock = 16>
Runner make_chunked() {
    Runner r;
    r.name = std::string(Folded ? "cfold" : "chunk") + "_B" + std::to_string(B) + "_T" + std::to_string(Block) + "_m" + std::to_string(MinBlocks) +
             "_u" + std::to_string(Unroll) + "_c" + std::to_string(ChunksPerBlock);
    r.dim = Dim; r.block = Block;
    auto k = chunked_pull<Dim, B, Block, MinBlocks, Unroll, Folded>;
    r.fn = (const void*)k;
    r.launch = [k](const float4* bodies, void* out, int n, float eps2, int sms) {
        if (g_cap < n) { if (g_scaled) { cudaFree(g_scaled); cudaFree(g_e); } CK(cudaMalloc(&g_scaled, 16ull * n)); CK(cudaMalloc(&g_e, 4ull * n)); g_cap = n; }
        if (!g_counter) CK(cudaMalloc(&g_counter, 4));
        if (Folded) pack_folded<<<(n + 255) / 256, 256>>>(bodies, g_scaled, g_e, n, eps2, Dim);
        int resident = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, k, Block, 0));
        const int ib = (n + Block * B - 1) / (Block * B);
        const int tiles = (n + Block - 1) / Block;
        const int grid0 = sms * resident;
        const long long units = (long long)ib * tiles;
        const int chunk_tiles = (int)std::max(1LL, std::min((long long)tiles, units / ((long long)grid0 * ChunksPerBlock)));
        const int cpi = (tiles + chunk_tiles - 1) / chunk_tiles;
        const int total_chunks = ib * cpi;
        const int grid = std::min(grid0, total_chunks);
        CK(cudaMemsetAsync(out, 0, sizeof(V<Dim>) * n));
        CK(cudaMemsetAsync(g_counter, 0, 4));
        k<<<grid, Block>>>(bodies, g_scaled, g_e, (V<Dim>*)out, n, eps2, tiles, cpi, chunk_tiles, total_chunks, g_counter);
    };
    return r;
}

std::vector<Runner> runners();

int main(int argc, char** argv) {
    std::vector<int> sizes = {65536, 262144};
    int reps = 7;
    std::string only = argc > 1 ? argv[1] : "";
    if (argc > 2) { sizes.clear(); for (char* s = strtok(argv[2], ","); s; s = strtok(nullptr, ",")) sizes.push_back(atoi(s)); }
    if (argc > 3) reps = atoi(argv[3]);
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    const float eps2 = 4.0f;  // softening 2
    auto rs = runners();
    printf("%-28s %3s %8s %5s %5s %10s %9s %9s %9s\n", "kernel", "dim", "N", "regs", "occ", "ms", "inter/s", "maxrel", "rmsrel");
    for (int dim : {3, 2}) for (int n : sizes) {
        std::mt19937 rng(1234 + n + dim);
        std::uniform_real_distribution<float> pos(-100.f, 100.f), mass(0.5f, 1.5f);
        std::vector<float4> h(n);
        for (auto& b : h) { b.x = pos(rng); b.y = pos(rng); if (dim == 3) { b.z = pos(rng); b.w = mass(rng); } else { b.z = mass(rng); b.w = 0; } }
        // float64 reference on a sample
        const int samples = 192;
        std::vector<int> idx(samples);
        for (int s = 0; s < samples; ++s) idx[s] = (int)((long long)s * (n - 1) / (samples - 1));
        std::vector<double> ref(samples * 3, 0.0);
        for (int s = 0; s < samples; ++s) {
            const float4 bi = h[idx[s]];
            double ax = 0, ay = 0, az = 0;
            for (int j = 0; j < n; ++j) {
                const float4 bj = h[j];
                double dx = (double)bj.x - bi.x, dy = (double)bj.y - bi.y, dz = dim == 3 ? (double)bj.z - bi.z : 0.0;
                double m = dim == 3 ? bj.w : bj.z;
                double r2 = dx * dx + dy * dy + dz * dz + eps2;
                double w = m / (r2 * std::sqrt(r2));
                ax += w * dx; ay += w * dy; az += w * dz;
            }
            ref[3 * s] = ax; ref[3 * s + 1] = ay; ref[3 * s + 2] = az;
        }
        float4* d_bodies; void* d_out;
        CK(cudaMalloc(&d_bodies, sizeof(float4) * n));
        CK(cudaMalloc(&d_out, sizeof(float) * 3 * n));
        CK(cudaMemcpy(d_bodies, h.data(), sizeof(float4) * n, cudaMemcpyHostToDevice));
        std::vector<float> out(3 * n);
        for (auto& r : rs) {
            if (r.dim != dim) continue;
            if (!only.empty() && r.name.find(only) == std::string::npos && only != "all") continue;
            cudaFuncAttributes fa; CK(cudaFuncGetAttributes(&fa, r.fn));
            int occ = 0; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, r.fn, r.block, r.name.rfind("baseline", 0) == 0 ? r.block * 16 : 0));
            CK(cudaMemset(d_out, 0xff, sizeof(float) * 3 * n));  // poison (NaN)
            r.launch(d_bodies, d_out, n, eps2, sms);
            CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(out.data(), d_out, sizeof(float) * dim * n, cudaMemcpyDeviceToHost));
            double maxrel = 0, se = 0, sr = 0; bool nan = false;
            for (int i = 0; i < n; ++i) for (int k = 0; k < dim; ++k) if (!std::isfinite(out[i * dim + k])) nan = true;
            for (int s = 0; s < samples; ++s) {
                double e2 = 0, r2 = 0;
                for (int k = 0; k < dim; ++k) { double e = out[idx[s] * dim + k] - ref[3 * s + k]; e2 += e * e; r2 += ref[3 * s + k] * ref[3 * s + k]; }
                maxrel = std::max(maxrel, std::sqrt(e2 / r2)); se += e2; sr += r2;
            }
            if (reps == 0) { printf("%-28s %3d %8d %5d %5d %9.2e %9.2e (untimed)\n", r.name.c_str(), dim, n, fa.numRegs, occ, maxrel, std::sqrt(se / sr)); continue; }
            cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
            std::vector<float> ts;
            for (int rep = 0; rep < reps + 1; ++rep) {
                CK(cudaEventRecord(e0));
                r.launch(d_bodies, d_out, n, eps2, sms);
                CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1)); CK(cudaGetLastError());
                float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
                if (rep > 0) ts.push_back(ms);
            }
            std::sort(ts.begin(), ts.end());
            const double med = ts[ts.size() / 2];
            printf("%-28s %3d %8d %5d %5d %10.3f %9.3e %9.2e %9.2e%s\n", r.name.c_str(), dim, n, fa.numRegs, occ, med,
                   (double)n * n / (med * 1e-3), maxrel, std::sqrt(se / sr), nan ? " NaN!" : "");
            fflush(stdout);
        }
        CK(cudaFree(d_bodies)); CK(cudaFree(d_out));
    }
    return 0;
}

std::vector<Runner> runners() {
    return {
        make_baseline<3, 4>(), make_baseline<2, 4>(),
        make_chunked<3, 4, 256, 4, 16, true, 64>(), make_chunked<2, 4, 256, 1, 16, true, 64>(),
    };
}
