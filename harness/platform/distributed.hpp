#pragma once
// The process's place in a distributed run (docs/scaling.md): set up once at the top of main.
// Under mpirun (the environment of Open MPI, PMIx or PMI says so) MPI is initialised and every
// failure ends every rank; without it the single-process communicator stands in and nothing
// changes. Rank 0 alone writes results, state files and progress.
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nbody/communicator.hpp"
#include "nbody/registry.hpp"

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
    // The single process, for commands driven without main's DistributedRun (tests): never MPI.
    static DistributedRun& single_process();
    DistributedRun(const DistributedRun&) = delete;
    DistributedRun& operator=(const DistributedRun&) = delete;

    Communicator& communicator() { return *communicator_; }
    const Communicator& communicator() const { return *communicator_; }
    bool distributed() const { return communicator_->size() > 1; }
    bool writes_output() const { return communicator_->rank() == 0; }

    // Every rank must run the same command line: each rank compares the arguments after the
    // program's name with rank 0's right after MPI starts, through messages whose sizes every rank
    // knows beforehand, so that ranks given other options or another subcommand can neither hang
    // nor truncate a message. The lowest rank that differs ends every rank with exit status 2,
    // naming the first option that differs (command_line_difference). Nothing in a single process.
    // A collective: every rank calls it, before any other.
    void require_same_command_line(int argc, char** argv);

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
    DistributedRun();  // single_process()
    struct MpiState;
    std::unique_ptr<MpiState> mpi_;
    std::unique_ptr<Communicator> communicator_;
};

// How the arguments `mine` of rank `my_rank` differ from rank 0's, at the first argument that
// differs, with the option it belongs to: "rank 1 was started with --seed 7, rank 0 with --seed 42",
// "rank 1 was started with --allow-long, rank 0 without it"; "" when they are the same.
std::string command_line_difference(const std::vector<std::string>& rank0, const std::vector<std::string>& mine, int my_rank);

// --device-collectives: "nccl", "host-staged" or "peer"; UsageError naming the option otherwise.
DeviceCollectives parse_device_collectives(const std::string& text);
const char* to_string(DeviceCollectives kind);

// The distributions a command gives the problems it builds: every rank builds the same Problem,
// with `distribution.host` the run's communicator and, for a distributed GPU variant over several
// ranks, `distribution.device` the model's device communicator (one per process, created once).
class ProblemDistributions {
public:
    // `chosen`: --device-collectives as given, nullopt when it was not (NCCL). Given in a single
    // process, where no device data moves between ranks, a note on stderr says it has no effect.
    ProblemDistributions(DistributedRun& run, const Registry& registry, std::optional<DeviceCollectives> chosen);
    ProblemDistributions(const ProblemDistributions&) = delete;
    ProblemDistributions& operator=(const ProblemDistributions&) = delete;

    // Checks that every variant can run over this run's ranks and creates the device communicator
    // when one of them needs it (a collective: every rank calls it with the same variants).
    // UsageError (exit 2) over several ranks for a variant that is not distributed (naming the
    // distributed ones), or a distributed GPU variant in a build without a device communicator.
    void prepare(const std::vector<const VariantDescriptor*>& variants);
    // The distribution of a problem of `variant` (prepared).
    Distribution of(const VariantDescriptor& variant) const;
    bool spans_ranks() const { return run_.distributed(); }
    bool writes_output() const { return run_.writes_output(); }
    Communicator& host() { return run_.communicator(); }
    DistributedRun& run() { return run_; }
    // DistributedRun::result_fields with this run's device communicator (a collective).
    nlohmann::ordered_json result_fields() { return run_.result_fields(device_.get()); }

private:
    DistributedRun& run_;
    const Registry& registry_;
    DeviceCollectives kind_;
    std::unique_ptr<DeviceCommunicator> device_;
};

// Rank 0's `value` on every rank (a collective): where each rank would decide on its own clock
// (how many more steps to time), every rank takes rank 0's decision.
int rank0_value(Communicator& communicator, int value);

// Over several ranks download() leaves the velocities of the other ranks' blocks unspecified: the
// velocities of every block to every rank (a collective). Nothing to do in a single process.
void gather_velocities(HostState& state, const Distribution& distribution);

// Every rank's `text` (truncated to 255 bytes), in rank order, through the host all-gather.
std::vector<std::string> allgather_strings(Communicator& communicator, std::string_view text);

// A step split over every rank (docs/scaling.md, "Per-step breakdown"), from each rank's device
// events: compute is the ranks' mean time not waiting on communication, imbalance the slowest
// rank's excess over that mean, exposed communication the rest of the step (the slowest rank's wait).
struct StepBreakdownOverRanks {
    double step_s = 0.0;
    double compute_s = 0.0;
    double exposed_communication_s = 0.0;
    double imbalance_s = 0.0;
    int steps = 0;  // each rank's further steps, each synchronised, the breakdown is the mean of
};

// Runs the further steps on every rank (about 0.2 s, 1 to 20 steps, from `time_per_step_s`, rank
// 0's count) and combines them; nullopt when the simulation records no breakdown. Collective:
// every rank calls it. Advances the simulation's state.
std::optional<StepBreakdownOverRanks> step_breakdown_over_ranks(Simulation& simulation, Communicator& communicator,
                                                                double time_per_step_s);

}  // namespace nbody
