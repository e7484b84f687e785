// A standalone lab, outside the suite's build: how few FP64 instructions can give the float64
// pull its weight q^3 = (r^2 + eps2)^(-3/2) within the float64 thresholds. Each refinement of the
// MUFU.RSQ64H estimate (or of a float32 MUFU.RSQ estimate) is run in cuda.folded_mass's 3D float64
// interaction (scaled coordinates, 2 bodies i per thread, 256 bodies j per tile), timed, and checked
// against a long double sum on sampled bodies. Build and run on a GPU machine:
//   nvcc -arch=sm_90 -O3 -std=c++17 -lineinfo rsqrt64_lab.cu -o rsqrt64_lab
//   ./rsqrt64_lab [N] [repetitions]
//   python3 sass_loop_mix.py rsqrt64_lab pull   # FP64 instructions in each kernel's main loop
// Refinements (e = 1 - v y^2 for the estimate y of v^(-1/2)):
//   third_order  y + y e (1/2 + 3/8 e), then q^3 = q q q   (interaction.cuh's rsqrt_of_normal)
//   newton       y + y e / 2, then q^3 = q q q             (second order)
//   cube_newton  q^3 = y^3 (1 + 3/2 e)                      (the correction taken on the cube)
//   f32_newton2  float32 MUFU.RSQ of (float)v, two Newton steps in float64
//   estimate     the bare MUFU.RSQ64H, no refinement        (its accuracy, for reference)
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            printf("CUDA %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__);          \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

enum Refinement { third_order, newton, cube_newton, f32_newton2, estimate };
const char* const kNames[] = {"third_order", "newton", "cube_newton", "f32_newton2", "estimate"};

__device__ __forceinline__ double rsq64(double v) {
    double y;
    asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(v));
    return y;
}

template <Refinement R>
__device__ __forceinline__ double weight(double v) {
    if constexpr (R == f32_newton2) {
        float yf;
        asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(yf) : "f"(__double2float_rn(v)));
        double y = yf;
        y = fma(y * 0.5, fma(-v * y, y, 1.0), y);
        y = fma(y * 0.5, fma(-v * y, y, 1.0), y);
        return y * y * y;
    } else {
        const double y = rsq64(v);
        if constexpr (R == estimate) return y * y * y;
        const double e = fma(-v * y, y, 1.0);
        if constexpr (R == cube_newton) {
            const double y3 = y * y * y;
            return fma(y3 * e, 1.5, y3);
        }
        double q;
        if constexpr (R == third_order) q = fma(y * e, fma(0.375, e, 0.5), y);
        else q = fma(y * 0.5, e, y);
        return q * q * q;
    }
}

template <Refinement R>
__global__ void weights(const double* __restrict__ v, double* __restrict__ w, int count) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) w[i] = weight<R>(v[i]);
}

constexpr int kBlock = 256, kB = 2;

// bodies: (s x, s y, s z, s) with s = m^-1/2; softening: eps2 s^2 (cuda.folded_mass's layout).
template <Refinement R>
__global__ void __launch_bounds__(kBlock) pull(const double4_32a* __restrict__ bodies, const double* __restrict__ soft,
                                               const double* __restrict__ pos, double* __restrict__ out, int n) {
    __shared__ double4_32a tile[kBlock];
    __shared__ double tile_soft[kBlock];
    const int first = blockIdx.x * kBlock * kB + threadIdx.x;
    double pi[kB][3], a[kB][3];
#pragma unroll
    for (int b = 0; b < kB; ++b)
#pragma unroll
        for (int k = 0; k < 3; ++k) {
            const int i = first + b * kBlock;
            pi[b][k] = i < n ? pos[3 * i + k] : 0.0;
            a[b][k] = 0.0;
        }
    for (int t = 0; t < n; t += kBlock) {
        __syncthreads();
        const int j = t + threadIdx.x;
        tile[threadIdx.x] = j < n ? bodies[j] : double4_32a{0, 0, 0, 0};
        tile_soft[threadIdx.x] = j < n ? soft[j] : 1.0;
        __syncthreads();
#pragma unroll 16
        for (int k = 0; k < kBlock; ++k) {
            const double4_32a bj = tile[k];
            const double e = tile_soft[k];
#pragma unroll
            for (int b = 0; b < kB; ++b) {
                const double dx = bj.x - bj.w * pi[b][0], dy = bj.y - bj.w * pi[b][1], dz = bj.z - bj.w * pi[b][2];
                const double w = weight<R>(__fma_rz(dx, dx, __fma_rz(dy, dy, __fma_rz(dz, dz, e))));
                a[b][0] += w * dx;
                a[b][1] += w * dy;
                a[b][2] += w * dz;
            }
        }
    }
#pragma unroll
    for (int b = 0; b < kB; ++b) {
        const int i = first + b * kBlock;
        if (i < n)
            for (int k = 0; k < 3; ++k) out[3 * i + k] = a[b][k];
    }
}

