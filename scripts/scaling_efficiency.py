#!/usr/bin/env python3
"""Parallel efficiency from `nbody-bench matrix` results over G = 1, 2, 4 ... (docs/scaling.md).

usage: scripts/scaling_efficiency.py RESULTS.json ... [--tunings NAME,...]
  (one file per G, the G = 1 baseline among them)
  --tunings NAME,...   also tell entries apart by these tunings (a sweep), printed after the exchange; the
                       baseline of a row is then the G = 1 entry with the same values of them

Strong scaling: E(G) = T(1, N) / (G * T(G, N)); weak scaling (N^2/G constant): E(G) = T(1, N1) / T(G, N)
where N1 = N / sqrt(G) is the G = 1 size of that series; a row with neither baseline has kind "-" and
E nan. T is the median time per step over the repetitions; the spread printed is (max - min) / median
of the repetitions. Each row says whether every repetition verified, and the per-step breakdown
(compute, exposed communication, imbalance).
"""
import json
import math
import statistics
import sys
from collections import defaultdict


def main(paths, tunings=()):
    rows = defaultdict(list)  # (variant, dim, precision, n, ranks, exchange, swept tunings) -> entries
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        for b in doc["benchmarks"]:
            if b.get("run_type") != "iteration":
                continue
            swept = ",".join(f"{name}={b['tuning'].get(name, '-')}" for name in tunings)
            key = (b["variant"], b.get("dim"), b.get("precision"), b["n"], b.get("ranks", 1), b["tuning"].get("exchange", "-"),
                   swept)
            rows[key].append(b)
    if not rows:
        sys.exit("scaling_efficiency.py: no repetitions in " + " ".join(paths))
    stats = {}
    for key, entries in rows.items():
        times = [e["time_per_step_s"] for e in entries if not e.get("error_occurred")]
        if not times:
            continue
        median = statistics.median(times)
        mean_of = lambda field: statistics.mean(e[field] for e in entries if field in e) if any(field in e for e in entries) else None
        stats[key] = dict(t=median, spread=(max(times) - min(times)) / median, reps=len(times),
                          verified=all(e.get("verified") for e in entries),
                          compute=mean_of("step_compute_s"), exposed=mean_of("step_exposed_communication_s"),
                          imbalance=mean_of("step_imbalance_s"))
    width = max(len(k[0]) for k in stats) + 1
    swept_width = max(len(k[6]) for k in stats) + 1 if tunings else 0
    print(f"{'variant':<{width}}{'kind':<7}{'dim':>4}{'prec':>6}{'N':>9}{'G':>3} {'exchange':<10}{'':<{swept_width}}{'s/step':>12}"
          f"{'spread':>8}{'E(G)':>7}{'verified':>9}  breakdown us (compute / exposed comm / imbalance)")
    baseline = {(k[0], k[1], k[2], k[3], k[6]): v for k, v in stats.items() if k[4] == 1}
    for key in sorted(stats, key=lambda k: (k[1], k[2], k[0], k[5], k[6], k[3], k[4])):
        variant, dim, prec, n, g, exchange, swept = key
        s = stats[key]
        # Strong when G = 1 ran the same N; weak when it ran N / sqrt(G); neither: no E ("-", nan).
        n1 = int(round(n / math.sqrt(g) / 1024)) * 1024
        kind, e = "-", float("nan")
        if (variant, dim, prec, n, swept) in baseline:
            kind, e = "strong", baseline[(variant, dim, prec, n, swept)]["t"] / (g * s["t"])
        elif (variant, dim, prec, n1, swept) in baseline:
            kind, e = "weak", baseline[(variant, dim, prec, n1, swept)]["t"] / s["t"]
        breakdown = ("-" if s["compute"] is None else
                     f"{s['compute'] * 1e6:.1f} / {s['exposed'] * 1e6:.1f} / {s['imbalance'] * 1e6:.1f}")
        print(f"{variant:<{width}}{kind:<7}{dim:>4}{prec:>6}{n:>9}{g:>3} {exchange:<10}{swept:<{swept_width}}{s['t']:>12.4e}"
              f"{s['spread'] * 100:>7.2f}%{e:>7.3f}"
              f"{'yes' if s['verified'] else 'NO':>9}  {breakdown}")

if __name__ == "__main__":
    args = sys.argv[1:]
    swept_tunings = ()
    if "--tunings" in args:
        at = args.index("--tunings")
        if at + 1 >= len(args) or not args[at + 1] or args[at + 1].startswith("-"):
            print("scaling_efficiency.py: --tunings needs NAME[,NAME...]", file=sys.stderr)
            sys.exit(2)
        swept_tunings = tuple(args[at + 1].split(","))
        del args[at:at + 2]
    if not args:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(args, swept_tunings)
