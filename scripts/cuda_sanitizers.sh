#!/usr/bin/env bash
# On the GPU machine: compute-sanitizer memcheck, racecheck and synccheck over `verify` of every CUDA
# variant at a small problem (N = 1000, D = 10, 1 and 2 steps; 2d/fp32/euler, then 3d/fp64/leapfrog,
# the widest shared-memory layouts, under memcheck while the time lasts). Writes one log per run and
# summary.txt (each run's exit status, time, the tool's SUMMARY line and verify's count) into OUT_DIR.
#   scripts/cuda_sanitizers.sh NBODY_BENCH OUT_DIR [SECONDS]
set -uo pipefail
if (($# < 2)); then
  echo "usage: $0 NBODY_BENCH OUT_DIR [SECONDS]" >&2
  exit 2
fi
bench=$1
out=$2
budget=${3:-600}
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p "$out"
summary=$out/summary.txt
start=$(date +%s)
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; compute-sanitizer --version | tail -n 1; } >"$summary"
status=0
run() {  # tool, seconds, name, workload flags...
  local tool=$1 limit=$2 name=$3
  shift 3
  local t0
  t0=$(date +%s)
  timeout "$limit" compute-sanitizer --tool "$tool" --error-exitcode 9 "$bench" verify --variants 'cuda.*' -n 1000 -d 10 \
    --steps 1 2 "$@" >"$out/$tool-$name.txt" 2>&1
  local rc=$?
  ((rc == 0)) || status=1
  echo "$tool $name rc=$rc $(($(date +%s) - t0)) s | $(grep -E 'SUMMARY' "$out/$tool-$name.txt" | tail -n 1) |" \
    "$(grep -E '^[0-9]+ checks' "$out/$tool-$name.txt")" >>"$summary"
}
share=$((budget / 4))
for tool in memcheck racecheck synccheck; do run "$tool" "$share" 2d --dim 2 --precision fp32 --integrator euler; done
left=$((budget - ($(date +%s) - start)))
((left > 20)) && run memcheck "$left" 3d-fp64-leapfrog --dim 3 --precision fp64 --integrator leapfrog
cat "$summary"
exit $status
