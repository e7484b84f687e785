// omp.simd: the fastest CPU variant. Padded structure of arrays; each thread takes tiles of rows;
// inside a tile the j range is walked in cache blocks (`j_block`), and each vector of j bodies,
// loaded once, serves a group of rows held in registers. The kernel (simd_kernel.inc) is written
// once over a small vector-operations type, templated on the precision (float32 or float64 lanes)
// and the dimension, and compiled for AVX-512, AVX2+FMA and SSE2 inside functions carrying the
// target attribute (chosen at run time, so the default build stays portable), plus scalar code on
// other processors.
//
// The reciprocal square root (the documented exception to physics.hpp's accumulate_pull):
// - float32: the hardware estimate, optionally refined to first order (`newton`: the order of one
//   Newton step, applied to |d|^-3 directly).
// - float64 (SPEC §2: full double accuracy, no float32 operation): with `newton` (the default) and
//   a float64 estimate in the instruction set (AVX-512F's vrsqrt14pd, 14 bits), the estimate, one
//   Newton step on 1/|d| (28 bits) and the same first-order refinement of |d|^-3 (error about
//   2^-52, the double rounding level); otherwise (newton=0, or AVX2 / SSE2 / scalar, which have no
//   float64 estimate) the exact sqrt and division. docs/performance-openmp.md compares the two.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "omp_simulation.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define NBODY_SIMD_X86 1
#define NBODY_AVX2 __attribute__((target("avx2,fma")))
#define NBODY_AVX512 __attribute__((target("avx512f")))
#endif

