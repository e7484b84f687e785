#include "platform/distributed.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "io/io.hpp"
#include "nbody/errors.hpp"
#ifdef NBODY_WITH_MPI
#include "platform/mpi_communicator.hpp"
#endif

namespace nbody {

LaunchEnvironment launch_environment(const std::function<const char*(const char*)>& read_variable) {
    LaunchEnvironment launch;
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
        if (const char* value = read_variable(name)) {
            launch.under_launcher = true;
            launch.world_size = std::atoi(value);
            launch.evidence = std::string(name) + "=" + value;
            return launch;
        }
    }
    if (const char* value = read_variable("PMIX_RANK")) {
        launch.under_launcher = true;
        launch.evidence = std::string("PMIX_RANK=") + value;
    }
    return launch;
}

namespace {

// The communicator that std::terminate ends every rank through; set while a DistributedRun lives.
Communicator* terminating_communicator = nullptr;

[[noreturn]] void end_every_rank_on_terminate() {
    std::string what = "terminated";
    if (const std::exception_ptr current = std::current_exception()) {
        try {
            std::rethrow_exception(current);
        } catch (const std::exception& e) {
            what = std::string("terminated by an uncaught exception: ") + e.what();
        } catch (...) {
            what = "terminated by an uncaught exception of unknown type";
        }
    }
    if (terminating_communicator != nullptr) terminating_communicator->abort_all(1, what);
    std::abort();
}

}  // namespace

struct DistributedRun::MpiState {
#ifdef NBODY_WITH_MPI
    MpiState(int& argc, char**& argv) : environment(argc, argv) {}
    MpiEnvironment environment;
#endif
};

DistributedRun::DistributedRun(int& argc, char**& argv) {
    const LaunchEnvironment launch = launch_environment([](const char* name) { return std::getenv(name); });
#ifdef NBODY_WITH_MPI
    if (launch.under_launcher) {
        mpi_ = std::make_unique<MpiState>(argc, argv);
        communicator_ = make_mpi_communicator();
    }
#else
    (void)argc;
    (void)argv;
    if (launch.under_launcher && launch.world_size != 1)
        throw UsageError("started by an MPI launcher (" + launch.evidence +
                         ") but this nbody-bench was built without MPI: every rank would run the whole simulation "
                         "alone; configure with MPI (apt-get install libopenmpi-dev) or run without mpirun");
#endif
    if (!communicator_) communicator_ = std::make_unique<SingleProcessCommunicator>();
    terminating_communicator = communicator_.get();
    std::set_terminate(end_every_rank_on_terminate);
}

DistributedRun::DistributedRun() : communicator_(std::make_unique<SingleProcessCommunicator>()) {}

DistributedRun& DistributedRun::single_process() {
    static DistributedRun single;
    return single;
}

DistributedRun::~DistributedRun() {
    if (terminating_communicator == communicator_.get()) terminating_communicator = nullptr;
    communicator_.reset();
    mpi_.reset();  // MPI_Finalize after the last collective
}

void DistributedRun::fail(int exit_status, std::string_view message) {
    communicator_->abort_all(exit_status, message);
    std::abort();  // abort_all never returns; a virtual call does not tell the compiler so
}

namespace {

// The option argument `i` of `arguments` belongs to, with its value: "--seed 7" for either word of
// "--seed 7", "--allow-long" for a flag, 'run' for a word that follows no option (the subcommand, a
// matrix file).
std::string option_at(const std::vector<std::string>& arguments, std::size_t i) {
    const auto is_option = [&](std::size_t k) { return arguments[k].size() > 1 && arguments[k][0] == '-'; };
    // An option's value as typed when it is short and plain, quoted and escaped otherwise.
    const auto value = [&](std::size_t k) {
        const std::string& text = arguments[k];
        const bool plain = !text.empty() && text.size() <= 40 &&
                           std::all_of(text.begin(), text.end(), [](char c) { return c > ' ' && c < 127 && c != '\''; });
        return plain ? text : quoted_excerpt(text);
    };
    if (is_option(i)) return i + 1 < arguments.size() && !is_option(i + 1) ? arguments[i] + " " + value(i + 1) : value(i);
    if (i > 0 && is_option(i - 1)) return arguments[i - 1] + " " + value(i);
    return quoted_excerpt(arguments[i]);
}

}  // namespace

std::string command_line_difference(const std::vector<std::string>& rank0, const std::vector<std::string>& mine, int my_rank) {
    std::size_t i = 0;
    while (i < rank0.size() && i < mine.size() && rank0[i] == mine[i]) ++i;
    if (i == rank0.size() && i == mine.size()) return "";
    const std::string rank = "rank " + std::to_string(my_rank);
    if (i == rank0.size()) return rank + " was started with " + option_at(mine, i) + ", rank 0 without it";
    if (i == mine.size()) return rank + " was started without " + option_at(rank0, i) + ", rank 0 with it";
    return rank + " was started with " + option_at(mine, i) + ", rank 0 with " + option_at(rank0, i);
}

