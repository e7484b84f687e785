// omp.simd: the fastest CPU variant. Padded structure of arrays; each thread takes tiles of rows;
// inside a tile the j range is walked in cache blocks (`j_block`), and each vector of j bodies,
// loaded once, serves a group of rows held in registers. The interaction uses the hardware's
// approximate reciprocal square root, optionally refined to first order (`newton`: the order of
// one Newton step, applied to |d|^-3 directly).
// The kernel is written once over a small vector-operations type and compiled for AVX-512,
// AVX2+FMA and SSE2 inside functions carrying the target attribute (chosen at run time, so the
// default build stays portable), plus exact scalar code on other processors.
#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include "omp_simulation.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define NBODY_SIMD_X86 1
#endif

namespace nbody {
namespace {

constexpr std::size_t kGroupRows = 4;   // rows sharing each loaded vector of j bodies
constexpr std::size_t kTileRows = 64;   // rows per parallel work item
constexpr std::size_t kPadding = 64;    // N is padded (mass 0) to this: lanes, groups, tiles

// Vector operations for one instruction set. Not always_inline: the target-attributed entry
// points below are `flatten`, which inlines all of this into code compiled for that target.
struct ScalarOps {
    using V = float;
    static constexpr std::size_t lanes = 1;
    static V set1(float v) { return v; }
    static V load(const float* p) { return *p; }
    static V sub(V a, V b) { return a - b; }
    static V mul(V a, V b) { return a * b; }
    static V fmadd(V a, V b, V c) { return a * b + c; }
    static V fnmadd(V a, V b, V c) { return c - a * b; }
    static V rsqrt(V a) { return 1.0f / std::sqrt(a); }  // exact: no estimate on unknown targets
    static float sum(V a) { return a; }
};

#ifdef NBODY_SIMD_X86
struct Sse2Ops {  // x86-64 baseline: no FMA; 12-bit reciprocal square-root estimate
    using V = __m128;
    static constexpr std::size_t lanes = 4;
    static V set1(float v) { return _mm_set1_ps(v); }
    static V load(const float* p) { return _mm_load_ps(p); }
    static V sub(V a, V b) { return _mm_sub_ps(a, b); }
    static V mul(V a, V b) { return _mm_mul_ps(a, b); }
    static V fmadd(V a, V b, V c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
    static V fnmadd(V a, V b, V c) { return _mm_sub_ps(c, _mm_mul_ps(a, b)); }
    static V rsqrt(V a) { return _mm_rsqrt_ps(a); }
    static float sum(V a) {
        alignas(16) float v[4];
        _mm_store_ps(v, a);
        return (v[0] + v[1]) + (v[2] + v[3]);
    }
};

struct Avx2Ops {  // 12-bit estimate
    using V = __m256;
    static constexpr std::size_t lanes = 8;
    __attribute__((target("avx2,fma"))) static V set1(float v) { return _mm256_set1_ps(v); }
    __attribute__((target("avx2,fma"))) static V load(const float* p) { return _mm256_load_ps(p); }
    __attribute__((target("avx2,fma"))) static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
    __attribute__((target("avx2,fma"))) static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
    __attribute__((target("avx2,fma"))) static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
    __attribute__((target("avx2,fma"))) static V fnmadd(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }
    __attribute__((target("avx2,fma"))) static V rsqrt(V a) { return _mm256_rsqrt_ps(a); }
    __attribute__((target("avx2,fma"))) static float sum(V a) {
        return Sse2Ops::sum(_mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1)));
    }
};

struct Avx512Ops {  // 14-bit estimate
    using V = __m512;
    static constexpr std::size_t lanes = 16;
    __attribute__((target("avx512f"))) static V set1(float v) { return _mm512_set1_ps(v); }
    __attribute__((target("avx512f"))) static V load(const float* p) { return _mm512_load_ps(p); }
    __attribute__((target("avx512f"))) static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
    __attribute__((target("avx512f"))) static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
    __attribute__((target("avx512f"))) static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
    __attribute__((target("avx512f"))) static V fnmadd(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }
    __attribute__((target("avx512f"))) static V rsqrt(V a) { return _mm512_maskz_rsqrt14_ps(0xFFFF, a); }
    __attribute__((target("avx512f"))) static float sum(V a) {
        alignas(64) float v[16];
        _mm512_store_ps(v, a);
        float total = 0.0f;
        for (float lane : v) total += lane;
        return total;
    }
};
#endif

// Padded positions and masses of the step's snapshot, 64-byte aligned for the vector loads.
struct PaddedBodies {
    const float* x;
    const float* y;
    const float* m;
    std::size_t n_padded;
};

// Pulls (without G) on rows [row0, row0 + kTileRows) from all bodies; the model's one
// interaction: estimate 1/|d| (Newton-refined when kNewton), then m_j |d|^-3 d as in
// physics.hpp's accumulate_pull.
//
// The refinement (kNewton) refines r^-3 itself rather than 1/r: with y the estimate of 1/r and
// e = r^2 y^2 (1 within the estimate's error), r^-3 = y^3 e^(-3/2) ~ y^3 (5/2 - 3/2 e) to first
// order, the same order as a Newton step on 1/r (relative error <= 15/8 (e-1)^2, 2.8e-8 for the
// 14-bit estimate). Written 1.5 y^3 (5/3 - e) with the constant k = fl(5/3) and the factor
// 1/(k-1) ~ 1.5 carried by the masses (kRefinedMassScale, applied to the padded copy once per
// step), it costs five instructions: y^2, k - r^2 y^2 (one fnmadd), m y, (m y) y^2, times c.
// A Newton step on 1/r and the cube cost seven.
constexpr float kRefineK = 5.0f / 3.0f;
constexpr double kRefinedMassScale = 1.0 / (static_cast<double>(kRefineK) - 1.0);

template <class Ops, bool kNewton>
void pull_tile(const PaddedBodies& b, std::size_t row0, std::size_t j_block, float eps2, float* ax, float* ay) {
    using V = typename Ops::V;
    const V eps2v = Ops::set1(eps2);
    const V k = Ops::set1(kRefineK);
    // The tile's row sums stay vectors across the j blocks (reduced to scalars once, at the end):
    // reducing them per block cost ~3 % at j_block=2048, ~10 % at 512.
    V tile_sx[kTileRows], tile_sy[kTileRows];
    for (std::size_t r = 0; r < kTileRows; ++r) tile_sx[r] = tile_sy[r] = Ops::set1(0.0f);
    for (std::size_t j0 = 0; j0 < b.n_padded; j0 += j_block) {
        const std::size_t j1 = std::min(j0 + j_block, b.n_padded);
        for (std::size_t g = row0; g < row0 + kTileRows; g += kGroupRows) {
            V xi[kGroupRows], yi[kGroupRows], sx[kGroupRows], sy[kGroupRows];
            for (std::size_t r = 0; r < kGroupRows; ++r) {
                xi[r] = Ops::set1(b.x[g + r]);
                yi[r] = Ops::set1(b.y[g + r]);
                sx[r] = tile_sx[g - row0 + r];
                sy[r] = tile_sy[g - row0 + r];
            }
            for (std::size_t j = j0; j < j1; j += Ops::lanes) {
                const V xj = Ops::load(b.x + j), yj = Ops::load(b.y + j), mj = Ops::load(b.m + j);
                for (std::size_t r = 0; r < kGroupRows; ++r) {
                    const V dx = Ops::sub(xj, xi[r]);
                    const V dy = Ops::sub(yj, yi[r]);
                    const V r2 = Ops::fmadd(dx, dx, Ops::fmadd(dy, dy, eps2v));
                    const V inv_r = Ops::rsqrt(r2);
                    V weight;
                    if constexpr (kNewton) {  // mj is m / (k - 1) here
                        const V inv_r2 = Ops::mul(inv_r, inv_r);
                        const V m_inv_r3 = Ops::mul(Ops::mul(mj, inv_r), inv_r2);
                        weight = Ops::mul(m_inv_r3, Ops::fnmadd(r2, inv_r2, k));
                    } else {
                        weight = Ops::mul(mj, Ops::mul(inv_r, Ops::mul(inv_r, inv_r)));
                    }
                    sx[r] = Ops::fmadd(weight, dx, sx[r]);
                    sy[r] = Ops::fmadd(weight, dy, sy[r]);
                }
            }
            for (std::size_t r = 0; r < kGroupRows; ++r) {
                tile_sx[g - row0 + r] = sx[r];
                tile_sy[g - row0 + r] = sy[r];
            }
        }
    }
    for (std::size_t r = 0; r < kTileRows; ++r) {
        ax[row0 + r] = Ops::sum(tile_sx[r]);
        ay[row0 + r] = Ops::sum(tile_sy[r]);
    }
}

using TileKernel = void (*)(const PaddedBodies&, std::size_t, std::size_t, float, float*, float*);

// Entry points compiled for each instruction set; `flatten` inlines the kernel and its
// operations here, so the whole tile is generated for that target.
template <bool kNewton>
__attribute__((noinline, flatten)) void tile_scalar(const PaddedBodies& b, std::size_t row0, std::size_t j_block,
                                                    float eps2, float* ax, float* ay) {
    pull_tile<ScalarOps, kNewton>(b, row0, j_block, eps2, ax, ay);
}
#ifdef NBODY_SIMD_X86
template <bool kNewton>
__attribute__((target("sse2"), flatten)) void tile_sse2(const PaddedBodies& b, std::size_t row0, std::size_t j_block,
                                                        float eps2, float* ax, float* ay) {
    pull_tile<Sse2Ops, kNewton>(b, row0, j_block, eps2, ax, ay);
}
template <bool kNewton>
__attribute__((target("avx2,fma"), flatten)) void tile_avx2(const PaddedBodies& b, std::size_t row0,
                                                            std::size_t j_block, float eps2, float* ax, float* ay) {
    pull_tile<Avx2Ops, kNewton>(b, row0, j_block, eps2, ax, ay);
}
template <bool kNewton>
__attribute__((target("avx512f"), flatten)) void tile_avx512(const PaddedBodies& b, std::size_t row0,
                                                             std::size_t j_block, float eps2, float* ax, float* ay) {
    pull_tile<Avx512Ops, kNewton>(b, row0, j_block, eps2, ax, ay);
}
#endif

// The instruction sets of the `isa` tuning, widest first, with whether this CPU has each.
struct IsaChoice {
    const char* name;
    bool supported;
    TileKernel refined_kernel;   // newton=1
    TileKernel estimate_kernel;  // newton=0
};

std::vector<IsaChoice> isa_choices() {
    std::vector<IsaChoice> choices;
#ifdef NBODY_SIMD_X86
    __builtin_cpu_init();
    choices.push_back({"avx512", __builtin_cpu_supports("avx512f") != 0, tile_avx512<true>, tile_avx512<false>});
    choices.push_back({"avx2", __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"), tile_avx2<true>,
                       tile_avx2<false>});
    choices.push_back({"sse2", true, tile_sse2<true>, tile_sse2<false>});
#endif
    choices.push_back({"scalar", true, tile_scalar<true>, tile_scalar<false>});
    return choices;
}

// `isa` was validated against the supported names listed in the tunings.
TileKernel pick_kernel(const std::string& isa, bool newton) {
    for (const IsaChoice& choice : isa_choices())
        if (choice.supported && (isa == "auto" || isa == choice.name))
            return newton ? choice.refined_kernel : choice.estimate_kernel;
    throw std::logic_error("omp.simd: isa=" + isa + " was not validated");
}

template <class T>
struct AlignedAllocator {
    using value_type = T;
    AlignedAllocator() = default;
    template <class U>
    AlignedAllocator(const AlignedAllocator<U>&) {}
    T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64})); }
    void deallocate(T* p, std::size_t) { ::operator delete(p, std::align_val_t{64}); }
    bool operator==(const AlignedAllocator&) const { return true; }
};
using AlignedFloats = std::vector<float, AlignedAllocator<float>>;

