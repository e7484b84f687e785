#!/usr/bin/env bash
# On the GPU machine, in one call: name the device, verify every variant, then run each matrix
# given, writing the verify table and one results JSON per matrix into OUT_DIR.
#   scripts/device_run.sh NBODY_BENCH OUT_DIR [MATRIX.json ...]
set -uo pipefail
if (($# < 2)); then
  echo "usage: $0 NBODY_BENCH OUT_DIR [MATRIX.json ...]" >&2
  exit 2
fi
bench=$1
out=$2
shift 2
mkdir -p "$out"
status=0
{
  nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv
  lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket|MHz|Flags" | cut -c1-200
} | tee "$out/device.txt"
"$bench" list | tee "$out/list.txt"
"$bench" verify 2>&1 | tee "$out/verify.txt"
verify_status=${PIPESTATUS[0]}
((verify_status == 0)) || status=$verify_status
for matrix in "$@"; do
  name=$(basename "$matrix" .json)
  echo "== matrix $name"
  "$bench" matrix "$matrix" --out "$out/$name.json" --progress log --overwrite 2>&1 | tail -n 40
  ((PIPESTATUS[0] == 0)) || status=1
done
echo "device_run: verify exit $verify_status, overall $status"
exit $status
