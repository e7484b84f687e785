// The host references used by verify (double for float32 workloads, long double for float64
// ones) and the per-body loops serial.reference shares with them: the same algorithm, templated on
// the dimension (workload_dispatch.hpp's dispatch_dim picks it from the state's).
#include <cstdint>

#include "nbody/reference.hpp"
#include "nbody/workload_dispatch.hpp"

namespace nbody {

namespace {
template <int Dim, class Real>
void pulls_of_dim(const BodiesT<Real>& b, Real eps2, std::vector<std::vector<Real>>& pull, bool parallel, SumOrder order) {
    const auto n = static_cast<std::int64_t>(b.size());
#pragma omp parallel for schedule(static) if (parallel)
    for (std::int64_t i = 0; i < n; ++i) {
        const Vec<Real, Dim> sum = host_pull_on<Dim>(b, static_cast<std::size_t>(i), eps2, order);
        for (int k = 0; k < Dim; ++k) pull[k][i] = sum[k];
    }
}

// Calls step(p, v, a) on every body with its Vec views, then stores p and v back.
template <int Dim, class Real, class Step>
void for_each_body(BodiesT<Real>& b, const std::vector<std::vector<Real>>& pull, Step step) {
    for (std::size_t i = 0; i < b.size(); ++i) {
        Vec<Real, Dim> p, v, a;
        for (int k = 0; k < Dim; ++k) {
            p[k] = b.position(k)[i];
            v[k] = b.velocity(k)[i];
            a[k] = pull[k][i];
        }
        step(p, v, a);
        for (int k = 0; k < Dim; ++k) {
            b.position(k)[i] = p[k];
            b.velocity(k)[i] = v[k];
        }
    }
}
}  // namespace

template <class Real>
void host_pulls(const BodiesT<Real>& b, Real eps2, std::vector<std::vector<Real>>& pull, bool parallel, SumOrder order) {
    pull.resize(static_cast<std::size_t>(b.dim));
    for (auto& axis : pull) axis.resize(b.size());
    dispatch_dim(b.dim, [&]<int Dim>() { pulls_of_dim<Dim>(b, eps2, pull, parallel, order); });
}

template <class Real>
void host_advance_before_force(BodiesT<Real>& b, const std::vector<std::vector<Real>>& pull, Integrator integrator,
                               Real G, Real dt) {
    if (integrator == Integrator::euler) return;  // nothing before the force (and no pull yet)
    auto step = [&](auto& p, auto& v, const auto& a) { advance_before_force(integrator, p, v, a, G, dt); };
    dispatch_dim(b.dim, [&]<int Dim>() { for_each_body<Dim>(b, pull, step); });
}

template <class Real>
void host_advance_after_force(BodiesT<Real>& b, const std::vector<std::vector<Real>>& pull, Integrator integrator,
                              Real G, Real dt) {
    auto step = [&](auto& p, auto& v, const auto& a) { advance_after_force(integrator, p, v, a, G, dt); };
    dispatch_dim(b.dim, [&]<int Dim>() { for_each_body<Dim>(b, pull, step); });
}

std::vector<float> normalised_map(const std::vector<std::int64_t>& counts, std::size_t n, int d) {
    const float scale = activity_scale(n, d);
    std::vector<float> map(counts.size());
    for (std::size_t c = 0; c < counts.size(); ++c) map[c] = static_cast<float>(counts[c]) * scale;
    return map;
}

template <class Real>
void reference_advance(BodiesT<Real>& state, const PhysicsConstants& constants, Integrator integrator, int steps,
                       SumOrder order) {
    const Real eps2 = static_cast<Real>(constants.eps2());
    const Real G = static_cast<Real>(constants.G), dt = static_cast<Real>(constants.dt);
    std::vector<std::vector<Real>> pull;
    if (needs_initial_pull(integrator) && steps > 0) host_pulls(state, eps2, pull, true, order);
    for (int s = 0; s < steps; ++s) {
        host_advance_before_force(state, pull, integrator, G, dt);
        host_pulls(state, eps2, pull, true, order);
        host_advance_after_force(state, pull, integrator, G, dt);
    }
}

template <class Real>
std::vector<std::vector<Real>> reference_accelerations(const BodiesT<Real>& state, const PhysicsConstants& constants,
                                                       const std::vector<std::size_t>& bodies, SumOrder order) {
    const auto count = static_cast<std::int64_t>(bodies.size());
    const Real eps2 = static_cast<Real>(constants.eps2()), G = static_cast<Real>(constants.G);
    std::vector<std::vector<Real>> acceleration(static_cast<std::size_t>(state.dim), std::vector<Real>(bodies.size()));
    dispatch_dim(state.dim, [&]<int Dim>() {
#pragma omp parallel for schedule(static)
        for (std::int64_t s = 0; s < count; ++s) {
            const auto pull = host_pull_on<Dim>(state, bodies[s], eps2, order);
            for (int k = 0; k < Dim; ++k) acceleration[k][s] = G * pull[k];
        }
    });
    return acceleration;
}

#define NBODY_INSTANTIATE_HOST(Real)                                                                               \
    template void host_pulls<Real>(const BodiesT<Real>&, Real, std::vector<std::vector<Real>>&, bool, SumOrder);     \
    template void host_advance_before_force<Real>(BodiesT<Real>&, const std::vector<std::vector<Real>>&, Integrator, \
                                                  Real, Real);                                                     \
    template void host_advance_after_force<Real>(BodiesT<Real>&, const std::vector<std::vector<Real>>&, Integrator,  \
                                                 Real, Real);
NBODY_INSTANTIATE_HOST(float)
NBODY_INSTANTIATE_HOST(double)
NBODY_INSTANTIATE_HOST(long double)

template void reference_advance<float>(BodiesT<float>&, const PhysicsConstants&, Integrator, int, SumOrder);
template void reference_advance<double>(BodiesT<double>&, const PhysicsConstants&, Integrator, int, SumOrder);
template void reference_advance<long double>(BodiesT<long double>&, const PhysicsConstants&, Integrator, int, SumOrder);
template std::vector<std::vector<float>> reference_accelerations<float>(const BodiesT<float>&, const PhysicsConstants&,
                                                                        const std::vector<std::size_t>&, SumOrder);
template std::vector<std::vector<double>> reference_accelerations<double>(const BodiesT<double>&,
                                                                          const PhysicsConstants&,
                                                                          const std::vector<std::size_t>&, SumOrder);
template std::vector<std::vector<long double>> reference_accelerations<long double>(
    const BodiesT<long double>&, const PhysicsConstants&, const std::vector<std::size_t>&, SumOrder);

}  // namespace nbody
