// The Thrust model's one source, compiled once per backend (backend_<space>.*): each includes its
// system's headers, defines NBODY_THRUST_SPACE (the backend's namespace) and in it the Backend
// struct (the system's execution policy and vector type, the ids' "@space", availability, how to
// wait for the device, `run` wrapping the work of upload, advance and download: TBB's arena on the
// CPUs the process started on), then includes this file. Every backend's code lives in a
// namespace of its own, so the backends' instantiations of the same templates never meet in one binary.
//
// State, structure of arrays in the backend's memory: positions, velocities, pulls per axis,
// masses; thrust.packed also keeps (x, y, z, m) packed per body, thrust.split_j each body scaled by
// its mass (physics.hpp's scale_by_mass) and its chunks' partial pulls. One step:
// advance_before_force (leapfrog), the variant's pulls, advance_after_force, the activity map (the
// `map` tuning).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <thrust/copy.h>
#include <thrust/fill.h>
#include <thrust/for_each.h>
#include <thrust/iterator/constant_iterator.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/reduce.h>
#include <thrust/transform_reduce.h>
#include <thrust/sort.h>
#include <thrust/transform.h>

#include "nbody/errors.hpp"
#include "nbody/foldable_masses.hpp"
#include "nbody/inv_sqrt.hpp"
#include "nbody/physics.hpp"
#include "nbody/registry.hpp"
#include "nbody/variant.hpp"
#include "nbody/vector_lanes.hpp"
#include "nbody/workload_dispatch.hpp"

#if defined(__CUDA_ARCH__)
#define NBODY_THRUST_UNROLL _Pragma("unroll")
#define NBODY_THRUST_UNROLL_4 _Pragma("unroll 4")
#define NBODY_THRUST_UNROLL_BODIES _Pragma("unroll")
#elif defined(__CUDACC__)
#define NBODY_THRUST_UNROLL
#define NBODY_THRUST_UNROLL_4
#define NBODY_THRUST_UNROLL_BODIES
#else
#define NBODY_THRUST_UNROLL _Pragma("GCC unroll 8")
#define NBODY_THRUST_UNROLL_4 _Pragma("GCC unroll 4")
// thrust.split_j's loop over an item's bodies: on the host the one the compiler vectorises.
#define NBODY_THRUST_UNROLL_BODIES
#endif

