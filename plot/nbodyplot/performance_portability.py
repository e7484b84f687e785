"""Performance portability (Pennycook, Sewall and Lee 2016): per workload and problem, each family's
application and architectural efficiencies over the platforms and their harmonic mean."""
from __future__ import annotations

from dataclasses import dataclass, field

from . import models
from .analysis import devices, fastest, ok
from .results import Config


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
