# The instruction set of the host code, and of the Kokkos the project builds: -march=NBODY_HOST_ARCH.
# `native` (the default) compiles for the machine that builds, as a build that runs where it is
# made should (Kokkos_ARCH_NATIVE does the same); a binary carried to another machine names that
# machine's ISA (the h100 preset: x86-64-v4, the AVX-512 hosts of the GPU machines). Empty: the
# compiler's default, baseline x86-64. The flag goes into CMAKE_CXX_FLAGS, so results' build_flags
# record it, and results' host_arch names it.
set(NBODY_HOST_ARCH "native" CACHE STRING "-march= value for host C++ code and the built Kokkos: native, a named ISA (x86-64-v3, x86-64-v4, ...), or empty for the compiler's default")
set(NBODY_HOST_ARCH_FLAGS "")
if(NBODY_HOST_ARCH)
  if(NOT NBODY_HOST_ARCH MATCHES "^[A-Za-z0-9_.-]+$")
    message(FATAL_ERROR "NBODY_HOST_ARCH=${NBODY_HOST_ARCH}: not an -march value (letters, digits, '.', '_' and '-')")
  endif()
  set(NBODY_HOST_ARCH_FLAGS "-march=${NBODY_HOST_ARCH}")
  include(CheckCXXCompilerFlag)
  check_cxx_compiler_flag("${NBODY_HOST_ARCH_FLAGS}" NBODY_HOST_ARCH_ACCEPTED_${NBODY_HOST_ARCH})
  if(NOT NBODY_HOST_ARCH_ACCEPTED_${NBODY_HOST_ARCH})
    message(FATAL_ERROR "NBODY_HOST_ARCH=${NBODY_HOST_ARCH}: ${CMAKE_CXX_COMPILER} does not accept ${NBODY_HOST_ARCH_FLAGS}")
  endif()
  string(APPEND CMAKE_CXX_FLAGS " ${NBODY_HOST_ARCH_FLAGS}")
  set(NBODY_HOST_ARCH_TEXT "${NBODY_HOST_ARCH}")
  if(NBODY_HOST_ARCH STREQUAL "native")
    # Name the CPU that `native` stood for, as the compiler resolved it.
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      execute_process(COMMAND ${CMAKE_CXX_COMPILER} -march=native -Q --help=target
                      OUTPUT_VARIABLE resolved ERROR_QUIET)
      string(REGEX MATCH "\n[ \t]*-march=[ \t]*([A-Za-z0-9_.-]+)" resolved "${resolved}")
    else()
      execute_process(COMMAND ${CMAKE_CXX_COMPILER} -march=native -### -x c++ -c /dev/null
                      ERROR_VARIABLE resolved OUTPUT_QUIET)
      string(REGEX MATCH "\"-target-cpu\" \"([A-Za-z0-9_.-]+)\"" resolved "${resolved}")
    endif()
    if(CMAKE_MATCH_1)
      set(NBODY_HOST_ARCH_TEXT "native (${CMAKE_MATCH_1})")
    endif()
  endif()
else()
  set(NBODY_HOST_ARCH_TEXT "default")
endif()
message(STATUS "nbody host ISA: ${NBODY_HOST_ARCH_TEXT}")
