# Finds or builds Kokkos for models/kokkos/ and says which one and why. In order of preference:
#  1. an installed Kokkos (Kokkos_ROOT, as a CMake variable or in the environment, or
#     CMAKE_PREFIX_PATH) that has every execution space this build can run;
#  2. the pinned Kokkos release, built by this project at configure time (NBODY_BUILD_KOKKOS) from
#     NBODY_KOKKOS_SOURCE (a tarball or an unpacked source folder) or else downloaded from the
#     official release URL; checked against its SHA-256, patched (cmake/kokkos/), built with this
#     build's C++ compiler and host ISA, and kept under NBODY_KOKKOS_BUILD_ROOT, so that a rebuild
#     or another build folder with the same settings reuses it;
#  3. Debian's libtrilinos-kokkos-dev (Kokkos 3.4, Serial only; cmake/FindKokkosDebian.cmake).
# Sets NBODY_WITH_KOKKOS, NBODY_MODEL_STATUS_KOKKOS and NBODY_KOKKOS_TARGET.
include(NbodyKokkosSource)  # the pinned release: version, URL, SHA-256, patch; nbody_kokkos_prepare_source()
option(NBODY_BUILD_KOKKOS "Build Kokkos ${NBODY_KOKKOS_VERSION} at configure time when no installed Kokkos has the execution spaces this build can run" ON)
set(NBODY_KOKKOS_SOURCE "" CACHE STRING "Kokkos ${NBODY_KOKKOS_VERSION} source for NBODY_BUILD_KOKKOS: a .tar.gz (checked against its SHA-256) or an unpacked folder; empty: download ${NBODY_KOKKOS_URL}")
option(NBODY_KOKKOS_REQUIRE_SPACES "Fail at configure time, instead of falling back to Debian's Kokkos 3.4, when no Kokkos with every wanted execution space can be found or built (CI sets it)" OFF)
set(NBODY_KOKKOS_BUILD_ROOT "${CMAKE_BINARY_DIR}/_kokkos" CACHE PATH "Where NBODY_BUILD_KOKKOS keeps the download and one built Kokkos per configuration")

set(NBODY_WITH_KOKKOS OFF)
set(NBODY_KOKKOS_TARGET "")
set(NBODY_KOKKOS_CUDA_DRIVER_SHIM OFF)

# The spaces this build can run: Serial always, OpenMP with its model, CUDA with its model where
# NBODY_KOKKOS_CUDA says. A Kokkos with CUDA starts none of its spaces on a machine without a GPU
# (Kokkos::initialize starts every backend), so a build for the machine it runs on (AUTO) takes
# CUDA only where it sees a GPU; a binary carried to a GPU machine says ON (the h100 preset).
set(NBODY_KOKKOS_CUDA "AUTO" CACHE STRING "Kokkos' CUDA space: AUTO (with the CUDA model, where a GPU is seen at configure time), ON (with the CUDA model) or OFF")
set_property(CACHE NBODY_KOKKOS_CUDA PROPERTY STRINGS AUTO ON OFF)
if(NOT NBODY_KOKKOS_CUDA MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "NBODY_KOKKOS_CUDA=${NBODY_KOKKOS_CUDA}: give AUTO, ON or OFF")
endif()
set(kokkos_wanted SERIAL)
if(NBODY_WITH_OPENMP)
  list(APPEND kokkos_wanted OPENMP)
endif()
set(kokkos_cuda_note "")
if(NBODY_WITH_CUDA AND NBODY_KOKKOS_CUDA STREQUAL "ON")
  list(APPEND kokkos_wanted CUDA)
elseif(NBODY_WITH_CUDA AND NBODY_KOKKOS_CUDA STREQUAL "AUTO")
  find_program(NBODY_NVIDIA_SMI nvidia-smi)
  set(gpu_seen OFF)
  if(NBODY_NVIDIA_SMI)
    execute_process(COMMAND ${NBODY_NVIDIA_SMI} -L RESULT_VARIABLE smi_result OUTPUT_VARIABLE smi_out ERROR_QUIET)
    if(smi_result EQUAL 0 AND smi_out MATCHES "GPU [0-9]")
      set(gpu_seen ON)
    endif()
  endif()
  if(gpu_seen)
    list(APPEND kokkos_wanted CUDA)
  else()
    set(kokkos_cuda_note "; no CUDA space: no GPU seen here (NBODY_KOKKOS_CUDA=AUTO; ON builds it for a GPU machine)")
  endif()
endif()
string(TOLOWER "${kokkos_wanted}" kokkos_wanted_text)
string(REPLACE ";" "," kokkos_wanted_text "${kokkos_wanted_text}")

