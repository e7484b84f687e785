// kokkos.simd: a host variant written for vector units in portable Kokkos C++ (no intrinsics, no
// SIMD types, so it builds with Kokkos 3.4 as with 4.x). A RangePolicy work item owns a group of
// kLanes<Real> consecutive bodies (64 bytes per axis: one AVX-512 vector, two AVX2, four SSE);
// for each j body, read once as scalars, a fixed-length loop over the group's lanes does the
// interaction, and that loop is what GCC and Clang vectorise: lanes are independent, so no sum is
// reordered and no horizontal reduction is needed. The reciprocal square root is computed with
// standard operations (PortableInvSqrt), because the compilers' own 1/sqrt under the math flags is
// not the same code on every compiler and width (docs/performance-kokkos.md, issue 16). Host
// spaces only: on the GPU the other variants are the mapping.
#include <bit>
#include <cstdint>
#include <string>
#include <type_traits>

#include "kokkos_simulation.hpp"
#include "nbody/model_registration.hpp"

namespace nbody {
namespace kokkos {

// Bodies per work item: 64 bytes of each axis.
template <class Real>
inline constexpr int kLanes = 64 / static_cast<int>(sizeof(Real));

// 1/sqrt(x) from the bits of x and multiplications only, so that a vectorising compiler turns it
// into integer and FMA vector instructions on any ISA. The estimate halves the exponent with one
// integer shift and subtraction (the "magic constant" estimate); the first refinement is a Newton
// step with coefficients fitted for that estimate (Walczyk, Moroz, Cieśliński 2021, InvSqrt3:
// 0x5F1FFFF9, 0.703952253, 2.38924456; max relative error 6.5e-4), and the second a Newton step
// with its factor `a` folded in (u (3a/2 - a^3 x u^2 / 2) = y (3/2 - x y^2 / 2) for y = a u):
// 8.3e-7 in float32, the level of the 14-bit hardware estimate plus one Newton step. float64 (full
// double accuracy, SPEC §2): the same constant shifted to the double exponent layout and two more
// Newton steps (6.5e-4 -> 1.2e-6 -> 2e-12 -> below rounding; 2.7e-16 measured).
struct PortableInvSqrt {
    template <class Real>
    Real operator()(Real x) const {
        using Bits = std::conditional_t<std::is_same_v<Real, float>, std::uint32_t, std::uint64_t>;
        constexpr Bits magic = static_cast<Bits>(std::is_same_v<Real, float> ? 0x5F1FFFF9ull : 0x5FE3FFFF20000000ull);
        constexpr Real a = Real(0.703952253), b = Real(2.38924456);
        const Real y0 = std::bit_cast<Real>(static_cast<Bits>(magic - (std::bit_cast<Bits>(x) >> 1)));
        const Real u = y0 * (b - x * y0 * y0);  // 1/sqrt(x) / a
        const Real half_a3_x = (Real(0.5) * a * a * a) * x;
        Real y = u * (Real(1.5) * a - half_a3_x * (u * u));
        if constexpr (std::is_same_v<Real, double>) {
            const Real half_x = Real(0.5) * x;
            for (int step = 0; step < 2; ++step) y = y * (Real(1.5) - half_x * (y * y));
        }
        return y;
    }
};

// The pulls of every body: each work item takes one group of kLanes bodies (the last group's
// missing lanes sit at the origin and are not stored). A host lambda, not KOKKOS_LAMBDA: the
// variant is registered for host spaces only.
template <class Space, class Real, int Dim>
void simd_pulls(Dispatch<Space>& dispatch, DeviceAxes<Space, Real, Dim> p, DeviceReals<Space, Real> m,
                DeviceAxes<Space, Real, Dim> pull, int n, Real eps2) {
    constexpr int lanes = kLanes<Real>;
    const int groups = (n + lanes - 1) / lanes;
    dispatch.parallel_for(
        "nbody::kokkos::simd", Kokkos::RangePolicy<Space>(dispatch.space(), 0, groups), [=](const int group) {
            const int first = group * lanes;
            const int count = n - first < lanes ? n - first : lanes;
            Real pi[Dim][lanes], sum[Dim][lanes];
            for (int k = 0; k < Dim; ++k)
                for (int l = 0; l < lanes; ++l) {
                    pi[k][l] = l < count ? p[k](first + l) : Real(0);
                    sum[k][l] = Real(0);
                }
            for (int j = 0; j < n; ++j) {
                const Vec<Real, Dim> pj = load(p, j);
                const Real mj = m(j);
                for (int l = 0; l < lanes; ++l) {  // the vectorised loop
                    Vec<Real, Dim> body, a;
                    for (int k = 0; k < Dim; ++k) {
                        body[k] = pi[k][l];
                        a[k] = sum[k][l];
                    }
                    accumulate_pull(body, pj, mj, eps2, a, PortableInvSqrt{});
                    for (int k = 0; k < Dim; ++k) sum[k][l] = a[k];
                }
            }
            for (int k = 0; k < Dim; ++k)
                for (int l = 0; l < count; ++l) pull[k](first + l) = sum[k][l];
        });
}

template <class Space, class Real, int Dim>
class Simd final : public KokkosSimulation<Space, Real, Dim> {
public:
    using KokkosSimulation<Space, Real, Dim>::KokkosSimulation;

private:
    void compute_pulls() override {
        simd_pulls(this->dispatch(), this->positions(), this->masses(), this->pulls(), this->n(), this->eps2());
    }
};

}  // namespace kokkos

void register_kokkos_simd(Registry& registry) {
    kokkos::for_each_space([&](auto tag) {
        using Space = typename decltype(tag)::type;
        if constexpr (!kokkos::kRunsOnGpu<Space>)
            registry.add(kokkos::describe_variant<Space, kokkos::Simd>(
                "simd",
                "RangePolicy over groups of 64 bytes of bodies, a lane loop the compiler vectorises, the "
                "reciprocal square root from standard operations (bit estimate + Newton)",
                {}));
    });
}

}  // namespace nbody
