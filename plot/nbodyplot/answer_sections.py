"""report.md's answer: the dirty-build warning, portability and energy at a glance, the summary per device and
workload, and the performance-portability tables."""
from __future__ import annotations

from . import analysis, performance_portability
from .report_text import APPENDIX_FILE, FAILURES_LISTED, counts_text, figure, percent, sort_key, table
from .results import Config, Source, num, workload_text


def dirty_section(sources: list[Source], configs) -> list[str]:
    """A warning, right under the title, for every build made from a work tree with uncommitted changes:
    its code is in no commit, so its numbers cannot be reproduced from the repository."""
    labels = {c.build: c.build_label for c in configs}
    dirty = sorted({s.build for s in sources if s.build.dirty}, key=lambda b: labels.get(b, b.short_commit))
    if not dirty:
        return []
    lines = [f"**Warning: {len(dirty)} of {len({s.build for s in sources})} builds are dirty** (built from a work tree "
             "with uncommitted changes, `git_commit` ending in `-dirty`): their code is in no commit. Their rows "
             f"are marked DIRTY in the tables' last column.", ""]
    for b in dirty:
        files = ", ".join(f"`{s.path}`" for s in sources if s.build == b)
        lines.append(f"- {labels.get(b, b.short_commit)} (commit {b.short_commit}): {files}")
    return lines + [""]


def describe_config(c: Config, several_builds: bool) -> str:
    return f"{c.variant} N={c.n} D={c.d}" + (f" {c.tuning_text}" if c.tuning else "") + \
        (f" ({c.build_label})" if several_builds else "")


def eff_cell(pp: performance_portability.Portability, row: performance_portability.PortabilityRow, platform: str, arch: bool = False) -> str:
    """An efficiency of a performance-portability row on one platform, or why it has none there."""
    effs = row.arch_eff if arch else row.app_eff
    if platform in effs:
        return num(effs[platform])
    if platform in row.not_measured:
        return "not measured"
    if platform in row.cannot_run:
        return f"no {pp.kinds[platform]} variant"
    return "—"  # measured, without an efficiency recorded


def pp_cell(row: performance_portability.PortabilityRow, arch: bool = False) -> str:
    """PP of a row: a number, or "not measured" where the row lacks a platform it may run on (never 0 for that)."""
    value = row.pp_arch if arch else row.pp_app
    if value is None and row.not_measured and not row.cannot_run:
        return "not measured"
    return num(value)


def source_text(row: performance_portability.PortabilityRow) -> str:
    """Which source a row takes on the platforms: one, a different one on each (named), or one kind of device's."""
    if row.kind == performance_portability.SINGLE_SOURCE:
        return "one source"
    if row.kind == performance_portability.ONE_KIND:
        kinds = {c.device_kind for c in row.chosen.values()}
        return f"{kinds.pop()} only" if len(kinds) == 1 else "one kind of device"
    variants = ", ".join(c.variant for c in row.chosen.values())
    if len(row.sources) > 1:
        return f"a different source on each platform: {variants}"
    return f"the same source on every platform measured: {variants}"


def effs_text(pp: performance_portability.Portability, row: performance_portability.PortabilityRow) -> str:
    return "; ".join(f"{eff_cell(pp, row, p)} on {p}" for p in pp.platforms)


def not_measured_text(row: performance_portability.PortabilityRow) -> str:
    return f"not measured on {', '.join(row.not_measured)}"


def single_source_list(pp: performance_portability.Portability) -> str:
    """Every single source with its PP, or the platforms it was not measured on."""
    return "; ".join(f"{r.family} {num(r.pp_app)}" if r.pp_app is not None else f"{r.family} {not_measured_text(r)}"
                     for r in pp.of_kind(performance_portability.SINGLE_SOURCE)) or "none measured"


def elsewhere_text(pp: performance_portability.Portability) -> str:
    """Where the single sources are, for a problem at which none was measured on every platform."""
    if not pp.single_source_problems:
        return "no other problem of this workload has one measured on every platform either"
    problems = ", ".join(f"N = {n}, D = {d}" for n, d in pp.single_source_problems)
    n, d = pp.single_source_problems[0]
    return f"single sources were measured on every platform at {problems} (`--pp-problem {n},{d}`)"


