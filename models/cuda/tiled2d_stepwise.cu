// cuda.tiled2d_stepwise: the published 2D tiling study's kernel as written (docs/references.md, its
// §4.1), its optimisation steps GPU2 to GPU8 as tunings. A block of len x wid threads (the study's blockDim.x x blockDim.y) owns wid
// bodies i (threadIdx.y) and one chunk of len * luf bodies j (blockIdx.x); each of a body's len
// threads sums luf of them and writes its own partial pull, so a body has N / luf partials, summed
// by a second step (row_reduction.cuh: hand, CUB, or the study's cuBLAS gemv). Unlike cuda.tiled2d
// there is no fold of the partials inside the block. The rungs:
//   GPU2 shared_memory=off rsqrt=off  bodies j read from global memory, 1/sqrt as sqrt and divide
//   GPU3 rsqrt=on                     the hardware reciprocal square root
//   GPU4 shared_memory=on             the chunk staged once in shared memory (packed like float4)
//   GPU5 register_reduction=on        the study's volatile staging-loop counter (fewer registers)
//   GPU6 bank_conflict_avoidance=on   staging writes and chunk reads strided instead of contiguous
//   GPU7 reduction=cublas             partials in the transposed layout, summed by gemv
//   GPU8 compile_time_shape=on        len and luf template parameters (float32 workloads)
// The study's rules are checked before any device call: len * luf <= 1024, luf >= wid.
#include <string>
#include <type_traits>

#include "interaction.cuh"
#include "nbody/errors.hpp"
#include "row_reduction.cuh"
#include "simulation_base.cuh"
#include "sqrt_divide.cuh"
#include "variants.cuh"