namespace nbody::thrust_model::NBODY_THRUST_SPACE {

using Index = std::int64_t;

// The reciprocal square root of this model: on the GPU the hardware's (rsqrtf, one MUFU.RSQ; the
// double rsqrt is CUDA's FP64 one, which --use_fast_math leaves alone: no float32 step in float64),
// on the host the exact 1/sqrt.
struct InvSqrt {
    NBODY_HD float operator()(float v) const {
#if defined(__CUDA_ARCH__)
        return rsqrtf(v);
#else
        return 1.0f / std::sqrt(v);
#endif
    }
    NBODY_HD double operator()(double v) const {
#if defined(__CUDA_ARCH__)
        return rsqrt(v);
#else
        return 1.0 / std::sqrt(v);
#endif
    }
};

// The one interaction of this model: physics.hpp's accumulate_pull with InvSqrt.
template <class Real, int Dim>
NBODY_HD inline void interact(const Vec<Real, Dim>& pi, const Vec<Real, Dim>& pj, Real mj, Real eps2,
                              Vec<Real, Dim>& a) {
    accumulate_pull(pi, pj, mj, eps2, a, InvSqrt{});
}

// A body's position and mass in one aligned load (float4 / two double2 on the GPU).
template <class Real>
struct alignas(4 * sizeof(Real)) Packed {
    Real x, y, z, m;
};

// Body j's packed record through the GPU's read-only data cache (every thread of a warp reads the
// same j: one broadcast load).
NBODY_HD inline Packed<float> load_packed(const Packed<float>* bodies, Index j) {
#if defined(__CUDA_ARCH__)
    const float4 v = __ldg(reinterpret_cast<const float4*>(bodies) + j);
    return {v.x, v.y, v.z, v.w};
#else
    return bodies[j];
#endif
}
NBODY_HD inline Packed<double> load_packed(const Packed<double>* bodies, Index j) {
#if defined(__CUDA_ARCH__)
    const double2 xy = __ldg(reinterpret_cast<const double2*>(bodies) + 2 * j);
    const double2 zm = __ldg(reinterpret_cast<const double2*>(bodies) + 2 * j + 1);
    return {xy.x, xy.y, zm.x, zm.y};
#else
    return bodies[j];
#endif
}

// thrust.split_j's body j: physics.hpp's ScaledBody (s p_j, s, eps2 s^2), aligned so that the 2D
// record is one float4 load (two double2) and the 3D one a float4 and a float.
template <class Real, int Dim>
struct alignas(4 * sizeof(Real)) ScaledRecord {
    ScaledBody<Real, Dim> body;
};

template <class Real, int Dim>
NBODY_HD inline Vec<Real, Dim> position_of(const Packed<Real>& b) {
    Vec<Real, Dim> p;
    p[0] = b.x;
    p[1] = b.y;
    if constexpr (Dim == 3) p[2] = b.z;
    return p;
}

// One more body in `cell` (the atomic count of map=atomic).
NBODY_HD inline void count_in(int* counts, int cell) {
#if defined(__CUDA_ARCH__)
    atomicAdd(counts + cell, 1);
#else
    std::atomic_ref<int>(counts[cell]).fetch_add(1, std::memory_order_relaxed);
#endif
}

// ---- functors (the algorithms' bodies) --------------------------------------------------------

// An integrator half of physics.hpp on body i.
template <class Real, int Dim, bool BeforeForce>
struct AdvanceHalf {
    Real* position[Dim];
    Real* velocity[Dim];
    const Real* pull[Dim];
    Integrator integrator;
    Real G, dt;
    NBODY_HD void operator()(Index i) const {
        Vec<Real, Dim> p = load_axes<Dim>(position, i), v = load_axes<Dim>(velocity, i);
        const Vec<Real, Dim> a = load_axes<Dim>(pull, i);
        if constexpr (BeforeForce)
            advance_before_force(integrator, p, v, a, G, dt);
        else
            advance_after_force(integrator, p, v, a, G, dt);
        store_axes<Dim>(position, i, p);
        store_axes<Dim>(velocity, i, v);
    }
};

// thrust.naive: body i's pull summed over every j from the per-axis arrays.
template <class Real, int Dim>
struct SoaPulls {
    const Real* position[Dim];
    const Real* mass;
    Real* out[Dim];
    Index n;
    Real eps2;
    NBODY_HD void operator()(Index i) const {
        const Vec<Real, Dim> pi = load_axes<Dim>(position, i);
        Vec<Real, Dim> a{};
        for (Index j = 0; j < n; ++j) interact(pi, load_axes<Dim>(position, j), mass[j], eps2, a);
        store_axes<Dim>(out, i, a);
    }
};

// Body i's position and mass into its packed record.
template <class Real, int Dim>
struct Pack {
    const Real* position[Dim];
    const Real* mass;
    Packed<Real>* packed;
    NBODY_HD void operator()(Index i) const {
        packed[i] = {position[0][i], position[1][i], Dim == 3 ? position[Dim - 1][i] : Real(0), mass[i]};
    }
};

// thrust.packed: the pulls of `Bodies` bodies i per call, group + k * groups (neighbouring calls
// take neighbouring bodies: coalesced on the GPU), each packed j loaded once for all of them.
template <class Real, int Dim, int Bodies>
struct PackedPulls {
    const Packed<Real>* packed;
    Real* out[Dim];
    Index n, groups;
    Real eps2;
    NBODY_HD void operator()(Index group) const {
        Vec<Real, Dim> pi[Bodies], a[Bodies];
        NBODY_THRUST_UNROLL
        for (int k = 0; k < Bodies; ++k) {
            const Index i = group + k * groups;
            pi[k] = position_of<Real, Dim>(load_packed(packed, i < n ? i : n - 1));
            a[k] = Vec<Real, Dim>{};
        }
        for (Index j = 0; j < n; ++j) {
            const Packed<Real> b = load_packed(packed, j);
            const Vec<Real, Dim> pj = position_of<Real, Dim>(b);
            NBODY_THRUST_UNROLL
            for (int k = 0; k < Bodies; ++k) interact(pi[k], pj, b.m, eps2, a[k]);
        }
        NBODY_THRUST_UNROLL
        for (int k = 0; k < Bodies; ++k) {
            const Index i = group + k * groups;
            if (i < n) store_axes<Dim>(out, i, a[k]);
        }
    }
};

// thrust.split_j: body j scaled by its mass, once per step.
template <class Real, int Dim>
struct ScaleByMass {
    const Real* position[Dim];
    const Real* mass;
    ScaledRecord<Real, Dim>* scaled;
    Real eps2;
    NBODY_HD void operator()(Index j) const { scaled[j].body = scale_by_mass(load_axes<Dim>(position, j), mass[j], eps2); }
};

// thrust.split_j: the work item `item` is (group, chunk), group fastest: the pulls of `Bodies`
// bodies i, group + k * groups, from the bodies j of one chunk. Neighbouring items take
// neighbouring bodies i and the same j (coalesced, and one broadcast load of j per warp on the
// GPU). The bodies' positions and sums by axis, then body: registers on the GPU (the loop over the
// bodies unrolled), the lanes of vector registers on the host (that loop vectorised). The chunk's
// pulls go to out[axis][chunk * chunk_stride + i].
template <class Real, int Dim, int Bodies>
struct ChunkPulls {
    const Real* position[Dim];
    const ScaledRecord<Real, Dim>* scaled;
    Real* out[Dim];
    Index n, groups, chunk_length, chunk_stride;
    bool beyond_bound;  // host: a coordinate passed the position bound this step
    NBODY_HD void operator()(Index item) const {
        const Index chunk = item / groups, group = item - chunk * groups;
        const Index first = chunk * chunk_length;
        const Index end = first + chunk_length < n ? first + chunk_length : n;
        Real pi[Dim][Bodies], a[Dim][Bodies];
        NBODY_THRUST_UNROLL_BODIES
        for (int k = 0; k < Bodies; ++k) {
            const Index i = group + k * groups;
            NBODY_THRUST_UNROLL
            for (int axis = 0; axis < Dim; ++axis) {
                pi[axis][k] = position[axis][i < n ? i : n - 1];
                a[axis][k] = Real(0);
            }
        }
        // On the host the portable estimate (one FMA sequence in both precisions, no square root and
        // division per interaction), saturating r2' in a step where a coordinate passed the bound.
        with_hardware_or_portable_inv_sqrt<InvSqrt>([&] { return beyond_bound; }, [&](const auto inv_sqrt) {
            NBODY_THRUST_UNROLL_4
            for (Index j = first; j < end; ++j) {
                // The whole aligned record, so that nvcc loads it as vectors (the field alone: narrower loads).
                const ScaledRecord<Real, Dim> record = scaled[j];
                const ScaledBody<Real, Dim>& b = record.body;
                NBODY_THRUST_UNROLL_BODIES
                for (int k = 0; k < Bodies; ++k) {
                    Vec<Real, Dim> body, sum;
                    NBODY_THRUST_UNROLL
                    for (int axis = 0; axis < Dim; ++axis) {
                        body[axis] = pi[axis][k];
                        sum[axis] = a[axis][k];
                    }
                    accumulate_scaled_pull(body, b.position, b.scale, b.softening, sum, inv_sqrt);
                    NBODY_THRUST_UNROLL
                    for (int axis = 0; axis < Dim; ++axis) a[axis][k] = sum[axis];
                }
            }
            NBODY_THRUST_UNROLL_BODIES
            for (int k = 0; k < Bodies; ++k) {
                const Index i = group + k * groups;
                if (i >= n) continue;
                // The term j == i is fl(s p_i) - s p_i, a rounding error rather than an exact zero:
                // the chunk that summed it recomputes it and takes it out, once per body, not per j.
                if (i >= first && i < end) {
                    const ScaledBody<Real, Dim> own = scaled[i].body;
                    Vec<Real, Dim> body, self{};
                    NBODY_THRUST_UNROLL
                    for (int axis = 0; axis < Dim; ++axis) body[axis] = pi[axis][k];
                    accumulate_scaled_pull(body, own.position, own.scale, own.softening, self, inv_sqrt);
                    NBODY_THRUST_UNROLL
                    for (int axis = 0; axis < Dim; ++axis) a[axis][k] -= self[axis];
                }
                NBODY_THRUST_UNROLL
                for (int axis = 0; axis < Dim; ++axis) out[axis][chunk * chunk_stride + i] = a[axis][k];
            }
        });
    }
};

// |x|, and the larger of two such, a NaN winning (thrust.split_j's position bound check).
template <class Real>
struct Magnitude {
    NBODY_HD Real operator()(Real x) const { return x < 0 ? -x : x; }
};
template <class Real>
struct Larger {
    NBODY_HD Real operator()(Real a, Real b) const { return a != a || a > b ? a : b; }
};

// thrust.split_j: body i's pull, the sum of its chunks' partial pulls (chunk c's axis k at
// partial[(c * Dim + k) * n + i]: coalesced over i).
template <class Real, int Dim>
struct SumChunks {
    const Real* partial;
    Real* pull[Dim];
    Index n, chunks;
    NBODY_HD void operator()(Index i) const {
        NBODY_THRUST_UNROLL
        for (int axis = 0; axis < Dim; ++axis) {
            Real sum = partial[axis * n + i];
            for (Index c = 1; c < chunks; ++c) sum += partial[(c * Dim + axis) * n + i];
            pull[axis][i] = sum;
        }
    }
};

// map=atomic: body i counted in its cell.
template <class Real>
struct CountAtomic {
    const Real* x;
    const Real* y;
    int* counts;
    int d;
    NBODY_HD void operator()(Index i) const {
        const int cell = activity_cell(x[i], y[i], d);
        if (cell >= 0) count_in(counts, cell);
    }
};

// map=sort: body i's cell as a sort key; `cells` (past every cell) for a body outside the map.
template <class Real>
struct CellKey {
    const Real* x;
    const Real* y;
    int d;
    NBODY_HD int operator()(Index i) const {
        const int cell = activity_cell(x[i], y[i], d);
        return cell >= 0 ? cell : d * d;
    }
};

// map=atomic: cell c normalised as the reference does (count * activity_scale, float32), its count cleared.
struct NormaliseAndClear {
    int* counts;
    float* map;
    float scale;
    NBODY_HD void operator()(Index c) const {
        map[c] = static_cast<float>(counts[c]) * scale;
        counts[c] = 0;
    }
};

// map=sort: the r-th run of equal keys (cell, count) into the zeroed map.
struct ScatterRuns {
    const int* cells;
    const int* runs;
    float* map;
    int cell_count;
    float scale;
    NBODY_HD void operator()(Index r) const {
        if (cells[r] < cell_count) map[cells[r]] = static_cast<float>(runs[r]) * scale;
    }
};

// ---- the simulation ---------------------------------------------------------------------------

enum class Force { soa, packed, split_j };
enum class MapCount { atomic, sort };

// What a variant's tunings chose.
struct Options {
    std::string id;
    Force force = Force::soa;
    int bodies_per_call = 1;  // 0: the host's vector group (vector_lanes.hpp's kLanes), thrust.split_j
    long chunks = 0;  // thrust.split_j's chunks of bodies j; 0: from the device's width
    MapCount map_count = MapCount::atomic;
};

// thrust.split_j's work items: 32 per thread the device keeps resident (the GPU's SMs x threads per
// SM; the host's threads), so that the last round of blocks on the GPU is a small part of the step;
// no chunk shorter than kMinChunkLength bodies j, so that the partial pulls' traffic (Dim values per
// body and chunk, written and read once) and an item's own work stay a few percent of the step.
constexpr long kItemsPerConcurrentThread = 32;
constexpr Index kMinChunkLength = 512;

// The bodies j per chunk: from the `chunks` asked for, or the fewest chunks whose items fill the device.
inline Index chunk_length_for(Index n, int bodies_per_call, long chunks_asked, long concurrent_threads) {
    Index chunks = chunks_asked;
    if (chunks <= 0) {
        const Index groups = std::max<Index>((n + bodies_per_call - 1) / bodies_per_call, 1);
        const Index wanted = kItemsPerConcurrentThread * concurrent_threads;
        chunks = std::min((wanted + groups - 1) / groups, n / kMinChunkLength);
    }
    chunks = std::clamp<Index>(chunks, 1, std::max<Index>(n, 1));
    return std::max<Index>((n + chunks - 1) / chunks, 1);
}

template <class Vector>
auto raw(Vector& v) {
    return thrust::raw_pointer_cast(v.data());
}

template <class Real, int Dim>
class ThrustSimulation final : public SimulationOf<Real> {
public:
    template <class T>
    using Vector = typename Backend::template vector<T>;