class OmpSimd final : public omp::OmpSimulation {
public:
    OmpSimd(const Problem& problem, const TuningValues& tuning)
        : OmpSimulation(problem, tuning),
          kernel_(pick_kernel(tuning.at("isa"), tuning.at("newton") == "1")),
          mass_scale_(tuning.at("newton") == "1" ? kRefinedMassScale : 1.0),
          j_block_(static_cast<std::size_t>(tuning_int(tuning, "j_block"))),
          n_padded_((problem.n + kPadding - 1) / kPadding * kPadding),
          x_(n_padded_, 0.0f),
          y_(n_padded_, 0.0f),
          m_(n_padded_, 0.0f),
          ax_(n_padded_),
          ay_(n_padded_) {}

private:
    void compute_pulls(std::vector<float>& ax, std::vector<float>& ay) override {
        const Bodies& b = bodies();
        const auto n = static_cast<std::int64_t>(b.size());
        const auto tiles = static_cast<std::int64_t>(n_padded_ / kTileRows);
        const float eps2 = static_cast<float>(problem().constants.eps2());
        const PaddedBodies padded{x_.data(), y_.data(), m_.data(), n_padded_};
#pragma omp parallel num_threads(threads())
        {
#pragma omp for schedule(static)
            for (std::int64_t i = 0; i < n; ++i) {  // padding bodies stay at the origin, mass 0
                x_[i] = b.x[i];
                y_[i] = b.y[i];
                m_[i] = static_cast<float>(static_cast<double>(b.m[i]) * mass_scale_);
            }
#pragma omp for schedule(static)
            for (std::int64_t t = 0; t < tiles; ++t)
                kernel_(padded, static_cast<std::size_t>(t) * kTileRows, j_block_, eps2, ax_.data(), ay_.data());
#pragma omp for schedule(static)
            for (std::int64_t i = 0; i < n; ++i) {
                ax[i] = ax_[i];
                ay[i] = ay_[i];
            }
        }
    }