def glance_section(summary: list[analysis.SummaryTable], pps: list) -> list[str]:
    """The report's first screen: per workload, each single source's performance portability over the platforms and
    the best one; then the best Kokkos variant on each platform (a different source on each), with per device the
    fastest Kokkos variant on each parallel execution space ÷ the fastest hand-written variant of that space's
    model, at the largest problem both ran."""
    lines = ["## Portability at a glance", "",
             "### One source on every platform", "",
             "A single source is one variant id on every execution space or backend (`kokkos.naive@cuda` and "
             "`kokkos.naive@openmp`; `thrust.split_j@cuda` and `@tbb`). Per workload, at the problem of the "
             "[performance-portability table](#performance-portability) and over the devices that ran it: the "
             "single source of the highest performance portability, PP = the harmonic mean of its application "
             "efficiencies (its rate ÷ the fastest variant measured on that platform, over every tuning and build), "
             "and every single source's PP; *not measured* where a source has no measurement of that problem on "
             "a platform (a measurement at another N never stands in).", ""]
    rows, notes = [], []
    for pp in pps:
        n, d = pp.problem
        best = pp.best_single_source
        platforms = ", ".join(pp.platforms)
        if best is None:
            rows.append([workload_text(pp.workload), f"{n} / {d}", platforms,
                         "none measured on every platform", "—", "—", single_source_list(pp)])
            notes.append(f"{workload_text(pp.workload)}: {elsewhere_text(pp)}.")
        else:
            rows.append([workload_text(pp.workload), f"{n} / {d}", platforms, best.family,
                         effs_text(pp, best), num(best.pp_app), single_source_list(pp)])
    if rows:
        lines += table(["workload", "N / D", "platforms", "best single source", "application efficiency",
                        "PP", "every single source (PP)"], rows)
        lines += [f"- {note}" for note in notes] + ([""] if notes else [])
    else:
        lines += ["_No measurements to compare._", ""]

    lines += ["### A different source on each platform", "",
              "The best Kokkos variant on each platform, which may be a different Kokkos source on each: the PP of "
              "the fastest Kokkos variant of each platform, at the same problem.", ""]
    best_of = [(pp, pp.best_of("best Kokkos variant")) for pp in pps]
    best_of_rows = [[workload_text(pp.workload), f"{pp.problem[0]} / {pp.problem[1]}", source_text(r),
                     effs_text(pp, r), pp_cell(r)] for pp, r in best_of if r is not None]
    lines += table(["workload", "N / D", "Kokkos variant on each platform", "application efficiency", "PP"],
                   best_of_rows) if best_of_rows else \
        ["_Fewer than two Kokkos variants measured at the problem of any workload._", ""]

    rows = []
    for t in summary:
        shown = set()
        for r in t.rows:  # each group's largest problem comes first
            if r.ratio is None or r.model in shown:
                continue
            shown.add(r.model)
            kokkos = r.best
            written = next(h.best for h in t.rows if h.model == r.compared_with and h.problem == r.problem)
            isa = kokkos.build.isa if t.kind == "CPU" else "—"
            if t.kind == "CPU" and kokkos.build.isa != written.build.isa:
                isa = f"Kokkos {kokkos.build.isa}, {written.variant} {written.build.isa}: different ISAs, not like for like"
            rows.append([t.device, workload_text(t.workload), f"{r.model} ÷ {r.compared_with}", num(r.ratio),
                         num(r.energy_ratio), kokkos.variant, written.variant, f"{kokkos.n} / {kokkos.d}", isa])
    lines += ["Per device, how far the fastest Kokkos variant stays from hand-written code: the fastest Kokkos "
              "variant on a parallel execution space ÷ the fastest hand-written variant of that space's model "
              "(Kokkos on CUDA ÷ CUDA, Kokkos on OpenMP ÷ OpenMP), in interactions/s at the largest N both ran (1 = "
              "as fast, over every tuning measured); each device's own fastest Kokkos variant, so a different "
              "source on each device where the Kokkos variant column names two. Kokkos Serial is not compared: "
              "serial.reference is the correctness baseline, not tuned code. On the host, `omp.simd` picks its "
              "vector instructions at run time; Kokkos and the other host variants run what their build was "
              "compiled for (ISA column). Energy ratio = Kokkos joules per interaction ÷ the hand-written "
              "variant's (1 = as frugal, above 1 = Kokkos spends more; — where either read no energy).", ""]
    if not rows:
        return lines + ["_No device ran both a Kokkos variant on a parallel space and its hand-written model._", ""]
    return lines + table(["device", "workload", "ratio of", "ratio", "energy ratio", "Kokkos variant",
                          "hand-written variant", "N / D", "ISA"], rows)


