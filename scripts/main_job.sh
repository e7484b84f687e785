#!/usr/bin/env bash
# The main job: set up, build, verify every variant this machine can run, run the quick
# benchmark matrix, draw the figures and report, and end with the report's answer (its
# "Portability at a glance" section) and where the report is. Results land in results/local/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
bench=build/${NBODY_PRESET:-cpu}/harness/nbody-bench
out=results/local
mkdir -p "$out"
stamp=$(hostname)-$(date -u +%Y%m%dT%H%M%SZ)
"$bench" list
"$bench" verify
"$bench" matrix matrices/quick.json --out "$out/quick-$stamp.json"
/usr/bin/python3 plot/nbody_plot.py "$out/quick-$stamp.json" --out "$out/report-$stamp" --summary
echo "main job: results $out/quick-$stamp.json, report $out/report-$stamp/report.md"
