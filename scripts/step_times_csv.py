#!/usr/bin/env python3
"""Writes the median time per step of each configuration of `nbody-bench matrix` results files as CSV:
what the run-time estimate's test holds the GPU model to (tests/test_estimate.cpp), small enough to
commit where the whole results file is not.

One comment line names each source file's matrix, commit, device and date; then one row per median
aggregate: variant, dim, precision, integrator, n, d, time_per_step_s, efficiency_limit (interactions/s
at the clock the run saw), verified. Exit status 2 (one line naming the file) when a file is not a
results file.
Usage: step_times_csv.py RESULTS.json [...] > STEP_TIMES.csv
"""
from __future__ import annotations

import argparse
import csv
import json
import sys

COLUMNS = ("variant", "dim", "precision", "integrator", "n", "d", "time_per_step_s", "efficiency_limit", "verified")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", help="results files of `nbody-bench matrix`")
    args = parser.parse_args()
    documents = []
    for path in args.results:
        try:
            with open(path, encoding="utf-8") as f:
                document = json.load(f)
            context, benchmarks = document["context"], document["benchmarks"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"step_times_csv.py: {path}: not a results file ({e})", file=sys.stderr)
            return 2
        documents.append((path, context, benchmarks))
    for path, context, _ in documents:
        device = (context.get("gpu") or {}).get("name") or context.get("host_cpu", {}).get("model", "unknown device")
        matrix = (context.get("matrix") or {}).get("name", "?")
        print(f"# {path}: matrix {matrix}, commit {context.get('git_commit', '?')}, {device}, {context.get('date', '?')}")
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(COLUMNS)
    for _, _, benchmarks in documents:
        for entry in benchmarks:
            if entry.get("aggregate_name") != "median":
                continue
            writer.writerow([entry["variant"], entry["dim"], entry["precision"], entry["integrator"], entry["n"], entry["d"],
                             f"{entry['time_per_step_s']:.6g}", f"{entry['efficiency_limit']:.6g}",
                             str(entry.get("verified", False)).lower()])
    return 0


if __name__ == "__main__":
    sys.exit(main())
