"""Loading nbody-bench results files into one list of measured configurations.

A results file is Google Benchmark JSON (a `context` object and a `benchmarks` array) whose
entries carry the fields of SPEC §6. One configuration (device, build, workload, variant, tuning,
N, D, steps) may appear as several repetitions plus mean/median/stddev/cv aggregates; it becomes
one `Config` whose numbers are those of its median aggregate (else its mean aggregate, else its
single repetition, else the median of its repetitions).
"""
from __future__ import annotations

import json
import math
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from . import models, schema


class InputError(Exception):
    """Bad input; the message is one line naming the file and what is wrong (exit status 2)."""


GPU_EXECUTION_SPACES = ("cuda", "hip", "sycl")
# Error field of an entry -> its threshold in context.matrix.verification (docs/results-format.md).
THRESHOLD_KEYS = {"max_pos_err": "max_pos_err", "rms_pos_err": "max_rms_pos_err",
                  "max_vel_err": "max_vel_err", "map_diff": "max_map_diff"}

# SPEC §2: results written before the workload axes existed are this workload.
DEFAULT_WORKLOAD = (2, "fp32", "euler")
WORKLOAD_VALUES = {"dim": (2, 3), "precision": ("fp32", "fp64"), "integrator": ("euler", "leapfrog")}

# A variant refuses a tuning the device cannot hold before it runs (harness UsageError): its entry has
# an error and no time. These messages say the tuning is over a resource budget, not that a run went wrong.
REFUSAL_PATTERNS = (re.compile(r"registers and scratch allow"), re.compile(r"do not fit this kernel"),
                    re.compile(r"needs \d+ MiB of per-thread"))
VERDICTS = ("verified", "failed", "inconclusive", "refused", "not verified")

ERROR_FIELDS = ("max_pos_err", "rms_pos_err", "max_vel_err", "map_diff")
# The per-step breakdown of runs over ranks (docs/scaling.md) is optional: older files lack it.
BREAKDOWN_FIELDS = ("step_compute_s", "step_exposed_communication_s", "step_imbalance_s")
# Energy over the timed phase (docs/results-format.md, "Energy") is optional: older files and meters that
# could not read lack it.
ENERGY_FIELDS = ("energy_j", "energy_per_step_j", "mean_power_w", "interactions_per_joule", "mean_sm_clock_mhz",
                 "efficiency_at_clock")
MEASURED_FIELDS = ("time_per_step_s", "upload_s", "download_s", "interactions_per_second", "efficiency",
                   "efficiency_limit") + ERROR_FIELDS + BREAKDOWN_FIELDS + ENERGY_FIELDS


def num(value) -> str:
    """Three significant figures, trailing zeros kept (1.00, 0.975, 3.72e+12): every number the report and
    the figures print; the tests read these back."""
    if value is None:
        return "—"
    text = f"{value:#.3g}"
    mantissa, e, exponent = text.partition("e")
    return mantissa.rstrip(".") + e + exponent


def workload_text(workload: tuple) -> str:
    """SPEC §2's spelling: 2d/fp32/euler."""
    dim, precision, integrator = workload
    return f"{dim}d/{precision}/{integrator}"


@dataclass(frozen=True)
class Build:
    """What makes two binaries' results incomparable, from a results file's context: the source
    (git commit), the compiler, the build type, the flags (they carry a preset's ISA, e.g. the
    host-avx512 preset's -march=x86-64-v4, and the CUDA flags and architectures) and the models'
    build facts. The executable's path is not part of it: one path has held different binaries."""
    commit: str
    compiler: str
    build_type: str
    flags: str
    facts: tuple  # sorted (key, value) of context.build_facts

    @property
    def dirty(self) -> bool:
        """Built from a work tree with uncommitted changes: its source is in no commit."""
        return self.commit.endswith("-dirty")

    @property
    def short_commit(self) -> str:
        return self.commit[:7] + ("-dirty" if self.commit.endswith("-dirty") else "")

    @property
    def isa(self) -> str:
        """The host ISA the build names (build fact host_arch, e.g. "native (znver4)"), else the C++ -march of
        the flags, else "default ISA" (the compiler's baseline: a portable binary)."""
        host_arch = dict(self.facts).get("host_arch")
        if host_arch:
            return "default ISA" if host_arch == "default" else f"-march={host_arch}"
        cxx = self.flags.split("; CUDA", 1)[0]
        march = re.findall(r"-march=(\S+)", cxx)
        return f"-march={march[-1]}" if march else "default ISA"

    @property
    def facts_text(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.facts) or "no build facts"

    def describe(self) -> str:
        return f"commit {self.short_commit}, {self.compiler}, {self.build_type}, flags `{self.flags}`"