void DistributedRun::require_same_command_line(int argc, char** argv) {
    if (!distributed()) return;
    Communicator& ranks = *communicator_;
    const std::vector<std::string> mine(argv + std::min(argc, 1), argv + argc);
    std::string joined;  // each argument followed by a NUL, which no argument holds
    for (const std::string& argument : mine) joined += argument + '\0';
    // Rank 0's length first (a fixed size), then rank 0's arguments (a size every rank now knows).
    std::int64_t rank0_length = static_cast<std::int64_t>(joined.size());
    ranks.broadcast(std::as_writable_bytes(std::span(&rank0_length, 1)), 0);
    std::string rank0_joined = ranks.rank() == 0 ? joined : std::string(static_cast<std::size_t>(rank0_length), '\0');
    ranks.broadcast(std::as_writable_bytes(std::span(rank0_joined.data(), rank0_joined.size())), 0);
    std::vector<std::int32_t> differs(static_cast<std::size_t>(ranks.size()), 0);
    differs[static_cast<std::size_t>(ranks.rank())] = rank0_joined != joined;
    ranks.allreduce_sum(std::span<std::int32_t>(differs));
    const auto first = std::find(differs.begin(), differs.end(), 1);
    if (first == differs.end()) return;
    const int reporting = static_cast<int>(first - differs.begin());
    if (ranks.rank() == reporting) {
        std::vector<std::string> rank0;
        for (std::size_t start = 0; start < rank0_joined.size();) {
            const std::size_t end = rank0_joined.find('\0', start);
            rank0.push_back(rank0_joined.substr(start, end - start));
            start = end + 1;
        }
        fail(2, "nbody-bench: " + command_line_difference(rank0, mine, reporting) +
                    ": every rank of a run must be started with the same command line (docs/scaling.md)");
    }
    ranks.barrier();  // never passed: the reporting rank ends every rank
    fail(2, "nbody-bench: rank " + std::to_string(reporting) + " was started with another command line than rank 0");
}

std::vector<std::string> allgather_strings(Communicator& communicator, std::string_view text) {
    constexpr std::size_t bytes_per_rank = 256;  // 64 int32 per rank, NUL-padded
    constexpr std::size_t words_per_rank = bytes_per_rank / sizeof(std::int32_t);
    const auto ranks = static_cast<std::size_t>(communicator.size());
    const BlockDecomposition decomposition(ranks * words_per_rank, communicator.size());
    std::vector<std::int32_t> words(decomposition.bodies(), 0);
    const BodyBlock own = decomposition.block(communicator.rank());
    const std::size_t length = std::min(text.size(), bytes_per_rank - 1);
    std::copy_n(text.data(), length, reinterpret_cast<char*>(words.data() + own.first));
    communicator.allgather_in_place(std::span<std::int32_t>(words), decomposition);
    std::vector<std::string> texts;
    for (int r = 0; r < communicator.size(); ++r) {
        const char* start = reinterpret_cast<const char*>(words.data() + decomposition.block(r).first);
        texts.emplace_back(start, strnlen(start, bytes_per_rank));
    }
    return texts;
}

std::vector<std::string> DistributedRun::host_names() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) std::snprintf(name, sizeof name, "unknown host");
    return allgather_strings(*communicator_, name);
}

nlohmann::ordered_json DistributedRun::result_fields(const DeviceCommunicator* devices) {
    const std::vector<std::string> hosts = host_names();
    std::map<std::string, int> ranks_on_host;
    for (const std::string& host : hosts) ++ranks_on_host[host];
    int most_on_one_node = 0;
    for (const auto& [host, count] : ranks_on_host) most_on_one_node = std::max(most_on_one_node, count);

    nlohmann::ordered_json fields;
    fields["ranks"] = communicator_->size();
    fields["nodes"] = communicator_->nodes();
    fields["ranks_per_node"] = most_on_one_node;
    fields["communicator"] = communicator_->describe();
    fields["hosts"] = hosts;
    if (devices != nullptr && devices->device() >= 0) {
        fields["gpus"] = allgather_strings(*communicator_, devices->device_description());
        fields["interconnect"] = devices->describe();
    }
    return fields;
}

DeviceCollectives parse_device_collectives(const std::string& text) {
    if (text == "nccl") return DeviceCollectives::nccl;
    if (text == "host-staged") return DeviceCollectives::host_staged;
    if (text == "peer") return DeviceCollectives::peer;
    throw UsageError("--device-collectives must be nccl, host-staged or peer, got '" + text + "'");
}

const char* to_string(DeviceCollectives kind) {
    switch (kind) {
        case DeviceCollectives::nccl: return "nccl";
        case DeviceCollectives::host_staged: return "host-staged";
        case DeviceCollectives::peer: return "peer";
    }
    throw std::logic_error("unknown DeviceCollectives kind");
}

