# OpenACC: GCC's OpenACC with its nvptx offload compiler (-fopenacc -foffload=nvptx-none, Debian:
# gcc-12-offload-nvptx; PTX for sm_80 as omp_target's, compiled by the driver at load), registered
# as openacc.<variant> (GPU) and, the same code with its `if` clauses false, openacc.<variant>@host.
# Without the offload compiler (-foffload=disable) the GPU variants are listed as unavailable,
# saying why. In the build where GCC takes -fopenacc. Sets NBODY_OPENACC_FLAGS for CMakeLists.txt;
# PORTABLE_FUNCTION puts the compute library beside every portable binary.
option(NBODY_ENABLE_OPENACC "Build the OpenACC variants (models/openacc/) when the C++ compiler takes -fopenacc" ON)
set(NBODY_WITH_OPENACC OFF)
set(nbody_openacc_offload OFF)
if(NOT NBODY_ENABLE_OPENACC)
  set(NBODY_MODEL_STATUS_OPENACC "off: NBODY_ENABLE_OPENACC=OFF")
elseif(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(NBODY_MODEL_STATUS_OPENACC "off: OpenACC is built with GCC only (${CMAKE_CXX_COMPILER_ID} here)")
else()
  include(CheckCXXSourceCompiles)
  set(nbody_openacc_probe [[
    int main() {
      int sum = 0;
    #pragma acc parallel loop gang vector reduction(+: sum)
      for (int i = 0; i < 64; ++i) sum += i;
      return sum == 2016 ? 0 : 1;
    }]])
  set(CMAKE_REQUIRED_QUIET ON)
  set(CMAKE_REQUIRED_FLAGS "-fopenacc -foffload=disable")
  set(CMAKE_REQUIRED_LINK_OPTIONS -fopenacc -foffload=disable)
  check_cxx_source_compiles("${nbody_openacc_probe}" NBODY_GCC_OPENACC_WORKS)
  # sm_80 on the link too: nvptx-as checks the PTX with ptxas when one is on the PATH, and CUDA 13's
  # ptxas no longer takes GCC's default sm_35.
  set(CMAKE_REQUIRED_FLAGS "-fopenacc -foffload=nvptx-none")
  set(CMAKE_REQUIRED_LINK_OPTIONS -fopenacc -foffload=nvptx-none -foffload-options=-misa=sm_80)
  check_cxx_source_compiles("${nbody_openacc_probe}" NBODY_GCC_OPENACC_NVPTX_WORKS)
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  unset(CMAKE_REQUIRED_QUIET)
  find_library(NBODY_GOMP_NVPTX_PLUGIN NAMES libgomp-plugin-nvptx.so.1)
  if(NOT NBODY_GCC_OPENACC_WORKS)
    set(NBODY_MODEL_STATUS_OPENACC "off: GCC ${CMAKE_CXX_COMPILER_VERSION} does not take -fopenacc")
  else()
    if(NBODY_SANITIZERS)
      set(nbody_openacc_why_host "not offloaded with NBODY_SANITIZERS (the device code would not be instrumented)")
    elseif(NOT NBODY_GCC_OPENACC_NVPTX_WORKS)
      set(nbody_openacc_why_host "GCC ${CMAKE_CXX_COMPILER_VERSION} cannot compile for nvptx-none (on Debian: gcc-<version>-offload-nvptx)")
    elseif(NOT NBODY_GOMP_NVPTX_PLUGIN)
      set(nbody_openacc_why_host "libgomp's nvptx plugin (libgomp-plugin-nvptx.so.1) not found (install libgomp-plugin-nvptx1)")
    else()
      set(nbody_openacc_offload ON)
    endif()
    if(nbody_openacc_offload)
      # One option per -foffload-options, as omp_target's (models/omp_target/model.cmake).
      set(NBODY_OPENACC_FLAGS -fopenacc -foffload=nvptx-none -foffload-options=-O3 -foffload-options=-ffast-math
          -foffload-options=-misa=sm_80 -foffload-options=-lm)
      set(nbody_openacc_compiler "GCC ${CMAKE_CXX_COMPILER_VERSION} -fopenacc -foffload=nvptx-none -misa=sm_80")
      set(NBODY_MODEL_STATUS_OPENACC "on (${nbody_openacc_compiler}; the GPU variants need a GPU at run time)")
    else()
      set(NBODY_OPENACC_FLAGS -fopenacc -foffload=disable)
      set(nbody_openacc_compiler "GCC ${CMAKE_CXX_COMPILER_VERSION} -fopenacc -foffload=disable")
      set(NBODY_MODEL_STATUS_OPENACC "on, host only (${nbody_openacc_why_host})")
    endif()
    set(NBODY_WITH_OPENACC ON)
  endif()
endif()

# A portable binary finds libnbody_openacc_kernels.so beside it ($ORIGIN): copied there before
# the link, so that cmake/BundleSharedLibs.cmake, after it, also copies what the library needs.
function(nbody_openacc_library_beside target)
  add_custom_command(TARGET ${target} PRE_LINK
    COMMAND ${CMAKE_COMMAND} -E copy_if_different $<TARGET_FILE:nbody_openacc_kernels> $<TARGET_FILE_DIR:${target}>
    VERBATIM)
endfunction()
# PACKAGES (scripts/setup.sh): GCC's nvptx offload compiler.
nbody_register_model(NAME openacc TITLE OpenACC IN_BUILD ${NBODY_WITH_OPENACC} STATUS "${NBODY_MODEL_STATUS_OPENACC}"
                     PORTABLE_FUNCTION nbody_openacc_library_beside REPORT_ORDER 60 PACKAGES gcc-12-offload-nvptx)