def build_of(context: dict) -> Build:
    def text(key):
        value = context.get(key)
        return value if isinstance(value, str) and value else "unknown"
    facts = tuple(sorted((str(k), str(v)) for k, v in _object(context, "build_facts").items()))
    return Build(text("git_commit"), text("compiler"), text("build_type"), " ".join(text("build_flags").split()), facts)


# The parts of a build a label may name, in the order they are tried: the fewest that tell a report's
# builds apart are used.
BUILD_LABEL_PARTS = (lambda b: b.short_commit, lambda b: b.isa, lambda b: b.compiler, lambda b: b.build_type,
                     lambda b: b.flags, lambda b: b.facts_text)


def build_label_parts(builds) -> dict:
    """Each build's label as parts: the fewest of BUILD_LABEL_PARTS (in order) that tell the builds
    apart; the short commit alone when there is only one build."""
    builds = sorted(set(builds), key=lambda b: (b.commit, b.flags, b.compiler, b.build_type, b.facts))
    if len(builds) <= 1:
        return {b: (b.short_commit,) for b in builds}
    chosen = []
    for part in BUILD_LABEL_PARTS:
        if len({tuple(p(b) for p in chosen) for b in builds}) == len(builds):
            break
        if len({part(b) for b in builds}) > 1:
            chosen.append(part)
    return {b: tuple(p(b) for p in chosen) for b in builds}


def local_build_labels(configs_or_keys) -> dict:
    """Build -> its label among these lines: the report-wide label less the parts these builds share
    (the part that tells them apart, e.g. the ISA); the whole label when all are one build."""
    parts = {c.build: c.build_parts for c in configs_or_keys}
    if len(parts) <= 1:
        return {b: ", ".join(p) for b, p in parts.items()}
    width = max(len(p) for p in parts.values())
    varying = [i for i in range(width) if len({p[i] if i < len(p) else "" for p in parts.values()}) > 1]
    return {b: ", ".join(p[i] for i in varying if i < len(p)) for b, p in parts.items()}


