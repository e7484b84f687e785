// cuda.persistent: the whole of advance(k) as one cooperative kernel, for small N where a step
// costs microseconds and launches and host round trips would dominate. Its blocks stay resident
// for all k steps and meet at one grid-wide barrier per step. Each warp owns bodies i: its lanes
// sum the pull over j (the positions of every body staged in shared memory, all of them when they
// fit, otherwise tile by tile), a warp shuffle adds the lanes, and lane 0 integrates the body,
// moves its activity-map count (the incremental map) and writes its new position into the other
// of two position buffers, so that no block overwrites a position another block is still reading.
// The cells moved in a step are rewritten in the next (after the barrier that completes the
// moves); one more barrier at the end of advance(k) rewrites the last step's. Leapfrog's first
// half kick and drift of the next step follow the last half kick of this one in the same thread
// (the same pull, the same operations as two separate phases). Every workload.
#include <cooperative_groups.h>

#include <algorithm>
#include <type_traits>

#include "activity_map.cuh"
#include "interaction.cuh"
#include "nbody/errors.hpp"
#include "simulation_base.cuh"
#include "tiled_float4.cuh"
#include "variants.cuh"

namespace nbody::cuda {
namespace {

namespace cg = cooperative_groups;

constexpr int kWarp = 32;
// Shared memory for the staged bodies: 64 KiB (opted in above the default 48 KiB), so that N = 4096
// float32 bodies, packed to 16 bytes, are staged at once (in 48 KiB they took two tiles: 20.4 us per
// step, against 16.9 when unpacked 12-byte bodies fitted; H100), and three blocks still fit an SM.
constexpr std::size_t kStagedBytes = 64 * 1024;

template <class Real, int Dim>
struct PersistentState {
    Real* position[2][Dim];  // the step reads position[source], writes position[source ^ 1]
    Real* velocity[Dim];
    const Real* mass;
    Vec<Real, Dim>* pull;  // each body's last pull: leapfrog's first half kick of the next step
    IncrementalMapState map;
    DeviceConstants<Real> c;
    Integrator integrator;
};

// Bodies a thread loads before it stores any of them while staging.
constexpr int kStageBatch = 4;

// Bodies [start, start + count) of `position` and their masses into shared memory, packed (the sum
// reads a body with one 16-byte shared load, where three arrays took three). Each thread loads
// kStageBatch bodies before it stores one, so that their round trips to L2 overlap: a loop that
// stored each body as it came waited for one round trip after another, 0.9 us of a 3.7 us step at
// N = 1024 (Nsight Compute, docs/performance-cuda.md).
template <class Real, int Dim>
__device__ void stage(PackedBody<Real>* staged, Real* const (&position)[Dim], const Real* mass, int start, int count) {
    const int rows = (count + kStageBatch - 1) / kStageBatch;
    for (int row = threadIdx.x; row < rows; row += blockDim.x) {
        PackedBody<Real> body[kStageBatch];
#pragma unroll
        for (int b = 0; b < kStageBatch; ++b) {
            const int t = row + b * rows;
            if (t < count) body[b] = pack_body<Real, Dim>(load_axes(position, start + t), mass[start + t]);
        }
#pragma unroll
        for (int b = 0; b < kStageBatch; ++b) {
            const int t = row + b * rows;
            if (t < count) staged[t] = body[b];
        }
    }
}

// Whether lane 0's reads after the sum (its velocity, its map cells) are made before it, so that
// their round trip to memory overlaps the sum: faster in 2D float32 (3.68 us per step at N = 1024,
// results/h100-kokkos-persistent-early-loads.json), slower in 3D float32 (4.26 -> 4.69) and 2D
// float64 (4.81 -> 4.91) in an earlier binary that read ahead everywhere (H100,
// docs/performance-cuda.md), so only there.
template <class Real, int Dim>
constexpr bool kReadsAheadOfSum = Dim == 2 && std::is_same_v<Real, float>;

// s.position[buffer], selected: an index computed at run time into the kernel's parameters would
// copy them to the stack.
template <class Real, int Dim>
__device__ void select_buffer(const PersistentState<Real, Dim>& s, int buffer, Real* (&out)[Dim]) {
NBODY_UNROLL_AXES
    for (int k = 0; k < Dim; ++k) out[k] = buffer == 0 ? s.position[0][k] : s.position[1][k];
}

// pull_only: one evaluation of the pull of the current positions into state.pull (leapfrog's
// upload), nothing else. Otherwise `steps` steps from position[source].
template <class Real, int Dim>
__global__ void persistent_advance(PersistentState<Real, Dim> s, int steps, int source, bool pull_only,
                                   int capacity) {
    extern __shared__ __align__(32) unsigned char shared[];
    PackedBody<Real>* staged = reinterpret_cast<PackedBody<Real>*>(shared);
    cg::grid_group grid = cg::this_grid();
    const int n = s.c.n;
    const int lane = threadIdx.x % kWarp;
    const int warps_per_block = blockDim.x / kWarp;
    const int warp = threadIdx.x / kWarp;
    const int groups = (n + warps_per_block - 1) / warps_per_block;
    const bool resident = n <= capacity;
    const int thread = blockIdx.x * blockDim.x + threadIdx.x;
    const int threads = gridDim.x * blockDim.x;
    const Integrator integrator = s.integrator;

    if (!pull_only && integrator == Integrator::leapfrog) {
        Real* current[Dim];
        select_buffer(s, source, current);
        for (int i = thread; i < n; i += threads) {
            Vec<Real, Dim> p = load_axes(current, i), v = load_axes(s.velocity, i);
            advance_before_force(integrator, p, v, s.pull[i], s.c.G, s.c.dt);
            store_axes(current, i, p);
            store_axes(s.velocity, i, v);
        }
    }
    const int evaluations = pull_only ? 1 : steps;
    for (int step = 0; step < evaluations; ++step) {
        // Every position of position[source] written, every count of the previous step moved.
        grid.sync();
        Real* from[Dim];
        Real* to[Dim];
        select_buffer(s, source, from);
        select_buffer(s, source ^ 1, to);
        if (resident) {
            stage<Real, Dim>(staged, from, s.mass, 0, n);
            __syncthreads();
        }
        for (int group = blockIdx.x; group < groups; group += gridDim.x) {
            const int i = group * warps_per_block + warp;
            const bool owns_body = i < n;
            const Vec<Real, Dim> pi = owns_body ? load_axes(from, i) : Vec<Real, Dim>{};
            using BodyCells = IncrementalMapState::BodyCells;
            const bool reads_ahead = kReadsAheadOfSum<Real, Dim> && owns_body && !pull_only;
            const Vec<Real, Dim> v_ahead = reads_ahead ? load_axes(s.velocity, i) : Vec<Real, Dim>{};
            const BodyCells cells_ahead = reads_ahead ? s.map.cells_of(i) : BodyCells{};
            Vec<Real, Dim> a{};
            for (int start = 0; start < n; start += capacity) {
                const int count = min(capacity, n - start);
                if (!resident) {
                    __syncthreads();
                    stage<Real, Dim>(staged, from, s.mass, start, count);
                    __syncthreads();
                }
                if (owns_body) {
#pragma unroll 4
                    for (int t = lane; t < count; t += kWarp) {
                        const PackedBody<Real> body = staged[t];
                        pull<NormalRsqrt>(pi, packed_position<Real, Dim>(body), packed_mass<Real, Dim>(body),
                                          s.c.eps2, a);
                    }
                }
            }
NBODY_UNROLL_AXES
            for (int k = 0; k < Dim; ++k)
                for (int offset = kWarp / 2; offset > 0; offset /= 2)
                    a[k] += __shfl_xor_sync(0xffffffffu, a[k], offset);
            if (!owns_body || lane != 0) continue;
            if (pull_only) {
                s.pull[i] = a;
                continue;
            }
            Vec<Real, Dim> p = pi, v = kReadsAheadOfSum<Real, Dim> ? v_ahead : load_axes(s.velocity, i);
            const BodyCells cells = kReadsAheadOfSum<Real, Dim> ? cells_ahead : s.map.cells_of(i);
            advance_after_force(integrator, p, v, a, s.c.G, s.c.dt);
            // The previous step's move of body i is rewritten before its next move, by the same thread.
            s.map.rewrite_moved(i, cells);
            s.map.move(i, activity_cell(p[0], p[1], s.c.d), cells.counted);
            if (step + 1 < steps) advance_before_force(integrator, p, v, a, s.c.G, s.c.dt);
            store_axes(to, i, p);
            store_axes(s.velocity, i, v);
            s.pull[i] = a;
        }
        if (!pull_only) source ^= 1;
    }
    if (pull_only) return;
    // The last step's moves complete: rewrite the cells they touched.
    grid.sync();
    for (int i = thread; i < n; i += threads) s.map.rewrite_moved(i);
}

// block_size=auto: the fewest warps per block (a power of two) that give every SM one block's worth
// of bodies, up to the most the kernel's registers allow and 32: kokkos.persistent's team_size=auto.
// At N = 4096 that is 512 threads: 13.6 us per step, against 18.0 with 256 (H100, measured).
template <class Real, int Dim>
unsigned int persistent_block_size(const Problem& problem, const TuningValues& tuning) {
    if (tuning.at("block_size") != "auto") return block_size_of(tuning);
    cudaFuncAttributes attributes{};
    NBODY_CUDA_CHECK(cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(persistent_advance<Real, Dim>)));
    const int sms = multiprocessor_count();
    const int warps =
        fewest_per_slot_covering(static_cast<long>(problem.n), sms, std::min(attributes.maxThreadsPerBlock / kWarp, kWarp));
    return static_cast<unsigned int>(warps * kWarp);
}

template <class Real, int Dim>
class Persistent final : public SimulationOf<Real> {
public:
    using SimulationOf<Real>::upload;
    using SimulationOf<Real>::download;

