// omp.edge_sharing: Newton's third law (seed report 004, §5.2.2). Each pair i < j is computed once
// and applied to both bodies, each weighted by the other's mass. Rows are taken four at a time
// (a row block); block b holds about 4(N - 4b) pairs, so blocks are dealt out in pairs
// (b, B-1-b) of equal work, and a static schedule over them gives every thread the same work.
// Each thread accumulates into its own buffers, merged afterwards in a fixed thread order: no
// locks, and bit-identical results for a fixed thread count.
//
// Arithmetic (the same as omp.static's, physics.hpp's accumulate_pull): exact 1/sqrt (sqrtps and
// divps), no estimate; every sum is sequential, one term at a time in a fixed order, never split
// into partial sums: a row's pull sums its pairs in increasing j, a column's opposite pulls are
// subtracted row by row. The pair loop is vectorised by hand, 4 lanes (SSE2, the width GCC
// uses for omp.static in the default build): a block's 4 rows are held in registers, each vector
// of 4 columns j is loaded once and serves the 4 rows, and the 4 x 4 pulls on the rows are
// transposed so that each row's sum takes its 4 terms in order in one vector add per column.
// omp.static's loop (vectorised by GCC) sums one row at a time by extracting the 4 lanes.
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "omp_simulation.hpp"

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace nbody {
namespace {

constexpr std::size_t kFloatsPerCacheLine = 16;
constexpr std::int64_t kBlockRows = 4;  // rows per block = vector lanes

using F4 = float __attribute__((vector_size(16)));

F4 splat(float v) { return F4{v, v, v, v}; }
F4 load4(const float* p) {
    F4 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
void store4(float* p, F4 v) { std::memcpy(p, &v, sizeof v); }

float exact_inv_sqrt(float v) { return ExactInvSqrt{}(v); }
F4 exact_inv_sqrt(F4 v) {  // correctly rounded sqrt, then division: ExactInvSqrt per lane
#if defined(__SSE2__)
    return F4(_mm_div_ps(_mm_set1_ps(1.0f), _mm_sqrt_ps(__m128(v))));
#else
    F4 r;
    for (int lane = 0; lane < 4; ++lane) r[lane] = ExactInvSqrt{}(v[lane]);
    return r;
#endif
}

// The pair (i, j), written once for scalars and 4-lane vectors: the pull of j on i (on_i * d,
// into pull_i) and of i on j with the sign left to the caller (on_j * d, into pull_j). The factor
// |d|^-3 is shared; the operations are physics.hpp's accumulate_pull's.
template <class T>
void pair_pulls(T xi, T yi, T mi, T xj, T yj, T mj, T eps2, T& pull_i_x, T& pull_i_y, T& pull_j_x, T& pull_j_y) {
    const T dx = xj - xi;
    const T dy = yj - yi;
    const T r2 = dx * dx + (dy * dy + eps2);
    const T inv_r = exact_inv_sqrt(r2);
    const T inv_r3 = inv_r * inv_r * inv_r;
    const T on_i = mj * inv_r3;
    const T on_j = mi * inv_r3;
    pull_i_x = on_i * dx;
    pull_i_y = on_i * dy;
    pull_j_x = on_j * dx;
    pull_j_y = on_j * dy;
}

// Rows a, b, c, d (lanes = 4 columns) to columns (lanes = the 4 rows): 8 shuffles.
void transpose(F4& a, F4& b, F4& c, F4& d) {
    const F4 ab_lo = __builtin_shufflevector(a, b, 0, 4, 1, 5);
    const F4 ab_hi = __builtin_shufflevector(a, b, 2, 6, 3, 7);
    const F4 cd_lo = __builtin_shufflevector(c, d, 0, 4, 1, 5);
    const F4 cd_hi = __builtin_shufflevector(c, d, 2, 6, 3, 7);
    a = __builtin_shufflevector(ab_lo, cd_lo, 0, 1, 4, 5);
    b = __builtin_shufflevector(ab_lo, cd_lo, 2, 3, 6, 7);
    c = __builtin_shufflevector(ab_hi, cd_hi, 0, 1, 4, 5);
    d = __builtin_shufflevector(ab_hi, cd_hi, 2, 3, 6, 7);
}

class OmpEdgeSharing final : public omp::OmpSimulation {
public:
    OmpEdgeSharing(const Problem& problem, const TuningValues& tuning)
        : OmpSimulation(problem, tuning),
          stride_((problem.n + kFloatsPerCacheLine - 1) / kFloatsPerCacheLine * kFloatsPerCacheLine),
          thread_ax_(stride_ * static_cast<std::size_t>(threads())),
          thread_ay_(stride_ * static_cast<std::size_t>(threads())) {}

private:
    void compute_pulls(std::vector<float>& ax, std::vector<float>& ay) override {
        const Bodies& b = bodies();
        const auto n = static_cast<std::int64_t>(b.size());
        const std::int64_t blocks = n / kBlockRows;  // full blocks; the last N mod 4 rows go alone
        const std::int64_t block_pairs = (blocks + 1) / 2;  // the middle block of an odd count alone
        const int thread_count = threads();
#pragma omp parallel num_threads(thread_count)
        {
            const std::size_t offset = static_cast<std::size_t>(omp_get_thread_num()) * stride_;
            float* my_ax = thread_ax_.data() + offset;
            float* my_ay = thread_ay_.data() + offset;
            for (std::int64_t i = 0; i < n; ++i) my_ax[i] = my_ay[i] = 0.0f;
#pragma omp for schedule(static)
            for (std::int64_t k = 0; k < std::max<std::int64_t>(block_pairs, 1); ++k) {
                if (k < block_pairs) {
                    add_block_pulls(b, k * kBlockRows, my_ax, my_ay);
                    if (blocks - 1 - k != k) add_block_pulls(b, (blocks - 1 - k) * kBlockRows, my_ax, my_ay);
                }
                if (k == 0)  // the last rows (fewer than 4 pairs each)
                    for (std::int64_t i = blocks * kBlockRows; i < n; ++i) add_row_pulls(b, i, my_ax, my_ay);
            }
#pragma omp for schedule(static)
            for (std::int64_t i = 0; i < n; ++i) {
                float sum_x = 0.0f, sum_y = 0.0f;
                for (int t = 0; t < thread_count; ++t) {
                    sum_x += thread_ax_[static_cast<std::size_t>(t) * stride_ + i];
                    sum_y += thread_ay_[static_cast<std::size_t>(t) * stride_ + i];
                }
                ax[i] = sum_x;
                ay[i] = sum_y;
            }
        }
    }

    // The pairs (i, j > i) of rows i0..i0+3: the pulls on the rows summed per row in increasing j
    // and added to (ax[i], ay[i]) at the end; the opposite pulls subtracted from (ax[j], ay[j])
    // row by row.
    void add_block_pulls(const Bodies& b, std::int64_t i0, float* ax, float* ay) const {
        const float eps2 = static_cast<float>(problem().constants.eps2());
        const auto n = static_cast<std::int64_t>(b.size());
        float row_x[kBlockRows] = {}, row_y[kBlockRows] = {};
        // Pairs inside the block first (their j are the smallest).
        for (std::int64_t r = 0; r < kBlockRows; ++r)
            for (std::int64_t j = i0 + r + 1; j < i0 + kBlockRows; ++j)
                add_pair(b, i0 + r, j, eps2, row_x[r], row_y[r], ax, ay);
        F4 xi[kBlockRows], yi[kBlockRows], mi[kBlockRows];
        for (std::int64_t r = 0; r < kBlockRows; ++r) {
            xi[r] = splat(b.x[i0 + r]);
            yi[r] = splat(b.y[i0 + r]);
            mi[r] = splat(b.m[i0 + r]);
        }
        const F4 eps2v = splat(eps2);
        F4 sum_x = load4(row_x), sum_y = load4(row_y);  // lanes = the block's rows
        const float *x = b.x.data(), *y = b.y.data(), *m = b.m.data();  // not reloaded after the stores
        std::int64_t j = i0 + kBlockRows;
        for (; j + 4 <= n; j += 4) {
            const F4 xj = load4(x + j), yj = load4(y + j), mj = load4(m + j);
            F4 ax_j = load4(ax + j), ay_j = load4(ay + j);
            F4 pull_x[kBlockRows], pull_y[kBlockRows];  // pulls on row r, lanes = the 4 columns
            for (std::int64_t r = 0; r < kBlockRows; ++r) {
                F4 on_j_x, on_j_y;
                pair_pulls(xi[r], yi[r], mi[r], xj, yj, mj, eps2v, pull_x[r], pull_y[r], on_j_x, on_j_y);
                ax_j -= on_j_x;
                ay_j -= on_j_y;
            }
            store4(ax + j, ax_j);
            store4(ay + j, ay_j);
            transpose(pull_x[0], pull_x[1], pull_x[2], pull_x[3]);  // now lanes = rows, one per column
            transpose(pull_y[0], pull_y[1], pull_y[2], pull_y[3]);
            for (std::int64_t c = 0; c < 4; ++c) {  // columns j..j+3 in order
                sum_x += pull_x[c];
                sum_y += pull_y[c];
            }
        }
        store4(row_x, sum_x);
        store4(row_y, sum_y);
        for (; j < n; ++j)  // the last N mod 4 columns
            for (std::int64_t r = 0; r < kBlockRows; ++r) add_pair(b, i0 + r, j, eps2, row_x[r], row_y[r], ax, ay);
        for (std::int64_t r = 0; r < kBlockRows; ++r) {
            ax[i0 + r] += row_x[r];
            ay[i0 + r] += row_y[r];
        }
    }

    // The pairs (i, j > i) of one row, for the last N mod 4 rows.
    void add_row_pulls(const Bodies& b, std::int64_t i, float* ax, float* ay) const {
        const float eps2 = static_cast<float>(problem().constants.eps2());
        const auto n = static_cast<std::int64_t>(b.size());
        float sum_x = 0.0f, sum_y = 0.0f;
        for (std::int64_t j = i + 1; j < n; ++j) add_pair(b, i, j, eps2, sum_x, sum_y, ax, ay);
        ax[i] += sum_x;
        ay[i] += sum_y;
    }

    // One scalar pair: the pull on i added to (sum_x, sum_y), the opposite one on j subtracted.
    static void add_pair(const Bodies& b, std::int64_t i, std::int64_t j, float eps2, float& sum_x, float& sum_y,
                         float* ax, float* ay) {
        float pull_i_x, pull_i_y, pull_j_x, pull_j_y;
        pair_pulls(b.x[i], b.y[i], b.m[i], b.x[j], b.y[j], b.m[j], eps2, pull_i_x, pull_i_y, pull_j_x, pull_j_y);
        sum_x += pull_i_x;
        sum_y += pull_i_y;
        ax[j] -= pull_j_x;
        ay[j] -= pull_j_y;
    }

    std::size_t stride_;  // per-thread buffer length, N rounded up to a cache line
    std::vector<float> thread_ax_, thread_ay_;
};

}  // namespace

void register_omp_edge_sharing(Registry& registry) {
    omp::add_omp_variant<OmpEdgeSharing>(registry, "omp.edge_sharing",
                                         "each pair once, applied to both bodies; blocks of 4 rows, hand-vectorised "
                                         "4 lanes, exact 1/sqrt, sequential sums; heavy and light blocks paired; "
                                         "per-thread buffers merged without locks (seed 004)");
}

}  // namespace nbody
