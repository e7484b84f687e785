# Finds the OpenMP target-offload toolchain for omp_target_impl/ and says which one and why not.
# GCC with its nvptx offload compiler (Debian: gcc-12-offload-nvptx); the device code is PTX for
# sm_80, the newest GCC 12 knows, which the driver compiles for the GPU at load time.
# Sets NBODY_WITH_OMP_TARGET, NBODY_MODEL_STATUS_OMP_TARGET, NBODY_OMP_TARGET_FLAGS and
# NBODY_OMP_TARGET_COMPILER; defines nbody_bundle_offload_plugin().
option(NBODY_ENABLE_OMP_TARGET "Build the OpenMP target-offload variants (omp_target_impl/) when GCC's nvptx offload compiler is found" ON)

set(NBODY_WITH_OMP_TARGET OFF)
# One option per -foffload-options: a link driven by Kokkos' nvcc_wrapper splits an argument at its spaces.
set(NBODY_OMP_TARGET_FLAGS -fopenmp -foffload=nvptx-none -foffload-options=-O3 -foffload-options=-ffast-math
    -foffload-options=-misa=sm_80 -foffload-options=-lm)
set(NBODY_OMP_TARGET_COMPILER "")
if(NOT NBODY_ENABLE_OMP_TARGET)
  set(NBODY_MODEL_STATUS_OMP_TARGET "off: NBODY_ENABLE_OMP_TARGET=OFF")
elseif(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(NBODY_MODEL_STATUS_OMP_TARGET "off: the offload compiler is GCC's nvptx one, the C++ compiler is ${CMAKE_CXX_COMPILER_ID}")
elseif(NBODY_SANITIZERS)
  set(NBODY_MODEL_STATUS_OMP_TARGET "off: not built with NBODY_SANITIZERS (the device code would not be instrumented)")
else()
  include(CheckCXXSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS "-fopenmp -foffload=nvptx-none")
  # sm_80 also here: nvptx-as checks the PTX with ptxas when one is on the PATH, and CUDA 13's
  # ptxas no longer takes GCC's default sm_35.
  set(CMAKE_REQUIRED_LINK_OPTIONS -fopenmp -foffload=nvptx-none -foffload-options=-misa=sm_80)
  set(CMAKE_REQUIRED_QUIET ON)
  check_cxx_source_compiles([[
    int main() {
      int sum = 0;
    #pragma omp target teams distribute parallel for simd map(tofrom: sum) reduction(+: sum)
      for (int i = 0; i < 64; ++i) sum += i;
      return sum == 2016 ? 0 : 1;
    }]] NBODY_GCC_NVPTX_OFFLOAD_WORKS)
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  unset(CMAKE_REQUIRED_QUIET)
  find_library(NBODY_GOMP_NVPTX_PLUGIN NAMES libgomp-plugin-nvptx.so.1)
  if(NOT NBODY_GCC_NVPTX_OFFLOAD_WORKS)
    set(NBODY_MODEL_STATUS_OMP_TARGET "off: GCC ${CMAKE_CXX_COMPILER_VERSION} cannot compile for nvptx-none (on Debian: gcc-<version>-offload-nvptx)")
  elseif(NOT NBODY_GOMP_NVPTX_PLUGIN)
    set(NBODY_MODEL_STATUS_OMP_TARGET "off: libgomp's nvptx plugin (libgomp-plugin-nvptx.so.1) not found (install libgomp-plugin-nvptx1)")
  else()
    set(NBODY_WITH_OMP_TARGET ON)
    set(NBODY_OMP_TARGET_COMPILER "GCC ${CMAKE_CXX_COMPILER_VERSION} -foffload=nvptx-none -misa=sm_80")
    set(NBODY_MODEL_STATUS_OMP_TARGET "on (${NBODY_OMP_TARGET_COMPILER}; variants need a GPU at run time)")
  endif()
endif()

# libgomp dlopen()s its nvptx plugin by name: in a portable binary the plugin is copied beside it,
# and the $ORIGIN search path is written as DT_RPATH, which glibc also searches for libraries that
# libgomp opens (a DT_RUNPATH applies to the binary's own dependencies only).
function(nbody_bundle_offload_plugin target)
  if(NOT NBODY_WITH_OMP_TARGET OR NOT NBODY_PORTABLE_BINARY)
    return()
  endif()
  target_link_options(${target} PRIVATE -Wl,--disable-new-dtags)
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -E copy_if_different ${NBODY_GOMP_NVPTX_PLUGIN} $<TARGET_FILE_DIR:${target}>/libgomp-plugin-nvptx.so.1
    VERBATIM)
endfunction()
