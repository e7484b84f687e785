#!/usr/bin/env python3
"""Two runs of one matrix compared by their energy (docs/performance.md, "Energy"): per configuration
the median energy per step of each run and their difference, the median time per step of each and
theirs, the difference of the mean power (energy per step / time per step: where it agrees, energy that
differs follows the work) and, with --off, the time of a third run with `--energy off` (what reading
the counters costs).

A configuration counts where both runs read energy; the last lines say how many agree in energy per
step, and in mean power, within --tolerance (default 5 %). Reads full or reduced results files
(scripts/reduce_results.py).

Exit status 0 when every counted configuration agrees, 1 when one does not, 2 on a file that is not
a results file or runs that share no configuration with energy.
Usage: energy_repeatability.py FIRST.json SECOND.json [--off OFF.json] [--tolerance 0.05]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from check_doc_numbers import counts

KEY_FIELDS = ("variant", "n", "d", "dim", "precision", "integrator")


def medians(path: Path) -> dict[tuple, dict]:
    """Configuration (variant, n, d, dim, precision, integrator) -> the entry that stands for it, as the
    docs' claims read it (check_doc_numbers.counts): its median, or its one repetition."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        benchmarks = document["benchmarks"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        print(f"energy_repeatability: {path}: not a results file ({error})", file=sys.stderr)
        sys.exit(2)
    return {tuple(entry.get(field) for field in KEY_FIELDS): entry for entry in benchmarks
            if not entry.get("error_occurred") and "time_per_step_s" in entry and counts(entry, benchmarks)}


def percent(a: float, b: float) -> str:
    return f"{100 * (b / a - 1):+.2f}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    parser.add_argument("--off", type=Path, help="the same matrix run with --energy off")
    parser.add_argument("--tolerance", type=float, default=0.05, help="largest relative difference that agrees")
    args = parser.parse_args(argv)
    if not 0 < args.tolerance < 1:
        print(f"energy_repeatability: --tolerance must be in (0, 1), got {args.tolerance}", file=sys.stderr)
        return 2
    first, second = medians(args.first), medians(args.second)
    off = medians(args.off) if args.off else {}
    header = (f"{'variant':<26} {'N':>7} {'D':>5} {'workload':<16} {'J/step 1st':>11} {'J/step 2nd':>11} {'diff %':>7} "
              f"{'s/step 1st':>11} {'s/step 2nd':>11} {'diff %':>7} {'W diff %':>8}" + (f" {'s/step off':>11} {'on/off':>7}" if off else ""))
    print(header)
    def agree(a: float, b: float) -> bool:
        return abs(b / a - 1) <= args.tolerance

    counted = agreeing = power_agreeing = 0
    for key in sorted(k for k in first if k in second):
        a, b = first[key], second[key]
        if a.get("energy_per_step_j") is None or b.get("energy_per_step_j") is None:
            continue
        counted += 1
        energy_a, energy_b = a["energy_per_step_j"], b["energy_per_step_j"]
        agreeing += agree(energy_a, energy_b)
        power_a, power_b = energy_a / a["time_per_step_s"], energy_b / b["time_per_step_s"]
        power_agreeing += agree(power_a, power_b)
        variant, n, d, dim, precision, integrator = key
        row = (f"{variant:<26} {n:>7} {d:>5} {f'{dim}d/{precision}/{integrator}':<16} {energy_a:>11.4g} {energy_b:>11.4g} "
               f"{percent(energy_a, energy_b):>7} {a['time_per_step_s']:>11.4g} {b['time_per_step_s']:>11.4g} "
               f"{percent(a['time_per_step_s'], b['time_per_step_s']):>7} {percent(power_a, power_b):>8}")
        if off:
            t_off = off.get(key, {}).get("time_per_step_s")
            row += f" {t_off:>11.4g} {a['time_per_step_s'] / t_off:>7.4f}" if t_off else f" {'-':>11} {'-':>7}"
        print(row)
    if counted == 0:
        print("energy_repeatability: the two runs share no configuration that read energy", file=sys.stderr)
        return 2
    print(f"{agreeing} of {counted} configurations: energy per step of the two runs within {100 * args.tolerance:g} %")
    print(f"{power_agreeing} of {counted} configurations: mean power of the two runs within {100 * args.tolerance:g} %")
    return 0 if agreeing == counted else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
