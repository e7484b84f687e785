# Decides whether this build can run one simulation over several ranks (docs/scaling.md) and says
# why not when it cannot. MPI is decided here, before the models; NCCL by nbody_find_nccl(), which
# the CUDA model calls once it is decided.
#  - MPI (Debian's libopenmpi-dev): host collectives, launching with mpirun. Only MPI's C interface
#    is linked (libmpi.so.40): Open MPI 5 no longer ships the C++ bindings.
#  - NCCL (libnccl.so.2 from the CUDA installation): device collectives, bootstrapped through MPI,
#    so it needs MPI and CUDA. Linked dynamically: the GPU machines have libnccl.so.2 system-wide,
#    and the library (about 200 MB) is too large to carry beside the binary.
# Sets NBODY_WITH_MPI, NBODY_WITH_NCCL, NBODY_MPI_STATUS, NBODY_NCCL_STATUS, NBODY_MPIEXEC.
option(NBODY_ENABLE_MPI "Build the distributed mode's MPI communicator when MPI (libopenmpi-dev) is found" ON)
option(NBODY_ENABLE_NCCL "Build the NCCL device communicator when MPI, CUDA and NCCL are found" ON)

set(NBODY_WITH_MPI OFF)
set(NBODY_WITH_NCCL OFF)
set(NBODY_MPIEXEC "")
if(NOT NBODY_ENABLE_MPI)
  set(NBODY_MPI_STATUS "off: NBODY_ENABLE_MPI=OFF")
else()
  enable_language(C)  # FindMPI's C component needs it
  find_package(MPI COMPONENTS C QUIET)
  if(MPI_C_FOUND)
    set(NBODY_WITH_MPI ON)
    set(NBODY_MPIEXEC "${MPIEXEC_EXECUTABLE}")
    if(MPIEXEC_EXECUTABLE)
      execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE launcher_version ERROR_QUIET)
      string(REGEX MATCH "^[^\n]+" launcher_version "${launcher_version}")
      set(NBODY_MPI_STATUS "on (MPI ${MPI_C_VERSION}, ${MPI_mpi_LIBRARY}; launcher ${MPIEXEC_EXECUTABLE}: ${launcher_version})")
    else()
      set(NBODY_MPI_STATUS "on (MPI ${MPI_C_VERSION}, ${MPI_mpi_LIBRARY}; no mpirun found: the multi-rank tests are skipped)")
    endif()
  else()
    set(NBODY_MPI_STATUS "off: no MPI found (apt-get install libopenmpi-dev openmpi-bin)")
  endif()
endif()

# NCCL, the device collectives of a GPU model over MPI: called by models/cuda/model.cmake once the
# CUDA decision is made (a macro: it sets NBODY_WITH_NCCL, NBODY_NCCL_STATUS and NCCL's paths in
# the top-level scope).
set(NBODY_NCCL_STATUS "off: needs CUDA (no CUDA model decided)")
macro(nbody_find_nccl)
  if(NOT NBODY_ENABLE_NCCL)
    set(NBODY_NCCL_STATUS "off: NBODY_ENABLE_NCCL=OFF")
  elseif(NOT NBODY_WITH_MPI)
    set(NBODY_NCCL_STATUS "off: needs MPI to bootstrap (MPI is ${NBODY_MPI_STATUS})")
  elseif(NOT NBODY_WITH_CUDA)
    set(NBODY_NCCL_STATUS "off: needs CUDA (CUDA is ${NBODY_MODEL_STATUS_CUDA})")
  else()
    find_path(NBODY_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT}/include)
    find_library(NBODY_NCCL_LIBRARY NAMES nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib)
    if(NBODY_NCCL_INCLUDE_DIR AND NBODY_NCCL_LIBRARY)
      file(STRINGS "${NBODY_NCCL_INCLUDE_DIR}/nccl.h" nccl_version_lines REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
      string(REGEX REPLACE ".*NCCL_MAJOR ([0-9]+).*NCCL_MINOR ([0-9]+).*NCCL_PATCH ([0-9]+).*" "\\1.\\2.\\3" nccl_version "${nccl_version_lines}")
      set(NBODY_WITH_NCCL ON)
      set(NBODY_NCCL_STATUS "on (NCCL ${nccl_version}, ${NBODY_NCCL_LIBRARY}, linked dynamically)")
    else()
      set(NBODY_NCCL_STATUS "off: no nccl.h or libnccl.so beside CUDA ${CUDAToolkit_VERSION}; set NBODY_NCCL_INCLUDE_DIR and NBODY_NCCL_LIBRARY")
    endif()
  endif()
endmacro()

function(nbody_print_distributed_summary)
  message(STATUS "nbody distributed mode:")
  message(STATUS "  MPI     ${NBODY_MPI_STATUS}")
  message(STATUS "  NCCL    ${NBODY_NCCL_STATUS}")
endfunction()
