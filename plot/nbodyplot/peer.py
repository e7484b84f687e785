"""The CUDA samples' nbody (docs/peers.md) beside our variants.

Its output is read as `scripts/device_run.sh --peer` writes it: every run is headed by

    == peer-nbody precision=<fp32|fp64> n=<N> repetition=<r> iterations=<i> command: <command line>

followed by the program's own output, from which this reads the device (`> Compute 9.0 CUDA device:
[NAME]`) and the timing (`N bodies, total time for I iterations: T ms`). Its rate is counted as ours
(SPEC §3): N² interactions per step, the j == i term included, as the samples count them; time per
step = T ÷ I, so the rate is N² · I ÷ T. Its step is one force evaluation with kick-then-drift Euler
in 3D, so it is set beside our 3d/<precision>/euler workload.
"""
from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from . import analysis
from .results import Config, InputError

HEADER = re.compile(r"^== peer-nbody precision=(fp32|fp64) n=(\d+) repetition=(\d+) iterations=(\d+) command: (.*)$")
DEVICE = re.compile(r"^> Compute \d+\.\d+ CUDA device: \[(.+)\]\s*$")
TIMING = re.compile(r"^(\d+) bodies, total time for (\d+) iterations: ([0-9.]+) ms\s*$")
PEER_NAME = "CUDA samples' nbody"
PEER_DIM, PEER_INTEGRATOR = 3, "euler"
COMPARED_MODELS = ("CUDA", "Kokkos (cuda)")


@dataclass
class PeerRun:
    source: str
    line: int                      # of its header, 1-based
    precision: str
    n: int                         # bodies the program ran (it rounds N up to its block size)
    repetition: int
    command: str
    device: str | None = None
    iterations: int | None = None
    total_ms: float | None = None

    @property
    def failed(self) -> bool:
        return self.total_ms is None or self.total_ms <= 0

    @property
    def interactions_per_second(self) -> float | None:
        return None if self.failed else self.n * self.n * self.iterations / (self.total_ms / 1000.0)


@dataclass
class PeerPoint:
    """The median over the repetitions of one (device, precision, N)."""
    device: str
    workload: tuple
    n: int
    interactions_per_second: float
    time_per_step_s: float
    runs: list = field(default_factory=list)


def read_peer_log(path: str) -> list[PeerRun]:
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{path}: {'not a file' if p.exists() else 'no such file'}")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not text ({e})") from None
    runs: list[PeerRun] = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("== peer-nbody"):
            match = HEADER.match(line)
            if not match:
                raise InputError(f"{path}:{number}: malformed run header: {line[:80]!r}")
            precision, n, repetition, _, command = match.groups()
            runs.append(PeerRun(path, number, precision, int(n), int(repetition), command))
            continue
        if not runs:
            continue
        run = runs[-1]
        if (match := DEVICE.match(line)) is not None:
            run.device = match.group(1)
        elif (match := TIMING.match(line)) is not None:
            run.n, run.iterations, run.total_ms = int(match.group(1)), int(match.group(2)), float(match.group(3))
    if not runs:
        raise InputError(f"{path}: no '== peer-nbody' run header (not written by scripts/device_run.sh --peer?)")
    for run in runs:
        if run.device is None:
            run.device = f"unnamed GPU ({p.name})"
    return runs


def points(runs: list[PeerRun]) -> list[PeerPoint]:
    """Median rate per (device, precision, N) over the runs that printed a time."""
    grouped: dict[tuple, list[PeerRun]] = {}
    for run in runs:
        if not run.failed:
            grouped.setdefault((run.device, run.precision, run.n), []).append(run)
    result = []
    for (device, precision, n), group in sorted(grouped.items()):
        rate = statistics.median(r.interactions_per_second for r in group)
        result.append(PeerPoint(device, (PEER_DIM, precision, PEER_INTEGRATOR), n, rate, n * n / rate, group))
    return result


@dataclass
class ComparisonRow:
    n: int
    peer: PeerPoint
    best: dict                     # model -> our fastest Config of that model at this N (any D, tuning, build)

    def ratio(self, model: str) -> float | None:
        c = self.best.get(model)
        rate = c.values.get("interactions_per_second") if c else None
        return rate / self.peer.interactions_per_second if rate else None


@dataclass
class Comparison:
    device: str
    workload: tuple
    rows: list                     # ComparisonRow by N
    ours: list                     # every fastest Config of the compared models on this device and workload


def comparisons(configs: list[Config], peer_points: list[PeerPoint]) -> list[Comparison]:
    """Per device and workload the samples ran: at each of its N, our fastest CUDA and Kokkos-on-CUDA
    configuration there (same device name, same workload, any D)."""
    best = [c for c in analysis.fastest(configs, over_builds=True).values() if c.model in COMPARED_MODELS]
    result = []
    for device, workload in sorted({(p.device, p.workload) for p in peer_points}):
        ours = [c for c in best if c.device == device and c.workload == workload]
        rows = []
        for point in sorted((p for p in peer_points if (p.device, p.workload) == (device, workload)),
                            key=lambda p: p.n):
            at_n = {}
            for c in ours:
                if c.n == point.n and (c.model not in at_n or c.time < at_n[c.model].time):
                    at_n[c.model] = c
            rows.append(ComparisonRow(point.n, point, at_n))
        result.append(Comparison(device, workload, rows, ours))
    return result


def failed_runs(runs: list[PeerRun]) -> list[PeerRun]:
    return [r for r in runs if r.failed]