    ThrustSimulation(const Problem& problem, const Options& options)
        : problem_(problem),
          id_(options.id),
          force_(options.force),
          bodies_per_call_(options.bodies_per_call == 0 ? kLanes<Real, Dim> : options.bodies_per_call),
          map_count_(options.map_count),
          n_(static_cast<Index>(problem.n)),
          cells_(problem.d * problem.d),
          mass_(problem.n),
          counts_(map_count_ == MapCount::atomic ? cells_ : 0, 0),
          map_(cells_, 0.0f) {
        for (int k = 0; k < Dim; ++k) {
            position_[k].resize(problem.n);
            velocity_[k].resize(problem.n);
            pull_[k].assign(problem.n, Real(0));
        }
        if (force_ == Force::packed) packed_.resize(problem.n);
        if (force_ == Force::split_j) {
            scaled_.resize(problem.n);
            chunk_length_ = chunk_length_for(n_, bodies_per_call_, options.chunks, Backend::concurrent_threads());
            if (chunks() > 1) partial_.resize(static_cast<std::size_t>(chunks() * Dim * n_));
        }
        if (map_count_ == MapCount::sort) {
            keys_.resize(problem.n);
            run_cells_.resize(problem.n);
            run_counts_.resize(problem.n);
        }
    }

    using SimulationOf<Real>::upload;
    using SimulationOf<Real>::download;

