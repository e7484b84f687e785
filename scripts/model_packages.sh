#!/usr/bin/env bash
# The Debian packages the models declare (PACKAGES of nbody_register_model() in each
# models/<name>/model.cmake, docs/adding-a-model.md), one a line, sorted, each once. Read with awk,
# not CMake: scripts/setup.sh runs it before CMake is installed.
#   scripts/model_packages.sh [MODEL.cmake ...]   (default: every models/*/model.cmake)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
(($#)) || set -- "$root"/models/*/model.cmake
awk '
  # The words after PACKAGES up to the next keyword (upper case) or the end of the call.
  function packages(call,    words, n, i, listing) {
    gsub(/[()]/, " ", call)
    n = split(call, words, /[ \t]+/)
    listing = 0
    for (i = 1; i <= n; i++) {
      if (words[i] == "PACKAGES") listing = 1
      else if (words[i] ~ /^[A-Z_]+$/) listing = 0
      else if (listing && words[i] != "") print words[i]
    }
  }
  !inside && /^[ \t]*nbody_register_model[ \t]*\(/ { inside = 1; depth = 0; call = "" }
  inside {
    line = $0
    gsub(/"([^"\\]|\\.)*"/, "\"\"", line)  # a quoted STATUS may hold parentheses: they do not count
    sub(/#.*/, "", line)
    call = call " " line
    depth += gsub(/\(/, "(", line) - gsub(/\)/, ")", line)
    if (depth <= 0) { inside = 0; packages(call) }
  }' "$@" | LC_ALL=C sort -u
