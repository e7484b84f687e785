#!/usr/bin/env bash
# On the GPU machine, in one call: name the device, verify the variants, run each matrix given, and
# optionally an already-built peer program, writing everything into OUT_DIR.
#   scripts/device_run.sh [--verify-args "ARGS" | --no-verify] [--peer NBODY] NBODY_BENCH OUT_DIR [MATRIX.json[:GROUP,...] ...]
# A matrix given as FILE:GROUP,GROUP runs only those groups (`matrix --groups`).
# --verify-args: arguments for `nbody-bench verify` instead of its defaults (one string, split on spaces).
# --no-verify: skip verify (the matrices still verify every configuration they run).
# --peer: the CUDA samples' nbody, built outside this repository (docs/peers.md); it runs before the
#   matrices (its runs are short and a cut-off call keeps them), in float32 and float64 at each of PEER_N (default 16384 65536 262144 1048576),
#   PEER_REPETITIONS times (default 3), and its output goes to OUT_DIR/peer-nbody.txt.
set -uo pipefail
# cuBLAS (cuda.*: reduction=cublas) is not bundled beside the binary: the GPU machine's toolkit has it.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
usage() {
  echo "usage: $0 [--verify-args \"ARGS\" | --no-verify] [--peer NBODY] NBODY_BENCH OUT_DIR [MATRIX.json[:GROUP,...] ...]" >&2
  exit 2
}
verify_args=()
verify=1
peer=""
while (($# > 0)); do
  case $1 in
    --verify-args) (($# >= 2)) || usage; read -r -a verify_args <<<"$2"; shift 2 ;;
    --peer) (($# >= 2)) || usage; peer=$2; shift 2 ;;
    --no-verify) verify=0; shift ;;
    --*) usage ;;
    *) break ;;
  esac
done
(($# >= 2)) || usage
bench=$1
out=$2
shift 2
if [[ -n $peer && ! -x $peer ]]; then
  echo "$0: --peer $peer is not an executable file" >&2
  exit 2
fi
mkdir -p "$out"
status=0
{
  nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv
  lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket|MHz|Flags" | cut -c1-200
} | tee "$out/device.txt"
"$bench" list | tee "$out/list.txt"
verify_status=skipped
if ((verify)); then
  "$bench" verify "${verify_args[@]}" 2>&1 | tee "$out/verify.txt"
  verify_status=${PIPESTATUS[0]}
  ((verify_status == 0)) || status=$verify_status
fi
# Each run is headed by one line that plot/nbodyplot/peer.py parses:
#   == peer-nbody precision=<fp32|fp64> n=<N> repetition=<r> iterations=<i> command: <command line>
# The samples' -benchmark mode times `iterations` steps after one untimed step; float64 at the
# largest N runs fewer of them, since each step there is the longest of the whole call.
if [[ -n $peer ]]; then
  peer_log="$out/peer-nbody.txt"
  : >"$peer_log"
  read -r -a peer_n <<<"${PEER_N:-16384 65536 262144 1048576}"
  repetitions=${PEER_REPETITIONS:-3}
  for precision in fp32 fp64; do
    for n in "${peer_n[@]}"; do
      iterations=10
      [[ $precision == fp64 ]] && ((n >= 1048576)) && iterations=3
      command=("$peer" -benchmark "-numbodies=$n" "-i=$iterations")
      [[ $precision == fp64 ]] && command+=(-fp64)
      for ((r = 1; r <= repetitions; ++r)); do
        echo "== peer-nbody precision=$precision n=$n repetition=$r iterations=$iterations command: ${command[*]}" | tee -a "$peer_log"
        "${command[@]}" 2>&1 | tee -a "$peer_log"
        ((PIPESTATUS[0] == 0)) || status=1
      done
    done
  done
fi
for matrix in "$@"; do
  groups=()
  if [[ $matrix == *.json:* ]]; then
    groups=(--groups "${matrix#*.json:}")
    matrix=${matrix%%.json:*}.json
  fi
  name=$(basename "$matrix" .json)
  echo "== matrix $name ${groups[*]}"
  "$bench" matrix "$matrix" "${groups[@]}" --out "$out/$name.json" --progress log --overwrite 2>&1 | tail -n 40
  ((PIPESTATUS[0] == 0)) || status=1
done

echo "device_run: verify exit $verify_status, overall $status"
exit $status