    void upload(const BodiesT<Real>& initial) override {
        if (force_ == Force::split_j) {
            require_foldable_masses(initial, problem_.constants.softening, id_, "thrust.packed");
            position_bound_ = folded_position_bound(initial, problem_.constants.eps2());
        }
        Backend::run([&] {
            for (int k = 0; k < Dim; ++k) {
                thrust::copy(initial.position(k).begin(), initial.position(k).end(), position_[k].begin());
                thrust::copy(initial.velocity(k).begin(), initial.velocity(k).end(), velocity_[k].begin());
            }
            thrust::copy(initial.m.begin(), initial.m.end(), mass_.begin());
            if (needs_initial_pull(problem_.workload.integrator)) compute_pulls();
            update_map();
        });
    }

    void advance(int steps) override {
        Backend::run([&] {
            for (int s = 0; s < steps; ++s) {
                if (problem_.workload.integrator == Integrator::leapfrog) advance_half<true>();
                compute_pulls();
                advance_half<false>();
                update_map();
            }
        });
    }

    // thrust::<system>::par algorithms return when their work is done; the CUDA backend also waits
    // for the device here, so the harness's clock never depends on that.
    void synchronize() override { Backend::synchronize(); }

    void download(BodiesT<Real>& state, std::vector<float>& activity_map) override {
        state = BodiesT<Real>(problem_.n, Dim);
        activity_map.resize(static_cast<std::size_t>(cells_));
        Backend::run([&] {
            for (int k = 0; k < Dim; ++k) {
                thrust::copy(position_[k].begin(), position_[k].end(), state.position(k).begin());
                thrust::copy(velocity_[k].begin(), velocity_[k].end(), state.velocity(k).begin());
            }
            thrust::copy(mass_.begin(), mass_.end(), state.m.begin());
            thrust::copy(map_.begin(), map_.end(), activity_map.begin());
        });
    }

private:
    Real eps2() const { return static_cast<Real>(problem_.constants.eps2()); }
    Index chunks() const { return (n_ + chunk_length_ - 1) / chunk_length_; }

