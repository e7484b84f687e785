"""The numbers behind the figures: best tunings, ladders, thread scaling, performance portability."""
from __future__ import annotations

import fnmatch
import json
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from .results import Config, InputError

LADDERS_FILE = Path(__file__).resolve().parent.parent / "ladders.json"


def ok(configs):
    return [c for c in configs if not c.failed]


def devices(configs) -> list[tuple[str, str]]:
    """(name, kind) of every device, GPUs first, then by name."""
    return sorted({(c.device, c.device_kind) for c in configs}, key=lambda dk: (dk[1] != "GPU", dk[0]))


def fastest(configs) -> dict[tuple, Config]:
    """The fastest configuration for each (device, variant, n, d), over tunings and step counts."""
    best: dict[tuple, Config] = {}
    for c in ok(configs):
        key = (c.device, c.variant, c.n, c.d)
        if key not in best or c.time < best[key].time:
            best[key] = c
    return best


def device_limits(configs) -> dict[str, float]:
    """Interactions/s at efficiency 1.0 on each device (all cores of a CPU), from the results' context."""
    limits: dict[str, list[float]] = {}
    for c in configs:
        if c.device_limit:
            limits.setdefault(c.device, []).append(c.device_limit)
    return {dev: statistics.median(v) for dev, v in limits.items()}


def sweeps(configs, sweep_axis: str) -> dict[str, dict[tuple, list[Config]]]:
    """Per device, lines of the fastest configurations along `sweep_axis` ("n" or "d"):
    key (variant, fixed value of the other axis) -> configurations sorted along the axis,
    kept only where the line has at least two points."""
    other = "d" if sweep_axis == "n" else "n"
    lines: dict[str, dict[tuple, list[Config]]] = {}
    for c in fastest(configs).values():
        lines.setdefault(c.device, {}).setdefault((c.variant, getattr(c, other)), []).append(c)
    result = {}
    for dev, _ in devices(list(fastest(configs).values())):
        by_line = lines[dev]
        kept = {k: sorted(v, key=lambda c: getattr(c, sweep_axis)) for k, v in by_line.items() if len(v) >= 2}
        if kept:
            result[dev] = dict(sorted(kept.items()))
    return result


def geometric_mean(values):
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


# ---------------------------------------------------------------------------------------------
# Optimisation ladders


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
    ladder: Ladder
    device: str
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
    for ladder in ladders:
        for dev, _ in devices(configs):
            rows = []
            for step in ladder.steps:
                times = {}
                for c in ok(configs):
                    if c.device == dev and fnmatch.fnmatchcase(c.variant, step.variant) and \
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
            tables.append(LadderTable(ladder, dev, groups, rows))
    return tables


# ---------------------------------------------------------------------------------------------
# OpenMP thread scaling


@dataclass
class ScalingSeries:
    device: str
    variant: str
    n: int
    d: int
    other_tuning: tuple
    points: list  # (threads, time per step, speedup, parallel efficiency), by threads

    @property
    def label(self) -> str:
        extra = " ".join(f"{k}={v}" for k, v in self.other_tuning)
        return f"{self.variant} N={self.n} D={self.d}" + (f" {extra}" if extra else "")


def thread_scaling(configs) -> list[ScalingSeries]:
    """Series of configurations that differ only in the `threads` tuning (two or more counts);
    speedup and parallel efficiency relative to the series' smallest thread count."""
    series: dict[tuple, dict[int, float]] = {}
    for c in ok(configs):
        try:
            threads = int(c.tuning["threads"])
        except (KeyError, ValueError):
            continue
        key = (c.device, c.variant, c.n, c.d, c.tuning_without("threads"))
        times = series.setdefault(key, {})
        times[threads] = min(times.get(threads, math.inf), c.time)
    result = []
    for (dev, variant, n, d, other), times in sorted(series.items()):
        if len(times) < 2:
            continue
        base_threads = min(times)
        points = [(t, times[t], times[base_threads] / times[t],
                   times[base_threads] / times[t] / (t / base_threads)) for t in sorted(times)]
        result.append(ScalingSeries(dev, variant, n, d, other, points))
    return result


# ---------------------------------------------------------------------------------------------
# Performance portability (Pennycook, Sewall and Lee 2016)

BEST_OF_FAMILIES = {
    # family name -> predicate on a variant id: the fastest member counts on each platform
    "best Kokkos variant": lambda v: v.startswith("kokkos."),
    "best hand-written variant": lambda v: v.split(".", 1)[0] in ("cuda", "omp", "serial"),
}


@dataclass
class PortabilityRow:
    family: str
    app_eff: dict    # platform -> application efficiency (best on platform = 1), absent: did not run
    arch_eff: dict   # platform -> architectural efficiency (fraction of the device limit)
    pp_app: float    # harmonic mean over all platforms, 0 when it did not run on one
    pp_arch: float | None
    hmean_app_ran: float | None  # harmonic mean over the platforms it ran on


@dataclass
class Portability:
    problem: tuple    # (n, d)
    platforms: list   # device names
    rows: list[PortabilityRow]


def harmonic_mean_or_zero(values: list[float | None], platforms: int) -> float:
    """Pennycook's PP: |H| / sum 1/e_i over the platforms H; 0 when unsupported on any of them."""
    if len(values) < platforms or any(v is None or v <= 0 for v in values):
        return 0.0
    return len(values) / sum(1.0 / v for v in values)


def pp_problem(configs) -> tuple | None:
    """The problem (n, d) measured on the most devices, the largest N among those."""
    on_devices: dict[tuple, set] = {}
    for c in ok(configs):
        on_devices.setdefault((c.n, c.d), set()).add(c.device)
    if not on_devices:
        return None
    return max(on_devices, key=lambda p: (len(on_devices[p]), p[0], -p[1]))


def portability(configs, problem: tuple) -> Portability:
    n, d = problem
    chosen = [c for c in fastest(configs).values() if (c.n, c.d) == (n, d)]
    platforms = [dev for dev, _ in devices(chosen)]
    best_time = {p: min(c.time for c in chosen if c.device == p) for p in platforms}
    families: dict[str, list[Config]] = {}
    for c in chosen:
        families.setdefault(c.family, []).append(c)
    for name, member in BEST_OF_FAMILIES.items():
        members = [c for c in chosen if member(c.variant)]
        if len({c.family for c in members}) > 1:
            families[name] = members
    rows = []
    for family, members in families.items():
        app, arch = {}, {}
        for p in platforms:
            on_p = [c for c in members if c.device == p]
            if on_p:
                best = min(on_p, key=lambda c: c.time)
                app[p] = best_time[p] / best.time
                if best.efficiency is not None:
                    arch[p] = best.efficiency
        ran = [app[p] for p in platforms if p in app]
        rows.append(PortabilityRow(
            family, app, arch,
            pp_app=harmonic_mean_or_zero([app.get(p) for p in platforms if p in app], len(platforms)),
            pp_arch=(harmonic_mean_or_zero([arch.get(p) for p in platforms if p in arch], len(platforms))
                     if arch else None),
            hmean_app_ran=harmonic_mean_or_zero(ran, len(ran)) if ran else None))
    rows.sort(key=lambda r: (-r.pp_app, r.family))
    return Portability((n, d), platforms, rows)
