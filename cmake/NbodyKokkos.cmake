# Finds Kokkos for kokkos_impl/ and says which one and why. In order:
#  1. NBODY_FETCH_KOKKOS=ON: FetchContent of the official Kokkos release tarball (needs internet);
#     Kokkos' own options (Kokkos_ENABLE_OPENMP, Kokkos_ENABLE_CUDA, Kokkos_ARCH_...) pass through.
#  2. An installed Kokkos's CMake config (Kokkos_ROOT or CMAKE_PREFIX_PATH), when it is usable.
#  3. Debian's libtrilinos-kokkos-dev (cmake/FindKokkosDebian.cmake), whose own config is broken.
# Sets NBODY_WITH_KOKKOS, NBODY_MODEL_STATUS_KOKKOS and NBODY_KOKKOS_TARGET.
set(NBODY_WITH_KOKKOS OFF)
set(NBODY_KOKKOS_TARGET "")
set(kokkos_config_problem "")
set(NBODY_KOKKOS_CUDA_DRIVER_SHIM OFF)

if(NBODY_FETCH_KOKKOS)
  include(FetchContent)
  FetchContent_Declare(kokkos
    URL https://github.com/kokkos/kokkos/releases/download/${NBODY_FETCHED_KOKKOS_VERSION}/kokkos-${NBODY_FETCHED_KOKKOS_VERSION}.tar.gz
    DOWNLOAD_EXTRACT_TIMESTAMP ON)
  FetchContent_MakeAvailable(kokkos)
  set(NBODY_KOKKOS_TARGET Kokkos::kokkos)
  # Kokkos' variables live in its own directory scope.
  get_directory_property(fetched_version DIRECTORY ${kokkos_SOURCE_DIR} DEFINITION Kokkos_VERSION)
  get_directory_property(fetched_devices DIRECTORY ${kokkos_SOURCE_DIR} DEFINITION KOKKOS_ENABLED_DEVICES)
  string(TOLOWER "${fetched_devices}" fetched_devices)
  list(JOIN fetched_devices "," fetched_devices)
  set(kokkos_origin "Kokkos ${fetched_version} [${fetched_devices}], fetched and built here (NBODY_FETCH_KOKKOS=ON)")
else()
  find_package(Kokkos CONFIG QUIET)
  if(Kokkos_FOUND AND TARGET Kokkos::kokkos)
    # Debian's config points its target at <prefix>/lib/include, which does not exist.
    set(kokkos_includes "")
    foreach(target Kokkos::kokkos Kokkos::kokkoscore)
      if(TARGET ${target})
        get_target_property(dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
        if(dirs)
          list(APPEND kokkos_includes ${dirs})
        endif()
      endif()
    endforeach()
    foreach(dir IN LISTS kokkos_includes)
      if(NOT dir MATCHES "^\\$<" AND NOT IS_DIRECTORY "${dir}")
        set(kokkos_config_problem "the Kokkos config in ${Kokkos_DIR} names a missing include directory ${dir}")
      endif()
    endforeach()
    if(NOT kokkos_config_problem)
      set(NBODY_KOKKOS_TARGET Kokkos::kokkos)
      set(kokkos_origin "Kokkos ${Kokkos_VERSION} from ${Kokkos_DIR}")
    endif()
  endif()
  if(NOT NBODY_KOKKOS_TARGET)
    find_package(KokkosDebian QUIET)
    if(KokkosDebian_FOUND)
      set(NBODY_KOKKOS_TARGET KokkosDebian::kokkos)
      list(JOIN KokkosDebian_SPACES "," debian_spaces)
      set(kokkos_origin "Kokkos ${KokkosDebian_VERSION} [${debian_spaces}], Debian's libtrilinos-kokkos-dev in ${KokkosDebian_INCLUDE_DIR}")
      if(kokkos_config_problem)
        string(APPEND kokkos_origin "; its own config is not used: ${kokkos_config_problem}")
      endif()
    endif()
  endif()
endif()

if(NBODY_KOKKOS_TARGET)
  set(NBODY_WITH_KOKKOS ON)
  if(Kokkos_DEVICES AND NOT NBODY_KOKKOS_TARGET STREQUAL "KokkosDebian::kokkos")
    string(TOLOWER "${Kokkos_DEVICES}" devices)
    list(JOIN devices "," devices)
    string(REPLACE "Kokkos ${Kokkos_VERSION}" "Kokkos ${Kokkos_VERSION} [${devices}]" kokkos_origin "${kokkos_origin}")
  endif()
  set(NBODY_MODEL_STATUS_KOKKOS "on (${kokkos_origin})")
  # One CUDA runtime per binary: Kokkos' CUDA backend links the shared libcudart while cuda_impl
  # links the static one; both use the static runtime instead, so Kokkos and the CUDA variants share
  # one runtime state. Kokkos' direct link to the driver (libcuda.so) is replaced by
  # kokkos_impl/cuda_driver_shim.cpp, which opens it at run time: the binary then starts on a
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
elseif(kokkos_config_problem)
  set(NBODY_MODEL_STATUS_KOKKOS "off: ${kokkos_config_problem}, and Debian's Kokkos layout was not found")
else()
  set(NBODY_MODEL_STATUS_KOKKOS "off: Kokkos not found (set Kokkos_ROOT to an installed Kokkos, install libtrilinos-kokkos-dev, or configure with -DNBODY_FETCH_KOKKOS=ON)")
endif()