    template <class F>
    void for_each_index(Index count, F f) {
        thrust::for_each(Backend::policy(), thrust::counting_iterator<Index>(0), thrust::counting_iterator<Index>(count), f);
    }

    template <bool BeforeForce>
    void advance_half() {
        AdvanceHalf<Real, Dim, BeforeForce> f;
        for (int k = 0; k < Dim; ++k) {
            f.position[k] = raw(position_[k]);
            f.velocity[k] = raw(velocity_[k]);
            f.pull[k] = raw(pull_[k]);
        }
        f.integrator = problem_.workload.integrator;
        f.G = static_cast<Real>(problem_.constants.G);
        f.dt = static_cast<Real>(problem_.constants.dt);
        for_each_index(n_, f);
    }

    void compute_pulls() {
        if (force_ == Force::soa) {
            SoaPulls<Real, Dim> f;
            for (int k = 0; k < Dim; ++k) {
                f.position[k] = raw(position_[k]);
                f.out[k] = raw(pull_[k]);
            }
            f.mass = raw(mass_);
            f.n = n_;
            f.eps2 = eps2();
            for_each_index(n_, f);
            return;
        }
        if (force_ == Force::split_j) {
            ScaleByMass<Real, Dim> scale;
            for (int k = 0; k < Dim; ++k) scale.position[k] = raw(position_[k]);
            scale.mass = raw(mass_);
            scale.scaled = raw(scaled_);
            scale.eps2 = eps2();
            for_each_index(n_, scale);
            if constexpr (!Backend::runs_on_gpu)
                if (bodies_per_call_ == kLanes<Real, Dim>) return split_j_pulls<kLanes<Real, Dim>>();
            switch (bodies_per_call_) {
                case 1: return split_j_pulls<1>();
                case 2: return split_j_pulls<2>();
                case 8: return split_j_pulls<8>();
                default: return split_j_pulls<4>();
            }
        }
        Pack<Real, Dim> pack;
        for (int k = 0; k < Dim; ++k) pack.position[k] = raw(position_[k]);
        pack.mass = raw(mass_);
        pack.packed = raw(packed_);
        for_each_index(n_, pack);
        switch (bodies_per_call_) {
            case 1: return packed_pulls<1>();
            case 2: return packed_pulls<2>();
            case 8: return packed_pulls<8>();
            default: return packed_pulls<4>();
        }
    }

