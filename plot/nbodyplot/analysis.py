"""The numbers behind the report and the figures that every part shares: devices, workloads and models,
the fastest configurations, the devices' limits, the series of a sweep, the summary and the portability ratios.
The ladders, the scaling over threads and ranks and the performance portability have their own modules."""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from . import models
from .results import DEFAULT_WORKLOAD, VERDICTS, Build, Config


# Files that recorded one device's limit are said to disagree only when the largest exceeds the
# smallest by more than this fraction (docs/plots.md): clocks read at run time drift by less.
LIMIT_TOLERANCE = 0.01
# The smallest problem of matrices/n-sweep.json (and the N of matrices/d-sweep.json): the summary's small N.
SMALL_PROBLEM = (1024, 10)
# The portable model the summary sets against the hand-written code of each of its execution spaces
# (Kokkos ÷ hand-written): the question the suite asks of Kokkos, not a fact of a model. Which model is
# the hand-written code of a space is each model's declaration (NATIVE_SPACES: cuda, omp); Kokkos'
# Serial space has none: serial.reference is the correctness baseline, not a tuned serial code.
PORTABLE_MODEL = "kokkos"


def ok(configs):
    return [c for c in configs if not c.failed]


def devices(configs) -> list[tuple[str, str]]:
    """(name, kind) of every device, GPUs first, then by name."""
    return sorted({(c.device, c.device_kind) for c in configs}, key=lambda dk: (dk[1] != "GPU", dk[0]))


def workloads(configs) -> list[tuple]:
    """Every workload measured, the default (SPEC §1's) first."""
    return sorted({c.workload for c in configs}, key=lambda w: (w != DEFAULT_WORKLOAD, w))


def model_space(model: str) -> str | None:
    """The execution space of a Kokkos model name ("Kokkos (cuda)" -> "cuda"); None for the others."""
    _, _, space = model.partition(" (")
    return space.rstrip(")") or None


def hand_written_model(space: str) -> str | None:
    """The hand-written model a Kokkos execution space is compared with (cuda -> CUDA, openmp -> OpenMP)."""
    native = models.current().native_to(space)
    return native.name if native else None


def kokkos_partner(model: str) -> str | None:
    """The hand-written model a Kokkos model is compared with ("Kokkos (cuda)" -> "CUDA"); None for the other
    models, also those with execution spaces (Thrust, OpenACC's host): the summary's ratio is Kokkos ÷ hand-written."""
    space = model_space(model)
    portable = models.current().name(PORTABLE_MODEL)
    return hand_written_model(space) if space and model.startswith(portable + " (") else None


def model_key(model: str):
    """Models of one execution space first in their declared order (CUDA, OpenMP, ..., serial), then those with
    several: Kokkos by execution space in the order of each space's hand-written model, then Thrust and OpenACC's
    host in their own order."""
    catalog = models.current()
    space = model_space(model)
    base = catalog.named(model.partition(" (")[0])
    ordered_as = catalog.native_to(space) if space and base is not None and base.id == PORTABLE_MODEL else base
    return (space is not None, ordered_as.order if ordered_as else models.UNORDERED, model)


def fastest(configs, over_builds: bool = False) -> dict[tuple, Config]:
    """The fastest configuration (over tunings and step counts) for each (device, build, workload,
    variant, n, d); with over_builds, for each (device, workload, variant, n, d) over every build."""
    best: dict[tuple, Config] = {}
    for c in ok(configs):
        key = (c.device, c.workload, c.variant, c.n, c.d) if over_builds else \
            (c.device, c.build, c.workload, c.variant, c.n, c.d)
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


@dataclass
class LimitDisagreement:
    device: str
    spread: float            # largest ÷ smallest − 1
    by_file: dict            # file -> the limit it recorded


def limit_disagreements(configs, tolerance: float = LIMIT_TOLERANCE) -> list[LimitDisagreement]:
    """Devices whose FP32 limit differs between results files by more than the tolerance."""
    notes = []
    for dev, _ in devices(configs):
        by_file = {c.source: c.device_limit for c in configs if c.device == dev and c.device_limit}
        if by_file:
            spread = max(by_file.values()) / min(by_file.values()) - 1
            if spread > tolerance:
                notes.append(LimitDisagreement(dev, spread, dict(sorted(by_file.items()))))
    return notes


# ---------------------------------------------------------------------------------------------
# Series: one build of one variant


@dataclass(frozen=True)
class SeriesKey:
    """What a line of a figure is: one variant of one build on one device, one workload, and the
    value of the axis not swept (D for an N sweep)."""
    variant: str
    build: Build
    build_parts: tuple
    workload: tuple
    fixed: int

    @property
    def build_label(self) -> str:
        return ", ".join(self.build_parts)


def sweeps(configs, sweep_axis: str) -> dict[tuple, dict[SeriesKey, list[Config]]]:
    """Panels (device, model) -> lines along `sweep_axis` ("n" or "d") of the fastest configurations of
    one build: SeriesKey -> configurations sorted along the axis, kept where the line has two points."""
    other = "d" if sweep_axis == "n" else "n"
    lines: dict[tuple, dict[SeriesKey, list[Config]]] = {}
    for c in fastest(configs).values():
        key = SeriesKey(c.variant, c.build, c.build_parts, c.workload, getattr(c, other))
        lines.setdefault((c.device, c.model), {}).setdefault(key, []).append(c)
    order = {dev: i for i, (dev, _) in enumerate(devices(configs))}
    result = {}
    for panel in sorted(lines, key=lambda p: (order[p[0]], model_key(p[1]))):
        kept = {k: sorted(v, key=lambda c: getattr(c, sweep_axis)) for k, v in lines[panel].items() if len(v) >= 2}
        if kept:
            result[panel] = dict(sorted(kept.items(), key=lambda kv: series_order(kv[0])))
    return result