ProblemDistributions::ProblemDistributions(DistributedRun& run, const Registry& registry,
                                           std::optional<DeviceCollectives> chosen)
    : run_(run), registry_(registry), kind_(chosen.value_or(DeviceCollectives::nccl)) {
    if (chosen && !run.distributed())
        std::fprintf(stderr, "nbody-bench: note: --device-collectives %s has no effect in a single process (it chooses how the "
                             "ranks of a GPU variant under mpirun exchange device data)\n",
                     to_string(*chosen));
}

void ProblemDistributions::prepare(const std::vector<const VariantDescriptor*>& variants) {
    if (!spans_ranks()) return;
    const int ranks = run_.communicator().size();
    bool needs_device = false;
    for (const VariantDescriptor* v : variants) {
        if (!v->distributed) {
            std::string distributed;
            for (const VariantDescriptor& d : registry_.all())
                if (d.distributed) distributed += (distributed.empty() ? "" : ", ") + d.id;
            throw UsageError(v->id + " runs on one rank only, started on " + std::to_string(ranks) +
                             " ranks; the variants of this build that run over several ranks: " +
                             (distributed.empty() ? std::string("none") : distributed) + " (see `nbody-bench list`)");
        }
        needs_device |= v->runs_on_gpu;
    }
    if (!needs_device || device_) return;
    const Registry::DeviceCommunicatorFactory* factory = registry_.device_communicator_factory();
    if (factory == nullptr)
        throw UsageError("a GPU variant over " + std::to_string(ranks) +
                         " ranks needs a device communicator, and this build has none (built without CUDA or NCCL: see "
                         "docs/scaling.md)");
    device_ = (*factory)(run_.communicator(), kind_);
}

Distribution ProblemDistributions::of(const VariantDescriptor& variant) const {
    Distribution distribution{.host = &run_.communicator(), .device = nullptr};
    if (spans_ranks() && variant.runs_on_gpu) {
        if (!device_) throw std::logic_error("ProblemDistributions::of before prepare() of " + variant.id);
        distribution.device = device_.get();
    }
    return distribution;
}

int rank0_value(Communicator& communicator, int value) {
    std::int32_t shared = value;
    communicator.broadcast(std::as_writable_bytes(std::span(&shared, 1)), 0);
    return shared;
}

std::optional<StepBreakdownOverRanks> step_breakdown_over_ranks(Simulation& simulation, Communicator& communicator,
                                                                double time_per_step_s) {
    constexpr double kBreakdownSeconds = 0.2;
    constexpr int kMostBreakdownSteps = 20;
    const int wanted = time_per_step_s > 0 ? static_cast<int>(std::min<double>(kMostBreakdownSteps, kBreakdownSeconds / time_per_step_s))
                                           : kMostBreakdownSteps;
    const int steps = rank0_value(communicator, std::max(1, wanted));
    // One step at a time, every rank starting it together: a rank that launched late would show in
    // the others' all-gather wait, as exposed communication that is only the ranks' start skew.
    bool recorded = true;  // the same variant on every rank: all record a breakdown or none does
    const Simulation::StepBreakdown mine = Simulation::StepBreakdown::mean_of(steps, [&] {
        if (!recorded) return std::pair(0.0, 0.0);
        communicator.barrier();
        const std::optional<Simulation::StepBreakdown> one = simulation.step_breakdown(1);
        recorded = one.has_value();
        return one ? std::pair(one->step_s, one->exposed_communication_s) : std::pair(0.0, 0.0);
    });
    if (!recorded) return std::nullopt;
    const int ranks = communicator.size();
    const BlockDecomposition decomposition(2 * static_cast<std::size_t>(ranks), ranks);
    std::vector<double> values(decomposition.bodies(), 0.0);
    const BodyBlock own = decomposition.block(communicator.rank());
    values[own.first] = mine.step_s;
    values[own.first + 1] = mine.exposed_communication_s;
    communicator.allgather_in_place(std::span<double>(values), decomposition);
    double step = 0.0, busy_sum = 0.0, busy_max = 0.0;
    for (int r = 0; r < ranks; ++r) {
        const BodyBlock block = decomposition.block(r);
        const double rank_step = values[block.first];
        const double busy = std::max(0.0, rank_step - values[block.first + 1]);
        step = std::max(step, rank_step);
        busy_sum += busy;
        busy_max = std::max(busy_max, busy);
    }
    StepBreakdownOverRanks breakdown;
    breakdown.step_s = step;
    breakdown.compute_s = busy_sum / ranks;
    breakdown.imbalance_s = busy_max - breakdown.compute_s;
    breakdown.exposed_communication_s = std::max(0.0, step - busy_max);
    breakdown.steps = mine.steps;
    return breakdown;
}

void gather_velocities(HostState& state, const Distribution& distribution) {
    if (!distribution.spans_ranks()) return;
    std::visit(
        [&](auto& bodies) {
            const BlockDecomposition decomposition(bodies.size(), distribution.ranks());
            for (int axis = 0; axis < bodies.dim; ++axis)
                distribution.host->allgather_in_place(std::span(bodies.velocity(axis)), decomposition);
        },
        state);
}

}  // namespace nbody
