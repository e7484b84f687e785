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
// 0x5F3759DF, and its float64 counterpart); t = x y0^2 then lies in [0.9324, 1.0692] for every
// positive normal x, and 1/sqrt(x) = y0 t^(-1/2) with t^(-1/2) from a cubic in t - 1.000775 whose
// coefficients were fitted for the least largest relative error (Lawson's iteration: 7.5e-7).
// 8 vector operations: 9.0e-7 largest relative error in float32 over every float in [1, 4), which
// covers every exponent pair (the level of the 14-bit hardware estimate plus one Newton step; the
// two Newton steps this replaces took 10 operations for 8.3e-7). float64 (full double accuracy,
// SPEC §2) adds one third-order step, y (1 - e/2 + 3e^2/8) with e = x y^2 - 1: 2.1e-16 (5
// operations; the two Newton steps it replaces took 7). `cubed` gives x^(-3/2), what the
// interaction uses (physics.hpp's inv_sqrt_cubed): in float64 the third-order step is taken on the
// cube itself, y^3 (1 - 3e/2 + 15e^2/8), one operation fewer than refining y and cubing it.
// tests/test_kokkos.cpp checks every bound.
struct PortableInvSqrt {
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
    Real cubed(Real x) const {
        if constexpr (std::is_same_v<Real, double>) {
            const Real y = estimate(x);
            const Real y2 = y * y;
            const Real e = x * y2 - Real(1);
            const Real y3 = y2 * y;
            return (y3 * e) * (Real(1.875) * e - Real(1.5)) + y3;
        } else {
            const Real y = estimate(x);
            return y * y * y;
        }
    }

private:
    // The bit estimate refined by the fitted cubic: 7.5e-7 (float64 arithmetic), 9.0e-7 (float32).
    template <class Real>
    static Real estimate(Real x) {
        static_assert(std::is_same_v<Real, float> || std::is_same_v<Real, double>);
        using Bits = std::conditional_t<std::is_same_v<Real, float>, std::uint32_t, std::uint64_t>;
        constexpr Bits magic = static_cast<Bits>(std::is_same_v<Real, float> ? 0x5F3759DFull : 0x5FE6EB50C7B537A9ull);
        const Real y0 = std::bit_cast<Real>(static_cast<Bits>(magic - (std::bit_cast<Bits>(x) >> 1)));
        const Real tau = x * (y0 * y0) - Real(1.000775);
        const Real q = ((Real(-0.31305976) * tau + Real(0.375552827)) * tau + Real(-0.499417742)) * tau +
                       Real(0.999611977);
        return y0 * q;
    }
};

}  // namespace nbody::kokkos
