#include "simulation_base.cuh"

namespace nbody::cuda {
namespace {

constexpr unsigned int kIntegrateBlock = 256;

__global__ void integrate_soa(float* __restrict__ x, float* __restrict__ y, float* __restrict__ vx,
                              float* __restrict__ vy, const float2* __restrict__ pull, int* __restrict__ cells,
                              DeviceConstants c) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c.n) return;
    float xi = x[i], yi = y[i], vxi = vx[i], vyi = vy[i];
    integrate_body(xi, yi, vxi, vyi, pull[i].x, pull[i].y, c.G, c.dt);
    x[i] = xi;
    y[i] = yi;
    vx[i] = vxi;
    vy[i] = vyi;
    cells[i] = activity_cell(xi, yi, c.d);
}

}  // namespace

unsigned int block_size_of(const TuningValues& tuning) {
    return static_cast<unsigned int>(tuning_int(tuning, "block_size"));
}

CudaSimulation::CudaSimulation(const Problem& problem, const TuningValues& tuning)
    : problem_(problem), constants_(device_constants(problem)), map_(problem, tuning.at("map")), cells_(problem.n) {}

void CudaSimulation::upload(const Bodies& initial) {
    upload_bodies(initial);
    // The map of the initial positions; cells from the host copy, part of the timed upload.
    std::vector<int> cells(initial.size());
    for (std::size_t i = 0; i < initial.size(); ++i) cells[i] = activity_cell(initial.x[i], initial.y[i], problem_.d);
    cells_.copy_from_host(cells.data());
    map_.build(cells_.data());
}

void CudaSimulation::advance(int steps) {
    for (int s = 0; s < steps; ++s) {
        step_bodies(cells_.data());
        map_.build(cells_.data());
    }
}

void CudaSimulation::synchronize() { NBODY_CUDA_CHECK(cudaDeviceSynchronize()); }

void CudaSimulation::download(Bodies& state, std::vector<float>& activity_map) {
    synchronize();
    download_bodies(state);
    map_.copy_to_host(activity_map);
}

SoaSimulation::SoaSimulation(const Problem& problem, const TuningValues& tuning)
    : CudaSimulation(problem, tuning),
      x_(problem.n),
      y_(problem.n),
      vx_(problem.n),
      vy_(problem.n),
      m_(problem.n),
      pull_(problem.n) {}

void SoaSimulation::upload_bodies(const Bodies& initial) {
    x_.copy_from_host(initial.x.data());
    y_.copy_from_host(initial.y.data());
    vx_.copy_from_host(initial.vx.data());
    vy_.copy_from_host(initial.vy.data());
    m_.copy_from_host(initial.m.data());
}

void SoaSimulation::step_bodies(int* cells) {
    compute_pull();
    integrate_soa<<<blocks_for(problem_.n, kIntegrateBlock), kIntegrateBlock>>>(x_.data(), y_.data(), vx_.data(),
                                                                                 vy_.data(), pull_.data(), cells,
                                                                                 constants_);
    NBODY_CUDA_CHECK_LAUNCH();
}

void SoaSimulation::download_bodies(Bodies& state) {
    state = Bodies(problem_.n);
    x_.copy_to_host(state.x.data());
    y_.copy_to_host(state.y.data());
    vx_.copy_to_host(state.vx.data());
    vy_.copy_to_host(state.vy.data());
    m_.copy_to_host(state.m.data());
}

}  // namespace nbody::cuda
