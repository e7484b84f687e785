#!/usr/bin/env python3
"""Reduces `nbody-bench matrix` results files to what the docs and the plot tool read, in place.

A configuration run with several repetitions keeps its median and stddev aggregates (the numbers
docs/claims.json checks and the report draws); its per-repetition entries and its mean and cv
aggregates go. A configuration run once, and an entry recording an error, stay as they are, and so
does the context. The file is written without indentation, through a temporary file renamed over
it, so a failure leaves it whole. `nbody-bench check-results` accepts the reduced file.

Exit status 0 when every file was reduced, 2 (one line naming the file) when one is not a results
file; the files before it are already reduced.
Usage: reduce_results.py RESULTS.json [...]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

KEPT_AGGREGATES = ("median", "stddev")


def reduce_benchmarks(benchmarks: list[dict]) -> list[dict]:
    with_median = {e.get("run_name") for e in benchmarks
                   if e.get("run_type") == "aggregate" and e.get("aggregate_name") == "median"}
    kept = []
    for entry in benchmarks:
        if entry.get("run_type") == "aggregate":
            if entry.get("aggregate_name") in KEPT_AGGREGATES:
                kept.append(entry)
        elif entry.get("error_occurred") or entry.get("run_name") not in with_median:
            kept.append(entry)
    return kept


def reduce_file(path: Path) -> tuple[int, int]:
    """Reduces one file in place; returns its sizes before and after."""
    text = path.read_text(encoding="utf-8")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"not JSON ({e})") from None
    if not isinstance(document, dict) or not isinstance(document.get("context"), dict) or \
            not isinstance(document.get("benchmarks"), list) or \
            not all(isinstance(e, dict) for e in document["benchmarks"]):
        raise ValueError("not a results file (want an object with context and a list of benchmarks)")
    document["benchmarks"] = reduce_benchmarks(document["benchmarks"])
    reduced = json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(reduced)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
    return len(text.encode()), len(reduced.encode())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path, metavar="RESULTS.json")
    args = parser.parse_args(argv)
    for path in args.files:
        try:
            before, after = reduce_file(path)
        except (OSError, ValueError) as e:
            print(f"reduce_results: {path}: {e}", file=sys.stderr)
            return 2
        print(f"{path}: {before} -> {after} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
