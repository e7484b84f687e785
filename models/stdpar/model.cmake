# stdpar: the step as C++17 parallel algorithms, run by libstdc++'s parallel backend on TBB (CPU
# only: the GPU would need nvc++ -stdpar, which no registry this project reaches offers;
# docs/models.md). In the build where TBB is found and libstdc++ runs the algorithms on it.
option(NBODY_ENABLE_STDPAR "Build the stdpar variants (models/stdpar/) when TBB is found" ON)
set(NBODY_WITH_STDPAR OFF)
if(NOT NBODY_ENABLE_STDPAR)
  set(NBODY_MODEL_STATUS_STDPAR "off: NBODY_ENABLE_STDPAR=OFF")
else()
  find_package(TBB QUIET CONFIG)
  if(NOT TBB_FOUND)
    set(NBODY_MODEL_STATUS_STDPAR "off: TBB not found (on Debian: libtbb-dev); libstdc++ would run the parallel algorithms serially")
  else()
    # libstdc++ picks its TBB backend when <tbb/tbb.h> is found; without it par_unseq is serial.
    include(CheckCXXSourceCompiles)
    set(CMAKE_REQUIRED_LIBRARIES TBB::tbb)
    set(CMAKE_REQUIRED_QUIET ON)
    check_cxx_source_compiles([[
      #include <execution>
      #if !defined(_PSTL_PAR_BACKEND_TBB)
      #error no TBB backend
      #endif
      #include <algorithm>
      #include <vector>
      int main() { std::vector<int> v(64, 1); std::for_each(std::execution::par_unseq, v.begin(), v.end(), [](int& x) { ++x; }); return v[0] == 2 ? 0 : 1; }]]
      NBODY_STDPAR_TBB_BACKEND_WORKS)
    unset(CMAKE_REQUIRED_LIBRARIES)
    unset(CMAKE_REQUIRED_QUIET)
    if(NBODY_STDPAR_TBB_BACKEND_WORKS)
      set(NBODY_WITH_STDPAR ON)
      set(NBODY_MODEL_STATUS_STDPAR "on (libstdc++ parallel algorithms, TBB ${TBB_VERSION})")
    else()
      set(NBODY_MODEL_STATUS_STDPAR "off: ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}'s standard library has no TBB backend for the parallel algorithms")
    endif()
  endif()
endif()
# PACKAGES (scripts/setup.sh): oneTBB; libstdc++ runs the parallel algorithms on it (without it,
# serially).
nbody_register_model(NAME stdpar TITLE stdpar IN_BUILD ${NBODY_WITH_STDPAR} STATUS "${NBODY_MODEL_STATUS_STDPAR}"
                     REPORT_ORDER 80 PACKAGES libtbb-dev)
