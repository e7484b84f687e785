#!/usr/bin/env bash
# Builds the libFuzzer targets (preset `fuzz`: clang-16, ASan + UBSan) and runs the three at once,
# each for NBODY_FUZZ_SECONDS seconds (default 60) from its seed corpus (fuzz/corpus/<reader>/) and the
# inputs that once crashed it (fuzz/regressions/<reader>/). Inputs it finds go to build/fuzz/run/;
# a crash, a hang (-timeout) or an abort stops with the input in build/fuzz/run/<reader>/artifacts/:
# copy it to fuzz/regressions/<reader>/ (tests/test_reliability.cpp replays it) and fix the reader.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${NBODY_FUZZ_SECONDS:-60}
python3 fuzz/make_corpus.py --large >/dev/null  # the large seeds git does not hold
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)"
readers=(state_csv matrix results)
# The three run at once (they share the cores: on CI's two, each gets about 2/3 of one).
declare -A pid
for reader in "${readers[@]}"; do
  work=build/fuzz/run/$reader
  rm -rf "$work"
  mkdir -p "$work/found" "$work/artifacts"
  seeds=(fuzz/corpus/$reader)
  [[ -d fuzz/regressions/$reader ]] && seeds+=(fuzz/regressions/$reader)
  echo "fuzz: $reader for ${seconds} s"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    build/fuzz/fuzz/fuzz_$reader -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/found" "${seeds[@]}" >"$work/log.txt" 2>&1 &
  pid[$reader]=$!
done
status=0
for reader in "${readers[@]}"; do
  work=build/fuzz/run/$reader
  if ! wait "${pid[$reader]}"; then
    status=1
    tail -n 60 "$work/log.txt"
    echo "fuzz: $reader FAILED: the input is in $work/artifacts/ (copy it to fuzz/regressions/$reader/)"
  else
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb|cov: " "$work/log.txt" | tail -n 3
    echo "fuzz: $reader clean"
  fi
done
exit $status
