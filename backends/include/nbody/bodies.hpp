#pragma once
// Host state, structure of arrays: positions, velocities, masses.
#include <cstddef>
#include <vector>

namespace nbody {

template <class Real>
struct BodiesT {
    std::vector<Real> x, y, vx, vy, m;

    BodiesT() = default;
    explicit BodiesT(std::size_t n) : x(n), y(n), vx(n), vy(n), m(n) {}
    std::size_t size() const { return x.size(); }

    template <class Other>
    static BodiesT converted_from(const BodiesT<Other>& other) {
        BodiesT out;
        out.x.assign(other.x.begin(), other.x.end());
        out.y.assign(other.y.begin(), other.y.end());
        out.vx.assign(other.vx.begin(), other.vx.end());
        out.vy.assign(other.vy.begin(), other.vy.end());
        out.m.assign(other.m.begin(), other.m.end());
        return out;
    }
};

using Bodies = BodiesT<float>;

}  // namespace nbody
