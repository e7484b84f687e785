# Finds the OpenMP target-offload toolchain for models/omp_target/ and says which one and why not.
# The C++ compiler's own: GCC with its nvptx offload compiler (Debian: gcc-12-offload-nvptx; PTX
# for sm_80, the newest GCC 12 knows, which the driver compiles for the GPU at load time), or
# Clang with LLVM's offload runtime (Debian: clang-16, clang-tools-16 for the offload packager and
# linker wrapper, libomp-16-dev for libomptarget; a cubin for NBODY_OMP_TARGET_CLANG_ARCH, linked
# with the CUDA toolkit's nvlink).
# Sets NBODY_WITH_OMP_TARGET, NBODY_MODEL_STATUS_OMP_TARGET, NBODY_OMP_TARGET_FLAGS and
# NBODY_OMP_TARGET_COMPILER; defines nbody_bundle_offload_plugin().
option(NBODY_ENABLE_OMP_TARGET "Build the OpenMP target-offload variants (models/omp_target/) when the C++ compiler's offload toolchain is found" ON)
set(NBODY_OMP_TARGET_CLANG_ARCH "sm_90" CACHE STRING "GPU architecture of Clang's offload cubin (a cubin runs on its own major architecture only)")

set(NBODY_WITH_OMP_TARGET OFF)
set(NBODY_OMP_TARGET_COMPILER "")
set(NBODY_OMP_TARGET_RUNTIME_FILES "")  # what a portable binary carries beside it
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  # Fast math on the device side only, as GCC's -foffload-options=-ffast-math; -Wno-pass-failed:
  # Clang does not vectorise the device side's simd loops and says so per loop.
  set(NBODY_OMP_TARGET_FLAGS -fopenmp -fopenmp-targets=nvptx64-nvidia-cuda
      --offload-arch=${NBODY_OMP_TARGET_CLANG_ARCH} -Xopenmp-target=nvptx64-nvidia-cuda -ffast-math
      -Wno-unknown-cuda-version -Wno-pass-failed)
  set(nbody_offload_probe_flags "-fopenmp -fopenmp-targets=nvptx64-nvidia-cuda --offload-arch=${NBODY_OMP_TARGET_CLANG_ARCH} -Wno-unknown-cuda-version")
  # Debian's Clang 19 keeps the device runtime's bitcode (libomptarget-nvptx-<arch>.bc) in the LLVM
  # lib folder but looks for it elsewhere ("no library ... found in the default clang lib directory"):
  # named where it is; Clang 16 finds it there on its own.
  get_filename_component(nbody_llvm_lib "${CMAKE_CXX_COMPILER}" REALPATH)
  get_filename_component(nbody_llvm_lib "${nbody_llvm_lib}" DIRECTORY)
  get_filename_component(nbody_llvm_lib "${nbody_llvm_lib}/../lib" ABSOLUTE)
  if(EXISTS "${nbody_llvm_lib}/libomptarget-nvptx-${NBODY_OMP_TARGET_CLANG_ARCH}.bc")
    list(APPEND NBODY_OMP_TARGET_FLAGS --libomptarget-nvptx-bc-path=${nbody_llvm_lib})
    string(APPEND nbody_offload_probe_flags " --libomptarget-nvptx-bc-path=${nbody_llvm_lib}")
  endif()
  # CUDA 13's nvlink writes cubins in NVIDIA's new ELF ABI (version 8, the SM in bits 8-15 of
  # e_flags), which libomptarget 18-20 rejects ("Invalid CUDA addressing mode"): it then lists no
  # device (fixed upstream in September 2025, in LLVM 21's release branch). Clang 16's runtime does not
  # read those flags. Built anyway (the build is the check that
  # Clang compiles the offload code); the variants say why they are unavailable (docs/models.md).
  set(NBODY_OMP_TARGET_CUBIN_REJECTED OFF)
  find_program(NBODY_PTXAS ptxas HINTS ${CUDAToolkit_BIN_DIR} /usr/local/cuda/bin)
  if(NBODY_PTXAS AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 18
     AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 21)
    execute_process(COMMAND ${NBODY_PTXAS} --version OUTPUT_VARIABLE nbody_ptxas_version ERROR_QUIET)
    if(nbody_ptxas_version MATCHES "release ([0-9]+)\\." AND CMAKE_MATCH_1 GREATER_EQUAL 13)
      set(NBODY_OMP_TARGET_CUBIN_REJECTED ON)
      set(nbody_ptxas_major ${CMAKE_MATCH_1})
    endif()
  endif()
  set(nbody_offload_probe_link ${NBODY_OMP_TARGET_FLAGS})
  set(nbody_offload_missing "Clang ${CMAKE_CXX_COMPILER_VERSION} cannot compile and link for nvptx64-nvidia-cuda (on Debian: clang-tools-16 for clang-offload-packager and clang-linker-wrapper; the CUDA toolkit for ptxas and nvlink)")
