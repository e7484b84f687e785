// openacc.naive: the directive a first port writes: `parallel loop gang vector` over the bodies i,
// the j sum inside as a sequential loop (each vector lane one body i).
#include <openacc.h>

#include <mutex>

#include "openacc_simulation.hpp"

namespace nbody::openacc {
namespace {

struct NaiveForce {
    template <class Real, int Dim>
    void pulls(const Real* pos, const Real* mass, Real* pull, int n, Real eps2, bool on_gpu) const {
        const int bodies = Dim * n;
#pragma acc parallel loop gang vector present(pos[0:bodies], mass[0:n], pull[0:bodies]) if(on_gpu)
        for (int i = 0; i < n; ++i) {
            const Real xi = pos[i], yi = pos[n + i], zi = Dim == 3 ? pos[2 * n + i] : Real(0);
            Real ax = 0, ay = 0, az = 0;
#pragma acc loop seq
            for (int j = 0; j < n; ++j)
                interact<Real, Dim>(xi, yi, zi, pos[j], pos[n + j], Dim == 3 ? pos[2 * n + j] : Real(0), mass[j], eps2,
                                    ax, ay, az);
            pull[i] = ax;
            pull[n + i] = ay;
            if constexpr (Dim == 3) pull[2 * n + i] = az;
        }
    }
};

}  // namespace

std::unique_ptr<Simulation> make_naive(const Problem& problem, bool on_gpu) {
    return make_simulation(problem, NaiveForce{}, on_gpu);
}

int nvidia_devices() { return acc_get_num_devices(acc_device_nvidia); }

void initialise_gpu() {
    static std::once_flag once;
    // acc_set_device_num initialises the device only if nothing did (acc_init would end the
    // process where a construct of an @host variant, `if` false, had already done it lazily).
    std::call_once(once, [] {
        if (nvidia_devices() > 0) acc_set_device_num(0, acc_device_nvidia);
    });
}

}  // namespace nbody::openacc
