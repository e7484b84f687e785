"""The numbers behind the report and the figures: the summary, series, ladders, thread scaling,
portability ratios, performance portability."""
from __future__ import annotations

import fnmatch
import json
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from . import cost_model, models
from .results import DEFAULT_WORKLOAD, VERDICTS, Build, Config, InputError

LADDERS_FILE = Path(__file__).resolve().parent.parent / "ladders.json"

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


# ---------------------------------------------------------------------------------------------
# OpenMP thread scaling


@dataclass
class ScalingSeries:
    device: str
    variant: str
    build_label: str
    workload: tuple
    n: int
    d: int
    other_tuning: tuple
    points: list  # (threads, time per step, speedup, parallel efficiency), by threads

    @property
    def label(self) -> str:
        extra = " ".join(f"{k}={v}" for k, v in self.other_tuning)
        return f"{self.variant} N={self.n} D={self.d}" + (f" {extra}" if extra else "")


def thread_scaling(configs) -> list[ScalingSeries]:
    """Series of CPU configurations of one build and workload that differ only in the `threads` tuning
    (two or more counts); speedup and parallel efficiency relative to the series' smallest thread count.
    A GPU variant's `threads` (omp_target: warps per team) is a launch shape, not a CPU thread count."""
    series: dict[tuple, dict[int, float]] = {}
    for c in ok(configs):
        if c.device_kind != "CPU":
            continue
        try:
            threads = int(c.tuning["threads"])
        except (KeyError, ValueError):
            continue
        key = (c.device, c.variant, c.build_label, c.workload != DEFAULT_WORKLOAD, c.workload, c.n, c.d,
               c.tuning_without("threads"))
        times = series.setdefault(key, {})
        times[threads] = min(times.get(threads, math.inf), c.time)
    result = []
    for (dev, variant, build_label, _, workload, n, d, other), times in sorted(series.items()):
        if len(times) < 2:
            continue
        base_threads = min(times)
        points = [(t, times[t], times[base_threads] / times[t],
                   times[base_threads] / times[t] / (t / base_threads)) for t in sorted(times)]
        result.append(ScalingSeries(dev, variant, build_label, workload, n, d, other, points))
    return result


@dataclass
class RankScalingSeries:
    """One variant's configurations of one build, workload, tuning and D over several rank counts G:
    strong scaling at one N, or weak scaling with N^2/G constant. points: (G, N, time per step,
    parallel efficiency), efficiency = interactions per second per rank (N^2 / (G × time)) relative to
    the series' smallest G: T_b G_b / (T G) in strong scaling, T_b / T in ideal weak scaling."""
    kind: str            # "strong" / "weak"
    device: str          # one rank's device
    variant: str
    build_label: str
    workload: tuple
    n: int               # strong: its N; weak: the N at the smallest G
    d: int
    tuning: tuple
    points: list

    @property
    def label(self) -> str:
        size = f"N={self.n}" if self.kind == "strong" else f"N={self.n} at G={self.points[0][0]}"
        return f"{self.variant} {size}"


# Tunings that change nothing on one rank (cuda.sliced's exchange): a single-rank run is the base of the runs
# over several ranks whatever their value.
RANK_ONLY_TUNINGS = ("exchange",)


def without_rank_only_tunings(tuning) -> tuple:
    return tuple(sorted((k, str(v)) for k, v in tuning if k not in RANK_ONLY_TUNINGS))


def rank_scaling(configs) -> list[RankScalingSeries]:
    """Strong and weak scaling series over ranks (docs/scaling.md), each with two or more G. A
    configuration of a scaling matrix (scripts/scaling_run.sh) has its kind; others over several
    ranks count as strong scaling."""
    groups: dict[tuple, dict[int, Config]] = {}
    for c in ok(configs):
        kind = c.scaling or ("strong" if c.ranks > 1 else None)
        if kind is None:
            continue
        key = (kind, c.base_device or c.device, c.variant, c.build_label, c.workload,
               c.n if kind == "strong" else None, c.d, tuple(sorted(c.tuning.items())))
        by_ranks = groups.setdefault(key, {})
        if c.ranks not in by_ranks or c.time < by_ranks[c.ranks].time:
            by_ranks[c.ranks] = c
    # A single-rank measurement of the same problem, from any file, is the strong series' base; tunings that
    # change nothing on one rank may differ (a G = 1 run stands for every exchange).
    for c in ok(configs):
        if c.ranks == 1 and c.scaling is None:
            for key, by_ranks in groups.items():
                same_problem = key[:7] == ("strong", c.device, c.variant, c.build_label, c.workload, c.n, c.d)
                if same_problem and 1 not in by_ranks \
                        and without_rank_only_tunings(key[7]) == without_rank_only_tunings(c.tuning.items()):
                    by_ranks[1] = c
    result = []
    for (kind, device, variant, build_label, workload, _, d, tuning), by_ranks in sorted(groups.items(), key=str):
        if len(by_ranks) < 2:
            continue
        base = by_ranks[min(by_ranks)]
        base_rate = base.n * base.n / (base.ranks * base.time)
        points = [(g, c.n, c.time, c.n * c.n / (g * c.time) / base_rate) for g, c in sorted(by_ranks.items())]
        result.append(RankScalingSeries(kind, device, variant, build_label, workload, base.n, d, tuning, points))
    return result


