#include <stdexcept>
#include <string>

#include "simulation_base.cuh"

namespace nbody::cuda {
namespace {

constexpr unsigned int kIntegrateBlock = 256;

// Positions and velocities by axis, as the integration kernels update them.
template <class Real, int Dim>
struct DeviceState {
    Real* position[Dim];
    Real* velocity[Dim];

    __device__ void load(int i, Vec<Real, Dim>& p, Vec<Real, Dim>& v) const {
NBODY_UNROLL_AXES
        for (int k = 0; k < Dim; ++k) {
            p[k] = position[k][i];
            v[k] = velocity[k][i];
        }
    }
    __device__ void store(int i, const Vec<Real, Dim>& p, const Vec<Real, Dim>& v) const {
NBODY_UNROLL_AXES
        for (int k = 0; k < Dim; ++k) {
            position[k][i] = p[k];
            velocity[k][i] = v[k];
        }
    }
};

template <class Real, int Dim>
__global__ void advance_before_force_kernel(DeviceState<Real, Dim> state, const Vec<Real, Dim>* __restrict__ pull,
                                            Integrator integrator, DeviceConstants<Real> c) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c.n) return;
    Vec<Real, Dim> p, v;
    state.load(i, p, v);
    advance_before_force(integrator, p, v, pull[i], c.G, c.dt);
    state.store(i, p, v);
}

template <class Real, int Dim>
__global__ void advance_after_force_kernel(DeviceState<Real, Dim> state, const Vec<Real, Dim>* __restrict__ pull,
                                           Integrator integrator, int* __restrict__ cells, DeviceConstants<Real> c) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c.n) return;
    Vec<Real, Dim> p, v;
    state.load(i, p, v);
    advance_after_force(integrator, p, v, pull[i], c.G, c.dt);
    state.store(i, p, v);
    cells[i] = activity_cell(p[0], p[1], c.d);
}

}  // namespace

unsigned int block_size_of(const TuningValues& tuning) {
    return static_cast<unsigned int>(tuning_int(tuning, "block_size"));
}

template <class Real>
CudaSimulation<Real>::CudaSimulation(const Problem& problem, const TuningValues& tuning)
    : problem_(problem),
      constants_(device_constants<Real>(problem)),
      map_(problem, tuning.at("map")),
      cells_(problem.n) {}

template <class Real>
void require_state_of(const Problem& problem, const BodiesT<Real>& initial) {
    if (initial.size() != problem.n || initial.dim != problem.workload.dim)
        throw std::invalid_argument("a state of " + std::to_string(initial.size()) + " bodies in " +
                                    std::to_string(initial.dim) + "D uploaded to a simulation of " +
                                    std::to_string(problem.n) + " bodies in " +
                                    std::to_string(problem.workload.dim) + "D");
}

template <class Real>
void reset_map(ActivityMap& map, DeviceBuffer<int>& cells, const BodiesT<Real>& initial, int d) {
    std::vector<int> host_cells(initial.size());
    for (std::size_t i = 0; i < initial.size(); ++i) host_cells[i] = activity_cell(initial.x[i], initial.y[i], d);
    cells.copy_from_host(host_cells.data());
    map.reset(cells.data());
}

template <class Real>
void CudaSimulation<Real>::upload(const BodiesT<Real>& initial) {
    require_state_of(problem_, initial);
    upload_bodies(initial);
    reset_map(map_, cells_, initial, problem_.d);
    if (!step_graph_) capture_step();
}

template <class Real>
void CudaSimulation<Real>::capture_step() {
    // nbody_cuda compiles with the per-thread default stream, so the variants' launches on the
    // default stream are captured.
    NBODY_CUDA_CHECK(cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeThreadLocal));
    cudaGraph_t graph = nullptr;
    try {
        step_bodies(cells_.data());
        map_.build(cells_.data());
    } catch (...) {
        if (cudaStreamEndCapture(cudaStreamPerThread, &graph) == cudaSuccess && graph != nullptr)
            cudaGraphDestroy(graph);
        throw;
    }
    NBODY_CUDA_CHECK(cudaStreamEndCapture(cudaStreamPerThread, &graph));
    cudaGraphExec_t executable = nullptr;
    const cudaError_t instantiated = cudaGraphInstantiate(&executable, graph, 0);
    cudaGraphDestroy(graph);
    NBODY_CUDA_CHECK(instantiated);
    step_graph_.reset(executable);
}

