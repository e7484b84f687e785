#!/usr/bin/env bash
# Strong and weak scaling of distributed variants over G ranks (docs/scaling.md), one
# `mpirun -np G nbody-bench matrix` per G and kind, each writing its own results file as it goes:
#   OUT_DIR/strong-g<G>.json   N in --n (default 2^20 2^21 2^22) at every G
#   OUT_DIR/weak-g<G>.json     N = --weak-n x sqrt(G), rounded to a multiple of 1024 (N^2/G constant)
#   OUT_DIR/<kind>-g<G>.log    the matrix's progress
# A results file that exists is continued (--resume), so the script can be run again after a stop.
# `nbody-bench plot` (plot/) draws the scaling figure from OUT_DIR.
#
# usage: scripts/scaling_run.sh BENCH OUT_DIR [options] [-- extra matrix options]
#   --variants LIST            comma-separated variant ids (default cuda.sliced)
#   --ranks "1 2 ..."          the G to run (default 1 .. the GPUs nvidia-smi lists, 1 without one)
#   --device-collectives K     nccl (one rank per GPU, default), host-staged (ranks may share a
#                              GPU: how the distributed GPU path is checked on a one-GPU machine)
#                              or peer (GPUs write each other's memory; one node)
#   --n "N ..."                strong-scaling sizes (default 1048576 2097152 4194304)
#   --weak-n N                 weak scaling's N at G = 1 (default 1048576)
#   --kinds "strong weak"      which scalings to run (default both)
#   --steps S --warmup W --repetitions R   per configuration (default 5, 1, 3)
#   --min-time T               time more steps until each repetition lasts T seconds (default: --steps only)
#   --d D --dim 2|3 --precision fp32|fp64 --integrator euler|leapfrog   (default 100, 2, fp32, euler)
#   --tuning NAME=VALUE[,VALUE...]  a tuning of every variant, each value a configuration of its own;
#                              repeatable (e.g. threads=1 for CPU ranks, exchange=overlap,allgather)
# Example, the lead's correctness check on one H100: several ranks sharing the GPU, small N:
#   scripts/scaling_run.sh build/h100/harness/nbody-bench out/scaling-check --ranks "1 2 3" \
#       --device-collectives host-staged --n "65536" --weak-n 65536 --steps 3 --repetitions 1
set -euo pipefail

usage() { sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[[ $# -ge 2 ]] || usage
bench=$1 out_dir=$2
shift 2
[[ -x $bench ]] || { echo "scaling_run.sh: $bench is not an executable nbody-bench" >&2; exit 2; }

# The JSON array of a space-separated list of numbers, and of a comma-separated list of strings.
json_numbers() { local words; words=$(echo $1); echo "[${words// /,}]"; }
json_variants() { echo "[\"${1//,/\",\"}\"]"; }

variants=cuda.sliced ranks_list="" collectives=nccl strong_n="1048576 2097152 4194304" weak_n=1048576
kinds="strong weak" steps=5 warmup=1 repetitions=3 min_time=0 d=100 dim=2 precision=fp32 integrator=euler
extra=() tunings=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --variants) variants=$2; shift 2 ;;
    --ranks) ranks_list=$2; shift 2 ;;
    --device-collectives) collectives=$2; shift 2 ;;
    --n) strong_n=$2; shift 2 ;;
    --weak-n) weak_n=$2; shift 2 ;;
    --kinds) kinds=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --repetitions) repetitions=$2; shift 2 ;;
    --min-time) min_time=$2; shift 2 ;;
    --d) d=$2; shift 2 ;;
    --dim) dim=$2; shift 2 ;;
    --precision) precision=$2; shift 2 ;;
    --integrator) integrator=$2; shift 2 ;;
    --tuning)
      [[ $2 =~ ^([A-Za-z_][A-Za-z0-9_]*)=([A-Za-z0-9_.]+(,[A-Za-z0-9_.]+)*)$ ]] || { echo "scaling_run.sh: --tuning '$2' is not NAME=VALUE[,VALUE...]" >&2; exit 2; }
      tunings+="${tunings:+, }\"${BASH_REMATCH[1]}\": $(json_variants "${BASH_REMATCH[2]}")"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "scaling_run.sh: unknown option $1" >&2; usage ;;
  esac