# Reads the execution spaces an installed Kokkos config declares into out_var.
function(nbody_kokkos_config_spaces config_dir out_var)
  set(spaces "")
  foreach(file KokkosConfigCommon.cmake KokkosConfig.cmake)
    if(EXISTS "${config_dir}/${file}")
      file(STRINGS "${config_dir}/${file}" lines REGEX "^[ \t]*[sS][eE][tT][ \t]*\\([ \t]*Kokkos_DEVICES[ \t]")
      foreach(line IN LISTS lines)
        if(line MATCHES "Kokkos_DEVICES[ \t]+\"?([A-Za-z_; \t]*)\"?[ \t]*\\)")
          string(REPLACE " " ";" found "${CMAKE_MATCH_1}")
          list(APPEND spaces ${found})
        endif()
      endforeach()
    endif()
  endforeach()
  list(REMOVE_DUPLICATES spaces)
  set(${out_var} "${spaces}" PARENT_SCOPE)
endfunction()

# Sets missing_var to the wanted spaces that `spaces` lacks.
function(nbody_kokkos_missing_spaces spaces missing_var)
  set(missing "")
  foreach(space IN LISTS kokkos_wanted)
    if(NOT space IN_LIST spaces)
      list(APPEND missing ${space})
    endif()
  endforeach()
  string(TOLOWER "${missing}" missing)
  string(REPLACE ";" "," missing "${missing}")
  set(${missing_var} "${missing}" PARENT_SCOPE)
endfunction()

# --- 1. an installed Kokkos ---------------------------------------------------
set(kokkos_config_dir "")
set(kokkos_passed_over "")  # why each candidate was not taken, for the status line
set(kokkos_roots ${Kokkos_ROOT} $ENV{Kokkos_ROOT})
find_path(installed_kokkos_config KokkosConfig.cmake
  HINTS ${kokkos_roots}
  PATH_SUFFIXES lib/cmake/Kokkos lib64/cmake/Kokkos
  NO_CMAKE_SYSTEM_PATH NO_SYSTEM_ENVIRONMENT_PATH NO_CMAKE_INSTALL_PREFIX NO_CACHE)
if(installed_kokkos_config)
  nbody_kokkos_config_spaces("${installed_kokkos_config}" installed_spaces)
  nbody_kokkos_missing_spaces("${installed_spaces}" installed_missing)
  if(installed_missing)
    list(APPEND kokkos_passed_over "the Kokkos in ${installed_kokkos_config} lacks ${installed_missing}")
  else()
    set(kokkos_config_dir "${installed_kokkos_config}")
    set(kokkos_origin "installed, Kokkos_ROOT")
  endif()
elseif(kokkos_roots)
  list(APPEND kokkos_passed_over "Kokkos_ROOT=${kokkos_roots} holds no lib/cmake/Kokkos/KokkosConfig.cmake")
endif()

# --- 2. the pinned release, built here ----------------------------------------
# Kokkos' architecture option for the first of CMAKE_CUDA_ARCHITECTURES.
function(nbody_kokkos_cuda_arch out_var)
  list(GET CMAKE_CUDA_ARCHITECTURES 0 arch)
  string(REGEX REPLACE "-(real|virtual)$" "" arch "${arch}")
  set(names 70 VOLTA70 72 VOLTA72 75 TURING75 80 AMPERE80 86 AMPERE86 87 AMPERE87 89 ADA89 90 HOPPER90
            100 BLACKWELL100 120 BLACKWELL120)
  list(FIND names "${arch}" index)
  if(index LESS 0 OR arch MATCHES "[A-Z]")
    message(FATAL_ERROR "CMAKE_CUDA_ARCHITECTURES=${CMAKE_CUDA_ARCHITECTURES}: Kokkos ${NBODY_KOKKOS_VERSION} is built "
                        "here for one of 70 72 75 80 86 87 89 90 100 120")
  endif()
  math(EXPR index "${index} + 1")
  list(GET names ${index} name)
  set(${out_var} Kokkos_ARCH_${name} PARENT_SCOPE)
endfunction()