template <class Real>
void CudaSimulation<Real>::advance(int steps) {
    if (!step_graph_) throw std::logic_error("advance before the first upload");
    for (int s = 0; s < steps; ++s) NBODY_CUDA_CHECK(cudaGraphLaunch(step_graph_.get(), cudaStreamPerThread));
}

template <class Real>
void CudaSimulation<Real>::synchronize() {
    NBODY_CUDA_CHECK(cudaDeviceSynchronize());
}

template <class Real>
void CudaSimulation<Real>::download(BodiesT<Real>& state, std::vector<float>& activity_map) {
    synchronize();
    download_bodies(state);
    map_.copy_to_host(activity_map);
}

template <class Real, int Dim>
SoaSimulation<Real, Dim>::SoaSimulation(const Problem& problem, const TuningValues& tuning)
    : CudaSimulation<Real>(problem, tuning), mass_(problem.n), pull_(problem.n) {
    for (int k = 0; k < Dim; ++k) {
        position_[k] = DeviceBuffer<Real>(problem.n);
        velocity_[k] = DeviceBuffer<Real>(problem.n);
    }
}

template <class Real, int Dim>
DeviceBodies<Real, Dim> SoaSimulation<Real, Dim>::bodies() const {
    DeviceBodies<Real, Dim> view{};
    for (int k = 0; k < Dim; ++k) view.position[k] = position_[k].data();
    view.mass = mass_.data();
    return view;
}

template <class Real, int Dim>
void SoaSimulation<Real, Dim>::upload_bodies(const BodiesT<Real>& initial) {
    for (int k = 0; k < Dim; ++k) {
        position_[k].copy_from_host(initial.position(k).data());
        velocity_[k].copy_from_host(initial.velocity(k).data());
    }
    mass_.copy_from_host(initial.m.data());
    if (needs_initial_pull(this->problem_.workload.integrator)) compute_pull();
}

template <class Real, int Dim>
void SoaSimulation<Real, Dim>::step_bodies(int* cells) {
    DeviceState<Real, Dim> state{};
    for (int k = 0; k < Dim; ++k) {
        state.position[k] = position_[k].data();
        state.velocity[k] = velocity_[k].data();
    }
    const Integrator integrator = this->problem_.workload.integrator;
    const unsigned int blocks = blocks_for(this->problem_.n, kIntegrateBlock);
    // Euler has nothing to do before the force: no kernel.
    if (integrator == Integrator::leapfrog) {
        advance_before_force_kernel<<<blocks, kIntegrateBlock>>>(state, pull_.data(), integrator, this->constants_);
        NBODY_CUDA_CHECK_LAUNCH();
    }
    compute_pull();
    advance_after_force_kernel<<<blocks, kIntegrateBlock>>>(state, pull_.data(), integrator, cells, this->constants_);
    NBODY_CUDA_CHECK_LAUNCH();
}

template <class Real, int Dim>
void SoaSimulation<Real, Dim>::download_bodies(BodiesT<Real>& state) {
    state = BodiesT<Real>(this->problem_.n, Dim);
    for (int k = 0; k < Dim; ++k) {
        position_[k].copy_to_host(state.position(k).data());
        velocity_[k].copy_to_host(state.velocity(k).data());
    }
    mass_.copy_to_host(state.m.data());
}

template void require_state_of<float>(const Problem&, const BodiesT<float>&);
template void require_state_of<double>(const Problem&, const BodiesT<double>&);
template void reset_map<float>(ActivityMap&, DeviceBuffer<int>&, const BodiesT<float>&, int);
template void reset_map<double>(ActivityMap&, DeviceBuffer<int>&, const BodiesT<double>&, int);
template class CudaSimulation<float>;
template class CudaSimulation<double>;
template class SoaSimulation<float, 2>;
template class SoaSimulation<float, 3>;
template class SoaSimulation<double, 2>;
template class SoaSimulation<double, 3>;

}  // namespace nbody::cuda