    Persistent(const Problem& problem, const TuningValues& tuning)
        : problem_(problem),
          block_(persistent_block_size<Real, Dim>(problem, tuning)),
          map_(problem, tuning.at("map")),
          cells_(problem.n),
          mass_(problem.n),
          pull_(problem.n) {
        for (int k = 0; k < Dim; ++k) {
            for (auto& buffer : position_) buffer[k] = DeviceBuffer<Real>(problem.n);
            velocity_[k] = DeviceBuffer<Real>(problem.n);
        }
        const void* kernel = reinterpret_cast<const void*>(persistent_advance<Real, Dim>);
        require_block_fits(kernel, block_, "cuda.persistent");
        const std::size_t per_body = sizeof(PackedBody<Real>);
        capacity_ = static_cast<int>(std::min<std::size_t>(problem.n, kStagedBytes / per_body));
        shared_bytes_ = capacity_ * per_body;
        if (shared_bytes_ > kDefaultSharedBytes)
            NBODY_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  static_cast<int>(shared_bytes_)));
        const int sms = multiprocessor_count();
        int per_sm = 0;
        NBODY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, static_cast<int>(block_),
                                                                       shared_bytes_));
        if (per_sm == 0)
            throw UsageError("cuda.persistent: no block of " + std::to_string(block_) + " threads and " +
                             std::to_string(shared_bytes_) + " bytes of shared memory fits an SM");
        // As many blocks as the bodies need, at most all that are resident at once (a grid-wide
        // barrier needs every block running).
        const std::size_t groups = (problem.n + block_ / kWarp - 1) / (block_ / kWarp);
        blocks_ = static_cast<unsigned int>(std::min<std::size_t>(groups, static_cast<std::size_t>(per_sm) * sms));
    }

    void upload(const BodiesT<Real>& initial) override {
        require_state_of(problem_, initial);
        source_ = 0;
        for (int k = 0; k < Dim; ++k) {
            position_[source_][k].copy_from_host(initial.position(k).data());
            velocity_[k].copy_from_host(initial.velocity(k).data());
        }
        mass_.copy_from_host(initial.m.data());
        reset_map(map_, cells_, initial, problem_.d);
        if (needs_initial_pull(problem_.workload.integrator)) launch(1, true);
    }

    void advance(int steps) override {
        if (steps <= 0) return;
        launch(steps, false);
        source_ ^= steps % 2;
    }

    void synchronize() override { NBODY_CUDA_CHECK(cudaDeviceSynchronize()); }

    void download(BodiesT<Real>& state, std::vector<float>& activity_map) override {
        synchronize();
        state = BodiesT<Real>(problem_.n, Dim);
        for (int k = 0; k < Dim; ++k) {
            position_[source_][k].copy_to_host(state.position(k).data());
            velocity_[k].copy_to_host(state.velocity(k).data());
        }
        mass_.copy_to_host(state.m.data());
        map_.copy_to_host(activity_map);
    }

