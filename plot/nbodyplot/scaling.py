"""Scaling: OpenMP thread scaling, runs over several ranks, and the strong-scaling efficiency against bodies
per rank with the cost model fitted to it (docs/scaling.md)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from . import cost_model
from .analysis import ok
from .results import DEFAULT_WORKLOAD, Config


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