namespace nbody {
namespace {

constexpr std::size_t kGroupRows = 4;   // rows sharing each loaded vector of j bodies
constexpr std::size_t kTileRows = 64;   // rows per parallel work item
constexpr std::size_t kPadding = 64;    // N is padded (mass 0) to this: lanes, groups, tiles

// How 1/|d| and |d|^-3 are computed (see the file's opening comment).
enum class InvSqrtForm {
    estimate,  // float32, newton=0: the hardware estimate alone
    refined,   // the estimate (float64: plus one Newton step), then |d|^-3 refined to first order
    exact,     // float64 without an estimate or with newton=0: sqrt, then division
};

// Vector operations for one instruction set and precision. Not always_inline: the
// target-attributed entry points below are `flatten`, which inlines all of this into code
// compiled for that target. `has_estimate`: the set has a reciprocal-square-root estimate `rsqrt`
// in this precision.
template <class Real>
struct ScalarOps {
    using V = Real;
    static constexpr std::size_t lanes = 1;
    // float32: exact 1/sqrt stands in for the estimate on unknown targets; float64 uses `exact`.
    static constexpr bool has_estimate = std::is_same_v<Real, float>;
    static V set1(Real v) { return v; }
    static V load(const Real* p) { return *p; }
    static V sub(V a, V b) { return a - b; }
    static V mul(V a, V b) { return a * b; }
    static V div(V a, V b) { return a / b; }
    static V sqrt(V a) { return std::sqrt(a); }
    static V fmadd(V a, V b, V c) { return a * b + c; }
    static V fnmadd(V a, V b, V c) { return c - a * b; }
    static V rsqrt(V a) { return Real(1) / std::sqrt(a); }
    static V fmadd_saturating(V a, V b, V c) { return fmadd(a, b, c); }
    static V saturate(V a) { return std::min(a, std::numeric_limits<Real>::max()); }  // NaN stays NaN
    static Real sum(V a) { return a; }
};

#ifdef NBODY_SIMD_X86
template <class Real>
struct Sse2Ops;
template <class Real>
struct Avx2Ops;
template <class Real>
struct Avx512Ops;

template <>
struct Sse2Ops<float> {  // x86-64 baseline: no FMA; 12-bit reciprocal square-root estimate
    using V = __m128;
    static constexpr std::size_t lanes = 4;
    static constexpr bool has_estimate = true;
    static V set1(float v) { return _mm_set1_ps(v); }
    static V load(const float* p) { return _mm_load_ps(p); }
    static V sub(V a, V b) { return _mm_sub_ps(a, b); }
    static V mul(V a, V b) { return _mm_mul_ps(a, b); }
    static V fmadd(V a, V b, V c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
    static V fnmadd(V a, V b, V c) { return _mm_sub_ps(c, _mm_mul_ps(a, b)); }
    static V rsqrt(V a) { return _mm_rsqrt_ps(a); }
    static V fmadd_saturating(V a, V b, V c) { return fmadd(a, b, c); }
    // min's second operand when either is NaN: a NaN r^2 stays NaN, as in the plain formula.
    static V saturate(V a) { return _mm_min_ps(set1(std::numeric_limits<float>::max()), a); }
    static float sum(V a) {
        alignas(16) float v[4];
        _mm_store_ps(v, a);
        return (v[0] + v[1]) + (v[2] + v[3]);
    }
};

template <>
struct Sse2Ops<double> {  // no float64 estimate
    using V = __m128d;
    static constexpr std::size_t lanes = 2;
    static constexpr bool has_estimate = false;
    static V set1(double v) { return _mm_set1_pd(v); }
    static V load(const double* p) { return _mm_load_pd(p); }
    static V sub(V a, V b) { return _mm_sub_pd(a, b); }
    static V mul(V a, V b) { return _mm_mul_pd(a, b); }
    static V div(V a, V b) { return _mm_div_pd(a, b); }
    static V sqrt(V a) { return _mm_sqrt_pd(a); }
    static V fmadd(V a, V b, V c) { return _mm_add_pd(_mm_mul_pd(a, b), c); }
    static V fnmadd(V a, V b, V c) { return _mm_sub_pd(c, _mm_mul_pd(a, b)); }
    static double sum(V a) {
        alignas(16) double v[2];
        _mm_store_pd(v, a);
        return v[0] + v[1];
    }
};

template <>
struct Avx2Ops<float> {  // 12-bit estimate
    using V = __m256;
    static constexpr std::size_t lanes = 8;
    static constexpr bool has_estimate = true;
    NBODY_AVX2 static V set1(float v) { return _mm256_set1_ps(v); }
    NBODY_AVX2 static V load(const float* p) { return _mm256_load_ps(p); }
    NBODY_AVX2 static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
    NBODY_AVX2 static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
    NBODY_AVX2 static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
    NBODY_AVX2 static V fnmadd(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }
    NBODY_AVX2 static V rsqrt(V a) { return _mm256_rsqrt_ps(a); }
    NBODY_AVX2 static V fmadd_saturating(V a, V b, V c) { return fmadd(a, b, c); }
    NBODY_AVX2 static V saturate(V a) { return _mm256_min_ps(set1(std::numeric_limits<float>::max()), a); }
    NBODY_AVX2 static float sum(V a) {
        return Sse2Ops<float>::sum(_mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1)));
    }
};

template <>
struct Avx2Ops<double> {  // no float64 estimate
    using V = __m256d;
    static constexpr std::size_t lanes = 4;
    static constexpr bool has_estimate = false;
    NBODY_AVX2 static V set1(double v) { return _mm256_set1_pd(v); }
    NBODY_AVX2 static V load(const double* p) { return _mm256_load_pd(p); }
    NBODY_AVX2 static V sub(V a, V b) { return _mm256_sub_pd(a, b); }
    NBODY_AVX2 static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
    NBODY_AVX2 static V div(V a, V b) { return _mm256_div_pd(a, b); }
    NBODY_AVX2 static V sqrt(V a) { return _mm256_sqrt_pd(a); }
    NBODY_AVX2 static V fmadd(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
    NBODY_AVX2 static V fnmadd(V a, V b, V c) { return _mm256_fnmadd_pd(a, b, c); }
    NBODY_AVX2 static double sum(V a) {
        return Sse2Ops<double>::sum(_mm_add_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1)));
    }
};

