# Sanitizer and fuzzer builds (docs/testing.md). The flags go into CMAKE_CXX_FLAGS, so every
# target gets them and results' build_flags record them.
set(NBODY_SANITIZERS "" CACHE STRING "Sanitizers for every C++ target, as -fsanitize takes them: \"address;undefined\" or \"thread\" (empty: none)")
option(NBODY_BUILD_FUZZERS "Build the libFuzzer targets of fuzz/ (Clang only; every target compiled with -fsanitize=fuzzer-no-link)" OFF)

if(NBODY_SANITIZERS)
  list(JOIN NBODY_SANITIZERS "," nbody_sanitizer_list)
  string(APPEND CMAKE_CXX_FLAGS " -fsanitize=${nbody_sanitizer_list} -fno-omit-frame-pointer -fno-sanitize-recover=all")
  # Under -fsanitize=address GCC 12 warns -Wmaybe-uninitialized inside libstdc++'s <regex>, which
  # the uninstrumented build does not: the instrumentation misleads the analysis. The normal build
  # keeps the warning.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    string(APPEND CMAKE_CXX_FLAGS " -Wno-maybe-uninitialized")
  endif()
  foreach(kind EXE SHARED MODULE)
    string(APPEND CMAKE_${kind}_LINKER_FLAGS " -fsanitize=${nbody_sanitizer_list}")
  endforeach()
  message(STATUS "nbody sanitizers: ${nbody_sanitizer_list}")
endif()

if(NBODY_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "NBODY_BUILD_FUZZERS needs Clang (libFuzzer): configure with the `fuzz` preset "
                        "(clang++-16 from scripts/setup.sh)")
  endif()
  string(APPEND CMAKE_CXX_FLAGS " -fsanitize=fuzzer-no-link")
endif()
