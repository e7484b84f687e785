# Kokkos: in the build where a Kokkos with the wanted execution spaces is found or built
# (find_kokkos.cmake). Decided after OpenMP and CUDA: its spaces follow theirs.
option(NBODY_ENABLE_KOKKOS "Build the Kokkos variants (models/kokkos/) when Kokkos is found" ON)
set(NBODY_WITH_KOKKOS OFF)
if(NOT NBODY_ENABLE_KOKKOS)
  set(NBODY_MODEL_STATUS_KOKKOS "off: NBODY_ENABLE_KOKKOS=OFF")
else()
  include(${CMAKE_CURRENT_LIST_DIR}/find_kokkos.cmake)  # sets NBODY_WITH_KOKKOS and NBODY_MODEL_STATUS_KOKKOS
endif()
# PACKAGES (scripts/setup.sh): patch applies the pinned release's CUDA 13 fix when Kokkos is built at
# configure time; Debian's Kokkos 3.4 (Serial only) is the fallback when no source can be had.
nbody_register_model(NAME kokkos TITLE Kokkos IN_BUILD ${NBODY_WITH_KOKKOS} STATUS "${NBODY_MODEL_STATUS_KOKKOS}"
                     REPORT_ORDER 20 PACKAGES patch libtrilinos-kokkos-dev)
