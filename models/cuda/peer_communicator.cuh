#pragma once
// The device communicator between the GPUs of one node without a collective library
// (DeviceCollectives::peer, docs/scaling.md): each rank's all-gather kernel writes its block
// straight into every other rank's inbox, GPU memory mapped into its address space through CUDA
// IPC (over NVLink or PCIe peer access), as NCCL's low-latency words: 4 bytes of data and a flag
// in one 8-byte store, which the receiver polls and unpacks into its buffers. One kernel, so a
// CUDA graph captures it; no fence and no handshake on its path.
#include <memory>

#include "nbody/communicator.hpp"

namespace nbody::cuda {

// Collective over every rank of `host`, which must outlive the communicator and run on one node.
// Each rank takes the GPU of its local rank and binds to the CPUs near it. UsageError naming the
// rank when the ranks span nodes, are more than 16 or more than the node's GPUs, or two of their
// GPUs lack peer access.
// The inboxes grow at an all-gather larger than every one before it (a collective host exchange of
// IPC handles), which must come before a stream capture holds an all-gather of that size.
std::unique_ptr<DeviceCommunicator> make_peer_communicator(Communicator& host);

}  // namespace nbody::cuda
