#pragma once
// kokkos.simd's reciprocal square root: 1/sqrt(x) from the bits of x and multiply-adds only, so that
// a vectorising compiler turns it into integer and FMA vector instructions on any ISA (the
// compilers' own 1/sqrt under the math flags is not the same code on every compiler and width:
// docs/performance-kokkos.md, issue 16). No Kokkos, no intrinsics: portable C++20.
#include <bit>
#include <cstdint>
#include <type_traits>

namespace nbody::kokkos {

// The estimate y0 halves the exponent with one integer shift and subtraction (the "magic constant"
// 0x5F3759DF, and its float64 counterpart); u = x y0^2 then lies in [0.9324, 1.0692] for every
// positive normal x, and x^(-1/2) = y0 u^(-1/2), x^(-3/2) = y0^3 u^(-3/2), each power of u from a
// polynomial in t = u - c fitted for the least largest relative error (Lawson's iteration).
// - operator(): x^(-1/2). float32: a cubic, 8 vector operations, 9.0e-7 over every float in [1, 4),
//   which covers every exponent pair; float64 (full double accuracy, SPEC §2) adds one third-order
//   step, y (1 - e/2 + 3e^2/8) with e = x y^2 - 1: 2.1e-16.
// - mass_cubed(fold(m), x): m x^(-3/2), what the interaction uses (physics.hpp's mass_over_cube),
//   with the mass folded into the last polynomial's coefficients once per body j, so the
//   interaction has no multiply by m. float32: y0^3 times a quartic fitted to u^(-3/2) (2.5e-7 in
//   exact arithmetic, 4.7e-7 in float32: more accurate than the cube of operator(), 2.8e-6, for
//   the same 10 operations, the mass's multiply included there). float64: the third-order step
//   taken on the cube of operator()'s cubic, y^3 (1 - 3e/2 + 15e^2/8), its coefficients times m.
// tests/test_kokkos.cpp checks every bound.
struct PortableInvSqrt {
    // A body's mass, folded into the coefficients mass_cubed evaluates.
    template <class Real>
    struct FoldedMass {
        Real w[std::is_same_v<Real, float> ? 5 : 3];
    };

    // float32: u^(-3/2) as a quartic in t = u - kQuarticCentre (coefficients of t^0 ... t^4).
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

    template <class Real>
    Real mass_cubed(const FoldedMass<Real>& mass, Real x) const {
        const Real* w = mass.w;
        if constexpr (std::is_same_v<Real, double>) {
            const Real y = estimate(x);
            const Real y2 = y * y;
            const Real e = x * y2 - Real(1);
            return (y2 * y) * ((w[2] * e + w[1]) * e + w[0]);
        } else {
            const Real y0 = bit_estimate(x);
            const Real y0_2 = y0 * y0;
            const Real t = x * y0_2 - kQuarticCentre;
            return (y0_2 * y0) * ((((w[4] * t + w[3]) * t + w[2]) * t + w[1]) * t + w[0]);
        }
    }

private:
    // About 3.4 % from x^(-1/2): the exponent halved, the mantissa's logarithm linear.
    template <class Real>
    static Real bit_estimate(Real x) {
        static_assert(std::is_same_v<Real, float> || std::is_same_v<Real, double>);
        using Bits = std::conditional_t<std::is_same_v<Real, float>, std::uint32_t, std::uint64_t>;
        constexpr Bits magic = static_cast<Bits>(std::is_same_v<Real, float> ? 0x5F3759DFull : 0x5FE6EB50C7B537A9ull);
        return std::bit_cast<Real>(static_cast<Bits>(magic - (std::bit_cast<Bits>(x) >> 1)));
    }

    // The bit estimate refined by the fitted cubic: 7.5e-7 (float64 arithmetic), 9.0e-7 (float32).
    template <class Real>
    static Real estimate(Real x) {
        const Real y0 = bit_estimate(x);
        const Real tau = x * (y0 * y0) - Real(1.000775);
        const Real q = ((Real(-0.31305976) * tau + Real(0.375552827)) * tau + Real(-0.499417742)) * tau +
                       Real(0.999611977);
        return y0 * q;
    }
};

}  // namespace nbody::kokkos
