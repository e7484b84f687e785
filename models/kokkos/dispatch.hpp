#pragma once
// Where a Kokkos simulation's kernels go (launched, or recorded into a graph and replayed), the
// activity map's strategies, and the Views the state lives in.
#include <Kokkos_Core.hpp>
#include <Kokkos_Graph.hpp>

#include <cstddef>
#include <string>

#include "kokkos_spaces.hpp"

namespace nbody::kokkos {

// The state a kernel reads or writes: the bodies (positions, masses, velocities, pulls) or the
// activity map (counts, cells, map values), or both. A recorded graph orders a kernel after the
// last kernels that touched the same state only, so that the map's rewrite of one step runs beside
// the next step's pull kernel.
enum class Touches { bodies, map, bodies_and_map };

// Where a simulation's kernels go: launched on the space one by one (in program order), or, while
// steps are recorded, appended to a Kokkos graph (Kokkos::Experimental::Graph, a CUDA graph on the
// GPU; Kokkos 3.4 has it too), which then replays them with one submission instead of a host launch
// each.
template <class Space>
class Dispatch {
public:
    explicit Dispatch(const Space& space) : space_(space) {}

    const Space& space() const { return space_; }

    template <class Policy, class Functor>
    void parallel_for(const std::string& label, const Policy& policy, const Functor& functor,
                      Touches touches = Touches::bodies) {
        if (!recording_) {
            Kokkos::parallel_for(label, policy, functor);
            return;
        }
        switch (touches) {
            case Touches::bodies:
                last_bodies_ = last_bodies_.then_parallel_for(label, policy, functor);
                chains_joined_ = false;
                break;
            case Touches::map:
                last_map_ = last_map_.then_parallel_for(label, policy, functor);
                chains_joined_ = false;
                break;
            case Touches::bodies_and_map: {
                const Node after =
                    chains_joined_ ? last_bodies_ : Node(Kokkos::Experimental::when_all(last_bodies_, last_map_));
                last_bodies_ = last_map_ = after.then_parallel_for(label, policy, functor);
                chains_joined_ = true;
                break;
            }
        }
    }

    // A graph of the kernels record() dispatches, each after the last ones touching its state.
    template <class Record>
    Kokkos::Experimental::Graph<Space> record(Record record) {
        return Kokkos::Experimental::create_graph(space_, [&](const auto& root) {
            const Recording recording(*this, root);
            record();
        });
    }

private:
    using Node = Kokkos::Experimental::GraphNodeRef<Space>;

    // Appending to a graph from `root` while it lives, however record() leaves.
    struct Recording {
        Recording(Dispatch& dispatch, const Node& root) : dispatch(dispatch) {
            dispatch.last_bodies_ = dispatch.last_map_ = root;
            dispatch.chains_joined_ = true;
            dispatch.recording_ = true;
        }
        ~Recording() {
            dispatch.recording_ = false;
            dispatch.last_bodies_ = dispatch.last_map_ = {};
        }
        Recording(const Recording&) = delete;
        Recording& operator=(const Recording&) = delete;
        Dispatch& dispatch;
    };

    Space space_;
    bool recording_ = false;
    Node last_bodies_, last_map_;  // the last recorded kernels touching each
    bool chains_joined_ = true;    // both are the same node
};

// The steps per recorded graph a `dispatch` tuning value names: launch 0 (every kernel launched
// from the host), graphK K.
int graph_steps_of(const std::string& dispatch);
// Whether a `step_end` tuning value fuses the end of a step into the pull kernel (auto: on the GPU
// in 2D, where it measured faster at every N; docs/performance-kokkos.md).
bool fused_step_end_of(const std::string& step_end, bool runs_on_gpu, int dim);
// dispatch=auto's steps per graph on the GPU.
inline constexpr int kAutoGraphSteps = 16;

// How the per-step activity map is counted (the `map` tuning).
enum class MapStrategy {
    // Counts kept between steps with each body's cell: only bodies that changed cell move a count
    // (atomics), only the cells they left and entered are rewritten. Work O(N) per step, not O(D^2).
    incremental,
    // Full recounts every step: counts cleared, every body counted, the whole D x D map written.
    atomic_counts,  // Kokkos::atomic_add on one shared count array
    scatter_view,   // Kokkos::Experimental::ScatterView: atomics on the GPU, per-thread copies on OpenMP
};

template <class Space, class Real>
using DeviceReals = Kokkos::View<Real*, typename Space::memory_space>;
template <class Space, class Real, int Dim>
using DeviceAxes = Axes<DeviceReals<Space, Real>, Dim>;
template <class Space>
using DeviceCounts = Kokkos::View<int*, typename Space::memory_space>;
template <class Real>
using HostReals = Kokkos::View<Real*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class Real>
using HostConstReals = Kokkos::View<const Real*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// Dim Views of `size` elements named `name` and the axis ("px", "py", ...).
template <class Space, class Real, int Dim>
DeviceAxes<Space, Real, Dim> device_axes(const std::string& name, std::size_t size) {
    static constexpr const char* kAxis[] = {"x", "y", "z"};
    DeviceAxes<Space, Real, Dim> out;
    for (int k = 0; k < Dim; ++k) out.c[k] = DeviceReals<Space, Real>(name + kAxis[k], size);
    return out;
}

}  // namespace nbody::kokkos
