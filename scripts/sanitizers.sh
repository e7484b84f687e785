#!/usr/bin/env bash
# The CPU models and tests under sanitizers (docs/reliability.md):
#   asan: AddressSanitizer + UndefinedBehaviorSanitizer (GCC), the whole test suite;
#   tsan: ThreadSanitizer (clang-16, LLVM's OpenMP with its Archer tool so that TSan sees OpenMP's
#         barriers and locks), the tests of the OpenMP variants and of the OpenMP-parallel reference.
# NBODY_SANITIZER_PRESETS picks some ("asan", "tsan"; default both).
set -euo pipefail
cd "$(dirname "$0")/.."
for preset in ${NBODY_SANITIZER_PRESETS:-asan tsan}; do
  start=$SECONDS
  cmake --preset "$preset" >/dev/null
  if [[ $preset == tsan ]]; then
    cmake --build --preset "$preset" -j "$(nproc)" --target test_omp test_variants test_verify
  else
    cmake --build --preset "$preset" -j "$(nproc)"
  fi
  ctest --preset "$preset" -j "$(nproc)"
  echo "sanitizers: $preset passed in $((SECONDS - start)) s"
done