@dataclass
class Config:
    """One measured configuration on one device."""
    source: str
    device: str
    device_kind: str  # "GPU" or "CPU"
    build: Build
    workload: tuple   # (dim, precision, integrator)
    variant: str
    backend: str
    tuning: dict
    n: int
    d: int
    steps: int
    values: dict = field(default_factory=dict)  # MEASURED_FIELDS present in the JSON
    verified: bool | None = None
    inconclusive: bool = False         # the check's "verdict": "inconclusive" (rounding amplified past a verdict)
    error: str | None = None
    repetitions: int = 1
    time_stddev_s: float | None = None
    repetition_times: tuple = ()       # time per step of each repetition, where the file has them
    thresholds: dict = field(default_factory=dict)  # error field -> threshold, when known
    device_limit: float | None = None  # interactions/s of the whole device at efficiency 1
    verification: str | None = None    # "full" / "sampled" / "none"
    verify_steps: int | None = None
    build_parts: tuple = ()            # set by load(): what tells this build from the others loaded
    ranks: int = 1                     # ranks the simulation ran over (mpirun -np; docs/scaling.md)
    scaling: str | None = None         # "strong" / "weak": a scripts/scaling_run.sh matrix (scaling-<kind>)
    base_device: str = ""              # the device of one rank; `device` adds "× G ranks" over several
    energy_reason: str | None = None   # why no energy was read (a repetition's `energy.reason`), where none was
    reproducibility: str | None = None  # bitwise / order-fixed / run-to-run; None in files before it was recorded

    @property
    def build_label(self) -> str:
        return ", ".join(self.build_parts)

    @property
    def family(self) -> str:
        """The variant without its execution space: kokkos.naive@cuda -> kokkos.naive."""
        return self.variant.split("@", 1)[0]

    @property
    def space(self) -> str | None:
        """The execution space of a model with several (kokkos.naive@cuda -> cuda, thrust.packed@tbb -> tbb,
        openacc.naive@host -> host); None for a variant of one space."""
        return self.variant.split("@", 1)[1] if "@" in self.variant else None

    @property
    def model(self) -> str:
        """The programming model, with its execution space where it has several (Kokkos, Thrust, OpenACC's host)."""
        backend = self.variant.split(".", 1)[0]
        if self.space is not None:
            return f"{models.current().name(backend)} ({self.space})"
        return models.current().name(backend)

    @property
    def workload_text(self) -> str:
        return workload_text(self.workload)

    @property
    def refusal(self) -> str | None:
        """The reason the variant refused this tuning for resources (see REFUSAL_PATTERNS), else None."""
        if self.error is None or self.time is not None:
            return None
        return self.error if any(p.search(self.error) for p in REFUSAL_PATTERNS) else None

    @property
    def verdict(self) -> str:
        """"verified", "refused" (a tuning over the device's resources, never run), "inconclusive" (the
        input amplified rounding past a verdict), "failed" (did not verify, or raised another error) or
        "not verified" (no check recorded)."""
        if self.refusal is not None:
            return "refused"
        if self.inconclusive:
            return "inconclusive"
        if self.verified is False or self.error is not None:
            return "failed"
        return "verified" if self.verified else "not verified"

    @property
    def failed(self) -> bool:
        return self.error is not None or self.values.get("time_per_step_s") is None

    @property
    def time(self) -> float | None:
        return self.values.get("time_per_step_s")

    @property
    def efficiency(self) -> float | None:
        return self.values.get("efficiency")

    @property
    def interactions_per_joule(self) -> float | None:
        return self.values.get("interactions_per_joule")

    @property
    def tuning_text(self) -> str:
        return " ".join(f"{k}={v}" for k, v in sorted(self.tuning.items())) or "-"

    def tuning_without(self, name: str) -> tuple:
        return tuple(sorted((k, str(v)) for k, v in self.tuning.items() if k != name))


@dataclass
class Source:
    path: str
    context: dict
    build: Build


def _object(context: dict, key: str) -> dict:
    value = context.get(key)
    return value if isinstance(value, dict) else {}


def device_of(entry: dict, context: dict, path: str) -> tuple[str, str]:
    """(device name, "GPU"|"CPU"): the context's GPU for a GPU entry, else the host CPU with its CPU count."""
    kind = entry.get("device")
    if kind not in ("cpu", "gpu"):  # older files: infer from the id
        space = entry["variant"].split("@", 1)[1] if "@" in entry["variant"] else ""
        kind = "gpu" if entry.get("backend") == "cuda" or space in GPU_EXECUTION_SPACES else "cpu"
    if kind == "gpu":
        name = _object(context, "gpu").get("name")
        return (name if isinstance(name, str) and name else f"unnamed GPU ({Path(path).name})"), "GPU"
    cpu = _object(context, "host_cpu")
    name = cpu.get("model_name") if isinstance(cpu.get("model_name"), str) and cpu.get("model_name") \
        else f"unnamed CPU ({context.get('host_name') or Path(path).name})"
    # Google Benchmark's own count of CPUs: read the same way by every build (a host_cpu block has been
    # seen with 1 CPU where OpenMP had already pinned the process).
    cpus = context.get("num_cpus") if isinstance(context.get("num_cpus"), int) else cpu.get("logical_cpus")
    return (f"{name} ({cpus} CPUs)" if isinstance(cpus, int) else name), "CPU"


def device_limit(kind: str, context: dict) -> float | None:
    """Interactions/s at efficiency 1 on the whole device (SPEC §3), as the harness recorded it."""
    limit = _object(context, "gpu" if kind == "GPU" else "host_cpu").get("fp32_interaction_limit")
    return float(limit) if isinstance(limit, (int, float)) and not isinstance(limit, bool) and limit > 0 else None


def _number(entry: dict, key: str, path: str, index: int, kind=float):
    value = entry.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{path}: benchmarks[{index}].{key} is not a number: {value!r}")
    if kind is int:
        if value != int(value) or value < 0:
            raise InputError(f"{path}: benchmarks[{index}].{key} is not a count: {value!r}")
        return int(value)
    value = float(value)
    return value if math.isfinite(value) else None


