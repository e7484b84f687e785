// openacc.multi_i: `parallel loop gang vector vector_length(128)` over groups of bodies i, each
// vector lane summing the pulls of `bodies` of them (group + k * groups: neighbouring lanes take
// neighbouring bodies, so the loads of body i are coalesced), each body j loaded once for all of
// them. A register tile of the i loop: the j loads, a third of the FP32 work per interaction in
// openacc.naive, are shared by `bodies` interactions.
#include "openacc_simulation.hpp"

namespace nbody::openacc {
namespace {

template <int Bodies>
struct MultiForce {
    template <class Real, int Dim>
    void pulls(const Real* pos, const Real* mass, Real* pull, int n, Real eps2, bool on_gpu) const {
        const int bodies = Dim * n;
        const int groups = (n + Bodies - 1) / Bodies;
#pragma acc parallel loop gang vector vector_length(128) present(pos[0:bodies], mass[0:n], pull[0:bodies]) if(on_gpu)
        for (int g = 0; g < groups; ++g) {
            Real xi[Bodies], yi[Bodies], zi[Bodies], ax[Bodies], ay[Bodies], az[Bodies];
#pragma acc loop seq
            for (int k = 0; k < Bodies; ++k) {
                const int i = g + k * groups < n ? g + k * groups : n - 1;
                xi[k] = pos[i];
                yi[k] = pos[n + i];
                zi[k] = Dim == 3 ? pos[2 * n + i] : Real(0);
                ax[k] = ay[k] = az[k] = Real(0);
            }
#pragma acc loop seq
            for (int j = 0; j < n; ++j) {
                const Real xj = pos[j], yj = pos[n + j], zj = Dim == 3 ? pos[2 * n + j] : Real(0), mj = mass[j];
#pragma acc loop seq
                for (int k = 0; k < Bodies; ++k)
                    interact<Real, Dim>(xi[k], yi[k], zi[k], xj, yj, zj, mj, eps2, ax[k], ay[k], az[k]);
            }
#pragma acc loop seq
            for (int k = 0; k < Bodies; ++k) {
                const int i = g + k * groups;
                if (i < n) {
                    pull[i] = ax[k];
                    pull[n + i] = ay[k];
                    if constexpr (Dim == 3) pull[2 * n + i] = az[k];
                }
            }
        }
    }
};

}  // namespace

std::unique_ptr<Simulation> make_multi_i(const Problem& problem, int bodies, bool on_gpu) {
    if (bodies == 1) return make_simulation(problem, MultiForce<1>{}, on_gpu);
    if (bodies == 2) return make_simulation(problem, MultiForce<2>{}, on_gpu);
    return make_simulation(problem, MultiForce<4>{}, on_gpu);
}

}  // namespace nbody::openacc
