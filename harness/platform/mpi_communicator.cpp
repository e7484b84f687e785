#include "platform/mpi_communicator.hpp"

#include <mpi.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "nbody/errors.hpp"

namespace nbody {

namespace {

int world_rank_or_minus_one() {
    int initialized = 0;
    int finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    int rank = -1;
    if (initialized && !finalized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

void check_mpi(int status, const char* call) {
    if (status == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    if (MPI_Error_string(status, text, &length) != MPI_SUCCESS) length = 0;
    throw std::runtime_error("rank " + std::to_string(world_rank_or_minus_one()) + ": " + call + " failed: " +
                             std::string(text, static_cast<std::size_t>(length)));
}

#define NBODY_MPI_CHECK(call) check_mpi((call), #call)

template <class T>
MPI_Datatype mpi_type();
template <>
MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }
template <>
MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }
template <>
MPI_Datatype mpi_type<std::int32_t>() { return MPI_INT32_T; }
template <>
MPI_Datatype mpi_type<std::int64_t>() { return MPI_INT64_T; }

int as_mpi_count(std::size_t count, const char* what) {
    if (count > static_cast<std::size_t>(INT_MAX))
        throw UsageError(std::string(what) + " of " + std::to_string(count) + " elements exceeds MPI's int count");
    return static_cast<int>(count);
}

class MpiCommunicator final : public Communicator {
public:
    MpiCommunicator() {
        NBODY_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        NBODY_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
        NBODY_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size_));
        MPI_Comm node = MPI_COMM_NULL;
        NBODY_MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node));
        NBODY_MPI_CHECK(MPI_Comm_rank(node, &local_rank_));
        NBODY_MPI_CHECK(MPI_Comm_size(node, &local_size_));
        NBODY_MPI_CHECK(MPI_Comm_free(&node));
        int node_leader = local_rank_ == 0 ? 1 : 0;
        NBODY_MPI_CHECK(MPI_Allreduce(&node_leader, &nodes_, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int length = 0;
        NBODY_MPI_CHECK(MPI_Get_library_version(version, &length));
        library_ = std::string(version, static_cast<std::size_t>(length));
        library_ = library_.substr(0, library_.find_first_of(",\n"));  // "Open MPI v4.1.4"
    }

    int rank() const override { return rank_; }
    int size() const override { return size_; }
    int local_rank() const override { return local_rank_; }
    int local_size() const override { return local_size_; }
    int nodes() const override { return nodes_; }
    std::string describe() const override {
        return "MPI (" + library_ + "), " + std::to_string(size_) + " ranks on " + std::to_string(nodes_) +
               (nodes_ == 1 ? " node" : " nodes");
    }

    void allgather_in_place(std::span<float> all, const BlockDecomposition& decomposition) override { gather(all, decomposition); }
    void allgather_in_place(std::span<double> all, const BlockDecomposition& decomposition) override { gather(all, decomposition); }
    void allgather_in_place(std::span<std::int32_t> all, const BlockDecomposition& decomposition) override {
        gather(all, decomposition);
    }
    void allreduce_sum(std::span<std::int32_t> values) override { reduce(values); }
    void allreduce_sum(std::span<std::int64_t> values) override { reduce(values); }

    void broadcast(std::span<std::byte> bytes, int root) override {
        if (root < 0 || root >= size_)
            throw UsageError("broadcast from rank " + std::to_string(root) + " among " + std::to_string(size_) + " ranks");
        NBODY_MPI_CHECK(MPI_Bcast(bytes.data(), as_mpi_count(bytes.size(), "a broadcast"), MPI_BYTE, root, MPI_COMM_WORLD));
    }

    void barrier() override { NBODY_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); }

    [[noreturn]] void abort_all(int exit_status, std::string_view message) override {
        std::fprintf(stderr, "rank %d of %d: %.*s\n", rank_, size_, static_cast<int>(message.size()), message.data());
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, exit_status == 0 ? 1 : exit_status);
        std::_Exit(exit_status == 0 ? 1 : exit_status);  // MPI_Abort does not return; if it did, still end this rank
    }

private:
    template <class T>
    void gather(std::span<T> all, const BlockDecomposition& decomposition) {
        if (decomposition.ranks() != size_)
            throw UsageError("an all-gather over " + std::to_string(size_) + " ranks was given a decomposition over " +
                             std::to_string(decomposition.ranks()));
        if (all.size() != decomposition.bodies())
            throw UsageError("all-gather of " + std::to_string(all.size()) + " values for a decomposition of " +
                             std::to_string(decomposition.bodies()) + " bodies");
        as_mpi_count(all.size(), "an all-gather");
        std::vector<int> counts(static_cast<std::size_t>(size_));
        std::vector<int> displacements(static_cast<std::size_t>(size_));
        for (int r = 0; r < size_; ++r) {
            const BodyBlock block = decomposition.block(r);
            counts[static_cast<std::size_t>(r)] = static_cast<int>(block.count);
            displacements[static_cast<std::size_t>(r)] = static_cast<int>(block.first);
        }
        NBODY_MPI_CHECK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all.data(), counts.data(), displacements.data(),
                                       mpi_type<T>(), MPI_COMM_WORLD));
    }

    template <class T>
    void reduce(std::span<T> values) {
        NBODY_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, values.data(), as_mpi_count(values.size(), "an all-reduce"), mpi_type<T>(),
                                      MPI_SUM, MPI_COMM_WORLD));
    }

    int rank_ = 0;
    int size_ = 1;
    int local_rank_ = 0;
    int local_size_ = 1;
    int nodes_ = 1;
    std::string library_;
};

}  // namespace

MpiEnvironment::MpiEnvironment(int& argc, char**& argv) {
    int initialized = 0;
    NBODY_MPI_CHECK(MPI_Initialized(&initialized));
    if (initialized) throw std::logic_error("MPI is already initialised: one MpiEnvironment per process");
    int provided = MPI_THREAD_SINGLE;
    NBODY_MPI_CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
    if (provided < MPI_THREAD_FUNNELED) {
        MPI_Finalize();
        throw std::runtime_error("the MPI library offers no MPI_THREAD_FUNNELED support (level " + std::to_string(provided) + ")");
    }
}

MpiEnvironment::~MpiEnvironment() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
}

std::unique_ptr<Communicator> make_mpi_communicator() { return std::make_unique<MpiCommunicator>(); }

}  // namespace nbody