namespace nbody::cuda {
namespace {

const std::string kId = "cuda.tiled2d_stepwise";
constexpr long kMaxStagedBodies = 1024;  // the study's len * luf <= 1024: 16 KiB of float4 per block
constexpr unsigned int kMaxGridY = 65535;

enum class Staging { global_memory, shared, shared_volatile_counter };

// A body j staged in shared memory: position axes from v[0], mass in v[3] (the study's float4).
template <class Real>
struct alignas(4 * sizeof(Real)) StagedBody {
    Real v[4];
};

// The run-time shape and access strides. Body t of thread column tx is chunk slot
// tx * read_column_stride + t * read_step_stride; staging slot r of thread s is
// s * stage_thread_stride + r * stage_step_stride.
struct Shape {
    int len, luf, staged_per_thread;
    int read_column_stride, read_step_stride;
    int stage_thread_stride, stage_step_stride;
};

// Len == 0: len and luf from `shape`; otherwise compiled in (GPU8, strided access).
template <class Real, int Dim, class InvSqrt, Staging S, int Len, int Luf>
__global__ void stepwise_partials(DeviceBodies<Real, Dim> bodies, Shape shape, PartialRows<Real, Dim> out,
                                 DeviceConstants<Real> c) {
    constexpr bool compiled_shape = Len != 0;
    const int len = compiled_shape ? Len : shape.len;
    const int luf = compiled_shape ? Luf : shape.luf;
    const int read_column_stride = compiled_shape ? 1 : shape.read_column_stride;
    const int read_step_stride = compiled_shape ? Len : shape.read_step_stride;
    const int chunk_start = blockIdx.x * len * luf;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    const Vec<Real, Dim> pi = i < c.n ? bodies.position_of(i) : Vec<Real, Dim>{};
    const int first = threadIdx.x * read_column_stride;
    Vec<Real, Dim> a{};
    if constexpr (S == Staging::global_memory) {
        for (int t = 0; t < luf; ++t) {
            const int j = chunk_start + first + t * read_step_stride;
            if (j < c.n) pull<InvSqrt>(pi, bodies.position_of(j), bodies.mass[j], c.eps2, a);
        }
    } else {
        extern __shared__ __align__(16) unsigned char shared[];
        auto* staged = reinterpret_cast<StagedBody<Real>*>(shared);
        const int thread = threadIdx.y * blockDim.x + threadIdx.x;
        using Counter = std::conditional_t<S == Staging::shared_volatile_counter, volatile int, int>;
        for (Counter r = 0; r < shape.staged_per_thread; r = r + 1) {
            const int k = thread * shape.stage_thread_stride + r * shape.stage_step_stride;
            const int j = chunk_start + k;
            StagedBody<Real> b{};  // zero mass past N: its pull is exactly zero
            if (j < c.n) {
NBODY_UNROLL_AXES
                for (int axis = 0; axis < Dim; ++axis) b.v[axis] = bodies.position[axis][j];
                b.v[3] = bodies.mass[j];
            }
            staged[k] = b;
        }
        __syncthreads();
        for (int t = 0; t < luf; ++t) {
            const StagedBody<Real> b = staged[first + t * read_step_stride];
            Vec<Real, Dim> pj;
NBODY_UNROLL_AXES
            for (int axis = 0; axis < Dim; ++axis) pj[axis] = b.v[axis];
            pull<InvSqrt>(pi, pj, b.v[3], c.eps2, a);
        }
    }
    if (i < c.n) out.store(i, blockIdx.x * len + threadIdx.x, a);
}

template <class Real, int Dim>
using Kernel = void (*)(DeviceBodies<Real, Dim>, Shape, PartialRows<Real, Dim>, DeviceConstants<Real>);

struct Settings {
    int len, wid, luf;
    bool rsqrt, shared_memory, register_reduction, bank_conflict_avoidance, compile_time_shape;
    std::string reduction;
};

bool switched_on(const TuningValues& t, const std::string& name) { return t.at(name) == "on"; }

Settings settings_of(const TuningValues& t) {
    return {.len = static_cast<int>(tuning_int(t, "len")),
            .wid = static_cast<int>(tuning_int(t, "wid")),
            .luf = static_cast<int>(tuning_int(t, "luf")),
            .rsqrt = switched_on(t, "rsqrt"),
            .shared_memory = switched_on(t, "shared_memory"),
            .register_reduction = switched_on(t, "register_reduction"),
            .bank_conflict_avoidance = switched_on(t, "bank_conflict_avoidance"),
            .compile_time_shape = switched_on(t, "compile_time_shape"),
            .reduction = t.at("reduction")};
}

// The study's rules and ours, as UsageErrors naming the rule, before the base class touches the device.
const TuningValues& checked(const Problem& p, const TuningValues& t) {
    const Settings s = settings_of(t);
    const auto shape = "len=" + std::to_string(s.len) + " wid=" + std::to_string(s.wid) + " luf=" + std::to_string(s.luf);
    if (static_cast<long>(s.len) * s.luf > kMaxStagedBodies)
        throw UsageError(kId + ": " + shape + " breaks the published 2D tiling study's rule len * luf <= 1024 (a block stages len * luf bodies, at most 16 KiB)");
    if (s.luf < s.wid)
        throw UsageError(kId + ": " + shape + " breaks the published 2D tiling study's rule luf >= wid (each thread stages luf / wid >= 1 bodies)");
    if (!s.shared_memory && (s.register_reduction || s.bank_conflict_avoidance))
        throw UsageError(kId + ": register_reduction=on and bank_conflict_avoidance=on change the shared-memory staging; they need shared_memory=on");
    if (s.compile_time_shape && !(s.rsqrt && s.shared_memory && s.bank_conflict_avoidance))
        throw UsageError(kId + ": compile_time_shape=on (GPU8) is compiled on the ladder's GPU7 kernel only: it needs rsqrt=on, shared_memory=on and bank_conflict_avoidance=on");
    if (s.compile_time_shape && p.workload.precision != Precision::fp32)
        throw UsageError(kId + ": compile_time_shape=on is compiled for the float32 workloads only, not " + to_string(p.workload));
    if ((p.n + s.wid - 1) / s.wid > kMaxGridY)
        throw UsageError(kId + ": N=" + std::to_string(p.n) + " needs more than 65535 blocks of wid=" + std::to_string(s.wid) + " bodies");
    return t;
}

template <class Real, int Dim, Staging S>
Kernel<Real, Dim> runtime_shape_kernel(bool rsqrt) {
    if (rsqrt) return stepwise_partials<Real, Dim, DeviceRsqrt, S, 0, 0>;
    return stepwise_partials<Real, Dim, SqrtDivide, S, 0, 0>;
}

// GPU8: the study's len x luf pairs with len * luf <= 1024, compiled in.
template <class Real, int Dim, Staging S>
Kernel<Real, Dim> compiled_shape_kernel(int len, int luf) {
    if constexpr (std::is_same_v<Real, float>) {
        if (len == 1 && luf == 256) return stepwise_partials<Real, Dim, DeviceRsqrt, S, 1, 256>;
        if (len == 1 && luf == 512) return stepwise_partials<Real, Dim, DeviceRsqrt, S, 1, 512>;
        if (len == 1 && luf == 1024) return stepwise_partials<Real, Dim, DeviceRsqrt, S, 1, 1024>;
        if (len == 2 && luf == 256) return stepwise_partials<Real, Dim, DeviceRsqrt, S, 2, 256>;
        if (len == 2 && luf == 512) return stepwise_partials<Real, Dim, DeviceRsqrt, S, 2, 512>;
        if (len == 4 && luf == 256) return stepwise_partials<Real, Dim, DeviceRsqrt, S, 4, 256>;
    }
    throw std::logic_error(kId + ": no kernel compiled for len=" + std::to_string(len) + " luf=" + std::to_string(luf));
}

template <class Real, int Dim>
Kernel<Real, Dim> kernel_for(const Settings& s) {
    if (!s.shared_memory) return runtime_shape_kernel<Real, Dim, Staging::global_memory>(s.rsqrt);
    if (s.compile_time_shape) {
        if (s.register_reduction) return compiled_shape_kernel<Real, Dim, Staging::shared_volatile_counter>(s.len, s.luf);
        return compiled_shape_kernel<Real, Dim, Staging::shared>(s.len, s.luf);
    }
    if (s.register_reduction) return runtime_shape_kernel<Real, Dim, Staging::shared_volatile_counter>(s.rsqrt);
    return runtime_shape_kernel<Real, Dim, Staging::shared>(s.rsqrt);
}

Shape shape_of(const Settings& s) {
    const int threads = s.len * s.wid;
    const int staged_per_thread = s.luf / s.wid;  // len * luf bodies over len * wid threads
    if (s.bank_conflict_avoidance)  // neighbouring threads on neighbouring slots
        return {s.len, s.luf, staged_per_thread, 1, s.len, 1, threads};
    return {s.len, s.luf, staged_per_thread, s.luf, 1, staged_per_thread, 1};  // each thread a contiguous run
}

template <class Real, int Dim>
class Tiled2dStepwise final : public SoaSimulation<Real, Dim> {
public:
    Tiled2dStepwise(const Problem& p, const TuningValues& t)
        : SoaSimulation<Real, Dim>(p, checked(p, t)),
          settings_(settings_of(t)),
          block_(static_cast<unsigned int>(settings_.len), static_cast<unsigned int>(settings_.wid)),
          grid_(blocks_for(p.n, static_cast<unsigned int>(settings_.len * settings_.luf)),
                blocks_for(p.n, static_cast<unsigned int>(settings_.wid))),
          shape_(shape_of(settings_)),
          shared_bytes_(settings_.shared_memory ? settings_.len * settings_.luf * sizeof(StagedBody<Real>) : 0),
          kernel_(kernel_for<Real, Dim>(settings_)),
          reducer_(p.n, static_cast<std::size_t>(grid_.x) * block_.x, settings_.reduction) {
        require_block_fits(reinterpret_cast<const void*>(kernel_), block_.x * block_.y, kId);
    }

private:
    void compute_pull() override {
        kernel_<<<grid_, block_, shared_bytes_>>>(this->bodies(), shape_, reducer_.destination(), this->constants_);
        NBODY_CUDA_CHECK_LAUNCH();
        reducer_.sum(this->pull());
    }

