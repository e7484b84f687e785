#!/usr/bin/env python3
"""The run-time estimate beside the time measured, per variant, N and D (docs/estimates.md).

Runs `BENCH run --variant V -n N -d D --steps S --allow-long` for every variant that can run here
(or those of --variants), N of --n and D of --d; the estimate is what `run` prints with --allow-long,
the measured time the command's wall time less its start (the same variant's run of 16 bodies, a
1 x 1 map and one step: loading the models, starting the device, which the estimate leaves out);
ratio = estimate / measured (above 1: the estimate errs long). --verify and --matrix FILE add `verify` (its defaults unless --verify-args) and a matrix the
same way (the matrix's estimate is --dry-run's total). One row per line, as it finishes.

    scripts/estimate_vs_measured.py build/h100/harness/nbody-bench --n 1024,16384,65536 --d 10,30000
"""
import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# duration_text() of harness/matrix/estimate.cpp: "0.4 s", "12 s", "3 min 20 s", "2 h 05 min", "203 days".
DURATION = re.compile(
    r"estimated (?:(?P<days>[\d.]+) days|(?P<h>\d+) h (?P<hm>\d+) min|(?P<m>\d+) min (?P<ms>\d+) s|(?P<s>[\d.eE+-]+) s)")


def seconds_of(text):
    match = DURATION.search(text)
    if match is None:
        return None
    g = match.groupdict()
    if g["days"]:
        return float(g["days"]) * 86400
    if g["h"]:
        return int(g["h"]) * 3600 + int(g["hm"]) * 60
    if g["m"]:
        return int(g["m"]) * 60 + int(g["ms"])
    return float(g["s"])


def timed(command):
    start = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True)
    return time.monotonic() - start, done


def start_seconds(bench, variant):
    """The wall time of a run that does next to nothing: the process's start."""
    seconds, _ = timed([bench, "run", "--variant", variant, "-n", "16", "-d", "1", "--steps", "1", "--warmup", "0"])
    return seconds


def row(what, estimate, measured, note=""):
    ratio = estimate / measured if estimate is not None and measured > 0 else float("nan")
    shown = "-" if estimate is None else f"{estimate:.3g}"
    print(f"{what:<58} {shown:>10} {measured:>10.3g} {ratio:>7.2f}  {note}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bench", help="the nbody-bench binary")
    parser.add_argument("--variants", help="comma-separated variant ids (default: every variant available here)")
    parser.add_argument("--n", default="1024,16384,65536", help="comma-separated N (default 1024,16384,65536)")
    parser.add_argument("--d", default="10,30000", help="comma-separated D (default 10,30000)")
    parser.add_argument("--steps", type=int, default=10, help="timed steps of each run (default 10)")
    parser.add_argument("--extra", default="", help="more options for every run (e.g. '--dim 3 --precision fp64')")
    parser.add_argument("--verify", action="store_true", help="also `verify` (its defaults unless --verify-args)")
    parser.add_argument("--verify-args", default="", help="options for the --verify row")
    parser.add_argument("--matrix", help="also this matrix file: --dry-run's total beside the run's wall time")
    args = parser.parse_args()
    bench = args.bench
    if args.variants:
        variants = args.variants.split(",")
    else:
        listed = subprocess.run([bench, "list"], capture_output=True, text=True, check=True).stdout.splitlines()
        variants = [line.split()[0] for line in listed[1:] if len(line.split()) > 1 and line.split()[1] == "yes"]
    print(f"{'what':<58} {'estimate_s':>10} {'measured_s':>10} {'ratio':>7}", flush=True)
    for variant in variants:
        start = start_seconds(bench, variant)
        for n in args.n.split(","):
            for d in args.d.split(","):
                command = [bench, "run", "--variant", variant, "-n", n, "-d", d, "--steps", str(args.steps),
                           "--allow-long", *args.extra.split()]
                measured, done = timed(command)
                measured -= start
                note = "" if done.returncode == 0 else f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]}"
                row(f"run {variant} N={n} D={d} steps={args.steps} {args.extra}".strip(), seconds_of(done.stderr), measured, note)
    start = start_seconds(bench, "serial.reference")
    if args.verify:
        measured, done = timed([bench, "verify", "--allow-long", *args.verify_args.split()])
        measured -= start
        row(f"verify {args.verify_args}".strip(), seconds_of(done.stderr), measured,
            "" if done.returncode == 0 else f"exit {done.returncode}")
    if args.matrix:
        plan = subprocess.run([bench, "matrix", args.matrix, "--dry-run"], capture_output=True, text=True)
        total = re.search(r"estimated total .*?\(([\d.eE+-]+) s", plan.stdout)
        with tempfile.TemporaryDirectory() as folder:
            out = str(Path(folder) / "results.json")
            measured, done = timed([bench, "matrix", args.matrix, "--out", out, "--progress", "log", "--allow-long"])
            measured -= start
        row(f"matrix {args.matrix}", float(total.group(1)) if total else None, measured,
            "" if done.returncode == 0 else f"exit {done.returncode}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