    template <int Bodies>
    void packed_pulls() {
        PackedPulls<Real, Dim, Bodies> f;
        f.packed = raw(packed_);
        for (int k = 0; k < Dim; ++k) f.out[k] = raw(pull_[k]);
        f.n = n_;
        f.groups = (n_ + Bodies - 1) / Bodies;
        f.eps2 = eps2();
        for_each_index(f.groups, f);
    }

    // One chunk: its items write the pulls directly; several: partial pulls, then their sums.
    template <int Bodies>
    void split_j_pulls() {
        ChunkPulls<Real, Dim, Bodies> f;
        for (int k = 0; k < Dim; ++k) f.position[k] = raw(position_[k]);
        f.scaled = raw(scaled_);
        f.n = n_;
        f.groups = (n_ + Bodies - 1) / Bodies;
        f.chunk_length = chunk_length_;
        f.beyond_bound = !Backend::runs_on_gpu && !(largest_coordinate() <= position_bound_);
        const Index chunks = this->chunks();
        if (chunks == 1) {
            for (int k = 0; k < Dim; ++k) f.out[k] = raw(pull_[k]);
            f.chunk_stride = 0;
            for_each_index(f.groups, f);
            return;
        }
        for (int k = 0; k < Dim; ++k) f.out[k] = raw(partial_) + k * n_;
        f.chunk_stride = Dim * n_;
        for_each_index(f.groups * chunks, f);
        SumChunks<Real, Dim> sum;
        sum.partial = raw(partial_);
        for (int k = 0; k < Dim; ++k) sum.pull[k] = raw(pull_[k]);
        sum.n = n_;
        sum.chunks = chunks;
        for_each_index(n_, sum);
    }