int main(int argc, char** argv) {
    const int n = argc > 1 ? atoi(argv[1]) : 262144;
    const int reps = argc > 2 ? atoi(argv[2]) : 5;
    const double eps2 = 4.0;  // softening 2, as the suite
    // The suite's workload: bodies in the unit cube, masses 0.5..1.5.
    std::mt19937 rng(42);
    std::uniform_real_distribution<double> unit(0.0, 1.0), mass(0.5, 1.5);
    std::vector<double> pos(3 * n), m(n), soft(n);
    std::vector<double4_32a> scaled(n);
    for (int i = 0; i < n; ++i) {
        for (int k = 0; k < 3; ++k) pos[3 * i + k] = unit(rng);
        m[i] = mass(rng);
        const double s = 1.0 / std::sqrt(m[i]);
        scaled[i] = {s * pos[3 * i], s * pos[3 * i + 1], s * pos[3 * i + 2], s};
        soft[i] = eps2 * s * s;
    }
    const int samples = 64;
    std::vector<long double> ref(3 * samples);
    for (int t = 0; t < samples; ++t) {
        const int i = static_cast<int>(static_cast<long long>(t) * (n - 1) / (samples - 1));
        long double a[3] = {0, 0, 0};
        for (int j = 0; j < n; ++j) {
            if (j == i) continue;
            long double d[3], r2 = eps2;
            for (int k = 0; k < 3; ++k) {
                d[k] = static_cast<long double>(pos[3 * j + k]) - pos[3 * i + k];
                r2 += d[k] * d[k];
            }
            const long double w = m[j] / (r2 * sqrtl(r2));
            for (int k = 0; k < 3; ++k) a[k] += w * d[k];
        }
        for (int k = 0; k < 3; ++k) ref[3 * t + k] = a[k];
    }
    // The weight alone against long double, over the arguments this workload meets (eps2 s^2 + |d'|^2
    // in 8/3..14) and over 1e-6..1e6, log-uniform; in units of 2^-52.
    {
        const int count = 1 << 22;
        std::vector<double> v(count), w(count);
        double *d_v, *d_w;
        CK(cudaMalloc(&d_v, sizeof(double) * count));
        CK(cudaMalloc(&d_w, sizeof(double) * count));
        using WeightKernel = void (*)(const double*, double*, int);
        const WeightKernel weight_kernels[] = {weights<third_order>, weights<newton>, weights<cube_newton>,
                                               weights<f32_newton2>, weights<estimate>};
        const double ranges[2][2] = {{8.0 / 3.0, 14.0}, {1e-6, 1e6}};
        for (const auto& range : ranges) {
            std::uniform_real_distribution<double> log_v(std::log(range[0]), std::log(range[1]));
            for (double& x : v) x = std::exp(log_v(rng));
            CK(cudaMemcpy(d_v, v.data(), sizeof(double) * count, cudaMemcpyHostToDevice));
            printf("# weight v^(-3/2) for v in %g..%g: max and rms error in units of 2^-52 (relative)\n", range[0], range[1]);
            for (int r = 0; r < 5; ++r) {
                weight_kernels[r]<<<(count + 255) / 256, 256>>>(d_v, d_w, count);
                CK(cudaGetLastError());
                CK(cudaMemcpy(w.data(), d_w, sizeof(double) * count, cudaMemcpyDeviceToHost));
                long double worst = 0, sum = 0;
                for (int i = 0; i < count; ++i) {
                    const long double exact = 1.0L / (v[i] * sqrtl(static_cast<long double>(v[i])));
                    const long double rel = fabsl(w[i] / exact - 1.0L) / 0x1p-52L;
                    worst = std::max(worst, rel);
                    sum += rel * rel;
                }
                printf("  %-12s max %12.3Lf  rms %10.3Lf\n", kNames[r], worst, sqrtl(sum / count));
            }
        }
        CK(cudaFree(d_v));
        CK(cudaFree(d_w));
    }
    double4_32a* d_bodies;
    double *d_soft, *d_pos, *d_out;
    CK(cudaMalloc(&d_bodies, sizeof(double4_32a) * n));
    CK(cudaMalloc(&d_soft, sizeof(double) * n));
    CK(cudaMalloc(&d_pos, sizeof(double) * 3 * n));
    CK(cudaMalloc(&d_out, sizeof(double) * 3 * n));
    CK(cudaMemcpy(d_bodies, scaled.data(), sizeof(double4_32a) * n, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_soft, soft.data(), sizeof(double) * n, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_pos, pos.data(), sizeof(double) * 3 * n, cudaMemcpyHostToDevice));
    using Kernel = void (*)(const double4_32a*, const double*, const double*, double*, int);
    const Kernel kernels[] = {pull<third_order>, pull<newton>, pull<cube_newton>, pull<f32_newton2>, pull<estimate>};
    printf("# N %d, 3D float64, scaled coordinates, %d bodies i per thread; error: |a - a_ref| / |a_ref| over %d bodies\n",
           n, kB, samples);
    printf("%-12s %5s %10s %11s %10s %10s\n", "refinement", "regs", "ms", "inter/s", "max_rel", "rms_rel");
    std::vector<double> out(3 * n);
    const int grid = (n + kBlock * kB - 1) / (kBlock * kB);
    for (int r = 0; r < 5; ++r) {
        cudaFuncAttributes fa;
        CK(cudaFuncGetAttributes(&fa, kernels[r]));
        std::vector<float> times;
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        for (int rep = 0; rep <= reps; ++rep) {
            CK(cudaEventRecord(e0));
            kernels[r]<<<grid, kBlock>>>(d_bodies, d_soft, d_pos, d_out, n);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            CK(cudaGetLastError());
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            if (rep > 0) times.push_back(ms);
        }
        std::sort(times.begin(), times.end());
        CK(cudaMemcpy(out.data(), d_out, sizeof(double) * 3 * n, cudaMemcpyDeviceToHost));
        double max_rel = 0, se = 0, sr = 0;
        for (int t = 0; t < samples; ++t) {
            const int i = static_cast<int>(static_cast<long long>(t) * (n - 1) / (samples - 1));
            double e2 = 0, r2 = 0;
            for (int k = 0; k < 3; ++k) {
                const long double e = out[3 * i + k] - ref[3 * t + k];
                e2 += static_cast<double>(e * e);
                r2 += static_cast<double>(ref[3 * t + k] * ref[3 * t + k]);
            }
            max_rel = std::max(max_rel, std::sqrt(e2 / r2));
            se += e2;
            sr += r2;
        }
        const double ms = times[times.size() / 2];
        printf("%-12s %5d %10.3f %11.4e %10.2e %10.2e\n", kNames[r], fa.numRegs, ms, double(n) * n / (ms * 1e-3),
               max_rel, std::sqrt(se / sr));
    }
    return 0;
}
