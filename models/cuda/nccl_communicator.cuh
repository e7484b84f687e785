#pragma once
// The device communicator over NCCL (built when NBODY_WITH_NCCL; docs/scaling.md). Bootstrapped
// through the host communicator: rank 0's ncclGetUniqueId is broadcast, then ncclCommInitRank.
// Each rank takes the GPU of its local rank (one process per GPU); more local ranks than GPUs is a
// UsageError naming the rank, the host's GPU count and the local rank. Every NCCL call is checked
// (a failure throws naming the call, the rank and NCCL's message). A peer that dies while this rank
// waits inside a collective is handled by mpirun, which ends every rank of the job.
#include <memory>

#include "nbody/communicator.hpp"

namespace nbody::cuda {

// Collective over every rank of `host`: selects this rank's device (cudaSetDevice) and creates the
// NCCL communicator. Throws when the NCCL library found at run time has another major version than
// the one this build was compiled against.
std::unique_ptr<DeviceCommunicator> make_nccl_communicator(Communicator& host);

}  // namespace nbody::cuda
