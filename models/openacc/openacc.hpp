#pragma once
// The OpenACC model's interface between its two libraries: the compute code (naive.cpp,
// multi_i.cpp, openacc_simulation.hpp), compiled with -fopenacc into the shared library
// nbody_openacc_kernels, and the registration (register.cpp), compiled like the rest of the suite.
// The compute code is a shared library because GCC 12's nvptx mkoffload links one offload image
// for either OpenACC or OpenMP, never both (it fails with "either '-fopenacc' or '-fopenmp' must be
// set" when given both), and the omp_target model's OpenMP offload is in the same binary: each
// shared object registers an image of its own with libgomp.
#include <memory>
#include <string>

#include "nbody/variant.hpp"

namespace nbody::openacc {

// Where a simulation runs: the GPU (a listed GPU variant refuses to start without one), the GPU or
// libgomp's host fallback when there is none (the model's tests: CI checks the GPU code path on
// the host), or the host by the constructs' `if` clauses (openacc.*@host).
enum class Target { gpu_required, gpu_or_host_fallback, host };

// Available when the build offloads and libgomp finds an NVIDIA device; otherwise the reason.
Availability gpu_availability();

// The simulation of variant `name` ("naive", "multi_i") on `target`; std::runtime_error for
// gpu_required without a device.
std::unique_ptr<Simulation> create_simulation(const std::string& name, const Problem& problem,
                                              const TuningValues& tuning, Target target);

// In nbody_openacc_kernels. `on_gpu`: the constructs' `if` clauses.
int nvidia_devices();  // acc_get_num_devices(acc_device_nvidia)
// OpenACC's initialisation of the GPU, once per process and only where there is one: before the
// first GPU simulation, and before the omp_target model's first target construct
// (nbody/libgomp_device.hpp says why).
void initialise_gpu();
std::unique_ptr<Simulation> make_naive(const Problem& problem, bool on_gpu);
std::unique_ptr<Simulation> make_multi_i(const Problem& problem, int bodies, bool on_gpu);

}  // namespace nbody::openacc