    // The largest |coordinate| of any body (or a NaN); one reduction per axis.
    Real largest_coordinate() {
        Real largest = 0;
        for (int k = 0; k < Dim; ++k)
            largest = thrust::transform_reduce(Backend::policy(), position_[k].begin(), position_[k].end(),
                                               Magnitude<Real>{}, largest, Larger<Real>{});
        return largest;
    }

    void update_map() {
        const int d = problem_.d;
        const float scale = activity_scale(problem_.n, d);
        const Real* x = raw(position_[0]);
        const Real* y = raw(position_[1]);
        if (map_count_ == MapCount::atomic) {
            for_each_index(n_, CountAtomic<Real>{x, y, raw(counts_), d});
            for_each_index(cells_, NormaliseAndClear{raw(counts_), raw(map_), scale});
            return;
        }
        // Cells as keys, sorted; each run of equal keys is one cell's count.
        thrust::transform(Backend::policy(), thrust::counting_iterator<Index>(0), thrust::counting_iterator<Index>(n_),
                          keys_.begin(), CellKey<Real>{x, y, d});
        thrust::sort(Backend::policy(), keys_.begin(), keys_.end());
        const auto ends = thrust::reduce_by_key(Backend::policy(), keys_.begin(), keys_.end(),
                                                thrust::constant_iterator<int>(1), run_cells_.begin(), run_counts_.begin());
        const Index runs = ends.first - run_cells_.begin();
        thrust::fill(Backend::policy(), map_.begin(), map_.end(), 0.0f);
        for_each_index(runs, ScatterRuns{raw(run_cells_), raw(run_counts_), raw(map_), cells_, scale});
    }

