#pragma once
// Host state, structure of arrays: positions, velocities, masses. z and vz are used (sized N) in
// 3D only and empty in 2D, so 2D code never touches them.
#include <cstddef>
#include <variant>
#include <vector>

#include "nbody/workload.hpp"

namespace nbody {

template <class Real>
struct BodiesT {
    using real_type = Real;
    int dim = 2;
    std::vector<Real> x, y, z, vx, vy, vz, m;

    BodiesT() = default;
    explicit BodiesT(std::size_t n, int dimension = 2)
        : dim(dimension), x(n), y(n), z(dimension == 3 ? n : 0), vx(n), vy(n), vz(dimension == 3 ? n : 0), m(n) {}
    std::size_t size() const { return x.size(); }

    // Position and velocity components 0..dim-1, in the order x, y, z.
    std::vector<Real>& position(int axis) { return axis == 0 ? x : axis == 1 ? y : z; }
    const std::vector<Real>& position(int axis) const { return axis == 0 ? x : axis == 1 ? y : z; }
    std::vector<Real>& velocity(int axis) { return axis == 0 ? vx : axis == 1 ? vy : vz; }
    const std::vector<Real>& velocity(int axis) const { return axis == 0 ? vx : axis == 1 ? vy : vz; }

    template <class Other>
    static BodiesT converted_from(const BodiesT<Other>& other) {
        BodiesT out;
        out.dim = other.dim;
        auto copy = [](std::vector<Real>& to, const std::vector<Other>& from) { to.assign(from.begin(), from.end()); };
        copy(out.x, other.x);
        copy(out.y, other.y);
        copy(out.z, other.z);
        copy(out.vx, other.vx);
        copy(out.vy, other.vy);
        copy(out.vz, other.vz);
        copy(out.m, other.m);
        return out;
    }
};

using Bodies = BodiesT<float>;
using Bodies64 = BodiesT<double>;

// A state in the workload's precision: what the harness hands to and gets back from a variant.
using HostState = std::variant<BodiesT<float>, BodiesT<double>>;

// f.template operator()<Real>() with Real float (fp32) or double (fp64): a precision as a type, for
// HostState's alternatives (make_host_state) and every model's Simulation<Real>
// (workload_dispatch.hpp).
template <class F>
decltype(auto) dispatch_precision(Precision precision, F&& f) {
    if (precision == Precision::fp64) return f.template operator()<double>();
    return f.template operator()<float>();
}

// The state `make` builds in `precision`: make.template operator()<Real>(), a BodiesT<Real>.
template <class Make>
HostState make_host_state(Precision precision, Make&& make) {
    return dispatch_precision(precision, [&]<class Real>() -> HostState { return make.template operator()<Real>(); });
}

inline std::size_t state_size(const HostState& state) {
    return std::visit([](const auto& b) { return b.size(); }, state);
}
inline int state_dim(const HostState& state) {
    return std::visit([](const auto& b) { return b.dim; }, state);
}
inline Precision state_precision(const HostState& state) {
    return std::holds_alternative<BodiesT<float>>(state) ? Precision::fp32 : Precision::fp64;
}

// The state rounded (or exactly widened) to `precision`.
template <class Real>
HostState state_in_precision(const BodiesT<Real>& source, Precision precision) {
    return make_host_state(precision, [&]<class To>() { return BodiesT<To>::converted_from(source); });
}

}  // namespace nbody
