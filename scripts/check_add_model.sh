#!/usr/bin/env bash
# Adding a model is its folder plus one word in nbody_add_models() (docs/adding-a-model.md): this
# proves it on a copy of the source tree. It copies models/omp to models/omptwin (its model name,
# namespace, library, registration functions and variant ids renamed; display name "OpenMP twin",
# its own family, report order and a Debian package), adds `omptwin` to the root CMakeLists.txt's
# nbody_add_models(...) and changes nothing else. It then builds serial and the twin only
# (NBODY_MODELS=omptwin, no tests) and checks that the twin is in `nbody-bench list` and
# `list --json` (as its model.cmake declares it), that `verify` passes its variants, that the quick
# matrix runs them (its `workloads` group names every variant), that the plot tool's report names
# it, and that scripts/model_packages.sh (scripts/setup.sh's list) has its package.
#   scripts/check_add_model.sh [SCRATCH_DIR]   (default: build/add-model-check; emptied first)
# NBODY_PLOT_PYTHON: a Python 3 with matplotlib (default python3), for the plot tool.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
python=${NBODY_PLOT_PYTHON:-python3}
scratch=${1:-$root/build/add-model-check}
start=$SECONDS
fail() {
  echo "check_add_model: $*" >&2
  exit 1
}

rm -rf "$scratch"
mkdir -p "$scratch/src"
# The source tree as it is (tracked and new files), without the results (data the check does not read).
git -C "$root" ls-files -z --cached --others --exclude-standard -- . ':!results' |
  (cd "$root" && xargs -0 cp --parents -t "$scratch/src" 2>/dev/null || true)
src=$scratch/src
[[ -f $src/CMakeLists.txt && -d $src/models/omp ]] || fail "could not copy the source tree to $src"

# The new model: its folder, and nothing else but the one word.
cp -r "$src/models/omp" "$src/models/omptwin"
rm -rf "$src/models/omptwin/tests"  # its tests would be test_omp's; the build below has none
(
  cd "$src/models/omptwin"
  sed -i -e 's/\bnbody_omp\b/nbody_omptwin/g' -e '/add_subdirectory(tests)/d' CMakeLists.txt
  sed -i -e 's/NBODY_\([A-Z_]*\)OPENMP\b/NBODY_\1OMPTWIN/g' -e 's/models\/omp\//models\/omptwin\//g' \
         -e 's/NAME omp TITLE OpenMP/NAME omptwin TITLE "OpenMP twin"/' \
         -e 's/FAMILY hand-written REPORT_ORDER 40 NATIVE_SPACES openmp threads/FAMILY OpenMP-twin REPORT_ORDER 45 PACKAGES libomp-16-dev/' \
         model.cmake
  sed -i -e 's/\bnamespace nbody::omp\b/namespace nbody::omptwin/g' -e 's/\bomp::/omptwin::/g' \
         -e 's/\bnamespace omp\b/namespace omptwin/g' -e 's/\bregister_omp_/register_omptwin_/g' \
         -e 's/"omp\./"omptwin./g' -e 's/\.backend = "omp"/.backend = "omptwin"/' \
         ./*.cpp ./*.hpp ./*.inc
)
grep -q 'NAME omptwin TITLE "OpenMP twin"' "$src/models/omptwin/model.cmake" || fail "models/omp/model.cmake no longer has the line this check renames"
grep -q 'PACKAGES libomp-16-dev' "$src/models/omptwin/model.cmake" || fail "models/omp/model.cmake's FAMILY/REPORT_ORDER/NATIVE_SPACES changed: update the rename"
sed -i -E 's/^(nbody_add_models\([^)]*)\)/\1 omptwin)/' "$src/CMakeLists.txt"
grep -q '^nbody_add_models(.* omptwin)' "$src/CMakeLists.txt" || fail "no nbody_add_models(...) line in CMakeLists.txt"

echo "check_add_model: configuring and building serial + omptwin in $scratch/build"
cmake -S "$src" -B "$scratch/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNBODY_MODELS=omptwin \
  -DNBODY_BUILD_TESTS=OFF -DNBODY_ENABLE_MPI=OFF >"$scratch/configure.log" 2>&1 ||
  { tail -n 30 "$scratch/configure.log"; fail "configure failed (log: $scratch/configure.log)"; }
grep -q 'OpenMP twin *on (' "$scratch/configure.log" || fail "the configure summary has no 'OpenMP twin  on (...)' line"
cmake --build "$scratch/build" --target nbody-bench >"$scratch/build.log" 2>&1 ||
  { tail -n 30 "$scratch/build.log"; fail "build failed (log: $scratch/build.log)"; }
bench=$scratch/build/harness/nbody-bench
built=$SECONDS

"$bench" list >"$scratch/list.txt"
for variant in omptwin.static omptwin.edge_sharing omptwin.simd; do
  grep -q "^$variant " "$scratch/list.txt" || fail "nbody-bench list has no $variant"
done
"$bench" list --json >"$scratch/list.json"
"$python" - "$scratch/list.json" <<'EOF' || fail "nbody-bench list --json does not declare omptwin as its model.cmake does"
import json, sys
listed = json.load(open(sys.argv[1]))
twin = next(m for m in listed["models"] if m["id"] == "omptwin")
assert (twin["name"], twin["family"], twin["order"], twin["in_build"]) == ("OpenMP twin", "OpenMP-twin", 45, True), twin
assert {v["id"] for v in listed["variants"] if v["model"] == "omptwin"} == \
    {"omptwin.static", "omptwin.edge_sharing", "omptwin.simd"}, listed["variants"]
EOF

"$bench" verify --variants 'omptwin.*' -n 256 -d 10 --steps 2 >"$scratch/verify.txt" 2>&1 ||
  { cat "$scratch/verify.txt"; fail "verify of omptwin.* failed"; }
grep -q 'omptwin.simd' "$scratch/verify.txt" || fail "verify did not check omptwin.simd"

"$bench" matrix "$src/matrices/quick.json" --groups workloads --out "$scratch/quick.json" >"$scratch/matrix.txt" 2>&1 ||
  { tail -n 30 "$scratch/matrix.txt"; fail "the quick matrix's workloads group failed"; }
"$python" - "$scratch/quick.json" <<'EOF' || fail "the quick matrix did not run and verify every omptwin variant"
import json, sys
results = json.load(open(sys.argv[1]))
ran = {e["variant"] for e in results["benchmarks"] if e.get("verified") is True}
assert {"omptwin.static", "omptwin.edge_sharing", "omptwin.simd"} <= ran, sorted(ran)
assert any(m["id"] == "omptwin" and m["name"] == "OpenMP twin" for m in results["context"]["models"])
EOF

"$python" "$src/plot/nbody_plot.py" "$scratch/quick.json" --no-svg --out "$scratch/report" >"$scratch/plot.txt" 2>&1 ||
  { tail -n 30 "$scratch/plot.txt"; fail "the plot tool failed on the quick matrix's results"; }
grep -q 'OpenMP twin' "$scratch/report/report.md" || fail "the report does not name the model 'OpenMP twin'"
grep -q 'best OpenMP-twin variant' "$scratch/report/report.md" "$scratch/report/appendix.md" ||
  fail "the report has no 'best OpenMP-twin variant' row"

bash "$src/scripts/model_packages.sh" | grep -qx 'libomp-16-dev' ||
  fail "scripts/model_packages.sh does not list the twin's package"
echo "check_add_model: passed in $((SECONDS - start)) s ($((built - start)) s to copy, configure and build)"
