#!/usr/bin/env bash
# The CPU models and tests under sanitizers (docs/reliability.md):
#   asan: AddressSanitizer + UndefinedBehaviorSanitizer (GCC), the whole test suite;
#   tsan: ThreadSanitizer (GCC 12 linked against LLVM's OpenMP, whose Archer tool lets TSan see OpenMP's
#         barriers and locks), the tests of the OpenMP variants and of the OpenMP-parallel reference.
#   tsan-kokkos: the Kokkos variants on OpenMP under TSan, only where NBODY_TSAN_KOKKOS_ROOT names a
#         Kokkos install built with -fsanitize=thread (Debian ships none, so CI does not run it).
# NBODY_SANITIZER_PRESETS picks some ("asan", "tsan", "tsan-kokkos"; default asan and tsan, plus
# tsan-kokkos when NBODY_TSAN_KOKKOS_ROOT is set).
set -euo pipefail
cd "$(dirname "$0")/.."
default_presets="asan tsan${NBODY_TSAN_KOKKOS_ROOT:+ tsan-kokkos}"
for preset in ${NBODY_SANITIZER_PRESETS:-$default_presets}; do
  start=$SECONDS
  if [[ $preset == tsan-kokkos ]]; then
    Kokkos_ROOT=${NBODY_TSAN_KOKKOS_ROOT:?tsan-kokkos needs NBODY_TSAN_KOKKOS_ROOT} cmake --preset "$preset" >/dev/null
  else
    cmake --preset "$preset" >/dev/null
  fi
  if [[ $preset == tsan-kokkos ]]; then
    cmake --build --preset "$preset" -j "$(nproc)" --target test_kokkos test_activity_map
  elif [[ $preset == tsan ]]; then
    cmake --build --preset "$preset" -j "$(nproc)" --target test_omp test_variants test_verify
  else
    cmake --build --preset "$preset" -j "$(nproc)"
  fi
  ctest --preset "$preset" -j "$(nproc)"
  echo "sanitizers: $preset passed in $((SECONDS - start)) s"
done
