#pragma once
// The reciprocal square roots the models share, each the policy of physics.hpp's accumulate_pull:
// - ExactInvSqrt: 1/sqrt as the correctly rounded square root and a division (the host references,
//   and each model's exact path);
// - PortableInvSqrt: 1/sqrt(x) from the bits of x and multiply-adds only, so that a vectorising
//   compiler turns it into integer and FMA vector instructions on any ISA (the compilers' own 1/sqrt
//   under the math flags is not the same code on every compiler and width:
//   docs/performance-kokkos.md). No intrinsics: portable C++20 (kokkos.simd);
// - rsqrt_of_normal: the GPU's hardware reciprocal square root (MUFU.RSQ) for arguments known to
//   be positive normal numbers, as an interaction's r^2 + eps^2 >= eps^2 is (CUDA and Kokkos on
//   CUDA, device code only).
// A model's other fast paths (a compiler's estimate under its math flags, a vector intrinsic) stay
// in its folder, named for what they are.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace nbody {

// Host reciprocal square root, correctly rounded up to the division.
struct ExactInvSqrt {
    float operator()(float v) const { return 1.0f / std::sqrt(v); }
    double operator()(double v) const { return 1.0 / std::sqrt(v); }
    long double operator()(long double v) const { return 1.0L / std::sqrt(v); }
};

#if defined(__CUDACC__)
// float32: the bare MUFU.RSQ (PTX rsqrt.approx.ftz.f32), the same result as rsqrtf for a positive
// normal argument without rsqrtf's rescaling of subnormal ones (a compare and two predicated
// multiplies per interaction, 3 of 13 instructions).
// float64: CUDA's rsqrt(double) without its range check: the MUFU.RSQ64H estimate of the high word
// (PTX rsqrt.approx.ftz.f64, no FP64 instruction), then the library's own third-order refinement,
// y + y*e*(1/2 + 3/8 e) with e = 1 - v*y^2 (5 FP64 instructions), as accurate as the library's (no
// float32 step in float64, SPEC §2). The library branches around a slow path for zero, subnormal
// and infinite v, 64 convergence regions per loop iteration that keep nvcc from interleaving the
// bodies' FP64 chains; an interaction's v is finite and >= eps^2 > 0, so the branch is never taken.
__device__ __forceinline__ float rsqrt_of_normal(float v) {
    float y;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(v));
    return y;
}
__device__ __forceinline__ double rsqrt_of_normal(double v) {
    double y;
    asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(v));
    const double e = fma(-v * y, y, 1.0);
    return fma(y * e, fma(0.375, e, 0.5), y);
}
#endif

// A bit estimate y0 halves the exponent with one integer shift and subtraction (a "magic constant"
// such as 0x5F3759DF); u = x y0^2 then lies in a narrow range for every positive normal x, and
// x^(-1/2) = y0 u^(-1/2), x^(-3/2) = y0^3 u^(-3/2), each power of u from a polynomial fitted for the
// least largest relative error.
// - operator(): x^(-1/2). float32: the cubic estimate below, 7 vector operations, 6.2-6.3e-7 over every
//   float in [1, 4), which covers every exponent pair; float64 (full double accuracy, SPEC §2) adds
//   one third-order step, y (1 - e/2 + 3e^2/8) with e = x y^2 - 1: 1.6-1.9e-16.
// - mass_cubed(fold(m), x): m x^(-3/2), what the interaction uses (physics.hpp's mass_over_cube),
//   with the mass folded into the last polynomial's coefficients once per body j, so the
//   interaction has no multiply by m. float32: y0^3 times a quartic fitted to u^(-3/2) on the
//   classic constant (2.5e-7 in exact arithmetic, 4.7e-7 in float32, for 10 operations with the
//   mass). float64: the third-order step taken on the cube of the cubic estimate,
//   y^3 (1 - 3e/2 + 15e^2/8), its coefficients times m.
// models/kokkos/tests/test_kokkos.cpp checks every bound.
// r^2 held to the largest finite value before a fast 1/sqrt: its estimate of 1/sqrt(inf) is 0 or
// tiny, and the refinement multiplies by r^2 (0 * inf = NaN, or inf), where the plain formula's
// 1/sqrt(inf) = 0 pulls nothing; at the largest finite r^2 the weight underflows to 0 as the plain
// formula's does. Portable C++ has no rounding toward zero per operation (omp.simd's free form of
// this on AVX-512), so it costs one min per interaction; std::min(x, max) keeps a NaN x.
// PortableInvSqrt leaves r^2 as it is; SaturatedPortableInvSqrt saturates it first. kokkos.simd
// takes the first in steps where no coordinate is large enough for r^2 to overflow (simd.cpp).
template <class Real>
inline Real saturated(Real x) {
    return std::min(x, std::numeric_limits<Real>::max());
}

struct PortableInvSqrt {
    // A body's mass, folded into the coefficients mass_cubed evaluates.
    template <class Real>
    struct FoldedMass {
        Real w[std::is_same_v<Real, float> ? 5 : 3];
    };