def energy_glance_section(summary: list[analysis.SummaryTable]) -> list[str]:
    """Beside the speed, its cost: per device and workload, each model's fastest variant (the summary's rows)
    in interactions per joule over the timed phase, with the power drawn and, on a GPU, the clock held."""
    lines = ["## Energy at a glance", "",
             "Interactions per joule = N² ÷ the device's energy per step over the timed phase (NVML's total-energy "
             "counter on a GPU, RAPL's package counters on a host; docs/results-format.md, \"Energy\"), for each "
             "model's fastest variant of the summary. Efficiency at clock = the fraction of the limit at the mean SM "
             "clock the GPU held (SPEC §3), beside the efficiency at its rated clock.", ""]
    def whole_mhz(clock):  # a clock reads in whole MHz (1980, not 1.98e+03)
        return num(None) if clock is None else f"{clock:.0f}"

    rows, reasons = [], set()
    for t in summary:
        for r in t.rows:
            c = r.best
            if c.interactions_per_joule is None:
                reasons.add(f"{t.device}: {c.energy_reason}" if c.energy_reason else f"{t.device}: not recorded")
            rows.append([t.device, workload_text(t.workload), f"{c.n} / {c.d}", r.model, c.variant,
                         num(c.interactions_per_joule), num(c.values.get("energy_per_step_j")),
                         num(c.values.get("mean_power_w")), whole_mhz(c.values.get("mean_sm_clock_mhz")), num(c.efficiency),
                         num(c.values.get("efficiency_at_clock"))])
    if not any(row[5] != num(None) for row in rows):
        return lines + ["_No energy in these results_ (" + "; ".join(sorted(reasons)) + ").", ""]
    lines += table(["device", "workload", "N / D", "model", "best variant", "interactions/J", "J/step", "mean W",
                    "SM clock (MHz)", "efficiency", "efficiency at clock"], rows)
    if reasons:
        lines += ["No energy (—): " + "; ".join(sorted(reasons)) + ".", ""]
    return lines


def summary_section(configs, summary: list[analysis.SummaryTable], pps: list, anchors: dict,
                    title: str = "Summary") -> list[str]:
    several_builds = len({c.build for c in configs}) > 1
    small_n, small_d = analysis.SMALL_PROBLEM
    lines = [f"## {title}", "",
             "Per device and workload, the fastest variant of each model (at its fastest tuning"
             + (", over every build" if several_builds else "") + ") at the largest N it and its partner "
             f"both ran, and at a small N (N = {small_n}, D = {small_d}: the N sweep's smallest). "
             "Kokkos ÷ hand-written = Kokkos interactions/s ÷ the hand-written model's at the same problem "
             "(1 = as fast). Efficiency = fraction of the device's limit (SPEC §3).", ""]
    for t in summary:
        lines += [f"### {t.device} ({t.kind}), {workload_text(t.workload)} — {counts_text(t.counts)}", ""]
        header = ["N", "D", "model", "best variant"] + (["build"] if several_builds else []) + \
            ["time per step (s)", "interactions/s", "efficiency", "Kokkos ÷ hand-written"]
        rows = []
        for r in t.rows:
            c = r.best
            ratio = "" if r.compared_with is None else (
                f"{num(r.ratio)} × {r.compared_with}" if r.ratio is not None else f"no {r.compared_with} at this N")
            rows.append([c.n, c.d, r.model, c.variant] + ([c.build_label] if several_builds else []) +
                        [num(c.time), num(c.values.get("interactions_per_second")), num(c.efficiency), ratio])
        lines += table(header, rows)
        dirty = [f"{r.best.variant} N={r.best.n} ({r.best.build_label})" for r in t.rows if r.best.build.dirty]
        if dirty:
            lines += ["From a dirty build (code in no commit): " + ", ".join(dirty) + ".", ""]
        if not t.small_measured:
            lines += [f"The small N (N = {small_n}, D = {small_d}) was not measured on this device.", ""]
        refused = sorted((c for c in configs if c.device == t.device and c.workload == t.workload
                          and c.verdict == "refused"), key=sort_key)
        if refused:
            lines += ["Refused (a tuning over the device's resources, never run): "
                      + "; ".join(f"{describe_config(c, several_builds)}: {c.refusal}" for c in refused[:FAILURES_LISTED])
                      + (f" and {len(refused) - FAILURES_LISTED} more ([Verification]({APPENDIX_FILE}#verification))"
                         if len(refused) > FAILURES_LISTED else "") + ".", ""]
        if t.failures:
            failures = sorted(t.failures, key=sort_key)
            listed = [f"[{describe_config(c, several_builds)}]({APPENDIX_FILE}#{anchors[id(c)]})" for c in failures[:FAILURES_LISTED]]
            more = len(failures) - len(listed)
            lines += ["Failed: " + ", ".join(listed) + (f" and {more} more ([Verification]({APPENDIX_FILE}#verification))"
                                                          if more else "") + ".", ""]
    for pp in pps:
        lines += pp_summary(pp)
    for note in analysis.limit_disagreements(configs):
        lines += [f"Note: the results files disagree on the FP32 limit of {note.device} by "
                  f"{percent(note.spread)} (more than the {percent(analysis.LIMIT_TOLERANCE)} tolerance), so its "
                  f"efficiencies from different files are not comparable; see [Devices]({APPENDIX_FILE}#appendix-b-devices).", ""]
    return lines


