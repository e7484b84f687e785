# Decides which programming models this build holds and records why each that is off is off.

# --- OpenMP ---------------------------------------------------------------
set(NBODY_WITH_OPENMP OFF)
if(NOT NBODY_ENABLE_OPENMP)
  set(NBODY_MODEL_STATUS_OPENMP "off: NBODY_ENABLE_OPENMP=OFF")
else()
  find_package(OpenMP COMPONENTS CXX)
  if(OpenMP_CXX_FOUND)
    set(NBODY_WITH_OPENMP ON)
    set(NBODY_MODEL_STATUS_OPENMP "on (OpenMP ${OpenMP_CXX_VERSION})")
  else()
    set(NBODY_MODEL_STATUS_OPENMP "off: the C++ compiler has no OpenMP support")
  endif()
endif()

# --- CUDA -----------------------------------------------------------------
set(NBODY_WITH_CUDA OFF)
if(NOT NBODY_ENABLE_CUDA)
  set(NBODY_MODEL_STATUS_CUDA "off: NBODY_ENABLE_CUDA=OFF")
else()
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)  # the suite's reference GPU (H100); override for others
    endif()
    enable_language(CUDA)
    # CMake 3.25 does not know nvcc's C++20 flag (nvcc has had it since 12.0): teach it.
    if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
      list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
    endif()
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(NBODY_WITH_CUDA ON)
    set(NBODY_MODEL_STATUS_CUDA "on (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, sm_${CMAKE_CUDA_ARCHITECTURES}; variants need a GPU at run time)")
  else()
    set(NBODY_MODEL_STATUS_CUDA "off: no CUDA compiler (nvcc) found; set CMAKE_CUDA_COMPILER")
  endif()
endif()

# --- Kokkos ---------------------------------------------------------------
set(NBODY_WITH_KOKKOS OFF)
if(NOT NBODY_ENABLE_KOKKOS)
  set(NBODY_MODEL_STATUS_KOKKOS "off: NBODY_ENABLE_KOKKOS=OFF")
else()
  include(NbodyKokkos)  # sets NBODY_WITH_KOKKOS and NBODY_MODEL_STATUS_KOKKOS
endif()

function(nbody_print_model_summary)
  message(STATUS "nbody programming models:")
  message(STATUS "  serial  on (always)")
  message(STATUS "  OpenMP  ${NBODY_MODEL_STATUS_OPENMP}")
  message(STATUS "  CUDA    ${NBODY_MODEL_STATUS_CUDA}")
  message(STATUS "  Kokkos  ${NBODY_MODEL_STATUS_KOKKOS}")
endfunction()

# Makes a target's binary runnable on another machine: static C++ runtime, remaining shared
# libraries beside the binary, found through an $ORIGIN rpath.
function(nbody_make_portable target)
  if(NOT NBODY_PORTABLE_BINARY)
    return()
  endif()
  target_link_options(${target} PRIVATE -static-libstdc++ -static-libgcc)
  set_target_properties(${target} PROPERTIES BUILD_RPATH "\$ORIGIN" INSTALL_RPATH "\$ORIGIN")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -DBINARY=$<TARGET_FILE:${target}> -P ${PROJECT_SOURCE_DIR}/cmake/BundleSharedLibs.cmake
    VERBATIM)
endfunction()
