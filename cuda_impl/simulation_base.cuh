#pragma once
// What every CUDA variant's Simulation shares: the activity map after every step, the cell
// index per body it is built from, device synchronisation, and (SoaSimulation) the
// structure-of-arrays state with its integration kernel. A variant supplies the force step.
#include <vector>

#include "activity_map.cuh"
#include "cuda_common.cuh"

namespace nbody::cuda {

class CudaSimulation : public Simulation {
public:
    CudaSimulation(const Problem& problem, const TuningValues& tuning);

    void upload(const Bodies& initial) final;
    void advance(int steps) final;
    void synchronize() final;
    void download(Bodies& state, std::vector<float>& activity_map) final;

protected:
    virtual void upload_bodies(const Bodies& initial) = 0;
    // One step: forces from the positions at the start of the step, then integration, writing
    // each body's new activity cell (or -1) to `cells`.
    virtual void step_bodies(int* cells) = 0;
    virtual void download_bodies(Bodies& state) = 0;

    const Problem problem_;
    const DeviceConstants constants_;

private:
    ActivityMap map_;
    DeviceBuffer<int> cells_;
};

// Structure-of-arrays state. The variant writes the summed pull of every body into pull()
// (a separate kernel reading positions only), then the common integration kernel runs.
class SoaSimulation : public CudaSimulation {
public:
    SoaSimulation(const Problem& problem, const TuningValues& tuning);

protected:
    // pull()[i] = sum_j m_j (p_j - p_i) / (|p_j - p_i|^2 + eps2)^(3/2), from x(), y(), m().
    virtual void compute_pull() = 0;

    const float* x() const { return x_.data(); }
    const float* y() const { return y_.data(); }
    const float* m() const { return m_.data(); }
    float2* pull() const { return pull_.data(); }

private:
    void upload_bodies(const Bodies& initial) final;
    void step_bodies(int* cells) final;
    void download_bodies(Bodies& state) final;

    DeviceBuffer<float> x_, y_, vx_, vy_, m_;
    DeviceBuffer<float2> pull_;
};

// Block size of the `block_size` tuning.
unsigned int block_size_of(const TuningValues& tuning);

}  // namespace nbody::cuda
