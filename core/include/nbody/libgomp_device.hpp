#pragma once
// GCC's libgomp gives OpenACC and OpenMP offload one device: once an OpenMP target construct has
// initialised the GPU, OpenACC's own initialisation ends the process ("libgomp: device already
// active"), while OpenMP offload runs on a GPU that OpenACC initialised. So a model whose OpenACC
// code shares the process registers how to initialise the GPU for OpenACC (once, and only where
// there is one), and OpenMP offload code calls before_openmp_offload() before its first target
// construct: both models then run in one process, in any order.
#include <functional>

namespace nbody {

void set_openacc_device_initialiser(std::function<void()> initialise);

// Runs the registered initialiser; nothing when none is registered.
void before_openmp_offload();

}  // namespace nbody