    TileKernel kernel_;
    double mass_scale_;  // the padded copy's masses: m, or m / (k - 1) for the refined kernel
    std::size_t j_block_;
    std::size_t n_padded_;
    AlignedFloats x_, y_, m_, ax_, ay_;
};

std::vector<TuningParameter> simd_tunings() {
    std::vector<TuningParameter> tunings = omp::common_tunings();
    std::vector<std::string> isas{"auto"};
    for (const IsaChoice& choice : isa_choices())
        if (choice.supported) isas.push_back(choice.name);
    tunings.push_back({.name = "isa",
                       .description = "vector instruction set, among those this CPU has (auto: the widest)",
                       .default_value = "auto",
                       .allowed_values = isas,
                       .min_value = 0,
                       .max_value = 0});
    tunings.push_back({.name = "j_block",
                       .description = "bodies j per cache block",
                       .default_value = "2048",
                       .allowed_values = {"256", "512", "1024", "2048", "4096", "8192", "16384", "65536"},
                       .min_value = 0,
                       .max_value = 0});
    tunings.push_back({.name = "newton",
                       .description = "first-order (Newton-order) refinements of the estimated |d|^-3",
                       .default_value = "1",
                       .allowed_values = {"0", "1"},
                       .min_value = 0,
                       .max_value = 0});
    return tunings;
}

}  // namespace

void register_omp_simd(Registry& registry) {
    omp::add_omp_variant<OmpSimd>(registry, "omp.simd",
                                  "structure of arrays, vectorised j loop (AVX-512/AVX2/SSE2 at run time), j cache "
                                  "blocks, register-blocked rows, estimated 1/sqrt + first-order refinement",
                                  simd_tunings());
}

}  // namespace nbody