def series_order(key: SeriesKey):
    return (key.variant, key.workload != DEFAULT_WORKLOAD, key.workload, key.build_label, key.fixed)


def geometric_mean(values):
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


# ---------------------------------------------------------------------------------------------
# The summary: per device and workload, the best of each model at a large and a small N


@dataclass
class SummaryRow:
    problem: tuple                 # (n, d)
    model: str
    best: Config                   # the model's fastest variant there (any build, fastest tuning)
    compared_with: str | None = None   # the hand-written model a Kokkos row is compared with
    ratio: float | None = None         # Kokkos interactions/s ÷ the hand-written model's, same problem
    energy_ratio: float | None = None  # Kokkos joules per interaction ÷ the hand-written model's, same problem


@dataclass
class SummaryTable:
    device: str
    kind: str
    workload: tuple
    counts: dict                   # verdict (results.VERDICTS) -> configurations
    failures: list                 # the failed configurations
    rows: list                     # SummaryRow, large-N rows first, then the small N
    small_measured: bool           # some model ran SMALL_PROBLEM on this device


def comparison_groups(models) -> list[list[str]]:
    """Each model that is not Kokkos with the Kokkos models compared with it, then the Kokkos models with no
    hand-written partner, each alone; in model order."""
    models = sorted(models, key=model_key)
    partner = {m: kokkos_partner(m) for m in models if kokkos_partner(m)}
    groups = []
    for m in models:
        if m not in partner:
            groups.append([m] + [p for p in models if partner.get(p) == m])
        elif partner[m] not in models:
            groups.append([m])
    return groups


def _best_of_model(best: dict, model: str, problem: tuple) -> Config | None:
    members = [c for (v, n, d), c in best.items() if c.model == model and (n, d) == problem]
    return min(members, key=lambda c: c.time) if members else None


def _rows_at(best: dict, group: list[str], problem: tuple) -> list[SummaryRow]:
    rows = []
    for model in group:
        c = _best_of_model(best, model, problem)
        if c is not None:
            rows.append(SummaryRow(problem, model, c))
    hand = next((r for r in rows if kokkos_partner(r.model) is None), None)
    for r in rows:
        if kokkos_partner(r.model) is not None:
            r.compared_with = kokkos_partner(r.model)
            if hand is not None and r.compared_with == hand.model:
                r.ratio = hand.best.time / r.best.time
                if hand.best.interactions_per_joule and r.best.interactions_per_joule:
                    r.energy_ratio = hand.best.interactions_per_joule / r.best.interactions_per_joule
    return rows


def summary(configs) -> list[SummaryTable]:
    tables = []
    for dev, kind in devices(configs):
        for workload in workloads([c for c in configs if c.device == dev]):
            group = [c for c in configs if c.device == dev and c.workload == workload]
            counts = {v: sum(c.verdict == v for c in group) for v in VERDICTS}
            failures = sorted((c for c in group if c.verdict == "failed"), key=lambda c: (c.variant, c.n, c.d))
            best = {(c.variant, c.n, c.d): c for c in fastest(group, over_builds=True).values()}
            problems = {}
            for c in best.values():
                problems.setdefault(c.model, set()).add((c.n, c.d))
            large, small = [], []
            for models in comparison_groups(problems):
                common = set.intersection(*(problems[m] for m in models))
                if not common:  # partners never ran one problem: each at its own largest
                    for m in models:
                        large += _rows_at(best, [m], max(problems[m], key=lambda p: (p[0], -p[1])))
                    continue
                biggest = max(common, key=lambda p: (p[0], -p[1]))
                large += _rows_at(best, models, biggest)
                if biggest != SMALL_PROBLEM:
                    small += _rows_at(best, models, SMALL_PROBLEM)
            tables.append(SummaryTable(dev, kind, workload, counts, failures, large + small,
                                       any(SMALL_PROBLEM in p for p in problems.values())))
    return tables


# ---------------------------------------------------------------------------------------------
# Portability ratio against N: the best Kokkos variant ÷ the best hand-written one, within one build


@dataclass
class RatioSeries:
    device: str
    portable_model: str            # Kokkos (cuda)
    hand_model: str                # CUDA
    build: Build
    build_parts: tuple
    workload: tuple
    d: int
    points: list                   # (n, ratio, best Kokkos Config, best hand-written Config), by n

    @property
    def build_label(self) -> str:
        return ", ".join(self.build_parts)


def portability_ratios(configs) -> list[RatioSeries]:
    """Per device, build, workload and D: at each N where both ran in that build, the fastest Kokkos
    variant's interactions/s ÷ the fastest hand-written variant's (the same execution model's device)."""
    best: dict[tuple, Config] = {}
    for c in fastest(configs).values():
        key = (c.device, c.build, c.workload, c.d, c.model, c.n)
        if key not in best or c.time < best[key].time:
            best[key] = c
    series: dict[tuple, list] = {}
    for (dev, build, workload, d, model, n), kokkos in best.items():
        if kokkos.space is None or not kokkos.variant.startswith("kokkos."):
            continue
        hand_model = hand_written_model(kokkos.space)
        hand = best.get((dev, build, workload, d, hand_model, n))
        if hand is not None:
            series.setdefault((dev, model, hand_model, build, kokkos.build_parts, workload, d), []).append(
                (n, hand.time / kokkos.time, kokkos, hand))
    order = {dev: i for i, (dev, _) in enumerate(devices(configs))}
    result = [RatioSeries(*key, points=sorted(points, key=lambda p: p[0])) for key, points in series.items()]
    return sorted(result, key=lambda s: (order[s.device], model_key(s.portable_model), s.workload != DEFAULT_WORKLOAD,
                                         s.workload, s.build_label, s.d))
