#pragma once
// The GPU and the CPUs of one rank of a distributed run (docs/scaling.md), shared by the device
// communicators that start one rank per GPU.
#include <string>

namespace nbody::cuda {

// Binds this process to the CPUs near its GPU (the PCI device's local_cpulist), whatever the
// launcher or OMP_PLACES chose: a rank fed from the far socket pays a NUMA hop on every launch and
// copy. Local ranks whose GPUs share those CPUs get disjoint equal shares, in device order.
// Returns what was done, for the run's output and results; never fails the run.
std::string bind_near_gpu(int device, int gpus_in_use);

}  // namespace nbody::cuda