def pp_summary(pp: performance_portability.Portability) -> list[str]:
    """One line per workload: the best single source's PP first, then the best Kokkos variant of each platform's."""
    if not pp.rows:
        return []
    n, d = pp.problem
    best = pp.best_single_source
    if best is not None:
        parts = [f"one source on every platform: the best, {best.family}, PP = {num(best.pp_app)} (application "
                 f"efficiency), {pp_cell(best, arch=True)} (architectural)"]
    else:
        parts = [f"one source on every platform: none measured on every platform at this problem "
                 f"({single_source_list(pp)}); {elsewhere_text(pp)}"]
    kokkos = pp.best_of("best Kokkos variant")
    if kokkos is not None:
        value = (f"PP = {num(kokkos.pp_app)} (application efficiency), {pp_cell(kokkos, arch=True)} (architectural)"
                 if kokkos.pp_app is not None else f"PP {not_measured_text(kokkos)}")
        parts.append(f"then the best Kokkos variant of each platform ({source_text(kokkos)}): {value}")
    return [f"Performance portability ({workload_text(pp.workload)}, N = {n}, D = {d}, over "
            f"{' and '.join(pp.platforms)}): " + "; ".join(parts) + ". [Table](#performance-portability).", ""]


def portability_section(pps: list, stems: list, formats) -> list[str]:
    lines = ["## Performance portability", "",
             "Pennycook's metric for a family a on the platforms H: PP(a, H) = |H| ÷ Σ_{i∈H} 1/e_i(a), computed per "
             "workload at one problem (N, D) over the devices that ran it. A family is a variant id without its "
             "execution space. Rows, in this order: each *single source*, one variant id on every space or backend "
             "(`kokkos.naive@cuda` and `kokkos.naive@openmp` are `kokkos.naive`; `thrust.split_j@cuda`, `@omp` and "
             "`@tbb` are `thrust.split_j`); the *best ...* rows, the fastest member of a model on each platform, "
             "which may be a different source on each (the source column names them); then the variants of one "
             "kind of device (`cuda.*` on GPUs, `omp.*` on CPUs), whose PP is 0 over a set with the other kind, "
             "as Pennycook defines it for a platform the code does not support. A family with no measurement of the "
             "problem on a platform it may run on reads *not measured* there and has no PP: a measurement at "
             "another N is never mixed in. Application efficiency e_i = time of the fastest variant on platform i "
             "÷ the family's time; architectural efficiency = the harness's `efficiency` (fraction of the device "
             "limit). Each family at its fastest tuning, over every build.", ""]
    if not pps:
        return lines + ["_No measurements to compare._", ""]
    for pp, stem in zip(pps, stems):
        n, d = pp.problem
        lines += [f"Workload {workload_text(pp.workload)}. Problem: N = {n}, D = {d}; platforms H: "
                  f"{', '.join(pp.platforms)}.", ""]
        best = pp.best_single_source
        lines += [(f"One source on every platform: the best is {best.family}, PP = {num(best.pp_app)}."
                   if best is not None else
                   f"One source on every platform: none measured on every platform at this problem; "
                   f"{elsewhere_text(pp)}."), ""]
        header = ["family", "source"] + [f"app eff on {p}" for p in pp.platforms] + ["PP (app)",
                                                                                   "harmonic mean where it ran"]
        header += [f"arch eff on {p}" for p in pp.platforms] + ["PP (arch)"]
        rows = []
        for r in pp.rows:
            rows.append([r.family, source_text(r)] + [eff_cell(pp, r, p) for p in pp.platforms]
                        + [pp_cell(r), num(r.hmean_app_ran)]
                        + [eff_cell(pp, r, p, arch=True) for p in pp.platforms] + [pp_cell(r, arch=True)])
        lines += table(header, rows) + figure(stem, f"Performance portability, {workload_text(pp.workload)}", "",
                                              formats)
    return lines
