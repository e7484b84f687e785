#include "nbody/communicator.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "nbody/errors.hpp"

namespace nbody {

BlockDecomposition::BlockDecomposition(std::size_t bodies, int ranks) : bodies_(bodies), ranks_(ranks), capacity_(0) {
    if (ranks < 1) throw UsageError("a block decomposition needs at least 1 rank, got " + std::to_string(ranks));
    const auto r = static_cast<std::size_t>(ranks);
    capacity_ = (bodies + r - 1) / r;
}

BodyBlock BlockDecomposition::block(int rank) const {
    if (rank < 0 || rank >= ranks_)
        throw UsageError("rank " + std::to_string(rank) + " is outside the decomposition's " + std::to_string(ranks_) + " ranks");
    const std::size_t start = capacity_ * static_cast<std::size_t>(rank);
    if (start >= bodies_) return {bodies_, 0};
    return {start, std::min(capacity_, bodies_ - start)};
}

namespace {

void check_single(std::size_t values, const BlockDecomposition& decomposition) {
    if (decomposition.ranks() != 1)
        throw UsageError("a single-process communicator was given a decomposition over " +
                         std::to_string(decomposition.ranks()) + " ranks");
    if (values != decomposition.bodies())
        throw UsageError("all-gather of " + std::to_string(values) + " values for a decomposition of " +
                         std::to_string(decomposition.bodies()) + " bodies");
}

}  // namespace

void SingleProcessCommunicator::allgather_in_place(std::span<float> all, const BlockDecomposition& decomposition) {
    check_single(all.size(), decomposition);
}
void SingleProcessCommunicator::allgather_in_place(std::span<double> all, const BlockDecomposition& decomposition) {
    check_single(all.size(), decomposition);
}
void SingleProcessCommunicator::allgather_in_place(std::span<std::int32_t> all, const BlockDecomposition& decomposition) {
    check_single(all.size(), decomposition);
}

void SingleProcessCommunicator::broadcast(std::span<std::byte>, int root) {
    if (root != 0) throw UsageError("broadcast from rank " + std::to_string(root) + " in a single process");
}

void SingleProcessCommunicator::abort_all(int exit_status, std::string_view message) {
    std::fprintf(stderr, "rank 0 of 1: %.*s\n", static_cast<int>(message.size()), message.data());
    std::fflush(stderr);
    std::_Exit(exit_status == 0 ? 1 : exit_status);
}

void SingleDeviceCommunicator::allgather_in_place(std::span<float* const>, const BlockDecomposition& decomposition, void*) {
    check_single(decomposition.bodies(), decomposition);
}
void SingleDeviceCommunicator::allgather_in_place(std::span<double* const>, const BlockDecomposition& decomposition, void*) {
    check_single(decomposition.bodies(), decomposition);
}

}  // namespace nbody
