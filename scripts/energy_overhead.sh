#!/usr/bin/env bash
# What reading the energy counters costs (docs/performance.md, "Energy"): each variant at each N,
# 2D float32, `run --energy off` and `--energy on` alternating for ROUNDS rounds in one call, each a
# process of its own timing at least 1 s. Writes LOG; scripts/energy_overhead.py LOG summarises it.
#   scripts/energy_overhead.sh NBODY_BENCH LOG ROUNDS "VARIANT ..." "N ..."
set -uo pipefail
if (($# != 5)); then
  echo "usage: $0 NBODY_BENCH LOG ROUNDS \"VARIANT ...\" \"N ...\"" >&2
  exit 2
fi
bench=$1 log=$2 rounds=$3
read -r -a variants <<<"$4"
read -r -a sizes <<<"$5"
if ! [[ $rounds =~ ^[1-9][0-9]*$ ]] || ((${#variants[@]} == 0 || ${#sizes[@]} == 0)); then
  echo "$0: ROUNDS must be a positive count and VARIANT and N lists not empty" >&2
  exit 2
fi
: >"$log"
for ((round = 1; round <= rounds; ++round)); do
  for variant in "${variants[@]}"; do
    for n in "${sizes[@]}"; do
      for energy in off on; do
        echo "== round $round variant $variant n $n energy $energy" >>"$log"
        timeout 120 "$bench" run --variant "$variant" -n "$n" -d 10 --steps 5 --min-time 1 --energy "$energy" 2>&1 |
          grep -E "^(problem|time per step|energy) " >>"$log"
      done
    done
  done
done
