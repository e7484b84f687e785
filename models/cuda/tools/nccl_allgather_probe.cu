// Latency of one in-place ncclAllGather per step, as the N-body step issues it, on G GPUs of one
// host: plain cudaMalloc buffers against ncclMemAlloc buffers registered as a symmetric window
// (NCCL >= 2.27's symmetric kernels). Each size is the bytes every rank contributes.
// Built as the target nccl-allgather-probe where NCCL is on (models/cuda/CMakeLists.txt); run with
// mpirun -np G nccl-allgather-probe, one rank per GPU (docs/scaling.md).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)
#define NK(x) do { ncclResult_t r = (x); if (r != ncclSuccess) { std::fprintf(stderr, "%s: %s\n", #x, ncclGetErrorString(r)); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

static double time_allgathers(ncclComm_t comm, char* buf, size_t per_rank, int rank, cudaStream_t s, bool graph) {
    const int warm = 100, iters = 1000;
    auto one = [&] { NK(ncclAllGather(buf + rank * per_rank, buf, per_rank, ncclInt8, comm, s)); };
    cudaGraphExec_t exec = nullptr;
    if (graph) {
        cudaGraph_t g;
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        one();
        CK(cudaStreamEndCapture(s, &g));
        CK(cudaGraphInstantiate(&exec, g, 0));
        CK(cudaGraphDestroy(g));
    }
    auto launch = [&] { if (graph) CK(cudaGraphLaunch(exec, s)); else one(); };
    for (int i = 0; i < warm; ++i) launch();
    CK(cudaStreamSynchronize(s));
    MPI_Barrier(MPI_COMM_WORLD);
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    CK(cudaEventRecord(a, s));
    for (int i = 0; i < iters; ++i) launch();
    CK(cudaEventRecord(b, s));
    CK(cudaEventSynchronize(b));
    float ms = 0; CK(cudaEventElapsedTime(&ms, a, b));
    if (exec) CK(cudaGraphExecDestroy(exec));
    double us = 1e3 * ms / iters, worst = 0;
    MPI_Allreduce(&us, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, size; MPI_Comm_rank(MPI_COMM_WORLD, &rank); MPI_Comm_size(MPI_COMM_WORLD, &size);
    CK(cudaSetDevice(rank));
    ncclUniqueId id; if (rank == 0) NK(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t comm; NK(ncclCommInitRank(&comm, size, id, rank));
    int version = 0; NK(ncclGetVersion(&version));
    cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    const size_t sizes[] = {16384, 65536, 262144, 1048576, 4194304};
    const size_t most = 4194304 * size;
    char* plain; CK(cudaMalloc(&plain, most));
    void* sym = nullptr; ncclWindow_t win{};
    const bool registered = ncclMemAlloc(&sym, most) == ncclSuccess &&
                            ncclCommWindowRegister(comm, sym, most, &win, NCCL_WIN_COLL_SYMMETRIC) == ncclSuccess;
    if (rank == 0) std::printf("# NCCL %d, %d ranks, symmetric window %s; us per in-place all-gather (slowest rank, mean of 1000)\n# bytes/rank  plain-stream  plain-graph  symmetric-stream  symmetric-graph\n", version, size, registered ? "registered" : "NOT registered");
    for (size_t per : sizes) {
        double p = time_allgathers(comm, plain, per, rank, s, false), pg = time_allgathers(comm, plain, per, rank, s, true);
        double q = registered ? time_allgathers(comm, static_cast<char*>(sym), per, rank, s, false) : -1;
        double qg = registered ? time_allgathers(comm, static_cast<char*>(sym), per, rank, s, true) : -1;
        if (rank == 0) std::printf("%10zu  %10.2f  %10.2f  %10.2f  %10.2f\n", per, p, pg, q, qg);
    }
    if (registered) { NK(ncclCommWindowDeregister(comm, win)); NK(ncclMemFree(sym)); }
    CK(cudaFree(plain));
    NK(ncclCommDestroy(comm));
    MPI_Finalize();
}