def _workload(entry: dict, path: str, index: int) -> tuple:
    """(dim, precision, integrator) of an entry; a field it lacks takes SPEC §2's default."""
    values = []
    for (name, allowed), default in zip(WORKLOAD_VALUES.items(), DEFAULT_WORKLOAD):
        value = entry.get(name, default)
        if isinstance(value, bool) or value not in allowed:
            raise InputError(f"{path}: benchmarks[{index}].{name} is {value!r}, not one of "
                             + ", ".join(map(str, allowed)))
        values.append(value)
    return tuple(values)


def _ranks(entry: dict, context: dict, path: str, index: int) -> int:
    """The ranks of an entry: its own field, else its file's context.distribution, else 1 (a single process)."""
    ranks = _number(entry, "ranks", path, index, int)
    if ranks is None:
        recorded = _object(context, "distribution").get("ranks")
        ranks = recorded if isinstance(recorded, int) and not isinstance(recorded, bool) else 1
    if ranks < 1:
        raise InputError(f"{path}: benchmarks[{index}].ranks is {ranks}, not a positive count")
    return ranks


def _thresholds(context: dict) -> dict:
    """Verification thresholds of the run, by error field."""
    recorded = _object(_object(context, "matrix"), "verification")
    return {name: float(recorded[key]) for name, key in THRESHOLD_KEYS.items()
            if isinstance(recorded.get(key), (int, float)) and not isinstance(recorded.get(key), bool)}


