#pragma once
// the published CUDA ladder's first layout: an array of body structures in global memory, one thread per
// body, forces into a separate array (the snapshot), then a second kernel integrates.
// Used by cuda.baseline_aos (exact sqrt and divide) and cuda.rsqrt (hardware rsqrt).
#include "interaction.cuh"
#include "simulation_base.cuh"

namespace nbody::cuda {

struct BodyAos {
    float x, y, vx, vy, m;
};

using Vec2 = Vec<float, 2>;

template <class InvSqrt>
__global__ void aos_pull(const BodyAos* bodies, Vec2* pull_out, DeviceConstants<float> c) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c.n) return;
    Vec2 a{};
    for (int j = 0; j < c.n; ++j)
        pull<InvSqrt>(Vec2{{bodies[i].x, bodies[i].y}}, Vec2{{bodies[j].x, bodies[j].y}}, bodies[j].m, c.eps2, a);
    pull_out[i] = a;
}

static __global__ void aos_integrate(BodyAos* bodies, const Vec2* pull_in, int* cells, DeviceConstants<float> c) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c.n) return;
    BodyAos& b = bodies[i];
    integrate_body(b.x, b.y, b.vx, b.vy, pull_in[i][0], pull_in[i][1], c.G, c.dt);
    cells[i] = activity_cell(b.x, b.y, c.d);
}

// The canonical workload only (2d/fp32/euler: the descriptors keep the default WorkloadSupport).
template <class InvSqrt>
class AosSimulation final : public CudaSimulation<float> {
public:
    AosSimulation(const Problem& problem, const TuningValues& tuning)
        : CudaSimulation(problem, tuning), block_(block_size_of(tuning)), bodies_(problem.n), pull_(problem.n) {}

private:
    void upload_bodies(const Bodies& initial) override {
        std::vector<BodyAos> host(initial.size());
        for (std::size_t i = 0; i < host.size(); ++i)
            host[i] = {initial.x[i], initial.y[i], initial.vx[i], initial.vy[i], initial.m[i]};
        bodies_.copy_from_host(host.data());
    }

    void step_bodies(int* cells) override {
        const unsigned int blocks = blocks_for(problem_.n, block_);
        aos_pull<InvSqrt><<<blocks, block_>>>(bodies_.data(), pull_.data(), constants_);
        NBODY_CUDA_CHECK_LAUNCH();
        aos_integrate<<<blocks, block_>>>(bodies_.data(), pull_.data(), cells, constants_);
        NBODY_CUDA_CHECK_LAUNCH();
    }

    void download_bodies(Bodies& state) override {
        std::vector<BodyAos> host(problem_.n);
        bodies_.copy_to_host(host.data());
        state = Bodies(problem_.n);
        for (std::size_t i = 0; i < host.size(); ++i) {
            state.x[i] = host[i].x;
            state.y[i] = host[i].y;
            state.vx[i] = host[i].vx;
            state.vy[i] = host[i].vy;
            state.m[i] = host[i].m;
        }
    }

    unsigned int block_;
    DeviceBuffer<BodyAos> bodies_;
    DeviceBuffer<Vec2> pull_;
};

}  // namespace nbody::cuda