    Problem problem_;
    std::string id_;
    Force force_;
    int bodies_per_call_;
    MapCount map_count_;
    Index n_;
    int cells_;
    Vector<Real> position_[Dim], velocity_[Dim], pull_[Dim];
    Vector<Real> mass_;
    Vector<Packed<Real>> packed_;
    Vector<ScaledRecord<Real, Dim>> scaled_;
    Index chunk_length_ = 1;
    Real position_bound_ = 0;  // thrust.split_j on the host: foldable_masses.hpp's, set at upload
    Vector<Real> partial_;  // thrust.split_j's partial pulls, chunk-major, then axis, then body
    Vector<int> counts_;
    Vector<float> map_;
    Vector<int> keys_, run_cells_, run_counts_;
};

// ---- registration -----------------------------------------------------------------------------

inline std::vector<TuningParameter> map_tuning() {
    return {{.name = "map",
             .description = "activity-map counting: atomic increments into one count per cell, or sort "
                            "(the bodies' cells sorted, counted with reduce_by_key)",
             .default_value = "atomic",
             .allowed_values = {"atomic", "sort"},
             .min_value = 0,
             .max_value = 0}};
}

inline std::unique_ptr<Simulation> make_simulation(const Problem& p, const TuningValues& t, Force force,
                                                   const std::string& id) {
    if (p.distribution.spans_ranks())
        throw UsageError(id + " runs on one rank only, asked for " + std::to_string(p.distribution.ranks()));
    Options options;
    options.id = id;
    options.force = force;
    options.map_count = t.at("map") == "sort" ? MapCount::sort : MapCount::atomic;
    options.bodies_per_call = !t.contains("bodies")      ? 1
                              : t.at("bodies") == "lanes" ? 0
                                                          : static_cast<int>(tuning_int(t, "bodies"));
    options.chunks = t.contains("chunks") ? tuning_int(t, "chunks") : 0;
    return make_for_workload<ThrustSimulation>(p, options);
}

inline TuningParameter bodies_tuning(std::string description) {
    return {.name = "bodies",
            .description = std::move(description),
            .default_value = "4",
            .allowed_values = {"1", "2", "4", "8"},
            .min_value = 0,
            .max_value = 0};
}

// What the run-time estimate assumes a variant reaches on this backend's device: VariantDescriptor's
// expected_efficiency, full_rate_bodies and step_overhead_s (0: the model's defaults).
struct ExpectedRate {
    double efficiency = 0;
    double full_rate_bodies = 0;
    double step_overhead_s = 0;
};

// thrust.naive@<space>, thrust.packed@<space> and thrust.split_j@<space>, with their expected rates.
inline void register_backend(Registry& registry, ExpectedRate naive_rate, ExpectedRate packed_rate, ExpectedRate split_j_rate) {
    const std::string space = Backend::space;
    const auto add = [&](const std::string& variant, Force force, std::string description,
                         std::vector<TuningParameter> tunings, ExpectedRate rate, Reproducibility reproducibility) {
        const std::string id = "thrust." + variant + "@" + space;
        registry.add({.id = id,
                      .backend = "thrust",
                      .execution_space = space,
                      .description = std::move(description) + " [" + Backend::description + "]",
                      .tunings = std::move(tunings),
                      .max_n = 0,
                      .runs_on_gpu = Backend::runs_on_gpu,
                      .distributed = false,
                      .workloads = WorkloadSupport::every(),
                      .availability = Backend::availability,
                      .create = [id, force](const Problem& p, const TuningValues& t) { return make_simulation(p, t, force, id); },
                      .expected_efficiency = rate.efficiency,
                      .full_rate_bodies = rate.full_rate_bodies,
                      .step_overhead_s = rate.step_overhead_s,
                      .reproducibility = reproducibility});
    };
    add("naive", Force::soa, "thrust::for_each over the bodies i, the j sum inside over the per-axis arrays",
        map_tuning(), naive_rate, Reproducibility::bitwise);  // each body's j sum in index order
    std::vector<TuningParameter> packed_tunings = map_tuning();
    packed_tunings.push_back(bodies_tuning("bodies i per functor call, each packed (x, y, z, m) body j loaded once for all of them"));
    add("packed", Force::packed,
        "thrust::for_each over groups of bodies i; packed (x, y, z, m) bodies j, on the GPU through the read-only cache",
        std::move(packed_tunings), packed_rate, Reproducibility::bitwise);
    std::vector<TuningParameter> split_j_tunings = map_tuning();
    TuningParameter split_j_bodies =
        bodies_tuning("bodies i per work item, each mass-scaled body j loaded once for all of them");
    if (!Backend::runs_on_gpu) {
        split_j_bodies.description += "; lanes: the host's vector group (64 floats or 16-24 doubles with AVX-512, "
                                      "128 bytes elsewhere), the loop over them vectorised";
        split_j_bodies.default_value = "lanes";
        split_j_bodies.allowed_values.push_back("lanes");
    }
    split_j_tunings.push_back(std::move(split_j_bodies));
    split_j_tunings.push_back({.name = "chunks",
                               .description = "chunks of the bodies j, each (group of bodies i, chunk) one work item, the "
                                              "chunks' partial pulls summed per body; 0: enough for 32 items per thread the "
                                              "device keeps resident, chunks of at least 512 bodies j",
                               .default_value = "0",
                               .allowed_values = {},
                               .min_value = 0,
                               .max_value = 4096});
    add("split_j", Force::split_j,
        "thrust::for_each over (bodies i, chunk of bodies j) items, bodies j scaled by m^-1/2, the chunks' partial pulls summed per body",
        std::move(split_j_tunings), split_j_rate,
        // the chunks (chunks=0: from the threads the device keeps resident) group each body's sum
        Reproducibility::order_fixed);
}

}  // namespace nbody::thrust_model::NBODY_THRUST_SPACE