def read_file(path: str) -> tuple[Source, list[Config]]:
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{path}: {'not a file' if p.exists() else 'no such file'}")
    # What `nbody-bench check-results` rejects is refused here too: the same JSON reading rules and the
    # same schema file (schema.py).
    try:
        document = schema.parse(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not valid JSON: not UTF-8 at byte {e.start}") from None
    except schema.SchemaInputError as e:
        raise InputError(f"{path}: {e}") from None
    problems = schema.problems(document)
    if problems:
        raise InputError(f"{path}: not a valid results file ({len(problems)} problem{'s' if len(problems) > 1 else ''}, "
                         f"first: {problems[0]}; `nbody-bench check-results {path}` lists every one)")
    context = document["context"]
    thresholds = _thresholds(context)

    groups: dict[tuple, list[tuple[int, dict]]] = {}
    for index, entry in enumerate(document["benchmarks"]):
        if not isinstance(entry, dict):
            raise InputError(f"{path}: benchmarks[{index}] is not an object")
        if "variant" not in entry:
            continue  # a plain Google Benchmark entry (not an nbody configuration)
        if not isinstance(entry["variant"], str) or not entry["variant"]:
            raise InputError(f"{path}: benchmarks[{index}].variant is not a variant id")
        for key in ("n", "d"):
            if _number(entry, key, path, index, int) is None:
                raise InputError(f"{path}: benchmarks[{index}] ({entry['variant']}) has no '{key}'")
        tuning = entry.get("tuning") or {}
        if not isinstance(tuning, dict):
            raise InputError(f"{path}: benchmarks[{index}].tuning is not an object")
        key = (_workload(entry, path, index), entry["variant"], tuple(sorted((k, str(v)) for k, v in tuning.items())),
               int(entry["n"]), int(entry["d"]), _number(entry, "steps", path, index, int) or 0,
               _ranks(entry, context, path, index))
        groups.setdefault(key, []).append((index, entry))
    if not groups:
        raise InputError(f"{path}: no nbody benchmark entries (none has a 'variant')")

    build = build_of(context)
    configs = []
    matrix_name = _object(context, "matrix").get("name")
    scaling = matrix_name[len("scaling-"):] if isinstance(matrix_name, str) and matrix_name in (
        "scaling-strong", "scaling-weak") else None
    for (workload, variant, tuning, n, d, steps, ranks), entries in groups.items():
        config = _config(path, context, build, thresholds, workload, variant, dict(tuning), n, d, steps, entries)
        config.ranks, config.scaling, config.base_device = ranks, scaling, config.device
        if ranks > 1:
            config.device = f"{config.device} × {ranks} ranks"
        configs.append(config)
    return Source(path, context, build), configs


def _config(path, context, build, thresholds, workload, variant, tuning, n, d, steps, entries) -> Config:
    first = entries[0][1]
    device, kind = device_of(first, context, path)
    iterations = [(i, e) for i, e in entries if e.get("run_type", "iteration") == "iteration"]
    aggregates = {e.get("aggregate_name"): (i, e) for i, e in entries if e.get("run_type") == "aggregate"}
    chosen = aggregates.get("median") or aggregates.get("mean")
    if chosen is None and len(iterations) == 1:
        chosen = iterations[0]
    values = {}
    if chosen is not None:
        index, entry = chosen
        for name in MEASURED_FIELDS:
            values[name] = _number(entry, name, path, index)
    else:
        for name in MEASURED_FIELDS:
            numbers = [v for v in (_number(e, name, path, i) for i, e in iterations) if v is not None]
            values[name] = statistics.median(numbers) if numbers else None
    # Errors are a property of the configuration, not of the repetition: take them from any entry.
    for name in ERROR_FIELDS:
        if values.get(name) is None:
            for i, e in entries:
                if _number(e, name, path, i) is not None:
                    values[name] = _number(e, name, path, i)
                    break
    values = {k: v for k, v in values.items() if v is not None}
    stddev = None
    if "stddev" in aggregates:
        stddev = _number(aggregates["stddev"][1], "time_per_step_s", path, aggregates["stddev"][0])
    elif len(iterations) > 1:
        times = [t for t in (_number(e, "time_per_step_s", path, i) for i, e in iterations) if t is not None]
        stddev = statistics.stdev(times) if len(times) > 1 else None
    repetition_times = tuple(t for t in (_number(e, "time_per_step_s", path, i) for i, e in iterations) if t is not None)
    errors = [e["error"] for _, e in entries if isinstance(e.get("error"), str) and e["error"]]
    verified_flags = [e["verified"] for _, e in entries if isinstance(e.get("verified"), bool)]
    energy_reasons = [e["energy"]["reason"] for _, e in iterations
                      if isinstance(e.get("energy"), dict) and isinstance(e["energy"].get("reason"), str)]
    return Config(
        source=path, device=device, device_kind=kind, build=build, workload=workload, variant=variant,
        backend=first.get("backend") or variant.split(".", 1)[0], tuning=tuning, n=n, d=d, steps=steps,
        values=values, verified=all(verified_flags) if verified_flags else None,
        inconclusive=any(e.get("verdict") == "inconclusive" for _, e in entries)
        and not any(e.get("verdict") == "fail" for _, e in entries),
        error=errors[0] if errors else None, repetitions=max(1, len(iterations)),
        time_stddev_s=stddev, repetition_times=repetition_times, thresholds=dict(thresholds),
        device_limit=device_limit(kind, context),
        verification=first.get("verification") if isinstance(first.get("verification"), str) else None,
        verify_steps=_number(first, "verify_steps", path, entries[0][0], int),
        energy_reason=energy_reasons[0] if energy_reasons and "interactions_per_joule" not in values else None,
        reproducibility=first.get("reproducibility") if isinstance(first.get("reproducibility"), str) else None)


def load(paths: list[str]) -> tuple[list[Source], list[Config]]:
    """Every configuration of every file; a later file's configuration replaces an earlier identical one
    (same device (with its ranks), build, workload, variant, tuning, N, D, steps, and scaling kind: a strong
    and a weak scaling run at G = 1 may measure the same problem). Each build gets its label. The models are
    named and ordered as these files' contexts declare them (models.py), else as this checkout's do."""
    sources, by_key = [], {}
    for path in paths:
        source, configs = read_file(path)
        sources.append(source)
        for c in configs:
            by_key[(c.device, c.build, c.workload, c.variant, tuple(sorted(c.tuning.items())), c.n, c.d, c.steps,
                    c.scaling)] = c
    try:
        models.use_contexts([s.context for s in sources])
    except models.DeclarationError as e:
        raise InputError(str(e)) from None
    parts = build_label_parts(s.build for s in sources)
    for c in by_key.values():
        c.build_parts = parts[c.build]
    return sources, list(by_key.values())
