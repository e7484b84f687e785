#pragma once
// The device communicator between the GPUs of one node without a collective library
// (DeviceCollectives::peer, docs/scaling.md): each rank's all-gather kernel writes its block
// straight into every other rank's buffers, mapped into its address space through CUDA IPC (over
// NVLink or PCIe peer access), and the ranks signal each other with counters in device memory. It
// is one kernel, so a CUDA graph captures it, and its floor is a flag's round trip between two
// GPUs rather than a library's launch and protocol.
#include <memory>

#include "nbody/communicator.hpp"

namespace nbody::cuda {

// Collective over every rank of `host`, which must outlive the communicator and run on one node.
// Each rank takes GPU local_rank % (the node's GPU count) and binds to the CPUs near it; one rank
// per GPU is what the exchange is for (ranks sharing a GPU work, as checks do). UsageError naming
// the rank when the ranks span nodes, are more than 16, or two of their GPUs lack peer access.
// Each buffer an all-gather is given is mapped on every rank at its first all-gather (a collective
// host exchange of IPC handles), which must come before a stream capture holds it.
std::unique_ptr<DeviceCommunicator> make_peer_communicator(Communicator& host);

}  // namespace nbody::cuda