    // float32: u^(-3/2) as a quartic in t = u - kQuarticCentre (coefficients of t^0 ... t^4), u = x y0^2
    // with y0 from the classic magic constant.
    static constexpr std::uint32_t kQuarticMagic = 0x5F3759DFu;
    static constexpr float kQuarticCentre = 1.000752f;
    static constexpr float kQuartic[5] = {0.998873052f, -1.49716526f, 1.87006567f, -2.19591011f, 2.46524725f};

    template <class Real>
    static FoldedMass<Real> fold(Real m) {
        FoldedMass<Real> folded;
        if constexpr (std::is_same_v<Real, float>) {
            for (int k = 0; k < 5; ++k) folded.w[k] = m * kQuartic[k];
        } else {
            folded.w[0] = m;
            folded.w[1] = Real(-1.5) * m;
            folded.w[2] = Real(1.875) * m;
        }
        return folded;
    }

    template <class Real>
    Real operator()(Real x) const {
        Real y = estimate(x);
        if constexpr (std::is_same_v<Real, double>) {
            const Real e = x * (y * y) - Real(1);
            y = (y * e) * (Real(0.375) * e - Real(0.5)) + y;
        }
        return y;
    }

    // x^(-3/2): mass_cubed of a unit mass, its coefficients constants rather than a body's (the
    // interaction of bodies whose mass is folded into their coordinates, physics.hpp's
    // accumulate_scaled_pull).
    template <class Real>
    Real cubed(Real x) const {
        return mass_cubed(fold(Real(1)), x);
    }

    template <class Real>
    Real mass_cubed(const FoldedMass<Real>& mass, Real x) const {
        const Real* w = mass.w;
        if constexpr (std::is_same_v<Real, double>) {
            const Real y = estimate(x);
            const Real y2 = y * y;
            const Real e = x * y2 - Real(1);
            return (y2 * y) * ((w[2] * e + w[1]) * e + w[0]);
        } else {
            const Real y0 = bit_estimate(x, kQuarticMagic);
            const Real y0_2 = y0 * y0;
            const Real t = x * y0_2 - kQuarticCentre;
            // Horner: Estrin's scheme (a shorter chain, one operation more) measured 2-5 % slower, as
            // the float32 loop is bound by vector issue slots.
            return (y0_2 * y0) * ((((w[4] * t + w[3]) * t + w[2]) * t + w[1]) * t + w[0]);
        }
    }

private:
    // x^(-1/2) to a few per cent: the exponent halved, the mantissa's logarithm linear.
    template <class Real, class Bits>
    static Real bit_estimate(Real x, Bits magic) {
        static_assert(sizeof(Real) == sizeof(Bits) && std::is_unsigned_v<Bits>);
        return std::bit_cast<Real>(static_cast<Bits>(magic - (std::bit_cast<Bits>(x) >> 1)));
    }

    // The estimate for operator() and float64's mass_cubed: a bit estimate refined by the cubic
    // s^3 + k1 s + k0 in s = c - x y0^2. Its magic constant is not the classic one: it scales y0 so that
    // the best cubic on the resulting range of x y0^2 has leading coefficient 1, and the centre c is
    // where that cubic has no s^2 term (every monic cubic has one such centre). Two dependent
    // multiply-adds then evaluate it; with an s^2 term it took an addition more, and 2D float64's
    // kokkos.simd ran 4-12 % slower (a dependency chain one step longer). 4.5-4.7e-7 in exact
    // arithmetic in both precisions, against 7.5e-7 for the unconstrained cubic on the classic
    // constant (docs/performance-kokkos.md).
    template <class Real>
    struct CubicEstimate;

    template <class Real>
    static Real estimate(Real x) {
        using C = CubicEstimate<Real>;
        const Real y0 = bit_estimate(x, C::magic);
        const Real s = C::centre - x * (y0 * y0);
        const Real q = (s * s + C::k1) * s + C::k0;
        return y0 * q;
    }
};

// Fitted by linear programming for the least largest relative error of y0 q over x in [1, 4) (every
// positive normal x behaves as one of [1, 4): the estimate treats each pair of exponents alike), the
// magic constant and the centre by a search for the smallest such error
// (scripts/fit_inv_sqrt_estimate.py).
template <>
struct PortableInvSqrt::CubicEstimate<float> {
    static constexpr std::uint32_t magic = 0x5F1653BBu;
    static constexpr float centre = 1.00493574f, k1 = 0.574834406f, k0 = 0.991586387f;
};

template <>
struct PortableInvSqrt::CubicEstimate<double> {
    static constexpr std::uint64_t magic = 0x5FE2CB9250EC8370ull;
    static constexpr double centre = 1.004936234250244, k1 = 0.5748323058215055, k0 = 0.9915865520603018;
};

struct SaturatedPortableInvSqrt : PortableInvSqrt {
    template <class Real>
    Real operator()(Real x) const {
        return PortableInvSqrt::operator()(saturated(x));
    }
    template <class Real>
    Real mass_cubed(const FoldedMass<Real>& mass, Real x) const {
        return PortableInvSqrt::mass_cubed(mass, saturated(x));
    }
    template <class Real>
    Real cubed(Real x) const {
        return PortableInvSqrt::cubed(saturated(x));
    }
};

}  // namespace nbody
