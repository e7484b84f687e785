#pragma once
// From a workload's run-time precision and dimension to the template instantiation that runs it,
// written once for every model. `f` is a generic lambda with template parameters, e.g.
//
//     return dispatch_workload(problem.workload, [&]<class Real, int Dim>() -> std::unique_ptr<Simulation> {
//         return std::make_unique<MySimulation<Real, Dim>>(problem, tuning);
//     });
//
// Every branch must return the same type. Host code only (nvcc and nvcc_wrapper compile it in .cu
// files and Kokkos sources alike).
#include <memory>
#include <string>
#include <utility>

#include "nbody/bodies.hpp"
#include "nbody/errors.hpp"
#include "nbody/variant.hpp"
#include "nbody/workload.hpp"

namespace nbody {

// dispatch_precision (f.template operator()<Real>() for a precision) is bodies.hpp's, beside the
// state it also builds (make_host_state).

// f.template operator()<Dim>() with Dim 2 or 3; UsageError for any other dimension.
template <class F>
decltype(auto) dispatch_dim(int dim, F&& f) {
    if (dim == 2) return f.template operator()<2>();
    if (dim == 3) return f.template operator()<3>();
    throw UsageError("dimension " + std::to_string(dim) + " is not 2 or 3");
}

// f.template operator()<Real, Dim>() for the workload's precision and dimension (the integrator
// stays a run-time property).
template <class F>
decltype(auto) dispatch_workload(const Workload& workload, F&& f) {
    return dispatch_precision(workload.precision, [&]<class Real>() -> decltype(auto) {
        return dispatch_dim(workload.dim, [&]<int Dim>() -> decltype(auto) { return f.template operator()<Real, Dim>(); });
    });
}

// The simulation of `problem`'s workload: Sim<Real, Dim>(problem, args...) for its precision and
// dimension.
template <template <class, int> class Sim, class... Args>
std::unique_ptr<Simulation> make_for_workload(const Problem& problem, const Args&... args) {
    return dispatch_workload(problem.workload, [&]<class Real, int Dim>() -> std::unique_ptr<Simulation> {
        return std::make_unique<Sim<Real, Dim>>(problem, args...);
    });
}

// The simulation of `problem`'s precision: Sim<Real>(problem, args...) (a model whose state
// handles both dimensions at run time).
template <template <class> class Sim, class... Args>
std::unique_ptr<Simulation> make_for_precision(const Problem& problem, const Args&... args) {
    return dispatch_precision(problem.workload.precision, [&]<class Real>() -> std::unique_ptr<Simulation> {
        return std::make_unique<Sim<Real>>(problem, args...);
    });
}

}  // namespace nbody
