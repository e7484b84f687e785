"""Optimisation ladders (plot/ladders.json): each step's speedup over the previous one and the cumulative one,
per build and workload."""
from __future__ import annotations

import fnmatch
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from .analysis import geometric_mean, ok
from .results import DEFAULT_WORKLOAD, Build, InputError

LADDERS_FILE = Path(__file__).resolve().parent.parent / "ladders.json"


@dataclass
class LadderStep:
    label: str
    variant: str  # id or glob pattern
    tuning: dict  # required tuning values; empty: the fastest tuning of the variant


@dataclass
class Ladder:
    name: str
    title: str
    steps: list[LadderStep]


def read_ladders(path: Path = LADDERS_FILE) -> list[Ladder]:
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
        return [Ladder(l["name"], l["title"],
                       [LadderStep(s["label"], s["variant"], {k: str(v) for k, v in s.get("tuning", {}).items()})
                        for s in l["steps"]])
                for l in document["ladders"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise InputError(f"{path}: not a ladder definition ({e})") from None


@dataclass
class SweepGroup:
    label: str             # "N sweep, D = 10"
    problems: list[tuple]  # (n, d) compared
    every_step: bool = True  # every step ran every problem compared (else each pair uses what both ran)


@dataclass
class LadderRow:
    step: LadderStep
    times: dict                                   # (n, d) -> fastest time per step (s)
    vs_previous: dict = field(default_factory=dict)  # group label -> geometric-mean speedup or None
    cumulative: dict = field(default_factory=dict)


@dataclass
class LadderTable:
    """One ladder on one device, from one build and one workload (steps of different builds are not compared)."""
    ladder: Ladder
    device: str
    build: Build
    build_label: str
    workload: tuple
    groups: list[SweepGroup]
    rows: list[LadderRow]


def sweep_groups(problems) -> list[SweepGroup]:
    """Report 000's two tables: the N sweep (the D with the most N values) and the D sweep (the N with
    the most D values), each where two or more values exist; a lone problem when there is no sweep."""
    problems = sorted(set(problems))
    groups = []
    for axis, other in ((0, 1), (1, 0)):
        along: dict[int, list] = {}
        for p in problems:
            along.setdefault(p[other], []).append(p)
        fixed = min(along, key=lambda v: (-len(along[v]), v))
        if len(along[fixed]) >= 2:
            label = f"N sweep, D = {fixed}" if axis == 0 else f"D sweep, N = {fixed}"
            groups.append(SweepGroup(label, along[fixed]))
    if not groups:
        n, d = max(problems)
        groups.append(SweepGroup(f"N = {n}, D = {d}", [(n, d)]))
    return groups


def _ratio(numerator: dict, denominator: dict, problems) -> float | None:
    common = [p for p in problems if p in numerator and p in denominator]
    return geometric_mean(numerator[p] / denominator[p] for p in common)


def ladder_tables(configs, ladders: list[Ladder]) -> list[LadderTable]:
    tables = []
    runs = sorted({(c.device, c.device_kind, c.build, c.build_label, c.workload) for c in ok(configs)},
                  key=lambda r: (r[1] != "GPU", r[0], r[4] != DEFAULT_WORKLOAD, r[4], r[3]))
    for ladder in ladders:
        for dev, _, build, build_label, workload in runs:
            rows = []
            for step in ladder.steps:
                times = {}
                for c in ok(configs):
                    if (c.device, c.build, c.workload) == (dev, build, workload) and \
                            fnmatch.fnmatchcase(c.variant, step.variant) and \
                            all(str(c.tuning.get(k)) == v for k, v in step.tuning.items()):
                        times[(c.n, c.d)] = min(times.get((c.n, c.d), math.inf), c.time)
                if times:
                    rows.append(LadderRow(step, times))
            if len(rows) < 2:
                continue
            groups = sweep_groups(p for r in rows for p in r.times)
            for g in groups:
                # Like report 000's tables: every step over the same problems, so that the step speedups
                # multiply to the cumulative one; pairwise only where no problem has every step.
                everywhere = [p for p in g.problems if all(p in r.times for r in rows)]
                g.every_step = bool(everywhere)
                g.problems = everywhere or g.problems
            for i, row in enumerate(rows):
                for g in groups:
                    row.vs_previous[g.label] = 1.0 if i == 0 else _ratio(rows[i - 1].times, row.times, g.problems)
                    row.cumulative[g.label] = 1.0 if i == 0 else _ratio(rows[0].times, row.times, g.problems)
            tables.append(LadderTable(ladder, dev, build, build_label, workload, groups, rows))
    return tables