template <>
struct Avx512Ops<float> {  // 14-bit estimate
    using V = __m512;
    static constexpr std::size_t lanes = 16;
    static constexpr bool has_estimate = true;
    NBODY_AVX512 static V set1(float v) { return _mm512_set1_ps(v); }
    NBODY_AVX512 static V load(const float* p) { return _mm512_load_ps(p); }
    NBODY_AVX512 static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
    NBODY_AVX512 static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
    NBODY_AVX512 static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
    NBODY_AVX512 static V fnmadd(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }
    NBODY_AVX512 static V rsqrt(V a) { return _mm512_maskz_rsqrt14_ps(0xFFFF, a); }
    // Rounded toward zero (embedded rounding: the same instruction): an overflow gives the largest
    // finite value, so no saturate() is needed.
    NBODY_AVX512 static V fmadd_saturating(V a, V b, V c) {
        return _mm512_fmadd_round_ps(a, b, c, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    }
    NBODY_AVX512 static V saturate(V a) { return a; }
    NBODY_AVX512 static float sum(V a) {
        alignas(64) float v[16];
        _mm512_store_ps(v, a);
        float total = 0.0f;
        for (float lane : v) total += lane;
        return total;
    }
};

template <>
struct Avx512Ops<double> {  // 14-bit float64 estimate
    using V = __m512d;
    static constexpr std::size_t lanes = 8;
    static constexpr bool has_estimate = true;
    NBODY_AVX512 static V set1(double v) { return _mm512_set1_pd(v); }
    NBODY_AVX512 static V load(const double* p) { return _mm512_load_pd(p); }
    NBODY_AVX512 static V sub(V a, V b) { return _mm512_sub_pd(a, b); }
    NBODY_AVX512 static V mul(V a, V b) { return _mm512_mul_pd(a, b); }
    NBODY_AVX512 static V div(V a, V b) { return _mm512_div_pd(a, b); }
    // The masked forms: GCC 12's unmasked ones warn about their own undefined source operand.
    NBODY_AVX512 static V sqrt(V a) { return _mm512_maskz_sqrt_pd(0xFF, a); }
    NBODY_AVX512 static V fmadd(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
    NBODY_AVX512 static V fnmadd(V a, V b, V c) { return _mm512_fnmadd_pd(a, b, c); }
    NBODY_AVX512 static V rsqrt(V a) { return _mm512_maskz_rsqrt14_pd(0xFF, a); }
    NBODY_AVX512 static V fmadd_saturating(V a, V b, V c) {
        return _mm512_fmadd_round_pd(a, b, c, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    }
    NBODY_AVX512 static V saturate(V a) { return a; }
    NBODY_AVX512 static double sum(V a) {
        alignas(64) double v[8];
        _mm512_store_pd(v, a);
        double total = 0.0;
        for (double lane : v) total += lane;
        return total;
    }
};
#endif

// Padded positions (per axis) and masses of the step's snapshot, 64-byte aligned for the vector
// loads.
template <class Real>
struct PaddedBodies {
    const Real* p[3];
    const Real* m;
    std::size_t n_padded;
};

// The first-order refinement of |d|^-3 (InvSqrtForm::refined) refines r^-3 itself rather than
// 1/r: with y the estimate of 1/r and e = r^2 y^2 (1 within the estimate's error),
// r^-3 = y^3 e^(-3/2) ~ y^3 (5/2 - 3/2 e) to first order, the same order as a Newton step on 1/r
// (relative error <= 15/8 (e-1)^2). Written 1.5 y^3 (5/3 - e) with the constant k = fl(5/3) and
// the factor 1/(k-1) ~ 1.5 carried by the masses (refined_mass_scale, applied to the padded copy
// once per step), it costs five operations: y^2, k - r^2 y^2 (one fnmadd), m y, (m y) y^2, times
// c. A Newton step on 1/r and the cube cost seven.
template <class Real>
constexpr Real kRefineK = Real(5) / Real(3);
// Computed in a wider type than Real so that m / (k - 1) is rounded once, to Real.
template <class Real>
using Wider = std::conditional_t<std::is_same_v<Real, float>, double, long double>;
template <class Real>
constexpr Wider<Real> refined_mass_scale = Wider<Real>(1) / (static_cast<Wider<Real>>(kRefineK<Real>) - 1);

// pull_weight and pull_tile (simd_kernel.inc), compiled once per target: each copy carries its
// instruction set's target attribute, as Clang requires of a function passing AVX vectors.
namespace portable {  // scalar and SSE2, x86-64's baseline
#define NBODY_KERNEL_TARGET
#include "simd_kernel.inc"
#undef NBODY_KERNEL_TARGET
}  // namespace portable
#ifdef NBODY_SIMD_X86
namespace avx2 {
#define NBODY_KERNEL_TARGET NBODY_AVX2
#include "simd_kernel.inc"
#undef NBODY_KERNEL_TARGET
}  // namespace avx2
namespace avx512 {
#define NBODY_KERNEL_TARGET NBODY_AVX512
#include "simd_kernel.inc"
#undef NBODY_KERNEL_TARGET
}  // namespace avx512
#endif

template <class Real>
using TileKernel = void (*)(const PaddedBodies<Real>&, std::size_t, std::size_t, Real, Real* const*);

// Entry points compiled for each instruction set; `flatten` inlines the kernel and its
// operations here, so the whole tile is generated for that target.
template <class Real, int Dim, InvSqrtForm Form>
__attribute__((noinline, flatten)) void tile_scalar(const PaddedBodies<Real>& b, std::size_t row0,
                                                    std::size_t j_block, Real eps2, Real* const* pull) {
    portable::pull_tile<ScalarOps<Real>, Dim, Form>(b, row0, j_block, eps2, pull);
}
#ifdef NBODY_SIMD_X86
template <class Real, int Dim, InvSqrtForm Form>
__attribute__((target("sse2"), flatten)) void tile_sse2(const PaddedBodies<Real>& b, std::size_t row0,
                                                        std::size_t j_block, Real eps2, Real* const* pull) {
    portable::pull_tile<Sse2Ops<Real>, Dim, Form>(b, row0, j_block, eps2, pull);
}
template <class Real, int Dim, InvSqrtForm Form>
__attribute__((target("avx2,fma"), flatten)) void tile_avx2(const PaddedBodies<Real>& b, std::size_t row0,
                                                            std::size_t j_block, Real eps2, Real* const* pull) {
    avx2::pull_tile<Avx2Ops<Real>, Dim, Form>(b, row0, j_block, eps2, pull);
}
template <class Real, int Dim, InvSqrtForm Form>
__attribute__((target("avx512f"), flatten)) void tile_avx512(const PaddedBodies<Real>& b, std::size_t row0,
                                                             std::size_t j_block, Real eps2, Real* const* pull) {
    avx512::pull_tile<Avx512Ops<Real>, Dim, Form>(b, row0, j_block, eps2, pull);
}
#endif

enum class Isa { avx512, avx2, sse2, scalar };

// The instruction sets of the `isa` tuning, widest first, with whether this CPU has each.
struct IsaChoice {
    const char* name;
    Isa isa;
    bool supported;
};

std::vector<IsaChoice> isa_choices() {
    std::vector<IsaChoice> choices;
#ifdef NBODY_SIMD_X86
    __builtin_cpu_init();
    choices.push_back({"avx512", Isa::avx512, __builtin_cpu_supports("avx512f") != 0});
    choices.push_back(
        {"avx2", Isa::avx2, __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0});
    choices.push_back({"sse2", Isa::sse2, true});
#endif
    choices.push_back({"scalar", Isa::scalar, true});
    return choices;
}

// `isa` was validated against the supported names listed in the tunings.
Isa pick_isa(const std::string& name) {
    for (const IsaChoice& choice : isa_choices())
        if (choice.supported && (name == "auto" || name == choice.name)) return choice.isa;
    throw std::logic_error("omp.simd: isa=" + name + " was not validated");
}

bool has_float64_estimate(Isa isa) {
#ifdef NBODY_SIMD_X86
    if (isa == Isa::avx512) return Avx512Ops<double>::has_estimate;
    if (isa == Isa::avx2) return Avx2Ops<double>::has_estimate;
    if (isa == Isa::sse2) return Sse2Ops<double>::has_estimate;
#endif
    return ScalarOps<double>::has_estimate;
}

// The one place the form is chosen (see the file's opening comment): float32 has the estimate and
// the refined form, float64 the refined form (where the set has a float64 estimate) and the exact.
template <class Real>
InvSqrtForm pick_form(Isa isa, bool newton) {
    if constexpr (std::is_same_v<Real, float>)
        return newton ? InvSqrtForm::refined : InvSqrtForm::estimate;
    else
        return newton && has_float64_estimate(isa) ? InvSqrtForm::refined : InvSqrtForm::exact;
}

// Whether pick_form can choose Form for this instruction set's operations (only those kernels are
// compiled).
template <template <class> class Ops, class Real, InvSqrtForm Form>
constexpr bool kFormRuns = std::is_same_v<Real, float> ? Form != InvSqrtForm::exact
                                                       : Form == InvSqrtForm::exact || Ops<Real>::has_estimate;

template <class Real, int Dim, InvSqrtForm Form>
TileKernel<Real> kernel_for(Isa isa) {
#ifdef NBODY_SIMD_X86
    if constexpr (kFormRuns<Avx512Ops, Real, Form>)
        if (isa == Isa::avx512) return tile_avx512<Real, Dim, Form>;
    if constexpr (kFormRuns<Avx2Ops, Real, Form>)
        if (isa == Isa::avx2) return tile_avx2<Real, Dim, Form>;
    if constexpr (kFormRuns<Sse2Ops, Real, Form>)
        if (isa == Isa::sse2) return tile_sse2<Real, Dim, Form>;
#endif
    if constexpr (kFormRuns<ScalarOps, Real, Form>)
        if (isa == Isa::scalar) return tile_scalar<Real, Dim, Form>;
    throw std::logic_error("omp.simd: no kernel of this form for the instruction set");
}

template <class Real>
TileKernel<Real> pick_kernel(Isa isa, InvSqrtForm form, int dim) {
    const auto of_dim = [&]<int Dim>() -> TileKernel<Real> {
        switch (form) {
            case InvSqrtForm::estimate:
                return kernel_for<Real, Dim, InvSqrtForm::estimate>(isa);
            case InvSqrtForm::refined:
                return kernel_for<Real, Dim, InvSqrtForm::refined>(isa);
            case InvSqrtForm::exact:
                return kernel_for<Real, Dim, InvSqrtForm::exact>(isa);
        }
        throw std::logic_error("omp.simd: unknown reciprocal-square-root form");
    };
    return dispatch_dim(dim, of_dim);
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
template <class Real>
using AlignedVector = std::vector<Real, AlignedAllocator<Real>>;

template <class Real>
class OmpSimd final : public omp::OmpSimulation<Real> {
public:
    OmpSimd(const Problem& problem, const TuningValues& tuning)
        : omp::OmpSimulation<Real>(problem, tuning),
          form_(pick_form<Real>(pick_isa(tuning.at("isa")), tuning.at("newton") == "1")),
          kernel_(pick_kernel<Real>(pick_isa(tuning.at("isa")), form_, problem.workload.dim)),
          j_block_(static_cast<std::size_t>(tuning_int(tuning, "j_block"))),
          n_padded_((problem.n + kPadding - 1) / kPadding * kPadding),
          m_(n_padded_, Real(0)) {
        for (int k = 0; k < problem.workload.dim; ++k) {
            p_[k].assign(n_padded_, Real(0));
            pull_[k].assign(n_padded_, Real(0));
        }
    }

private:
    void compute_pulls(omp::AxisPulls<Real>& pull) override {
        const BodiesT<Real>& b = this->bodies();
        const int dim = this->dim();
        const auto n = static_cast<std::int64_t>(b.size());
        // The tiles covering the owned block (all of them in a single process); rows of a boundary
        // tile outside the block are computed too and left unused.
        const auto first = static_cast<std::int64_t>(this->owned().first);
        const auto last = first + static_cast<std::int64_t>(this->owned().count);
        const auto tile_rows = static_cast<std::int64_t>(kTileRows);
        const std::int64_t first_tile = first / tile_rows, end_tile = (last + tile_rows - 1) / tile_rows;
        // The refined form's masses are m / (k - 1) (see refined_mass_scale).
        const Wider<Real> mass_scale = form_ == InvSqrtForm::refined ? refined_mass_scale<Real> : Wider<Real>(1);
        const PaddedBodies<Real> padded{{p_[0].data(), p_[1].data(), dim == 3 ? p_[2].data() : nullptr}, m_.data(),
                                        n_padded_};
        Real* const padded_pull[3] = {pull_[0].data(), pull_[1].data(), dim == 3 ? pull_[2].data() : nullptr};
#pragma omp for schedule(static)
        for (std::int64_t i = 0; i < n; ++i) {  // padding bodies stay at the origin, mass 0
            for (int k = 0; k < dim; ++k) p_[k][i] = b.position(k)[i];
            m_[i] = static_cast<Real>(static_cast<Wider<Real>>(b.m[i]) * mass_scale);
        }
#pragma omp for schedule(static)
        for (std::int64_t t = first_tile; t < end_tile; ++t)
            kernel_(padded, static_cast<std::size_t>(t) * kTileRows, j_block_, this->eps2(), padded_pull);
#pragma omp for schedule(static)
        for (std::int64_t i = first; i < last; ++i)
            for (int k = 0; k < dim; ++k) pull[k][i] = pull_[k][i];
    }

    InvSqrtForm form_;
    TileKernel<Real> kernel_;  // for the problem's dimension and form_, chosen once
    std::size_t j_block_;
    std::size_t n_padded_;
    AlignedVector<Real> p_[3], m_, pull_[3];  // padded; p_[2], pull_[2] in 3D only
};

std::vector<TuningParameter> simd_tunings() {
    std::vector<TuningParameter> tunings = omp::common_tunings();
    std::vector<std::string> isas{"auto"}, elsewhere;
    for (const IsaChoice& choice : isa_choices()) (choice.supported ? isas : elsewhere).push_back(choice.name);
    tunings.push_back({.name = "isa",
                       .description = "vector instruction set, among those this CPU has (auto: the widest)",
                       .default_value = "auto",
                       .allowed_values = isas,
                       .min_value = 0,
                       .max_value = 0,
                       .values_elsewhere = elsewhere,
                       .larger_elsewhere = false});
    tunings.push_back({.name = "j_block",
                       .description = "bodies j per cache block",
                       .default_value = "2048",
                       .allowed_values = {"256", "512", "1024", "2048", "4096", "8192", "16384", "65536"},
                       .min_value = 0,
                       .max_value = 0});
    tunings.push_back({.name = "newton",
                       .description = "float32: first-order (Newton-order) refinement of the estimated |d|^-3 "
                                      "(0: the estimate alone); float64: 1 refines avx512's float64 estimate to "
                                      "double accuracy, 0 (and avx2, sse2, scalar) takes sqrt and division",
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
                                  "blocks, register-blocked rows; float32: estimated 1/sqrt + first-order "
                                  "refinement; float64: refined to double accuracy (avx512) or sqrt and division",
                                  // Reached 0.24-0.52 on the 16-core H100 and H200 hosts, 0.62 on a 2-core host.
                                  omp::Ranks::several, 0.33,
                                  // each row's sum in j order by one thread; the tiles do not follow the threads
                                  Reproducibility::bitwise, simd_tunings());
}

}  // namespace nbody
