// kokkos.simd: a host variant written for vector units in portable Kokkos C++ (no intrinsics, no
// SIMD types, so it builds with Kokkos 3.4 as with 4.x). A RangePolicy work item owns a group of
// kLanes consecutive bodies (128 to 256 bytes per axis: kGroupBytes);
// for each j body, read once as scalars, a fixed-length loop over the group's lanes does the
// interaction, and that loop is what GCC and Clang vectorise: lanes are independent, so no sum is
// reordered and no horizontal reduction is needed. m_j |d|^-3 is computed with standard
// operations, the mass folded into the refinement's coefficients (nbody/inv_sqrt.hpp). Host
// spaces only: on the GPU the other variants are the mapping.
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "bound_flag.hpp"
#include "kokkos_simulation.hpp"
#include "nbody/registry.hpp"
#include "nbody/vector_lanes.hpp"
#include "nbody/foldable_masses.hpp"
#include "nbody/inv_sqrt.hpp"

namespace nbody {
namespace kokkos {

template <class Space, class Real>
using FoldedMasses = Kokkos::View<PortableInvSqrt::FoldedMass<Real>*, typename Space::memory_space>;

// The pulls of every body: first each mass folded into the coefficients of PortableInvSqrt's
// refinement (once per body, not per interaction), then each work item takes one group of kLanes
// bodies (the last group's missing lanes sit at the origin and are not stored). The fold also flags
// a coordinate beyond overflow_free_bound: only then does the lane loop saturate r^2 (one min per
// interaction, about 1/17 of float32's vector operations). Host lambdas, not KOKKOS_LAMBDA: the
// variant is registered for host spaces only.
template <class Space, class Real, int Dim>
void simd_pulls(Dispatch<Space>& dispatch, DeviceAxes<Space, Real, Dim> p, DeviceReals<Space, Real> m,
                FoldedMasses<Space, Real> folded, BoundFlag<Space> overflow, DeviceAxes<Space, Real, Dim> pull,
                int n, Real eps2) {
    const Real bound = overflow_free_bound<Real, Dim>(eps2);
    dispatch.parallel_for("nbody::kokkos::simd::clear_flag", Kokkos::RangePolicy<Space>(dispatch.space(), 0, 1),
                          ClearBoundFlag<Space>{overflow});
    dispatch.parallel_for("nbody::kokkos::simd::fold", Kokkos::RangePolicy<Space>(dispatch.space(), 0, n),
                          [=](const int j) {
                              folded(j) = PortableInvSqrt::fold(m(j));
                              flag_beyond_bound(overflow, load(p, j), bound);
                          });
    constexpr int lanes = kLanes<Real, Dim>;
    const int groups = (n + lanes - 1) / lanes;
    // One group per chunk: a group is lanes x N interactions, and there are only N / lanes of them
    // (2731 at N = 65536 in 2D float64). Kokkos' automatic chunk (8 there) is passed to OpenMP's
    // static schedule by every compiler but GCC, and 342 chunks of 8 on 16 threads leave 6 threads
    // 3 % more work than the others; chunks of one leave at most one group more.
    dispatch.parallel_for(
        "nbody::kokkos::simd", Kokkos::RangePolicy<Space>(dispatch.space(), 0, groups, Kokkos::ChunkSize(1)),
        [=](const int group) {
            const int first = group * lanes;
            const int count = n - first < lanes ? n - first : lanes;
            Real pi[Dim][lanes], sum[Dim][lanes];
            for (int k = 0; k < Dim; ++k)
                for (int l = 0; l < lanes; ++l) {
                    pi[k][l] = l < count ? p[k](first + l) : Real(0);
                    sum[k][l] = Real(0);
                }
            const auto sum_over_j = [&](const auto inv_sqrt) {
                for (int j = 0; j < n; ++j) {
                    const Vec<Real, Dim> pj = load(p, j);
                    const PortableInvSqrt::FoldedMass<Real>& mj = folded(j);  // read in place, not copied
                    for (int l = 0; l < lanes; ++l) {  // the vectorised loop
                        Vec<Real, Dim> body, a;
                        for (int k = 0; k < Dim; ++k) {
                            body[k] = pi[k][l];
                            a[k] = sum[k][l];
                        }
                        accumulate_pull(body, pj, mj, eps2, a, inv_sqrt);
                        for (int k = 0; k < Dim; ++k) sum[k][l] = a[k];
                    }
                }
            };
            // Host code: with_hardware_or_portable_inv_sqrt's GPU branch would compile this folded-mass sum for InvSqrt.
            if (overflow() == 0)
                sum_over_j(PortableInvSqrt{});
            else
                sum_over_j(SaturatedPortableInvSqrt{});
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
        if (folded_masses_.extent(0) != static_cast<std::size_t>(this->n()))
            folded_masses_ = FoldedMasses<Space, Real>(
                Kokkos::view_alloc(Kokkos::WithoutInitializing, "nbody::kokkos::simd::folded_masses"), this->n());
        simd_pulls(this->dispatch(), this->positions(), this->masses(), folded_masses_, overflow_, this->pulls(),
                   this->n(), this->eps2());
    }

    FoldedMasses<Space, Real> folded_masses_;
    BoundFlag<Space> overflow_{"nbody::kokkos::simd::overflow"};
};

}  // namespace kokkos

void register_kokkos_simd(Registry& registry) {
    kokkos::for_each_space([&](auto tag) {
        using Space = typename decltype(tag)::type;
        if constexpr (!kokkos::kRunsOnGpu<Space>)
            registry.add(kokkos::describe_variant<Space, kokkos::Simd>(
                "simd",
                "RangePolicy over groups of 128-256 bytes of bodies, a lane loop the compiler vectorises, m_j |d|^-3 "
                "from standard operations (bit estimate + fitted polynomial, the mass folded into its coefficients)",
                {},
                // no GPU space; lowest measured @openmp 0.18 built for the host's ISA
                // (results/h100-project-kokkos.txt)
                {.gpu = 0.0, .host = 0.27},  // @openmp reached 0.23-0.33 (16 cores), 0.45 (2)
                // each lane one body, j in index order
                {.gpu = Reproducibility::bitwise, .host = Reproducibility::bitwise}));
    });
}

}  // namespace nbody
