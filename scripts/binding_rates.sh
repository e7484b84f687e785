#!/usr/bin/env bash
# The TBB variants' rates with and without OpenMP's thread binding, alternating in one call, so that
# the host's drift reaches both alike (docs/models.md: OpenMP's binding does not narrow them):
#   scripts/binding_rates.sh NBODY_BENCH OUT_DIR [ROUNDS]
# Each round runs, for stdpar.blocked and thrust.split_j@tbb (2D float32, N = 65536, 5 timed steps
# after 1 warm-up step), `nbody-bench run` unbound and then under OMP_PROC_BIND=close
# OMP_PLACES=cores; ROUNDS (default 3) rounds. OUT_DIR/binding-rates.txt gets one line per run,
#   round R VARIANT binding=none|close interactions/s X
# then each variant's median rate per binding and their ratio.
set -uo pipefail
usage() {
  echo "usage: $0 NBODY_BENCH OUT_DIR [ROUNDS]" >&2
  exit 2
}
(($# >= 2 && $# <= 3)) || usage
bench=$1
out=$2
rounds=${3:-3}
[[ -x $bench ]] || { echo "$0: $bench is not an executable file" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "$0: ROUNDS must be a positive integer, got '$rounds'" >&2; exit 2; }
mkdir -p "$out"
report=$out/binding-rates.txt
: >"$report"
variants=(stdpar.blocked thrust.split_j@tbb)
{
  echo "host $(hostname), $(nproc) CPUs, $bench"
  for ((round = 1; round <= rounds; ++round)); do
    for variant in "${variants[@]}"; do
      for binding in none close; do
        if [[ $binding == none ]]; then
          environment=(env -u OMP_PROC_BIND -u OMP_PLACES)
        else
          environment=(env OMP_PROC_BIND=close OMP_PLACES=cores)
        fi
        rate=$("${environment[@]}" "$bench" run --variant "$variant" -n 65536 --steps 5 --warmup 1 \
          | awk '/^interactions\/s/ {print $2}')
        echo "round $round $variant binding=$binding interactions/s ${rate:-failed}"
      done
    done
  done
} | tee -a "$report"
# Medians per variant and binding, and bound ÷ unbound.
awk '
  /^round / { split($4, b, "="); rates[$3 " " b[2]] = rates[$3 " " b[2]] " " $6 }
  function median(list,   values, n, i, j, t) {
    n = split(list, values, " ")
    for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j) if (values[j] + 0 < values[i] + 0) { t = values[i]; values[i] = values[j]; values[j] = t }
    return n % 2 ? values[(n + 1) / 2] : (values[n / 2] + values[n / 2 + 1]) / 2
  }
  END {
    for (key in rates) if (key ~ / none$/) {
      variant = substr(key, 1, length(key) - 5)
      free = median(rates[variant " none"]); bound = median(rates[variant " close"])
      printf "median %s unbound %.4e close %.4e close/unbound %.3f\n", variant, free, bound, (free > 0 ? bound / free : 0)
    }
  }' "$report" | sort | tee -a "$report"
