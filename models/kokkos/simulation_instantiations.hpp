#pragma once
// The instantiations of KokkosSimulation (kokkos_simulation.hpp) for every enabled space and
// workload, as one macro: `extern template` in the variants' files, `template` in
// kokkos_simulation.cpp.

// KokkosSimulation's code is the same for every variant: kokkos_simulation.cpp compiles it once per
// enabled space and workload, and a variant's file only declares those instantiations (compiled in
// every variant's file, it is 40 % of the model's compile time).
#define NBODY_KOKKOS_SIMULATIONS_ON(keyword, Space) \
    keyword class KokkosSimulation<Space, float, 2>;  \
    keyword class KokkosSimulation<Space, float, 3>;  \
    keyword class KokkosSimulation<Space, double, 2>; \
    keyword class KokkosSimulation<Space, double, 3>;
#ifdef KOKKOS_ENABLE_SERIAL
#define NBODY_KOKKOS_SIMULATIONS_SERIAL(keyword) NBODY_KOKKOS_SIMULATIONS_ON(keyword, Kokkos::Serial)
#else
#define NBODY_KOKKOS_SIMULATIONS_SERIAL(keyword)
#endif
#ifdef KOKKOS_ENABLE_OPENMP
#define NBODY_KOKKOS_SIMULATIONS_OPENMP(keyword) NBODY_KOKKOS_SIMULATIONS_ON(keyword, Kokkos::OpenMP)
#else
#define NBODY_KOKKOS_SIMULATIONS_OPENMP(keyword)
#endif
#ifdef KOKKOS_ENABLE_CUDA
#define NBODY_KOKKOS_SIMULATIONS_CUDA(keyword) NBODY_KOKKOS_SIMULATIONS_ON(keyword, Kokkos::Cuda)
#else
#define NBODY_KOKKOS_SIMULATIONS_CUDA(keyword)
#endif
// Every enabled space's, the spaces for_each_space() visits.
#define NBODY_KOKKOS_SIMULATIONS(keyword) \
    NBODY_KOKKOS_SIMULATIONS_SERIAL(keyword) NBODY_KOKKOS_SIMULATIONS_OPENMP(keyword) NBODY_KOKKOS_SIMULATIONS_CUDA(keyword)
