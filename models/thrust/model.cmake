# Thrust: one source (thrust_simulation.inl) on Thrust's CUDA backend (nvcc, GPU) and on its OpenMP
# and TBB backends (the C++ compiler, CPU): thrust.<variant>@cuda, @omp, @tbb. The headers are the
# CUDA toolkit's CCCL (Thrust 3), which the host compiler also takes for the CPU backends; without a
# toolkit, Debian's libthrust-dev (/usr/include/thrust). After the OpenMP and CUDA models: a backend
# is built where its model is. In the build where it has at least one backend.
option(NBODY_ENABLE_THRUST "Build the Thrust variants (models/thrust/) on every backend found" ON)
set(NBODY_WITH_THRUST OFF)
set(nbody_thrust_backends "")
if(NOT NBODY_ENABLE_THRUST)
  set(NBODY_MODEL_STATUS_THRUST "off: NBODY_ENABLE_THRUST=OFF")
else()
  find_path(NBODY_THRUST_INCLUDE_DIR thrust/version.h
            HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include
            PATH_SUFFIXES cccl .
            DOC "folder holding thrust/version.h (the CUDA toolkit's include/cccl, or /usr/include)")
  if(NOT NBODY_THRUST_INCLUDE_DIR)
    set(NBODY_MODEL_STATUS_THRUST "off: no Thrust headers found (the CUDA toolkit's include/cccl, or on Debian libthrust-dev); set NBODY_THRUST_INCLUDE_DIR")
  else()
    file(STRINGS ${NBODY_THRUST_INCLUDE_DIR}/thrust/version.h nbody_thrust_version_line REGEX "#define THRUST_VERSION [0-9]+")
    string(REGEX MATCH "[0-9]+" nbody_thrust_version_number "${nbody_thrust_version_line}")
    math(EXPR nbody_thrust_major "${nbody_thrust_version_number} / 100000")
    math(EXPR nbody_thrust_minor "${nbody_thrust_version_number} / 100 % 1000")
    math(EXPR nbody_thrust_patch "${nbody_thrust_version_number} % 100")
    set(nbody_thrust_version "${nbody_thrust_major}.${nbody_thrust_minor}.${nbody_thrust_patch}")
    if(NBODY_WITH_CUDA)
      list(APPEND nbody_thrust_backends cuda)
    endif()
    if(NBODY_WITH_OPENMP)
      list(APPEND nbody_thrust_backends omp)
    endif()
    find_package(TBB QUIET CONFIG)
    if(TBB_FOUND)
      list(APPEND nbody_thrust_backends tbb)
    endif()
    if(NOT nbody_thrust_backends)
      set(NBODY_MODEL_STATUS_THRUST "off: no Thrust backend here (CUDA off, no OpenMP, no TBB: on Debian libtbb-dev)")
    else()
      string(REPLACE ";" "," nbody_thrust_backends_text "${nbody_thrust_backends}")
      set(NBODY_WITH_THRUST ON)
      set(NBODY_MODEL_STATUS_THRUST "on (Thrust ${nbody_thrust_version}; backends ${nbody_thrust_backends_text})")
    endif()
  endif()
endif()
# PACKAGES (scripts/setup.sh): oneTBB, the TBB backend.
nbody_register_model(NAME thrust TITLE Thrust IN_BUILD ${NBODY_WITH_THRUST} STATUS "${NBODY_MODEL_STATUS_THRUST}"
                     REPORT_ORDER 70 PACKAGES libtbb-dev)