private:
    void launch(int steps, bool pull_only) {
        PersistentState<Real, Dim> state{};
        for (int b = 0; b < 2; ++b)
            for (int k = 0; k < Dim; ++k) state.position[b][k] = position_[b][k].data();
        for (int k = 0; k < Dim; ++k) state.velocity[k] = velocity_[k].data();
        state.mass = mass_.data();
        state.pull = pull_.data();
        state.map = map_.incremental_state();
        state.c = device_constants<Real>(problem_);
        state.integrator = problem_.workload.integrator;
        int source = source_;
        void* arguments[] = {&state, &steps, &source, &pull_only, &capacity_};
        NBODY_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(persistent_advance<Real, Dim>),
                                                     blocks_, block_, arguments, shared_bytes_, nullptr));
    }

    const Problem problem_;
    const unsigned int block_;
    ActivityMap map_;
    DeviceBuffer<int> cells_;
    DeviceBuffer<Real> position_[2][Dim], velocity_[Dim], mass_;
    DeviceBuffer<Vec<Real, Dim>> pull_;
    int capacity_ = 0;
    std::size_t shared_bytes_ = 0;
    unsigned int blocks_ = 0;
    int source_ = 0;  // the position buffer that holds the current positions
};

TuningParameter persistent_block_size_tuning() {
    TuningParameter block_size = block_size_tuning("auto");
    block_size.description += ", a warp per body (auto: the fewest warps that give every SM one block's worth of bodies)";
    block_size.allowed_values.insert(block_size.allowed_values.begin(), "auto");
    return block_size;
}

}  // namespace

VariantDescriptor persistent_variant() {
    return cuda_descriptor(
        "cuda.persistent",
        "advance(k) as one cooperative kernel, one grid sync per step: a warp per body sums over bodies "
        "staged in shared memory; integration and the incremental activity map fused",
        {persistent_block_size_tuning(),
         {.name = "map",
          .description = "activity map: incremental only (its count moves and rewrites are fused into the kernel)",
          .default_value = "incremental",
          .allowed_values = {"incremental"}}},
        [](const Problem& p, const TuningValues& t) { return make_for_workload<Persistent>(p, t); },
        // lowest measured 0.316; a warp's 32 lane partials added by shuffles
        {.workloads = WorkloadSupport::every(), .expected_efficiency = 0.256, .full_rate_bodies = 2048, .step_overhead_s = 1e-06, .reproducibility = Reproducibility::order_fixed});
}

}  // namespace nbody::cuda
