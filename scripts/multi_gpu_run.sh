#!/usr/bin/env bash
# On a machine with several GPUs, in one call: the scaling runs and checks behind docs/scaling.md's
# multi-GPU sections, for G = 1 up to the GPUs present (or --ranks), written into OUT_DIR:
#   scaling-2d-fp32/, scaling-3d-fp64/   part strong: strong scaling (scripts/scaling_run.sh), G = 1 at
#                                        the default exchange, G > 1 with exchange=overlap and allgather
#   scaling-*-weak<N1>/                  part weak: weak scaling from N1 = 65536 and 262144
#   efficiency.txt                       scripts/scaling_efficiency.py over all of OUT_DIR's scaling files
#   checks.txt                           part checks: run's per-step breakdown (all-gather) at N = 2^14
#                                        and 2^18, the all-gather at 2^14 under each NCCL protocol,
#                                        verify over the largest G, and the faults: two ranks on one
#                                        GPU, NCCL's bootstrap failing, a rank killed mid-matrix
# usage: scripts/multi_gpu_run.sh BENCH OUT_DIR [--ranks "1 2 4"] [--variants LIST] [--parts "strong weak checks"]
#        [--device-collectives nccl|peer]
# (part scaling = strong weak; the device collectives of the scaling parts, default nccl). Each part
# is bounded by `timeout`; a cut part leaves the results files it finished, and a later call into
# the same OUT_DIR adds its parts beside them.
set -uo pipefail

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
(($# >= 2)) || usage
bench=$1 out=$2
shift 2
[[ -x $bench ]] || { echo "multi_gpu_run.sh: $bench is not an executable nbody-bench" >&2; exit 2; }
gpus=$( (nvidia-smi -L 2>/dev/null || true) | grep -c '^GPU ' || true)
ranks="" variants=cuda.sliced,kokkos.team_tiled@cuda parts="strong weak checks" collectives=nccl
while (($# > 0)); do
  case $1 in
    --ranks) ranks=$2; shift 2 ;;
    --variants) variants=$2; shift 2 ;;
    --parts) parts=$2; shift 2 ;;
    --device-collectives) collectives=$2; shift 2 ;;
    *) echo "multi_gpu_run.sh: unknown option $1" >&2; usage ;;
  esac
done
[[ -n $ranks ]] || ranks=$(seq 1 "$gpus" | tr '\n' ' ')
largest=$(echo $ranks | tr ' ' '\n' | sort -n | tail -1)
((largest >= 2)) || { echo "multi_gpu_run.sh: needs at least 2 GPUs (nvidia-smi lists $gpus)" >&2; exit 2; }
parts=${parts//scaling/strong weak}
for part in $parts; do
  case $part in strong|weak|checks) ;; *) echo "multi_gpu_run.sh: --parts takes strong, weak, scaling and checks, got '$part'" >&2; exit 2 ;; esac
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
{
  nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.max.sm --format=csv
  nvidia-smi topo -m
  mpirun --version | head -1
} > "$out/device.txt" 2>&1

multi=$(echo $ranks | tr ' ' '\n' | awk '$1 > 1' | tr '\n' ' ')
case $collectives in nccl|peer) ;; *) echo "multi_gpu_run.sh: --device-collectives takes nccl or peer, got '$collectives'" >&2; exit 2 ;; esac
common=(--variants "$variants" --steps 3 --warmup 1 --repetitions 3 --d 100 --min-time 0.3 --device-collectives "$collectives")
for workload in "2 fp32 16384 65536 262144 1048576" "3 fp64 16384 65536 262144"; do
  read -r dim precision sizes <<<"$workload"
  dir=$out/scaling-${dim}d-$precision
  if [[ " $parts " == *" strong "* ]]; then
    timeout 300 "$here/scaling_run.sh" "$bench" "$dir" "${common[@]}" --dim "$dim" --precision "$precision" \
      --kinds strong --ranks 1 --n "$sizes" > /dev/null 2>&1
    timeout 600 "$here/scaling_run.sh" "$bench" "$dir" "${common[@]}" --dim "$dim" --precision "$precision" \
      --kinds strong --ranks "$multi" --n "$sizes" --tuning exchange=overlap,allgather > /dev/null 2>&1
  fi
  if [[ " $parts " == *" weak "* ]]; then
    for n1 in 65536 262144; do
      timeout 300 "$here/scaling_run.sh" "$bench" "$dir-weak$n1" "${common[@]}" --dim "$dim" --precision "$precision" \
        --kinds weak --ranks "$multi" --weak-n "$n1" --tuning exchange=overlap,allgather > /dev/null 2>&1
    done
  fi