done
[[ $min_time =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "scaling_run.sh: --min-time '$min_time' is not a number of seconds" >&2; exit 2; }
case $collectives in nccl|host-staged|peer) ;; *) echo "scaling_run.sh: --device-collectives must be nccl, host-staged or peer, got '$collectives'" >&2; exit 2 ;; esac
for kind in $kinds; do
  case $kind in strong|weak) ;; *) echo "scaling_run.sh: --kinds takes strong and weak, got '$kind'" >&2; exit 2 ;; esac
done
for number in $strong_n $weak_n $steps $warmup $repetitions $d; do
  [[ $number =~ ^[0-9]+$ ]] || { echo "scaling_run.sh: '$number' is not a whole number" >&2; exit 2; }
done

gpus=$( (nvidia-smi -L 2>/dev/null || true) | grep -c '^GPU ' || true)
if [[ -z $ranks_list ]]; then
  ranks_list=$(seq 1 "$(( gpus > 0 ? gpus : 1 ))")
fi
for g in $ranks_list; do
  [[ $g =~ ^[1-9][0-9]*$ ]] || { echo "scaling_run.sh: --ranks takes positive whole numbers, got '$g'" >&2; exit 2; }
  # NCCL needs a GPU per rank; host-staged lets ranks share one.
  if [[ $collectives == nccl && $gpus -gt 0 && $g -gt $gpus ]]; then
    echo "scaling_run.sh: $g ranks with nccl need $g GPUs, this node has $gpus (use --device-collectives host-staged to share one)" >&2
    exit 2
  fi
done

# Open MPI refuses root without these; NVLink multicast (NVLS) stays off on the lent machines.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
mkdir -p "$out_dir"


# N for weak scaling at G ranks: weak_n x sqrt(G), a multiple of 1024.
weak_size() { awk -v n="$weak_n" -v g="$1" 'BEGIN { v = n * sqrt(g); r = int(v / 1024 + 0.5) * 1024; print (r > 0 ? r : 1024) }'; }

write_matrix() {  # kind G path
  local kind=$1 g=$2 path=$3 sizes
  if [[ $kind == strong ]]; then sizes=$(json_numbers "$strong_n"); else sizes="[$(weak_size "$g")]"; fi
  local timing=""
  [[ $min_time =~ ^0*(\.0*)?$ ]] || timing=" \"min_time_s\": $min_time,"
  cat > "$path" <<EOF
{
  "name": "scaling-$kind",
  "description": "$kind scaling over $g rank(s), device collectives $collectives (scripts/scaling_run.sh, docs/scaling.md)",
  "steps": $steps,
  "warmup_steps": $warmup,
  "repetitions": $repetitions,
  "verification": {"steps": 1},
  "groups": [
    {"name": "$kind", "variants": $(json_variants "$variants"), "n": $sizes, "d": [$d],
     "dim": [$dim], "precision": ["$precision"], "integrator": ["$integrator"],$timing
     "tunings": {$tunings}}
  ]
}
EOF
}

status=0
for kind in $kinds; do
  for g in $ranks_list; do
    results="$out_dir/$kind-g$g.json" matrix="$out_dir/$kind-g$g.matrix.json" log="$out_dir/$kind-g$g.log"
    write_matrix "$kind" "$g" "$matrix"
    continue_flag=()
    [[ -e $results ]] && continue_flag=(--resume)
    echo "scaling_run.sh: $kind scaling, G = $g ($collectives): $results" >&2
    # The matrix writes each finished configuration into $results; the log shows progress as it goes.
    if ! mpirun --oversubscribe -np "$g" "$bench" matrix "$matrix" --out "$results" "${continue_flag[@]}" \
         --device-collectives "$collectives" --progress log "${extra[@]}" 2>&1 | tee -a "$log"; then
      echo "scaling_run.sh: $kind scaling at G = $g failed (see $log); going on with the next" >&2
      status=1
    fi
  done
done
exit $status
