# Finds Debian's Kokkos (libtrilinos-kokkos-dev, Kokkos 3.4): headers in <prefix>/include/trilinos,
# libraries libtrilinos_kokkoscore and libtrilinos_kokkoscontainers. The package's own CMake
# config names an include directory it does not ship, so this module describes the layout instead.
# Defines KokkosDebian_FOUND, KokkosDebian_VERSION, KokkosDebian_SPACES and the target
# KokkosDebian::kokkos.
find_path(KokkosDebian_INCLUDE_DIR KokkosCore_config.h PATH_SUFFIXES trilinos)
find_library(KokkosDebian_CORE_LIBRARY trilinos_kokkoscore)
find_library(KokkosDebian_CONTAINERS_LIBRARY trilinos_kokkoscontainers)

if(KokkosDebian_INCLUDE_DIR)
  file(STRINGS "${KokkosDebian_INCLUDE_DIR}/KokkosCore_config.h" config_lines
       REGEX "^#define KOKKOS_(VERSION|ENABLE_(SERIAL|OPENMP|THREADS|CUDA))( |$)")
  set(KokkosDebian_SPACES "")
  foreach(line IN LISTS config_lines)
    if(line MATCHES "KOKKOS_VERSION ([0-9]+)")
      math(EXPR major "${CMAKE_MATCH_1} / 10000")
      math(EXPR minor "${CMAKE_MATCH_1} / 100 % 100")
      math(EXPR patch "${CMAKE_MATCH_1} % 100")
      set(KokkosDebian_VERSION "${major}.${minor}.${patch}")
    elseif(line MATCHES "KOKKOS_ENABLE_([A-Z]+)")
      string(TOLOWER "${CMAKE_MATCH_1}" space)
      list(APPEND KokkosDebian_SPACES ${space})
    endif()
  endforeach()
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(KokkosDebian
  REQUIRED_VARS KokkosDebian_INCLUDE_DIR KokkosDebian_CORE_LIBRARY KokkosDebian_CONTAINERS_LIBRARY
  VERSION_VAR KokkosDebian_VERSION)

if(KokkosDebian_FOUND AND NOT TARGET KokkosDebian::kokkos)
  add_library(KokkosDebian::kokkos INTERFACE IMPORTED)
  # Imported include directories are system ones: Kokkos 3.4's headers warn under C++20.
  set_target_properties(KokkosDebian::kokkos PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${KokkosDebian_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${KokkosDebian_CONTAINERS_LIBRARY};${KokkosDebian_CORE_LIBRARY};${CMAKE_DL_LIBS}")
  if("openmp" IN_LIST KokkosDebian_SPACES)
    find_package(OpenMP REQUIRED COMPONENTS CXX)
    target_link_libraries(KokkosDebian::kokkos INTERFACE OpenMP::OpenMP_CXX)
  endif()
endif()
mark_as_advanced(KokkosDebian_INCLUDE_DIR KokkosDebian_CORE_LIBRARY KokkosDebian_CONTAINERS_LIBRARY)
