// omp.edge_sharing: Newton's third law (the published 2D tiling study, §5.2.2). Each pair i < j is computed once
// and applied to both bodies, each weighted by the other's mass. Rows are taken a block at a time
// (as many rows as vector lanes); block b holds about L(N - Lb) pairs, so blocks are dealt out in
// pairs (b, B-1-b) of equal work, and a static schedule over them gives every thread the same
// work. Each thread accumulates into its own buffers, merged afterwards in a fixed thread order:
// no locks, and bit-identical results for a fixed thread count.
//
// Arithmetic (the same as omp.static's, physics.hpp's accumulate_pull, in the workload's
// precision and dimension): exact 1/sqrt (sqrt and division), no estimate; every sum is
// sequential, one term at a time in a fixed order, never split into partial sums: a row's pull
// sums its pairs in increasing j, a column's opposite pulls are subtracted row by row. The pair
// loop is vectorised by hand in one 16-byte vector (SSE2, the width GCC uses for omp.static in
// the default build): L = 4 lanes of float32 or 2 of float64. A block's L rows are held in
// registers, each vector of L columns j is loaded once and serves the L rows, and the L x L pulls
// on the rows are transposed so that each row's sum takes its L terms in order in one vector add
// per column.
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "omp_simulation.hpp"

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace nbody {
namespace {

constexpr std::size_t kCacheLineBytes = 64;

// One 16-byte vector of the precision: 4 float32 or 2 float64 lanes.
template <class Real>
struct PackOf;
template <>
struct PackOf<float> {
    using type = float __attribute__((vector_size(16)));
};
template <>
struct PackOf<double> {
    using type = double __attribute__((vector_size(16)));
};
template <class Real>
using Pack = typename PackOf<Real>::type;
template <class Real>
constexpr std::int64_t kLanes = 16 / sizeof(Real);  // rows per block = lanes

template <class Real>
Pack<Real> splat(Real v) {
    Pack<Real> p;
    for (std::int64_t lane = 0; lane < kLanes<Real>; ++lane) p[lane] = v;
    return p;
}
template <class Real>
Pack<Real> load(const Real* p) {
    Pack<Real> v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
template <class Real>
void store(Real* p, Pack<Real> v) {
    std::memcpy(p, &v, sizeof v);
}

float exact_inv_sqrt(float v) { return ExactInvSqrt{}(v); }
double exact_inv_sqrt(double v) { return ExactInvSqrt{}(v); }
// Correctly rounded sqrt, then division: ExactInvSqrt per lane.
Pack<float> exact_inv_sqrt(Pack<float> v) {
#if defined(__SSE2__)
    return Pack<float>(_mm_div_ps(_mm_set1_ps(1.0f), _mm_sqrt_ps(__m128(v))));
#else
    for (int lane = 0; lane < 4; ++lane) v[lane] = ExactInvSqrt{}(v[lane]);
    return v;
#endif
}
Pack<double> exact_inv_sqrt(Pack<double> v) {
#if defined(__SSE2__)
    return Pack<double>(_mm_div_pd(_mm_set1_pd(1.0), _mm_sqrt_pd(__m128d(v))));
#else
    for (int lane = 0; lane < 2; ++lane) v[lane] = ExactInvSqrt{}(v[lane]);
    return v;
#endif
}

// The pair (i, j), written once for scalars and vectors of either precision and for 2D and 3D:
// the pull of j on i (into pull_i) and of i on j with the sign left to the caller (into pull_j).
// The factor |d|^-3 is shared; the operations are physics.hpp's accumulate_pull's, in its order.
template <int Dim, class T>
void pair_pulls(const Vec<T, Dim>& pi, T mi, const Vec<T, Dim>& pj, T mj, T eps2, Vec<T, Dim>& pull_i,
                Vec<T, Dim>& pull_j) {
    T d[Dim];
NBODY_UNROLL_AXES
    for (int k = 0; k < Dim; ++k) d[k] = pj[k] - pi[k];
    T r2 = eps2;
NBODY_UNROLL_AXES
    for (int k = Dim - 1; k >= 0; --k) r2 = d[k] * d[k] + r2;
    const T inv_r = exact_inv_sqrt(r2);
    const T inv_r3 = inv_r * inv_r * inv_r;
    const T on_i = mj * inv_r3;
    const T on_j = mi * inv_r3;
NBODY_UNROLL_AXES
    for (int k = 0; k < Dim; ++k) {
        pull_i[k] = on_i * d[k];
        pull_j[k] = on_j * d[k];
    }
}

// Rows (lanes = columns) to columns (lanes = rows), in place.
void transpose(Pack<float> (&m)[4]) {  // 8 shuffles
    const Pack<float> ab_lo = __builtin_shufflevector(m[0], m[1], 0, 4, 1, 5);
    const Pack<float> ab_hi = __builtin_shufflevector(m[0], m[1], 2, 6, 3, 7);
    const Pack<float> cd_lo = __builtin_shufflevector(m[2], m[3], 0, 4, 1, 5);
    const Pack<float> cd_hi = __builtin_shufflevector(m[2], m[3], 2, 6, 3, 7);
    m[0] = __builtin_shufflevector(ab_lo, cd_lo, 0, 1, 4, 5);
    m[1] = __builtin_shufflevector(ab_lo, cd_lo, 2, 3, 6, 7);
    m[2] = __builtin_shufflevector(ab_hi, cd_hi, 0, 1, 4, 5);
    m[3] = __builtin_shufflevector(ab_hi, cd_hi, 2, 3, 6, 7);
}
void transpose(Pack<double> (&m)[2]) {  // 2 shuffles
    const Pack<double> lo = __builtin_shufflevector(m[0], m[1], 0, 2);
    const Pack<double> hi = __builtin_shufflevector(m[0], m[1], 1, 3);
    m[0] = lo;
    m[1] = hi;
}

// The step's snapshot: positions per axis and masses.
template <class Real>
struct Snapshot {
    const Real* p[3];
    const Real* m;
    std::int64_t n;

    template <int Dim>
    Vec<Real, Dim> position(std::int64_t i) const {
        Vec<Real, Dim> v;
        for (int k = 0; k < Dim; ++k) v[k] = p[k][i];
        return v;
    }
};

template <class Real>
class OmpEdgeSharing final : public omp::OmpSimulation<Real> {
public:
    OmpEdgeSharing(const Problem& problem, const TuningValues& tuning)
        : omp::OmpSimulation<Real>(problem, tuning),
          stride_((problem.n + kRealsPerCacheLine - 1) / kRealsPerCacheLine * kRealsPerCacheLine) {
        for (int k = 0; k < problem.workload.dim; ++k)
            thread_pull_[k].resize(stride_ * static_cast<std::size_t>(this->threads()));
    }

private:
    static constexpr std::size_t kRealsPerCacheLine = kCacheLineBytes / sizeof(Real);
    static constexpr std::int64_t L = kLanes<Real>;
    using P = Pack<Real>;

    void compute_pulls(omp::AxisPulls<Real>& pull) override {
        if (this->dim() == 3)
            pulls_of<3>(pull);
        else
            pulls_of<2>(pull);
    }

    template <int Dim>
    void pulls_of(omp::AxisPulls<Real>& pull) {
        const BodiesT<Real>& b = this->bodies();
        const Snapshot<Real> snap{{b.x.data(), b.y.data(), Dim == 3 ? b.z.data() : nullptr}, b.m.data(),
                                  static_cast<std::int64_t>(b.size())};
        const std::int64_t n = snap.n;
        const std::int64_t blocks = n / L;                  // full blocks; the last N mod L rows go alone
        const std::int64_t block_pairs = (blocks + 1) / 2;  // the middle block of an odd count alone
        const int thread_count = this->threads();
        const std::size_t offset = static_cast<std::size_t>(omp_get_thread_num()) * stride_;
        Real* mine[Dim];
        for (int k = 0; k < Dim; ++k) {
            mine[k] = thread_pull_[k].data() + offset;
            std::fill(mine[k], mine[k] + n, Real(0));
        }
#pragma omp for schedule(static)
        for (std::int64_t k = 0; k < std::max<std::int64_t>(block_pairs, 1); ++k) {
            if (k < block_pairs) {
                add_block_pulls<Dim>(snap, k * L, mine);
                if (blocks - 1 - k != k) add_block_pulls<Dim>(snap, (blocks - 1 - k) * L, mine);
            }
            if (k == 0)  // the last rows (fewer than L pairs each)
                for (std::int64_t i = blocks * L; i < n; ++i) add_row_pulls<Dim>(snap, i, mine);
        }
#pragma omp for schedule(static)
        for (std::int64_t i = 0; i < n; ++i) {
            for (int k = 0; k < Dim; ++k) {
                Real sum = 0;
                for (int t = 0; t < thread_count; ++t)
                    sum += thread_pull_[k][static_cast<std::size_t>(t) * stride_ + i];
                pull[k][i] = sum;
            }
        }
    }

    // The pairs (i, j > i) of rows i0..i0+L-1: the pulls on the rows summed per row in increasing
    // j and added to acc[.][i] at the end; the opposite pulls subtracted from acc[.][j] row by row.
    template <int Dim>
    void add_block_pulls(const Snapshot<Real>& b, std::int64_t i0, Real* const (&acc)[Dim]) const {
        const Real eps2 = this->eps2();
        const std::int64_t n = b.n;
        Vec<Real, Dim> row[L] = {};
        // Pairs inside the block first (their j are the smallest).
        for (std::int64_t r = 0; r < L; ++r)
            for (std::int64_t j = i0 + r + 1; j < i0 + L; ++j) add_pair<Dim>(b, i0 + r, j, eps2, row[r], acc);
        Vec<P, Dim> pi[L];
        P mi[L];
        for (std::int64_t r = 0; r < L; ++r) {
            for (int k = 0; k < Dim; ++k) pi[r][k] = splat(b.p[k][i0 + r]);
            mi[r] = splat(b.m[i0 + r]);
        }
        const P eps2v = splat(eps2);
        P sum[Dim];  // lanes = the block's rows
        for (int k = 0; k < Dim; ++k)
            for (std::int64_t r = 0; r < L; ++r) sum[k][r] = row[r][k];
        const Real* p[Dim];  // locals: not reloaded after the stores
        Real* a[Dim];
        for (int k = 0; k < Dim; ++k) {
            p[k] = b.p[k];
            a[k] = acc[k];
        }
        const Real* m = b.m;
        std::int64_t j = i0 + L;
        for (; j + L <= n; j += L) {
            Vec<P, Dim> pj, acc_j;
            for (int k = 0; k < Dim; ++k) {
                pj[k] = load(p[k] + j);
                acc_j[k] = load(a[k] + j);
            }
            const P mj = load(m + j);
            P on_rows[Dim][L];  // pulls on row r, lanes = the L columns
            for (std::int64_t r = 0; r < L; ++r) {
                Vec<P, Dim> on_i, on_j;
                pair_pulls<Dim>(pi[r], mi[r], pj, mj, eps2v, on_i, on_j);
                for (int k = 0; k < Dim; ++k) {
                    on_rows[k][r] = on_i[k];
                    acc_j[k] -= on_j[k];
                }
            }
            for (int k = 0; k < Dim; ++k) {
                store(a[k] + j, acc_j[k]);
                transpose(on_rows[k]);  // now lanes = rows, one vector per column
                for (std::int64_t c = 0; c < L; ++c) sum[k] += on_rows[k][c];  // columns j.. in order
            }
        }
        for (std::int64_t r = 0; r < L; ++r)
            for (int k = 0; k < Dim; ++k) row[r][k] = sum[k][r];
        for (; j < n; ++j)  // the last N mod L columns
            for (std::int64_t r = 0; r < L; ++r) add_pair<Dim>(b, i0 + r, j, eps2, row[r], acc);
        for (std::int64_t r = 0; r < L; ++r)
            for (int k = 0; k < Dim; ++k) acc[k][i0 + r] += row[r][k];
    }

    // The pairs (i, j > i) of one row, for the last N mod L rows.
    template <int Dim>
    void add_row_pulls(const Snapshot<Real>& b, std::int64_t i, Real* const (&acc)[Dim]) const {
        const Real eps2 = this->eps2();
        Vec<Real, Dim> sum{};
        for (std::int64_t j = i + 1; j < b.n; ++j) add_pair<Dim>(b, i, j, eps2, sum, acc);
        for (int k = 0; k < Dim; ++k) acc[k][i] += sum[k];
    }

    // One scalar pair: the pull on i added to `sum`, the opposite one on j subtracted from acc.
    template <int Dim>
    static void add_pair(const Snapshot<Real>& b, std::int64_t i, std::int64_t j, Real eps2, Vec<Real, Dim>& sum,
                         Real* const (&acc)[Dim]) {
        Vec<Real, Dim> on_i, on_j;
        pair_pulls<Dim>(b.template position<Dim>(i), b.m[i], b.template position<Dim>(j), b.m[j], eps2, on_i, on_j);
        for (int k = 0; k < Dim; ++k) {
            sum[k] += on_i[k];
            acc[k][j] -= on_j[k];
        }
    }

    std::size_t stride_;  // per-thread buffer length, N rounded up to a cache line
    omp::AxisPulls<Real> thread_pull_;  // per axis: threads x stride_
};

}  // namespace

void register_omp_edge_sharing(Registry& registry) {
    omp::add_omp_variant<OmpEdgeSharing>(registry, "omp.edge_sharing",
                                         "each pair once, applied to both bodies; blocks of rows, hand-vectorised in "
                                         "16-byte vectors, exact 1/sqrt, sequential sums; heavy and light blocks "
                                         "paired; per-thread buffers merged without locks",
                                         omp::Ranks::one,  // each pair's pull goes to both blocks: see docs/scaling.md
                                         0.13,  // reached 0.10-0.20 (16 cores), 0.22 (2)
                                         // the per-thread buffers' sum follows the thread count
                                         Reproducibility::order_fixed);
}

}  // namespace nbody