done
if [[ " $parts " == *" strong "* || " $parts " == *" weak "* ]]; then
  python3 "$here/scaling_efficiency.py" "$out"/scaling-*/*-g?.json > "$out/efficiency.txt" 2>&1
fi

if [[ " $parts " == *" checks "* ]]; then
  {
    for n in 16384 262144; do
      for variant in ${variants//,/ }; do
        echo "# N = $n, $variant, exchange=allgather, $largest ranks, 2D fp32"
        timeout 60 mpirun -np "$largest" "$bench" run --variant "$variant" -n "$n" -d 100 --min-time 1 \
          --tuning exchange=allgather 2>&1 | grep -E "^(rank|time per step|step breakdown)"
      done
    done
    echo "# the all-gather at N = 16384 under each NCCL protocol (NCCL_PROTO), ${variants%%,*}, $largest ranks, 2D fp32"
    for protocol in default LL LL128 Simple; do
      proto=()
      [[ $protocol == default ]] || proto=(-x "NCCL_PROTO=$protocol")
      echo "NCCL_PROTO=$protocol"
      timeout 60 mpirun -np "$largest" "${proto[@]}" "$bench" run --variant "${variants%%,*}" -n 16384 -d 100 --min-time 1 \
        --tuning exchange=allgather 2>&1 | grep -E "^(time per step|step breakdown)"
    done
    echo "# verify over $largest GPUs: every workload, N = 1001 and 4099, 1 and 10 steps"
    timeout 300 mpirun -np "$largest" "$bench" verify --variants "$variants" -n 1001 -n 4099 -d 10 --steps 1 --steps 10 \
      2>&1 | tail -n 1
    echo "# two ranks on one GPU"
    timeout 60 mpirun -np 2 -x CUDA_VISIBLE_DEVICES=0 "$bench" run --variant "${variants%%,*}" -n 65536 -d 10 --steps 2 \
      2>&1 | grep -E "^rank [0-9]+ of"
    echo "exit status ${PIPESTATUS[0]}"
    echo "# NCCL's bootstrap failing (NCCL_SOCKET_IFNAME names no interface)"
    timeout 60 mpirun -np 2 -x NCCL_SOCKET_IFNAME=nonexistent0 "$bench" run --variant "${variants%%,*}" -n 65536 -d 10 \
      --steps 2 2>&1 | grep -E "^rank [0-9]+ of"
    echo "exit status ${PIPESTATUS[0]}"
    echo "# the last rank SIGKILLed 8 s into a $largest-rank matrix"
    matrix=$out/kill-matrix.json results=$out/kill-results.json
    printf '{"name": "kill", "steps": 3, "warmup_steps": 1, "repetitions": 3, "verification": {"steps": 1},\n "groups": [{"name": "g", "variants": ["%s"], "n": [262144, 524288, 1048576], "d": [100]}]}\n' \
      "${variants//,/\", \"}" > "$matrix"
    rm -f "$results"
    mpirun -np "$largest" "$bench" matrix "$matrix" --out "$results" --progress log > "$out/kill.log" 2>&1 &
    launcher=$!
    sleep 8
    pkill -9 -n -f "nbody-bench matrix $matrix"
    killed=$SECONDS
    wait "$launcher"
    echo "mpirun exit status $? $((SECONDS - killed)) s after the kill; processes left: $(pgrep -fc "nbody-bench matrix $matrix")"
    "$bench" check-results "$results" 2>&1 | tail -n 1
  } > "$out/checks.txt" 2>&1
fi
exit 0