else()
  # One option per -foffload-options: a link driven by Kokkos' nvcc_wrapper splits an argument at its spaces.
  set(NBODY_OMP_TARGET_FLAGS -fopenmp -foffload=nvptx-none -foffload-options=-O3 -foffload-options=-ffast-math
      -foffload-options=-misa=sm_80 -foffload-options=-lm)
  set(nbody_offload_probe_flags "-fopenmp -foffload=nvptx-none")
  # sm_80 also here: nvptx-as checks the PTX with ptxas when one is on the PATH, and CUDA 13's
  # ptxas no longer takes GCC's default sm_35.
  set(nbody_offload_probe_link -fopenmp -foffload=nvptx-none -foffload-options=-misa=sm_80)
  set(nbody_offload_missing "GCC ${CMAKE_CXX_COMPILER_VERSION} cannot compile for nvptx-none (on Debian: gcc-<version>-offload-nvptx)")
endif()
if(NOT NBODY_ENABLE_OMP_TARGET)
  set(NBODY_MODEL_STATUS_OMP_TARGET "off: NBODY_ENABLE_OMP_TARGET=OFF")
elseif(NOT CMAKE_CXX_COMPILER_ID MATCHES "^(GNU|Clang)$")
  set(NBODY_MODEL_STATUS_OMP_TARGET "off: no offload toolchain known for ${CMAKE_CXX_COMPILER_ID}")
elseif(NBODY_SANITIZERS)
  set(NBODY_MODEL_STATUS_OMP_TARGET "off: not built with NBODY_SANITIZERS (the device code would not be instrumented)")
