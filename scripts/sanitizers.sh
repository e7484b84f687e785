#!/usr/bin/env bash
# The CPU models and tests under sanitizers (docs/testing.md):
#   asan: AddressSanitizer + UndefinedBehaviorSanitizer, the whole test suite compiled with Clang 16
#         and LLVM's OpenMP (the second host compiler beside the GCC build), with Debian's Kokkos 3.4
#         (Serial): the build that keeps Kokkos 3.4 compatibility tested;
#   tsan: ThreadSanitizer (GCC 12 linked against LLVM's OpenMP, whose Archer tool lets TSan see OpenMP's
#         barriers and locks), the tests of the OpenMP variants, of the OpenMP-parallel reference and
#         of the Kokkos variants on OpenMP, against a Kokkos built at configure time with
#         -fsanitize=thread from the pinned source (NBODY_KOKKOS_SOURCE, or downloaded).
# NBODY_SANITIZER_PRESETS picks some (default "asan tsan").
set -euo pipefail
cd "$(dirname "$0")/.."
default_presets="asan tsan"
for preset in ${NBODY_SANITIZER_PRESETS:-$default_presets}; do
  start=$SECONDS
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$(nproc)"  # tsan: the test programs its test preset runs
  ctest --preset "$preset" -j "$(nproc)"
  echo "sanitizers: $preset passed in $((SECONDS - start)) s"
done
