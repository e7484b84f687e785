#pragma once
// What every CUDA variant's Simulation shares: the activity map after every step, the cell
// index per body it is built from, device synchronisation, and (SoaSimulation) the
// structure-of-arrays state with the integrator's kernels. A variant supplies the pull.
// Templated on the real type (and SoaSimulation on the dimension); the members and kernels are
// compiled once, in simulation_base.cu, for every workload.
#include <memory>
#include <type_traits>
#include <vector>

#include "activity_map.cuh"
#include "cuda_common.cuh"

namespace nbody::cuda {

// std::invalid_argument unless `initial` has the problem's N and dimension.
template <class Real>
void require_state_of(const Problem& problem, const BodiesT<Real>& initial);

// The map of `initial`'s positions counted from zero (map.reset), each body's cell computed from
// the host copy and copied into `cells`; part of the timed upload.
template <class Real>
void reset_map(ActivityMap& map, DeviceBuffer<int>& cells, const BodiesT<Real>& initial, int d);

template <class Real>
class CudaSimulation : public SimulationOf<Real> {
public:
    using SimulationOf<Real>::upload;
    using SimulationOf<Real>::download;

    CudaSimulation(const Problem& problem, const TuningValues& tuning);

    void upload(const BodiesT<Real>& initial) final;
    void advance(int steps) final;
    void synchronize() final;
    void download(BodiesT<Real>& state, std::vector<float>& activity_map) final;

protected:
    virtual void upload_bodies(const BodiesT<Real>& initial) = 0;
    // One step (advance before force, pull, advance after force), writing each body's new
    // activity cell (or -1) to `cells`.
    virtual void step_bodies(int* cells) = 0;
    virtual void download_bodies(BodiesT<Real>& state) = 0;

    const Problem problem_;
    const DeviceConstants<Real> constants_;

private:
    struct GraphExecDestroy {
        void operator()(cudaGraphExec_t graph) const { cudaGraphExecDestroy(graph); }
    };
    // One step (step_bodies and the map) captured as a CUDA graph at the first upload and replayed
    // by advance: a graph node costs less than a launch from the host (docs/performance-cuda.md).
    void capture_step();

    ActivityMap map_;
    DeviceBuffer<int> cells_;
    std::unique_ptr<std::remove_pointer_t<cudaGraphExec_t>, GraphExecDestroy> step_graph_;
};

// What a pull kernel reads: positions by axis and masses.
template <class Real, int Dim>
struct DeviceBodies {
    const Real* position[Dim];
    const Real* mass;

    __device__ Vec<Real, Dim> position_of(int i) const {
        Vec<Real, Dim> p;
NBODY_UNROLL_AXES
        for (int k = 0; k < Dim; ++k) p[k] = position[k][i];
        return p;
    }
};

// Structure-of-arrays state. The variant writes the summed pull of every body into pull()
// (its own kernels, reading bodies() only); the integration kernels around it are common.
// Leapfrog's pull of the initial positions is computed in the upload.
template <class Real, int Dim>
class SoaSimulation : public CudaSimulation<Real> {
public:
    SoaSimulation(const Problem& problem, const TuningValues& tuning);

protected:
    // pull()[i] = sum_j m_j (p_j - p_i) / (|p_j - p_i|^2 + eps2)^(3/2), from bodies().
    virtual void compute_pull() = 0;

    DeviceBodies<Real, Dim> bodies() const;
    Vec<Real, Dim>* pull() const { return pull_.data(); }

private:
    void upload_bodies(const BodiesT<Real>& initial) final;
    void step_bodies(int* cells) final;
    void download_bodies(BodiesT<Real>& state) final;

    DeviceBuffer<Real> position_[Dim], velocity_[Dim], mass_;
    DeviceBuffer<Vec<Real, Dim>> pull_;
};

extern template class CudaSimulation<float>;
extern template class CudaSimulation<double>;
extern template class SoaSimulation<float, 2>;
extern template class SoaSimulation<float, 3>;
extern template class SoaSimulation<double, 2>;
extern template class SoaSimulation<double, 3>;

// The simulation of `problem`'s workload: Sim<Real, Dim>(problem, args...) for its precision and
// dimension (the integrator is a run-time property of the SoA base).
template <template <class, int> class Sim, class... Args>
std::unique_ptr<Simulation> make_for_workload(const Problem& problem, const Args&... args) {
    const bool fp64 = problem.workload.precision == Precision::fp64;
    if (problem.workload.dim == 3) {
        if (fp64) return std::make_unique<Sim<double, 3>>(problem, args...);
        return std::make_unique<Sim<float, 3>>(problem, args...);
    }
    if (fp64) return std::make_unique<Sim<double, 2>>(problem, args...);
    return std::make_unique<Sim<float, 2>>(problem, args...);
}

// Block size of the `block_size` tuning.
unsigned int block_size_of(const TuningValues& tuning);

}  // namespace nbody::cuda
