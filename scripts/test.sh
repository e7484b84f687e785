#!/usr/bin/env bash
# Set up, build, and run the whole test suite (GoogleTest + plot tests) under ctest.
# NBODY_RELIABILITY=1 then runs the sanitizer builds (scripts/sanitizers.sh: asan is also the build
# with the second host compiler, Clang 16) and the bounded fuzz runs (scripts/fuzz.sh), as CI does
# (docs/testing.md); each stage's wall time is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
stage() {
  local name=$1 start=$SECONDS
  shift
  "$@"
  echo "stage ${name}: $((SECONDS - start)) s"
}
stage setup bash scripts/setup.sh
stage build bash scripts/build.sh
preset=${NBODY_PRESET:-cpu}
stage tests ctest --preset "$preset" -j "$(nproc)" --output-junit "$PWD/build/$preset/junit.xml"
# A test that skips without a reason in tests/skip_allowlist.txt or its model's
# models/<name>/skip_allowlist.txt fails the run (scripts/check_skips.py).
stage skips python3 scripts/check_skips.py "build/$preset/junit.xml"
if [[ ${NBODY_RELIABILITY:-0} == 1 ]]; then
  stage sanitizers bash scripts/sanitizers.sh
  stage fuzz bash scripts/fuzz.sh
fi
