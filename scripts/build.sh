#!/usr/bin/env bash
# Configures and builds the `cpu` preset (or the preset named in $NBODY_PRESET).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${NBODY_PRESET:-cpu}
cmake --preset "$preset"
cmake --build --preset "$preset" -j "$(nproc)"
