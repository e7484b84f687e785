// omp.edge_sharing: Newton's third law (seed report 004, §5.2.2). Each pair i < j is computed once
// and applied to both bodies, each weighted by the other's mass. Row i holds N-1-i pairs, so rows
// are dealt out in pairs (k, N-1-k) of N-1 pairs together, and a static schedule over k gives
// every thread the same work. Each thread accumulates into its own buffers, merged afterwards in
// a fixed thread order: no locks, and bit-identical results for a fixed thread count.
#include <omp.h>

#include "omp_simulation.hpp"

namespace nbody {
namespace {

constexpr std::size_t kFloatsPerCacheLine = 16;

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
        const std::int64_t row_pairs = (n + 1) / 2;  // the middle row of an odd N pairs with itself
        const int thread_count = threads();
#pragma omp parallel num_threads(thread_count)
        {
            const std::size_t offset = static_cast<std::size_t>(omp_get_thread_num()) * stride_;
            float* my_ax = thread_ax_.data() + offset;
            float* my_ay = thread_ay_.data() + offset;
            for (std::int64_t i = 0; i < n; ++i) my_ax[i] = my_ay[i] = 0.0f;
#pragma omp for schedule(static)
            for (std::int64_t k = 0; k < row_pairs; ++k) {
                add_row_pulls(b, k, my_ax, my_ay);
                if (n - 1 - k != k) add_row_pulls(b, n - 1 - k, my_ax, my_ay);
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

    // The pairs (i, j > i): the pull of j on i into (ax[i], ay[i]), the opposite pull on j into
    // (ax[j], ay[j]). The pair's interaction, written once here: its factor |d|^-3 is shared.
    void add_row_pulls(const Bodies& b, std::int64_t i, float* ax, float* ay) const {
        const float eps2 = static_cast<float>(problem().constants.eps2());
        const auto n = static_cast<std::int64_t>(b.size());
        const float xi = b.x[i], yi = b.y[i], mi = b.m[i];
        float sum_x = 0.0f, sum_y = 0.0f;
        for (std::int64_t j = i + 1; j < n; ++j) {
            const float dx = b.x[j] - xi;
            const float dy = b.y[j] - yi;
            const float r2 = dx * dx + (dy * dy + eps2);
            const float inv_r = ExactInvSqrt{}(r2);
            const float inv_r3 = inv_r * inv_r * inv_r;
            const float on_i = b.m[j] * inv_r3;
            const float on_j = mi * inv_r3;
            sum_x += on_i * dx;
            sum_y += on_i * dy;
            ax[j] -= on_j * dx;
            ay[j] -= on_j * dy;
        }
        ax[i] += sum_x;
        ay[i] += sum_y;
    }

    std::size_t stride_;  // per-thread buffer length, N rounded up to a cache line
    std::vector<float> thread_ax_, thread_ay_;
};

}  // namespace

void register_omp_edge_sharing(Registry& registry) {
    omp::add_omp_variant<OmpEdgeSharing>(registry, "omp.edge_sharing",
                                         "each pair once, applied to both bodies; heavy and light rows paired; "
                                         "per-thread buffers merged without locks (seed 004)");
}

}  // namespace nbody
