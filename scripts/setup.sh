#!/usr/bin/env bash
# Installs what the suite needs from Debian's archive (only what is missing) and says what it found.
set -euo pipefail

packages=(cmake ninja-build g++ nlohmann-json3-dev libbenchmark-dev libgtest-dev libcli11-dev libfmt-dev libpng-dev
          python3 python3-matplotlib python3-pandas
          # scripts/sanitizers.sh and scripts/fuzz.sh: Clang with libFuzzer and the sanitizer runtimes,
          # LLVM's OpenMP with Archer (ThreadSanitizer needs an OpenMP runtime it can see through),
          # llvm-symbolizer (the asan build's reports, and its leak suppressions, need symbols)
          clang-16 libclang-rt-16-dev libomp-16-dev llvm-16
          # the distributed mode (docs/scaling.md): MPI's library and mpirun
          libopenmpi-dev openmpi-bin)
# Each model's own packages, as its models/<name>/model.cmake declares them (PACKAGES; the comment
# beside each says what for): read with awk, since CMake may be among what is missing here.
declared=$(bash "$(dirname "$0")/model_packages.sh")  # a failure stops setup (set -e)
if [[ -n $declared ]]; then
  mapfile -t model_packages <<<"$declared"
  packages+=("${model_packages[@]}")
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  as_root=()
  [[ $(id -u) -eq 0 ]] || as_root=(sudo)
  "${as_root[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: all Debian packages present"
fi
if [[ -x /usr/local/cuda/bin/nvcc ]]; then
  echo "setup: CUDA toolkit found ($(/usr/local/cuda/bin/nvcc --version | tail -n 2 | head -n 1))"
else
  echo "setup: no CUDA toolkit at /usr/local/cuda: the CUDA variants will not be built"
fi
