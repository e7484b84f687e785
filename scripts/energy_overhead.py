#!/usr/bin/env python3
"""Summarises a log of scripts/energy_overhead.sh: per variant and N, the median and mean time per
step with the counters off and on over the alternating rounds and their ratios (on / off), the
rounds' paired ratios (each round's on over its off) as a geometric mean with its 95 % interval
(normal, from 3 rounds), the spread of the off runs (max - min over the median: how far one
process's time is from the next), and the spread of the mean power and of the energy per step over
the rounds with the counters on.

Exit status 0, or 2 on a log with no complete round.
Usage: energy_overhead.py LOG
"""
from __future__ import annotations

import math
import re
import statistics
import sys
from collections import defaultdict

HEADER = re.compile(r"== round (\d+) variant (\S+) n (\d+) energy (on|off)")
TIME = re.compile(r"time per step\s+(\S+) s")
ENERGY = re.compile(r"energy\s+\S+ J over \S+ s \((\S+) J/step\), mean power (\S+) W")


def read_log(lines):
    """(variant, n) -> {"off": [s/step], "on": [s/step], "power": [W], "joules": [J/step]}."""
    runs: dict[tuple, dict] = defaultdict(lambda: defaultdict(list))
    current = None
    for line in lines:
        if header := HEADER.match(line):
            current = (header.group(2), int(header.group(3)), header.group(4))
        elif current and (time := TIME.match(line)):
            runs[current[:2]][current[2]].append(float(time.group(1)))
        elif current and current[2] == "on" and (energy := ENERGY.match(line)):
            runs[current[:2]]["joules"].append(float(energy.group(1)))
            runs[current[:2]]["power"].append(float(energy.group(2)))
    return {key: value for key, value in runs.items() if value["off"] and value["on"]}


def spread(values):
    return (max(values) - min(values)) / statistics.median(values) if len(values) > 1 else 0.0


def paired_ratio(off, on):
    """Geometric mean of the rounds' on/off ratios and its 95 % interval ((nan, nan) under 3 rounds)."""
    logs = [math.log(b / a) for a, b in zip(off, on)]
    mean = statistics.mean(logs)
    if len(logs) < 3:
        return math.exp(mean), (math.nan, math.nan)
    half = 1.96 * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(mean), (math.exp(mean - half), math.exp(mean + half))


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as log:
        runs = read_log(log)
    if not runs:
        print(f"energy_overhead: {argv[1]}: no variant with both an off and an on run", file=sys.stderr)
        return 2
    print(f"{'variant':<26} {'N':>7} {'rounds':>6} {'off s/step':>11} {'on s/step':>11} {'median on/off':>13} "
          f"{'mean on/off':>11} {'paired on/off (95 %)':>22} {'off spread':>10} {'W spread':>8} {'J/step spread':>13}")
    for (variant, n), run in runs.items():
        off, on = run["off"], run["on"]
        power, joules = run["power"], run["joules"]
        ratio, (low, high) = paired_ratio(off, on)
        print(f"{variant:<26} {n:>7} {min(len(off), len(on)):>6} {statistics.median(off):>11.4e} "
              f"{statistics.median(on):>11.4e} {statistics.median(on) / statistics.median(off):>13.4f} "
              f"{statistics.mean(on) / statistics.mean(off):>11.4f} {f'{ratio:.4f} ({low:.3f}-{high:.3f})':>22} "
              f"{100 * spread(off):>9.1f}% "
              f"{100 * spread(power) if power else float('nan'):>7.1f}% {100 * spread(joules) if joules else float('nan'):>12.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