if(NOT kokkos_config_dir AND NBODY_BUILD_KOKKOS)
  # Kokkos is compiled with this build's compiler and host flags (ISA, and ThreadSanitizer, whose
  # reports need every thread's code instrumented; ASan and UBSan do not), for the wanted spaces.
  set(kokkos_flags "${NBODY_HOST_ARCH_FLAGS}")
  if("thread" IN_LIST NBODY_SANITIZERS)
    string(APPEND kokkos_flags " -fsanitize=thread")
  endif()
  set(kokkos_args -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=20 -DKokkos_ENABLE_SERIAL=ON)
  set(kokkos_compiler "${CMAKE_CXX_COMPILER}")
  if("OPENMP" IN_LIST kokkos_wanted)
    list(APPEND kokkos_args -DKokkos_ENABLE_OPENMP=ON)
  endif()
  if("CUDA" IN_LIST kokkos_wanted)
    nbody_kokkos_cuda_arch(kokkos_cuda_arch_option)
    list(APPEND kokkos_args -DKokkos_ENABLE_CUDA=ON -D${kokkos_cuda_arch_option}=ON)
    # Kokkos compiles CUDA through its nvcc_wrapper as the C++ compiler, whose default -arch
    # (sm_70) CUDA 13 refuses in the compiler check: the architecture goes into the flags too.
    list(GET CMAKE_CUDA_ARCHITECTURES 0 cuda_arch)
    string(REGEX REPLACE "-(real|virtual)$" "" cuda_arch "${cuda_arch}")
    string(APPEND kokkos_flags " -arch=sm_${cuda_arch}")
  endif()
  string(STRIP "${kokkos_flags}" kokkos_flags)
  file(SHA256 "${NBODY_KOKKOS_PATCH}" patch_hash)
  string(SHA256 kokkos_key "${NBODY_KOKKOS_SHA256};${patch_hash};${kokkos_compiler};${CMAKE_CXX_COMPILER_VERSION};${CMAKE_CUDA_COMPILER_VERSION};${kokkos_flags};${kokkos_args}")
  string(SUBSTRING "${kokkos_key}" 0 12 kokkos_key)
  set(kokkos_dir "${NBODY_KOKKOS_BUILD_ROOT}/${NBODY_KOKKOS_VERSION}-${kokkos_key}")
  set(kokkos_done "${kokkos_dir}/install/built-with.txt")
  file(MAKE_DIRECTORY "${NBODY_KOKKOS_BUILD_ROOT}")
  # Build folders that share the root (the presets do) take turns.
  file(LOCK "${NBODY_KOKKOS_BUILD_ROOT}/.lock" GUARD FILE TIMEOUT 3600)
  if(NOT EXISTS "${kokkos_done}")
    nbody_kokkos_prepare_source("${kokkos_dir}")
    if(kokkos_source_dir)
      if("CUDA" IN_LIST kokkos_wanted)
        set(kokkos_compiler "${kokkos_source_dir}/bin/nvcc_wrapper")
      endif()
      cmake_host_system_information(RESULT cores QUERY NUMBER_OF_LOGICAL_CORES)
      set(log "${kokkos_dir}/build.log")
      message(STATUS "Kokkos: building ${NBODY_KOKKOS_VERSION} [${kokkos_wanted_text}] in ${kokkos_dir} (log: ${log}; a few minutes, once)")
      string(TIMESTAMP started "%s")
      file(REMOVE_RECURSE "${kokkos_dir}/build" "${kokkos_dir}/install")
      set(kokkos_env ${CMAKE_COMMAND} -E env NVCC_WRAPPER_DEFAULT_COMPILER=${CMAKE_CXX_COMPILER})
      if(CMAKE_CUDA_COMPILER)
        get_filename_component(cuda_bin "${CMAKE_CUDA_COMPILER}" DIRECTORY)
        list(APPEND kokkos_env "PATH=${cuda_bin}:$ENV{PATH}")
      endif()
      execute_process(
        COMMAND ${kokkos_env} ${CMAKE_COMMAND} -S "${kokkos_source_dir}" -B "${kokkos_dir}/build" -G Ninja
                -DCMAKE_CXX_COMPILER=${kokkos_compiler} "-DCMAKE_CXX_FLAGS=${kokkos_flags}"
                -DCMAKE_INSTALL_PREFIX=${kokkos_dir}/install ${kokkos_args}
        OUTPUT_FILE "${log}" ERROR_FILE "${log}.err" RESULT_VARIABLE result)
      if(result EQUAL 0)
        execute_process(COMMAND ${kokkos_env} ${CMAKE_COMMAND} --build "${kokkos_dir}/build" -j ${cores}
                        OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE result)
        file(APPEND "${log}" "${out}")
      endif()
      if(result EQUAL 0)
        execute_process(COMMAND ${CMAKE_COMMAND} --install "${kokkos_dir}/build"
                        OUTPUT_VARIABLE out ERROR_VARIABLE out RESULT_VARIABLE result)
        file(APPEND "${log}" "${out}")
      endif()
      if(NOT result EQUAL 0)
        if(EXISTS "${log}.err")
          file(READ "${log}.err" errors)
          file(APPEND "${log}" "${errors}")
        endif()
        file(READ "${log}" tail)
        string(LENGTH "${tail}" length)
        if(length GREATER 4000)
          math(EXPR start "${length} - 4000")
          string(SUBSTRING "${tail}" ${start} -1 tail)
        endif()
        message(FATAL_ERROR "Building Kokkos ${NBODY_KOKKOS_VERSION} failed (whole log: ${log}); its end:\n${tail}")
      endif()
      string(TIMESTAMP finished "%s")
      math(EXPR seconds "${finished} - ${started}")
      file(WRITE "${kokkos_done}" "Kokkos ${NBODY_KOKKOS_VERSION} [${kokkos_wanted_text}] built in ${seconds} s\ncompiler: ${kokkos_compiler} (${CMAKE_CXX_COMPILER})\nflags: ${kokkos_flags}\noptions: ${kokkos_args}\n")
      message(STATUS "Kokkos: built in ${seconds} s")
      # The objects are not needed once installed; the sources stay, since a CUDA Kokkos' config
      # names their nvcc_wrapper as the compiler of the targets that use it.
      file(REMOVE_RECURSE "${kokkos_dir}/build")
    endif()
  endif()
  file(LOCK "${NBODY_KOKKOS_BUILD_ROOT}/.lock" RELEASE)
  if(EXISTS "${kokkos_done}")
    file(GLOB_RECURSE built_config "${kokkos_dir}/install/*/KokkosConfig.cmake")
    list(GET built_config 0 built_config)
    get_filename_component(kokkos_config_dir "${built_config}" DIRECTORY)
    set(kokkos_origin "built here from the pinned release, in ${kokkos_dir}")
  endif()