    Settings settings_;
    dim3 block_, grid_;
    Shape shape_;
    std::size_t shared_bytes_;
    Kernel<Real, Dim> kernel_;
    RowReducer<Real, Dim> reducer_;  // owns the partials: N rows of gridDim.x * len
};

TuningParameter choice(std::string name, std::string description, std::string default_value,
                       std::vector<std::string> values) {
    return {.name = std::move(name),
            .description = std::move(description),
            .default_value = std::move(default_value),
            .allowed_values = std::move(values)};
}

TuningParameter on_off(std::string name, std::string description, std::string default_value) {
    return choice(std::move(name), std::move(description), std::move(default_value), {"on", "off"});
}

}  // namespace

VariantDescriptor tiled2d_stepwise_variant() {
    TuningParameter reduction = reduction_tuning();
    reduction.default_value = "cublas";  // the defaults are the study's GPU7
    return cuda_descriptor(
        kId, "2D tiling as published (one partial per thread), its steps GPU2-GPU8 as tunings",
        {choice("len", "threads per body (the study's blockDim.x), each summing luf bodies j; len * luf <= 1024", "1",
                {"1", "2", "4"}),
         choice("wid", "bodies per block (the study's blockDim.y); wid <= luf", "256", {"64", "128", "256", "512"}),
         choice("luf", "bodies j per thread (the study's loop unrolling factor)", "1024", {"256", "512", "1024"}),
         on_off("rsqrt", "GPU3: hardware reciprocal square root (off: sqrt and divide)", "on"),
         on_off("shared_memory", "GPU4: stage the block's len * luf bodies j in shared memory (off: read them from global memory)", "on"),
         on_off("register_reduction", "GPU5: volatile staging-loop counter, the study's register cut", "on"),
         on_off("bank_conflict_avoidance", "GPU6: strided staging writes and chunk reads", "on"),
         on_off("compile_time_shape", "GPU8: len and luf compiled in (float32 workloads)", "off"),
         reduction, map_tuning()},
        [](const Problem& p, const TuningValues& t) { return make_for_workload<Tiled2dStepwise>(p, t); },
        // lowest measured 0.166; the partials summed in a grouping the tunings fix
        {.workloads = WorkloadSupport::every(), .expected_efficiency = 0.508, .full_rate_bodies = 8192, .step_overhead_s = 3e-05, .reproducibility = Reproducibility::order_fixed});
}

}  // namespace nbody::cuda
