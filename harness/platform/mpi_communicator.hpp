#pragma once
// The host communicator over MPI (built when NBODY_WITH_MPI): MPI_Allgatherv for the blocks,
// MPI_Allreduce for sums, MPI_Abort to end every rank. Every MPI call is checked: the world
// communicator returns errors instead of aborting at once, and a failed call throws naming the call
// and the rank, so the harness reaches abort_all with a message.
#include <memory>

#include "nbody/communicator.hpp"

namespace nbody {

// Initialises MPI (threads funnelled: OpenMP regions never call MPI) and finalises it when destroyed.
// One per process, created before any MPI call and destroyed after the last.
class MpiEnvironment {
public:
    MpiEnvironment(int& argc, char**& argv);
    ~MpiEnvironment();
    MpiEnvironment(const MpiEnvironment&) = delete;
    MpiEnvironment& operator=(const MpiEnvironment&) = delete;
};

// Over MPI_COMM_WORLD; needs a live MpiEnvironment.
std::unique_ptr<Communicator> make_mpi_communicator();

}  // namespace nbody
