#!/usr/bin/env bash
# Set up, build, and run the whole test suite (GoogleTest + plot tests) under ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
ctest --preset "${NBODY_PRESET:-cpu}" -j "$(nproc)"
