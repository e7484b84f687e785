# Script-mode test of the Kokkos source checks (cmake/NbodyKokkosSource.cmake): every bad
# NBODY_KOKKOS_SOURCE must stop the configure with a message naming what is wrong.
#   cmake -DCASE=missing|hash|version -DWORK=<scratch folder> -P kokkos_source_errors.cmake
# Each case ends in the module's FATAL_ERROR; ctest matches its message (tests/CMakeLists.txt).
cmake_minimum_required(VERSION 3.25)
list(APPEND CMAKE_MODULE_PATH "${CMAKE_CURRENT_LIST_DIR}/../cmake")
set(NBODY_KOKKOS_BUILD_ROOT "${WORK}/root")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/tree/kokkos-9.9.99")
if(CASE STREQUAL "missing")
  set(NBODY_KOKKOS_SOURCE "${WORK}/no-such-kokkos.tar.gz")
elseif(CASE STREQUAL "hash")
  # A tarball of the right shape whose bytes are not the release's.
  file(WRITE "${WORK}/tree/kokkos-9.9.99/CMakeLists.txt" "set(Kokkos_VERSION_MAJOR 9)\n")
  set(NBODY_KOKKOS_SOURCE "${WORK}/kokkos-4.6.01.tar.gz")
  file(ARCHIVE_CREATE OUTPUT "${NBODY_KOKKOS_SOURCE}" PATHS "${WORK}/tree/kokkos-9.9.99" FORMAT gnutar COMPRESSION GZip)
elseif(CASE STREQUAL "version")
  file(WRITE "${WORK}/tree/kokkos-9.9.99/CMakeLists.txt"
       "set(Kokkos_VERSION_MAJOR 9)\nset(Kokkos_VERSION_MINOR 9)\nset(Kokkos_VERSION_PATCH 99)\n")
  set(NBODY_KOKKOS_SOURCE "${WORK}/tree/kokkos-9.9.99")
else()
  message(FATAL_ERROR "unknown CASE '${CASE}'")
endif()
include(NbodyKokkosSource)
nbody_kokkos_prepare_source("${WORK}/build")
message(FATAL_ERROR "test failed: NBODY_KOKKOS_SOURCE=${NBODY_KOKKOS_SOURCE} was accepted")