# ---------------------------------------------------------------------------------------------
# Strong-scaling efficiency against bodies per rank, with the cost model fitted to it (docs/scaling.md)


def exchange_of(c: Config) -> str:
    """The position exchange of a run over ranks: cuda.sliced's `exchange` tuning, else a plain all-gather."""
    return str(c.tuning.get("exchange", "allgather"))


@dataclass
class StrongPoint:
    config: Config   # over G ranks
    base: Config     # the same problem on one rank

    @property
    def ranks(self) -> int:
        return self.config.ranks

    @property
    def bodies_per_rank(self) -> int:
        """The largest block (docs/scaling.md: blocks of ceil(N/G)), the one that sets the step."""
        return -(-self.config.n // self.config.ranks)

    @property
    def efficiency(self) -> float:
        """E(G) = T(1) / (G T(G)), medians."""
        return self.base.time / (self.ranks * self.config.time)

    @property
    def efficiency_range(self) -> tuple[float, float]:
        """The lowest and highest T(1) / (G T(G)) of any pair of the two runs' repetitions (a run without
        repetitions counts with its one time)."""
        times = self.config.repetition_times or (self.config.time,)
        single = self.base.repetition_times or (self.base.time,)
        return min(single) / (self.ranks * max(times)), max(single) / (self.ranks * min(times))


@dataclass
class ScalingFit:
    """The strong-scaling points of one variant and build on one device, and the cost model fitted to them."""
    device: str          # one rank's device
    variant: str
    build_label: str
    points: list         # StrongPoint
    fit: cost_model.Fit

    def model_efficiency(self, point: StrongPoint) -> float:
        fitted = self.fit.point(point.config.workload, point.config.n, point.ranks, exchange_of(point.config))
        return fitted.model_efficiency


def strong_scaling_fits(configs, exposed=(), inverse_bandwidth: float | None = None) -> list[ScalingFit]:
    """Every run over several ranks whose problem also ran on one rank (same device, build, variant, workload,
    N, D and tunings but RANK_ONLY_TUNINGS), grouped by device, variant and build, each group with the cost
    model fitted to it. `exposed`: measured exchange durations (cost_model.ExposedExchange) recorded outside
    the results files, each added to the fit of a group with an all-gather run of its workload, N and G;
    those in the files (step_exposed_communication_s) are used anyway. `inverse_bandwidth`: 1/B held
    instead of fitted."""
    singles: dict[tuple, Config] = {}
    for c in ok(configs):
        if c.ranks == 1:
            key = (c.device, c.variant, c.build, c.workload, c.n, c.d, without_rank_only_tunings(c.tuning.items()))
            if key not in singles or c.time < singles[key].time:
                singles[key] = c
    groups: dict[tuple, dict[tuple, StrongPoint]] = {}
    for c in ok(configs):
        if c.ranks < 2:
            continue
        base = singles.get((c.base_device, c.variant, c.build, c.workload, c.n, c.d,
                            without_rank_only_tunings(c.tuning.items())))
        if base is None:
            continue  # weak scaling, or no single-rank run of this N
        by_problem = groups.setdefault((c.base_device, c.variant, c.build), {})
        problem = (c.workload, c.n, c.ranks, exchange_of(c))
        if problem not in by_problem or c.time < by_problem[problem].config.time:
            by_problem[problem] = StrongPoint(c, base)
    result = []
    for (device, variant, build), by_problem in groups.items():
        points = sorted(by_problem.values(), key=lambda p: (p.config.workload, exchange_of(p.config), p.ranks,
                                                            p.config.n))
        observations = [cost_model.Observation(p.config.workload, p.config.n, p.ranks, exchange_of(p.config),
                                               p.config.time, p.base.time,
                                               p.config.values.get("step_exposed_communication_s"))
                        for p in points]
        runs = {(o.workload, o.n, o.ranks) for o in observations if o.exchange == "allgather"}
        own = [e for e in exposed if (e.workload, e.n, e.ranks) in runs]
        result.append(ScalingFit(device, variant, points[0].config.build_label, points,
                                 cost_model.fit(observations, own, inverse_bandwidth)))
    return sorted(result, key=lambda f: (f.device, f.variant, f.build_label))


# ---------------------------------------------------------------------------------------------
# Performance portability (Pennycook, Sewall and Lee 2016)

def best_of_families() -> dict:
    """Row name -> predicate on a variant id, one per family the models declare (FAMILY in their model.cmake;
    "hand-written" is CUDA, OpenMP and serial): the fastest member counts on each platform, so the row may take a
    different source on each platform. A family whose models run on one kind of device (OpenMP offload on GPUs,
    stdpar on CPUs) has PP 0 over CPU+GPU platforms."""
    return {f"best {family} variant": (lambda v, ids=frozenset(ids): v.split(".", 1)[0] in ids)
            for family, ids in models.current().families().items()}


# What a row of the performance-portability table is.
SINGLE_SOURCE = "one source"       # one variant id on every execution space or backend (kokkos.naive@cuda, @openmp)
BEST_OF = "best of each platform"  # the fastest member of a model on each platform: maybe a different source on each
ONE_KIND = "one kind of device"    # a variant id without execution spaces: runs on GPUs only or on CPUs only
ROW_KINDS = (SINGLE_SOURCE, BEST_OF, ONE_KIND)


@dataclass
class PortabilityRow:
    family: str
    kind: str        # SINGLE_SOURCE, BEST_OF or ONE_KIND
    app_eff: dict    # platform -> application efficiency (fastest variant on the platform = 1)
    arch_eff: dict   # platform -> architectural efficiency (fraction of the device limit)
    chosen: dict     # platform -> the configuration measured there (the family's fastest variant and tuning)
    not_measured: list  # platforms of H it may run on, with no measurement of the problem there
    cannot_run: list    # platforms of H of a device kind its variants never run on (ONE_KIND rows, offload, stdpar)
    pp_app: float | None  # harmonic mean over H; 0 where it cannot run on a platform; None where not measured
    pp_arch: float | None
    hmean_app_ran: float | None  # harmonic mean over the platforms it ran on

    @property
    def sources(self) -> list[str]:
        """The families the row takes on its platforms: one for a single source, maybe several for a best-of row."""
        return list(dict.fromkeys(c.family for c in self.chosen.values()))


@dataclass
class Portability:
    workload: tuple
    problem: tuple    # (n, d)
    platforms: list   # device names
    kinds: dict       # platform -> "GPU" / "CPU"
    rows: list[PortabilityRow]   # single sources, then the best-of rows, then variants of one kind of device
    # Other problems at which some single source was measured on every platform of H (for a problem without one).
    single_source_problems: list = field(default_factory=list)

    def of_kind(self, kind: str) -> list[PortabilityRow]:
        return [r for r in self.rows if r.kind == kind]

    @property
    def best_single_source(self) -> PortabilityRow | None:
        """The single source of the highest PP among those measured on every platform of H."""
        measured = [r for r in self.of_kind(SINGLE_SOURCE) if r.pp_app is not None]
        return max(measured, key=lambda r: (r.pp_app, r.family), default=None)

    def best_of(self, name: str) -> PortabilityRow | None:
        return next((r for r in self.of_kind(BEST_OF) if r.family == name), None)


def harmonic_mean_or_zero(values: list[float | None], platforms: int) -> float:
    """Pennycook's PP: |H| / sum 1/e_i over the platforms H; 0 when unsupported on any of them."""
    if len(values) < platforms or any(v is None or v <= 0 for v in values):
        return 0.0
    return len(values) / sum(1.0 / v for v in values)


def several_space_families(configs) -> set[str]:
    """Families with an execution space in some variant id (kokkos.naive@cuda): one source for several platforms."""
    return {c.family for c in configs if c.space is not None}


def pp_problem(configs, workload: tuple) -> tuple | None:
    """The problem (n, d) of the workload measured on the most devices; among those, the one with the most single
    sources measured on every one of those devices, then the largest N."""
    devices_at: dict[tuple, set] = {}
    family_devices: dict[tuple, dict[str, set]] = {}
    for c in ok(configs):
        if c.workload != workload:
            continue
        devices_at.setdefault((c.n, c.d), set()).add(c.device)
        family_devices.setdefault((c.n, c.d), {}).setdefault(c.family, set()).add(c.device)
    if not devices_at:
        return None
    spaced = several_space_families(configs)

    def single_sources_everywhere(problem):
        return sum(f in spaced and on == devices_at[problem] for f, on in family_devices[problem].items())
    return max(devices_at, key=lambda p: (len(devices_at[p]), single_sources_everywhere(p), p[0], -p[1]))


def _portability_row(family, kind, members, platforms, best_time, kinds, possible) -> PortabilityRow:
    """members: the row's fastest configurations at the problem; possible(kind): a variant of it may run on that kind
    of device."""
    app, arch, chosen = {}, {}, {}
    for p in platforms:
        on_p = [c for c in members if c.device == p]
        if on_p:
            chosen[p] = min(on_p, key=lambda c: c.time)
            app[p] = best_time[p] / chosen[p].time
            if chosen[p].efficiency is not None:
                arch[p] = chosen[p].efficiency
    missing = [p for p in platforms if p not in chosen]
    cannot_run = [p for p in missing if not possible(kinds[p])]
    not_measured = [p for p in missing if p not in cannot_run]

    def pp(effs):
        if cannot_run:
            return 0.0  # Pennycook: unsupported on a platform of H
        if not_measured or len(effs) < len(platforms):
            return None
        return harmonic_mean_or_zero([effs[p] for p in platforms], len(platforms))
    ran = [app[p] for p in platforms if p in app]
    return PortabilityRow(family, kind, app, arch, chosen, not_measured, cannot_run, pp(app), pp(arch),
                          harmonic_mean_or_zero(ran, len(ran)) if ran else None)


def portability(configs, workload: tuple, problem: tuple) -> Portability:
    """Pennycook's metric for one workload and problem, over the devices that ran it: each single source (a
    family with execution spaces, the same variant id on each), each best-of row (a model's fastest variant on
    each platform) and each variant of one kind of device; on each platform a family's fastest variant and
    tuning over every build (the best each platform achieved). A family is measured at this problem or not at
    all: a measurement at another N is never mixed in."""
    n, d = problem
    every = ok(configs)
    chosen = [c for c in fastest(configs, over_builds=True).values() if (c.workload, c.n, c.d) == (workload, n, d)]
    platforms = [dev for dev, _ in devices(chosen)]
    kinds = {c.device: c.device_kind for c in chosen}
    best_time = {p: min(c.time for c in chosen if c.device == p) for p in platforms}
    spaced = several_space_families(configs)

    def possible_for(member):
        """A device kind's platforms where some variant of these may run: any kind for a variant id with execution
        spaces, else the kinds of device its variants ran on (in any problem and workload)."""
        ran_on = {c.device_kind for c in every if member(c)}
        several = any(member(c) and c.family in spaced for c in every)
        return lambda kind: several or kind in ran_on

    families: dict[str, list[Config]] = {}
    for c in chosen:
        families.setdefault(c.family, []).append(c)
    rows = []
    for family, members in families.items():
        kind = SINGLE_SOURCE if family in spaced else ONE_KIND
        rows.append(_portability_row(family, kind, members, platforms, best_time, kinds,
                                     possible_for(lambda c, f=family: c.family == f)))
    for name, member in best_of_families().items():
        members = [c for c in chosen if member(c.variant)]
        if len({c.family for c in members}) > 1:
            rows.append(_portability_row(name, BEST_OF, members, platforms, best_time, kinds,
                                         possible_for(lambda c, m=member: m(c.variant))))
    rows.sort(key=lambda r: (ROW_KINDS.index(r.kind), r.pp_app is None, -(r.pp_app or 0.0),
                             -(r.hmean_app_ran or 0.0), r.family))

    # Where the single sources are: problems of this workload at which one was measured on every platform of H.
    on: dict[tuple, set] = {}
    for c in every:
        if c.workload == workload and c.family in spaced and c.device in platforms:
            on.setdefault((c.n, c.d, c.family), set()).add(c.device)
    elsewhere = sorted({(pn, pd) for (pn, pd, _), devs in on.items()
                        if len(devs) == len(platforms) and (pn, pd) != (n, d)}, key=lambda p: (-p[0], p[1]))
    return Portability(workload, (n, d), platforms, kinds, rows, elsewhere)