else()
  include(CheckCXXSourceCompiles)
  set(CMAKE_REQUIRED_FLAGS "${nbody_offload_probe_flags}")
  set(CMAKE_REQUIRED_LINK_OPTIONS ${nbody_offload_probe_link})
  set(CMAKE_REQUIRED_QUIET ON)
  check_cxx_source_compiles([[
    int main() {
      int sum = 0;
    #pragma omp target teams distribute parallel for simd map(tofrom: sum) reduction(+: sum)
      for (int i = 0; i < 64; ++i) sum += i;
      return sum == 2016 ? 0 : 1;
    }]] NBODY_${CMAKE_CXX_COMPILER_ID}_NVPTX_OFFLOAD_WORKS)
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
  unset(CMAKE_REQUIRED_QUIET)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    # libomptarget (linked) dlopen()s its device plugins by their unversioned names from its own
    # folder ($ORIGIN): carried without those names it finds no device (docs/performance-openmp.md).
    # Clang 19's libomptarget is libomptarget.so.19.1 (its SONAME) and holds its plugins itself.
    # (CMake has no CMAKE_CXX_COMPILER_VERSION_MAJOR: the parts are read from the version.)
    string(REGEX MATCH "^([0-9]+)\\.([0-9]+)" nbody_clang_major_minor "${CMAKE_CXX_COMPILER_VERSION}")
    foreach(file libomptarget.so.${CMAKE_MATCH_1} libomptarget.so.${CMAKE_MATCH_1}.${CMAKE_MATCH_2}
                 libomptarget.rtl.cuda.nextgen.so libomptarget.rtl.cuda.so)
      if(EXISTS "${nbody_llvm_lib}/${file}")
        get_filename_component(path "${nbody_llvm_lib}/${file}" REALPATH)
        list(APPEND NBODY_OMP_TARGET_RUNTIME_FILES "${path}=${file}")
      endif()
    endforeach()
    list(LENGTH NBODY_OMP_TARGET_RUNTIME_FILES nbody_runtime_found)
    set(nbody_runtime_missing "LLVM's offload runtime (libomptarget and its CUDA plugins) not found beside ${CMAKE_CXX_COMPILER} (on Debian: libomp-16-dev)")
    set(nbody_compiler_text "Clang ${CMAKE_CXX_COMPILER_VERSION} -fopenmp-targets=nvptx64-nvidia-cuda --offload-arch=${NBODY_OMP_TARGET_CLANG_ARCH}")
  else()
    find_library(NBODY_GOMP_NVPTX_PLUGIN NAMES libgomp-plugin-nvptx.so.1)
    if(NBODY_GOMP_NVPTX_PLUGIN)
      set(NBODY_OMP_TARGET_RUNTIME_FILES "${NBODY_GOMP_NVPTX_PLUGIN}=libgomp-plugin-nvptx.so.1")
    endif()
    set(nbody_runtime_found ${NBODY_GOMP_NVPTX_PLUGIN})
    set(nbody_runtime_missing "libgomp's nvptx plugin (libgomp-plugin-nvptx.so.1) not found (install libgomp-plugin-nvptx1)")
    set(nbody_compiler_text "GCC ${CMAKE_CXX_COMPILER_VERSION} -foffload=nvptx-none -misa=sm_80")
  endif()
  if(NOT NBODY_${CMAKE_CXX_COMPILER_ID}_NVPTX_OFFLOAD_WORKS)
    set(NBODY_MODEL_STATUS_OMP_TARGET "off: ${nbody_offload_missing}")
  elseif(NOT nbody_runtime_found)
    set(NBODY_MODEL_STATUS_OMP_TARGET "off: ${nbody_runtime_missing}")
  else()
    set(NBODY_WITH_OMP_TARGET ON)
    set(NBODY_OMP_TARGET_COMPILER "${nbody_compiler_text}")
    set(NBODY_MODEL_STATUS_OMP_TARGET "on (${NBODY_OMP_TARGET_COMPILER}; variants need a GPU at run time)")
    if(NBODY_OMP_TARGET_CUBIN_REJECTED)
      set(NBODY_MODEL_STATUS_OMP_TARGET "on (${NBODY_OMP_TARGET_COMPILER}; built, but this Clang's libomptarget rejects CUDA ${nbody_ptxas_major}'s cubins, so no GPU will run them: docs/models.md)")
    endif()
  endif()
endif()

# The offload runtime's plugins are dlopen()ed by name: in a portable binary they are copied beside
# it (GCC: libgomp's nvptx plugin; Clang: libomptarget and its CUDA plugins under the names it
# loads), and the $ORIGIN search path is written as DT_RPATH, which glibc also searches for
# libraries that libgomp opens (a DT_RUNPATH applies to the binary's own dependencies only).
# nbody_make_portable() calls it for every binary (PORTABLE_FUNCTION below).
function(nbody_bundle_offload_plugin target)
  if(NOT NBODY_WITH_OMP_TARGET OR NOT NBODY_PORTABLE_BINARY)
    return()
  endif()
  target_link_options(${target} PRIVATE -Wl,--disable-new-dtags)
  foreach(entry IN LISTS NBODY_OMP_TARGET_RUNTIME_FILES)
    string(REPLACE "=" ";" pair "${entry}")
    list(GET pair 0 from)
    list(GET pair 1 name)
    add_custom_command(TARGET ${target} POST_BUILD
      COMMAND ${CMAKE_COMMAND} -E copy_if_different ${from} $<TARGET_FILE_DIR:${target}>/${name}
      VERBATIM)
  endforeach()
endfunction()
# PACKAGES (scripts/setup.sh): GCC's nvptx offload compiler (brings libgomp-plugin-nvptx1); Clang's
# offload packager and linker wrapper (the Clang build's omp_target variants).
nbody_register_model(NAME omp_target TITLE "OpenMP offload" IN_BUILD ${NBODY_WITH_OMP_TARGET}
                     STATUS "${NBODY_MODEL_STATUS_OMP_TARGET}" PORTABLE_FUNCTION nbody_bundle_offload_plugin
                     FAMILY OpenMP-offload REPORT_ORDER 50 PACKAGES gcc-12-offload-nvptx clang-tools-16)
