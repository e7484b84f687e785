#pragma once
// The process's place in a distributed run (docs/scaling.md): set up once at the top of main.
// Under mpirun (the environment of Open MPI, PMIx or PMI says so) MPI is initialised and every
// failure ends every rank; without it the single-process communicator stands in and nothing
// changes. Rank 0 alone writes results, state files and progress.
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "nbody/communicator.hpp"

namespace nbody {

// What the process manager's environment says about this process.
struct LaunchEnvironment {
    bool under_launcher = false;  // some rank variable is set
    int world_size = 0;           // ranks in the job; 0 when the variables name no size
    std::string evidence;         // the variable that said so, e.g. "OMPI_COMM_WORLD_SIZE=2"
};

// Reads OMPI_COMM_WORLD_SIZE (Open MPI), PMI_SIZE (MPICH, Slurm's PMI) and PMIX_RANK (PMIx
// launchers, size unknown) through `read_variable` (getenv in the program, a table in tests).
LaunchEnvironment launch_environment(const std::function<const char*(const char*)>& read_variable);

class DistributedRun {
public:
    // Initialises MPI when launched by a process manager and this build has MPI, and from then on
    // a std::terminate on any rank ends every rank. Throws UsageError when launched with more than
    // one rank (or an unknown number) by a build without MPI: G copies of one simulation would
    // each run alone and overwrite each other's results.
    DistributedRun(int& argc, char**& argv);
    ~DistributedRun();
    DistributedRun(const DistributedRun&) = delete;
    DistributedRun& operator=(const DistributedRun&) = delete;

    Communicator& communicator() { return *communicator_; }
    const Communicator& communicator() const { return *communicator_; }
    bool distributed() const { return communicator_->size() > 1; }
    bool writes_output() const { return communicator_->rank() == 0; }

    // A failure on this rank: prints "rank r of G: message" and ends every rank with exit_status
    // (non-zero). In a single process it prints the same line and exits.
    [[noreturn]] void fail(int exit_status, std::string_view message);

    // Each rank's host name, in rank order (a collective: every rank calls it).
    std::vector<std::string> host_names();

    // The fields a result records about the ranks (a collective: every rank calls it):
    //   ranks, nodes, ranks_per_node (the most on any node), communicator, hosts, and from the device
    //   communicator (nullptr on CPU ranks) gpus (each rank's device description) and interconnect.
    nlohmann::ordered_json result_fields(const DeviceCommunicator* devices);

private:
    struct MpiState;
    std::unique_ptr<MpiState> mpi_;
    std::unique_ptr<Communicator> communicator_;
};

// Every rank's `text` (truncated to 255 bytes), in rank order, through the host all-gather.
std::vector<std::string> allgather_strings(Communicator& communicator, std::string_view text);

}  // namespace nbody