elseif(NOT kokkos_config_dir)
  list(APPEND kokkos_passed_over "not built: NBODY_BUILD_KOKKOS=OFF")
endif()

if(kokkos_config_dir)
  set(Kokkos_DIR "${kokkos_config_dir}" CACHE PATH "The Kokkos CMake config in use" FORCE)
  find_package(Kokkos CONFIG REQUIRED NO_DEFAULT_PATH PATHS "${kokkos_config_dir}")
  set(NBODY_KOKKOS_TARGET Kokkos::kokkos)
  string(TOLOWER "${Kokkos_DEVICES}" devices)
  list(JOIN devices "," devices)
  set(kokkos_origin "Kokkos ${Kokkos_VERSION} [${devices}], ${kokkos_origin}")
elseif(NBODY_KOKKOS_REQUIRE_SPACES)
  list(JOIN kokkos_passed_over "; " reasons)
  message(FATAL_ERROR "NBODY_KOKKOS_REQUIRE_SPACES: no Kokkos with ${kokkos_wanted_text} (${reasons})")
else()
  # --- 3. Debian's Kokkos 3.4 ---------------------------------------------------
  find_package(KokkosDebian QUIET)
  if(KokkosDebian_FOUND)
    set(NBODY_KOKKOS_TARGET KokkosDebian::kokkos)
    list(JOIN KokkosDebian_SPACES "," debian_spaces)
    string(TOUPPER "${KokkosDebian_SPACES}" debian_upper)
    nbody_kokkos_missing_spaces("${debian_upper}" debian_missing)
    set(kokkos_origin "Kokkos ${KokkosDebian_VERSION} [${debian_spaces}], Debian's libtrilinos-kokkos-dev in ${KokkosDebian_INCLUDE_DIR}")
    if(debian_missing)
      string(APPEND kokkos_origin "; without ${debian_missing}, so no kokkos.*@${debian_missing} variants")
    endif()
  endif()
endif()
if(kokkos_passed_over)
  list(JOIN kokkos_passed_over "; " kokkos_passed_over)
  set(kokkos_passed_over " (passed over: ${kokkos_passed_over})")
endif()

if(NBODY_KOKKOS_TARGET)
  set(NBODY_WITH_KOKKOS ON)
  set(NBODY_MODEL_STATUS_KOKKOS "on (${kokkos_origin})${kokkos_passed_over}${kokkos_cuda_note}")
  # One CUDA runtime per binary: Kokkos' CUDA backend links the shared libcudart while models/cuda
  # links the static one; both use the static runtime instead, so Kokkos and the CUDA variants share
  # one runtime state. Kokkos' direct link to the driver (libcuda.so) is replaced by
  # models/kokkos/cuda_driver_shim.cpp, which opens it at run time: the binary then starts on a
  # machine without the driver and lists the CUDA variants as unavailable.
  if(TARGET Kokkos::CUDA)
    get_target_property(kokkos_cuda_imported Kokkos::CUDA IMPORTED)
  endif()
  if(kokkos_cuda_imported)
    find_package(CUDAToolkit REQUIRED)
    set_property(TARGET Kokkos::CUDA PROPERTY INTERFACE_LINK_LIBRARIES CUDA::cudart_static ${CMAKE_DL_LIBS})
    set(CMAKE_CUDA_RUNTIME_LIBRARY Static)
    set(NBODY_KOKKOS_CUDA_DRIVER_SHIM ON)
  endif()
else()
  set(NBODY_MODEL_STATUS_KOKKOS "off: no Kokkos${kokkos_passed_over}, and Debian's libtrilinos-kokkos-dev is not installed")
endif()
