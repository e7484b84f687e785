"""Two Markdown files. report.md leads with the answer: Kokkos ÷ hand-written per device and workload, the
summary of the main workload, and the figures that carry it. appendix.md holds the tables behind them: the
other workloads' summaries, every configuration with its errors and time, the ladders, the results files and
their contexts."""
from __future__ import annotations

from . import analysis
from . import tiling_ladder
from .results import ERROR_FIELDS, VERDICTS, Config, Source, num, workload_text

ERROR_TITLES = {"max_pos_err": "max pos err", "rms_pos_err": "RMS pos err",
                "max_vel_err": "max vel err", "map_diff": "map diff"}
FAILURES_LISTED = 5  # per summary table; the verification table has every one
REPORT_FILE = "report.md"
APPENDIX_FILE = "appendix.md"
# The stem of a figure that figure selection left out (cli's --all-figures draws it): falsy like a figure without
# data (None), but its section says nothing about it.
NOT_DRAWN = ""


def percent(fraction: float) -> str:
    return f"{num(100 * fraction)} %"


def cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def table(header: list[str], rows: list[list]) -> list[str]:
    lines = ["| " + " | ".join(cell(h) for h in header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return lines + [""]


def figure(stem: str | None, caption: str, missing: str, formats: tuple[str, ...]) -> list[str]:
    """The PNG embedded, and a link to the SVG where one was written (formats: those of cli.run)."""
    if stem == NOT_DRAWN:
        return []
    if stem is None:
        return [f"_{missing}_", ""]
    return [f"![{caption}]({stem}.png)", ""] + ([f"[SVG]({stem}.svg)", ""] if "svg" in formats else [])


def sort_key(c: Config):
    return (c.device_kind != "GPU", c.device, c.workload != analysis.DEFAULT_WORKLOAD, c.workload, c.variant,
            c.build_label, c.tuning_text, c.n, c.d, c.steps)


def failure_anchors(configs) -> dict[int, str]:
    """id(config) -> the anchor of its row in the verification table, for every failed configuration."""
    failed = sorted((c for c in configs if c.verdict == "failed"), key=sort_key)
    return {id(c): f"failure-{i}" for i, c in enumerate(failed, 1)}


def scalars(mapping: dict, prefix: str = ""):
    """(dotted key, value) of every scalar in a context, nested objects flattened (lists left out)."""
    for key, value in mapping.items():
        if isinstance(value, dict):
            yield from scalars(value, f"{prefix}{key}.")
        elif value is None or isinstance(value, (str, int, float, bool)):
            yield f"{prefix}{key}", "—" if value is None else value


# ---------------------------------------------------------------------------------------------
# Summary


def counts_text(counts: dict) -> str:
    total = sum(counts.values())
    return (f"{total} configuration{'s' if total != 1 else ''}: {counts['verified']} verified, "
            f"{counts['failed']} failed, "
            + (f"{counts['inconclusive']} inconclusive, " if counts.get("inconclusive") else "")
            + f"{counts['refused']} refused, {counts['not verified']} not verified")


DIRTY_MARK = " (dirty build)"
DIRTY_COLUMN = "dirty build"


def dirty_cell(c: Config) -> str:
    return "DIRTY" if c.build.dirty else ""


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


def eff_cell(pp: analysis.Portability, row: analysis.PortabilityRow, platform: str, arch: bool = False) -> str:
    """An efficiency of a performance-portability row on one platform, or why it has none there."""
    effs = row.arch_eff if arch else row.app_eff
    if platform in effs:
        return num(effs[platform])
    if platform in row.not_measured:
        return "not measured"
    if platform in row.cannot_run:
        return f"no {pp.kinds[platform]} variant"
    return "—"  # measured, without an efficiency recorded


def pp_cell(row: analysis.PortabilityRow, arch: bool = False) -> str:
    """PP of a row: a number, or "not measured" where the row lacks a platform it may run on (never 0 for that)."""
    value = row.pp_arch if arch else row.pp_app
    if value is None and row.not_measured and not row.cannot_run:
        return "not measured"
    return num(value)


def source_text(row: analysis.PortabilityRow) -> str:
    """Which source a row takes on the platforms: one, a different one on each (named), or one kind of device's."""
    if row.kind == analysis.SINGLE_SOURCE:
        return "one source"
    if row.kind == analysis.ONE_KIND:
        kinds = {c.device_kind for c in row.chosen.values()}
        return f"{kinds.pop()} only" if len(kinds) == 1 else "one kind of device"
    variants = ", ".join(c.variant for c in row.chosen.values())
    if len(row.sources) > 1:
        return f"a different source on each platform: {variants}"
    return f"the same source on every platform measured: {variants}"


def effs_text(pp: analysis.Portability, row: analysis.PortabilityRow) -> str:
    return "; ".join(f"{eff_cell(pp, row, p)} on {p}" for p in pp.platforms)


def not_measured_text(row: analysis.PortabilityRow) -> str:
    return f"not measured on {', '.join(row.not_measured)}"


def single_source_list(pp: analysis.Portability) -> str:
    """Every single source with its PP, or the platforms it was not measured on."""
    return "; ".join(f"{r.family} {num(r.pp_app)}" if r.pp_app is not None else f"{r.family} {not_measured_text(r)}"
                     for r in pp.of_kind(analysis.SINGLE_SOURCE)) or "none measured"


def elsewhere_text(pp: analysis.Portability) -> str:
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


def pp_summary(pp: analysis.Portability) -> list[str]:
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


# ---------------------------------------------------------------------------------------------
# Figures and their tables


def ratio_section(configs, stem, formats) -> list[str]:
    lines = ["## Portability ratio against N", "",
             "The fastest Kokkos variant's interactions/s ÷ the fastest hand-written variant's (Kokkos on CUDA ÷ "
             "CUDA, Kokkos on OpenMP ÷ OpenMP, Kokkos Serial ÷ serial) at each N both ran, within one build and "
             "workload (a line per build: points of two builds are never joined); the figure draws the lines of "
             "two or more N, the table has every point.", ""]
    lines += figure(stem, "Portability ratio against N", "No line of two or more N where a Kokkos variant and "
                                                            "its hand-written counterpart both ran in one build.",
                    formats)
    rows = [[s.device, s.build_label, workload_text(s.workload), s.d, n, f"{s.portable_model} ÷ {s.hand_model}",
             kokkos.variant, hand.variant, num(ratio)]
            for s in analysis.portability_ratios(configs) for n, ratio, kokkos, hand in s.points]
    return lines + (table(["device", "build", "workload", "D", "N", "ratio of", "Kokkos variant",
                           "hand-written variant", "ratio"], rows) if rows else [])


def ladder_section(tables: list[analysis.LadderTable], stems: list[str], formats) -> list[str]:
    from .figures import ladder_title
    lines = ["## Optimisation ladders", "",
             "Each step is a variant (at its fastest tuning unless the ladder fixes one, see "
             "`plot/ladders.json`) of one build and workload; steps absent from the results are skipped. "
             "Speedup = geometric mean, over the problems of the sweep that every step ran (listed above each "
             "table), of the ratio of times per step; so the step speedups multiply to the cumulative one, which "
             "is against the first step present.", ""]
    if not tables:
        return lines + ["_No ladder has two or more steps in these results._", ""]
    for t, stem in zip(tables, stems):
        header = ["step", "variant"]
        for g in t.groups:
            header += [f"speedup vs previous ({g.label})", f"cumulative ({g.label})"]
        rows = []
        for r in t.rows:
            row = [r.step.label, r.step.variant + "".join(f" {k}={v}" for k, v in r.step.tuning.items())]
            for g in t.groups:
                row += [num(r.vs_previous.get(g.label)), num(r.cumulative.get(g.label))]
            rows.append(row)
        compared = []
        for g in t.groups:
            axis = 0 if g.label.startswith("N sweep") else 1
            values = ", ".join(str(p[axis]) for p in g.problems) if len(g.problems) > 1 else ""
            name = ("N" if axis == 0 else "D") if values else ""
            compared.append(f"{g.label}: " + (f"{name} = {values}" if values else "one problem") +
                            (" (every step ran these)" if g.every_step else
                             " (no problem ran by every step: each ratio over the problems both steps ran)"))
        lines += [f"### {ladder_title(t)}", ""] + [f"- {c}" for c in compared] + [""]
        lines += table(header, rows)
        lines += figure(stem, ladder_title(t), "", formats)
    return lines


def figure_and_table_section(title: str, intro: str, stem, missing: str, header: list, rows: list,
                             formats) -> list[str]:
    """A section of a heading, its explanation, a figure (or what is missing) and the table of its rows."""
    lines = [f"## {title}", "", intro, ""] + figure(stem, title, missing, formats)
    return lines + (table(header, rows) if rows else [])


def tuning_text(pairs) -> str:
    return " ".join(f"{k}={v}" for k, v in pairs) or "-"


def scaling_section(configs, stem, formats) -> list[str]:
    rows = [[s.device, s.variant, s.build_label, workload_text(s.workload), s.n, s.d, tuning_text(s.other_tuning), t,
             num(time), num(speedup), num(eff)]
            for s in analysis.thread_scaling(configs) for t, time, speedup, eff in s.points]
    return figure_and_table_section(
        "Thread scaling",
        "Configurations of one build and workload that differ only in the `threads` tuning. Speedup is against the "
        "smallest thread count measured; parallel efficiency = speedup ÷ (threads ÷ smallest thread count).",
        stem, "No thread sweep in these results.",
        ["device", "variant", "build", "workload", "N", "D", "other tuning", "threads", "time per step (s)", "speedup",
         "parallel efficiency"], rows, formats)


def rank_scaling_section(configs, stem, efficiency_stem, formats, exposed=()) -> list[str]:
    rows = [[s.kind, s.device, s.variant, s.build_label, workload_text(s.workload), s.d, tuning_text(s.tuning), g, n,
             num(time), num(eff)]
            for s in analysis.rank_scaling(configs) for g, n, time, eff in s.points]
    lines = figure_and_table_section(
        "Scaling over ranks",
        "One simulation over G ranks (`mpirun -np G`, one GPU or CPU set each; docs/scaling.md). Strong scaling keeps "
        "N; weak scaling keeps N²/G (scripts/scaling_run.sh). Parallel efficiency = interactions per second per rank "
        "(N² ÷ (G × time per step)) ÷ that of the series' smallest G (a single-rank run of the same problem "
        "stands for every `exchange`, which changes nothing on one rank).",
        stem, "No runs over several ranks in these results.",
        ["scaling", "device", "variant", "build", "workload", "D", "tuning", "ranks", "N", "time per step (s)",
         "parallel efficiency"], rows, formats)
    return lines + strong_scaling_section(configs, efficiency_stem, formats, exposed)


def strong_scaling_section(configs, stem, formats, exposed=()) -> list[str]:
    """Strong-scaling efficiency against bodies per rank with the fitted cost model; nothing without runs over
    several ranks that a single-rank run of the same problem can be the base of."""
    fits = analysis.strong_scaling_fits(configs, exposed)
    if not fits:
        return []
    lines = ["### Strong-scaling efficiency against bodies per GPU", "",
             "E(G) = T(1) ÷ (G × T(G)) of the median times; the range is over every pair of the two runs' "
             "repetitions. Model: the per-step cost model of docs/scaling.md (`plot/nbodyplot/cost_model.py`) fitted "
             "to these runs: T(1)/G + (1 − 1/G) t_fixed + the all-gather's λ + (G − 1) α + (G − 1)/G × S/B (overlapped: "
             "+ t_overlap, less what the owned block's pull hides), by least squares of the relative residuals; "
             "λ, α, B and t_overlap on the workload with the most points and every recorded exposed exchange up to "
             "N = 2¹⁶ (`step_exposed_communication_s`, or `--exposed-exchange`), t_fixed per workload. Residual = model ÷ "
             "measured time − 1.", ""]
    lines += figure(stem, "Strong-scaling efficiency against bodies per GPU", "", formats)
    for f in fits:
        t = f.fit.terms
        fixed = ", ".join(f"t_fixed {num(v * 1e6)} µs ({workload_text(w)})" for w, v in sorted(t.fixed_s.items()))
        lines.append(f"- {f.device}, {f.variant} ({f.build_label}): λ {num(t.launch_s * 1e6)} µs per all-gather, "
                     f"α {num(t.latency_s * 1e6)} µs per hop, B "
                     + ("unbounded (1/B fitted 0)" if t.inverse_bandwidth <= 0 else f"{num(t.bandwidth / 1e9)} GB/s")
                     + (f", t_overlap {num(t.overlap_s * 1e6)} µs" if t.overlap_s is not None else "")
                     + f", {fixed}; fitted on {workload_text(f.fit.reference)}, RMS residual {percent(f.fit.rms)}")
    lines.append("")
    rows = []
    for f in fits:
        for p in f.points:
            fitted = f.fit.point(p.config.workload, p.config.n, p.ranks, analysis.exchange_of(p.config))
            low, high = p.efficiency_range
            rows.append([f.device, f.variant, f.build_label, workload_text(p.config.workload),
                         analysis.exchange_of(p.config), p.ranks, p.config.n, p.bodies_per_rank, num(p.efficiency),
                         f"{num(low)}–{num(high)}", num(fitted.model_efficiency), percent(fitted.residual)])
    return lines + table(["device", "variant", "build", "workload", "exchange", "ranks", "N", "bodies per GPU",
                          "E(G)", "E over repetitions", "E model", "model residual"], rows)


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


def error_cell(c: Config, name: str) -> str:
    value, limit = c.values.get(name), c.thresholds.get(name)
    if value is None:
        return "—"
    if limit is None:
        return num(value)
    return f"{num(value)} {'≤' if value <= limit else '>'} {num(limit)}"


def verification_section(configs, anchors: dict) -> list[str]:
    rows = []
    counts = {v: sum(c.verdict == v for c in configs) for v in VERDICTS}
    # Failures first, so that a long table cannot hide them.
    for c in sorted(configs, key=lambda c: (c.verdict != "failed", sort_key(c))):
        if c.verdict == "not verified" and not any(n in c.values for n in ERROR_FIELDS):
            continue
        verdict = {"verified": "PASS", "failed": "FAIL", "inconclusive": "INCONCLUSIVE", "refused": "REFUSED",
                   "not verified": "—"}[c.verdict]
        check = "—" if c.verification is None else (
            c.verification + (f", {c.verify_steps} step{'s' if c.verify_steps != 1 else ''}"
                              if c.verify_steps is not None else ""))
        device = (f'<a id="{anchors[id(c)]}"></a>' if id(c) in anchors else "") + c.device
        rows.append([device, c.variant, c.build_label, workload_text(c.workload), c.tuning_text, c.n, c.d, check]
                    + [error_cell(c, n) for n in ERROR_FIELDS] + [verdict, c.error or "", dirty_cell(c)])
    return ["## Verification", "",
            f"{counts_text(counts)}.", "",
            "Errors against the float64 reference (SPEC §5), each against its threshold "
            "(`context.matrix.verification`) where the results record one; PASS/FAIL is the harness's "
            "`verified` (FAIL also for a configuration that raised an error; REFUSED for a tuning the variant "
            "refused before running because it is over the device's resources, e.g. registers per thread, with "
            "the reason in the error column). Check: `full` = the whole state "
            "against the reference after that many steps, `sampled` = accelerations of a sample of bodies after "
            "the first step (large N).", ""] + table(
        ["device", "variant", "build", "workload", "tuning", "N", "D", "check"]
        + [ERROR_TITLES[n] for n in ERROR_FIELDS] + ["verdict", "error", DIRTY_COLUMN], rows)


def measurements_section(configs) -> list[str]:
    rows = [[c.device, c.variant, c.reproducibility or "—", c.build_label, workload_text(c.workload), c.tuning_text,
             c.n, c.d, c.steps, c.repetitions, num(c.time), num(c.time_stddev_s),
             num(c.values.get("interactions_per_second")), num(c.efficiency), num(c.values.get("upload_s")),
             num(c.values.get("download_s")), dirty_cell(c)]
            for c in sorted(configs, key=sort_key) if not c.failed]
    failed = [[c.device, c.variant, c.build_label, workload_text(c.workload), c.tuning_text, c.n, c.d, c.steps,
               num(c.time), c.error or "no time recorded"]
              for c in sorted(configs, key=sort_key) if c.failed and c.verdict != "refused"]
    refused = [[c.device, c.variant, c.build_label, workload_text(c.workload), c.tuning_text, c.n, c.d, c.refusal]
               for c in sorted(configs, key=sort_key) if c.verdict == "refused"]
    lines = ["## All measurements", "",
             "Median of the repetitions (Google Benchmark's median aggregate where present). Upload of the "
             "initial state and download of state and map are timed apart from the steps (SPEC §3). "
             "Reproducibility: how two runs of the variant from the same state agree, as it declares it "
             "(bitwise, order-fixed or run-to-run; docs/results-format.md); — where the results do not record it.",
             ""]
    lines += table(["device", "variant", "reproducibility", "build", "workload", "tuning", "N", "D", "steps",
                    "repetitions",
                    "time per step (s)", "stddev (s)", "interactions/s", "efficiency", "upload (s)", "download (s)",
                    DIRTY_COLUMN],
                   rows)
    if failed:
        lines += ["### Failed configurations", "",
                  "Not in the figures: a configuration that raised an error or did not verify.", ""] + table(
            ["device", "variant", "build", "workload", "tuning", "N", "D", "steps", "time per step (s)", "error"],
            failed)
    if refused:
        lines += ["### Refused tunings", "",
                  "Not run: the variant refused the tuning because the device cannot hold it (registers, scratch "
                  "or memory); the reason is the variant's own message.", ""] + table(
            ["device", "variant", "build", "workload", "tuning", "N", "D", "reason"], refused)
    return lines


# ---------------------------------------------------------------------------------------------
# Appendices


def sources_section(sources: list[Source], configs) -> list[str]:
    """One line per results file (where and when it ran, on what, which build), then the builds."""
    labels = {c.build: c.build_label for c in configs}
    rows = []
    for s in sources:
        c = dict(scalars(s.context))
        clock = c.get("gpu.sm_clock_hz")
        rows.append([s.path, c.get("date", "—"), labels.get(s.build, s.build.short_commit),
                     c.get("matrix.name", "—"),
                     f"{c.get('host_cpu.model_name', '—')} ({c.get('num_cpus', '?')} CPUs, "
                     f"{c.get('host_cpu.physical_cores', '?')} cores counted for the limit)",
                     c.get("gpu.name", "—"), c.get("gpu.sm_count", "—"),
                     f"{num(clock / 1e9)} GHz" if isinstance(clock, (int, float)) else "—",
                     c.get("cuda_runtime_version", "—"), c.get("kokkos_version", "—")])
    builds = sorted({s.build for s in sources}, key=lambda b: labels.get(b, b.short_commit))
    build_rows = [[labels.get(b, b.short_commit) + (DIRTY_MARK if b.dirty else ""), b.commit, b.compiler, b.build_type,
                   f"`{b.flags}`", b.facts_text,
                   ", ".join(f"`{s.path}`" for s in sources if s.build == b)] for b in builds]
    return (["## Appendix A: results files and builds", ""] + table(
        ["file", "date", "build", "matrix", "host CPU", "GPU", "SMs", "SM clock", "CUDA runtime", "Kokkos"], rows)
        + ["A build is a results file's `git_commit`, `compiler`, `build_type`, `build_flags` and `build_facts` "
           "(docs/plots.md): results of different builds are never joined in one line. Its label names the "
           "fewest of commit, ISA (`-march` of the C++ flags), compiler, build type, flags and facts that tell "
           "the builds apart.", ""]
        + table(["build", "git commit", "compiler", "build type", "build flags", "build facts", "files"], build_rows))


def devices_section(configs) -> list[str]:
    rows = []
    notes = {n.device: n for n in analysis.limit_disagreements(configs)}
    for dev, kind in analysis.devices(configs):
        on = [c for c in configs if c.device == dev]
        limits = {c.source: c.device_limit for c in on if c.device_limit}
        spread = max(limits.values()) / min(limits.values()) - 1 if limits else None
        recorded = "—" if not limits else num(analysis.device_limits(on)[dev]) + (
            f" (files within {percent(spread)})" if len(limits) > 1 else "")
        rows.append([dev, kind, recorded, len(on), sum(c.verdict == "failed" for c in on)])
    lines = ["## Appendix B: devices", "",
             "The device of a GPU variant is the GPU named in its file's context; of a CPU variant, the host "
             "CPU (with the number of CPUs Google Benchmark counted, `num_cpus`). The FP32 limit (SPEC §3) is the "
             "one recorded in the context: `gpu.fp32_interaction_limit` or `host_cpu.fp32_interaction_limit` (all "
             "cores; a CPU entry's `efficiency` is against the cores it used); the median over the files, which "
             f"are said to disagree only when they differ by more than {percent(analysis.LIMIT_TOLERANCE)}.", ""]
    lines += table(["device", "kind", "FP32 limit (interactions/s)", "configurations", "failed"], rows)
    for dev, note in notes.items():
        lines += [f"Note: {dev}: " + "; ".join(f"{num(limit)} in `{path}`" for path, limit in note.by_file.items())
                  + f" (spread {percent(note.spread)}).", ""]
    return lines


def context_section(sources: list[Source]) -> list[str]:
    lines = ["## Appendix C: context of each results file", "",
             "Every scalar of each file's `context` (docs/results-format.md).", ""]
    for s in sources:
        lines += [f"**{s.path}**", ""] + table(["context key", "value"], list(scalars(s.context)))
    return lines


def peer_section(peer_runs: list, comparisons: list, stems: list, formats) -> list[str]:
    """Our fastest CUDA and Kokkos-on-CUDA variants beside the CUDA samples' nbody, per device and workload."""
    from . import peer
    if not peer_runs:
        return []
    lines = [f"## Against the {peer.PEER_NAME}", "",
             f"The {peer.PEER_NAME} (`-benchmark -numbodies=N`, `-fp64` for float64; docs/peers.md) run in the same "
             "device call. Its rate is counted as ours: N² interactions per step (the j = i term included), time per "
             "step = its total time ÷ its timed iterations; the median over its runs. Its step is one force "
             "evaluation with kick-then-drift Euler in 3D, set beside our 3D Euler workload of the same precision "
             "(softening and integrator differ, the count of work per step does not). Our side: the fastest "
             "configuration of each model at that N on the same device (any tuning, D and build).", ""]
    for comparison, stem in zip(comparisons, stems):
        lines += [f"### {comparison.device}, {workload_text(comparison.workload)}", ""]
        header = ["N", "samples: interactions/s", "runs"]
        for model in peer.COMPARED_MODELS:
            header += [f"best {model}", f"{model} interactions/s", f"{model} ÷ samples"]
        rows = []
        for row in comparison.rows:
            cells = [row.n, num(row.peer.interactions_per_second), len(row.peer.runs)]
            for model in peer.COMPARED_MODELS:
                c = row.best.get(model)
                cells += [c.variant if c else "not measured",
                          num(c.values.get("interactions_per_second")) if c else "—", num(row.ratio(model))]
            rows.append(cells)
        lines += table(header, rows)
        lines += figure(stem, f"Against the {peer.PEER_NAME}, {workload_text(comparison.workload)}", "", formats)
    failed = peer.failed_runs(peer_runs)
    if failed:
        lines += [f"Runs of the {peer.PEER_NAME} that printed no time: "
                  + ", ".join(f"`{r.source}` line {r.line} ({r.precision}, N = {r.n}, repetition {r.repetition})"
                              for r in failed) + ".", ""]
    return lines


# ---------------------------------------------------------------------------------------------
# Host compilers


def compiler_label(build) -> str:
    """A host build as the compiler table's columns name it: compiler and ISA (-march)."""
    return f"{build.compiler}, {build.isa}"


def compiler_section(configs) -> list[str]:
    """Per CPU device, workload and N: each CPU variant (its fastest tuning; a tuning run by several files,
    its median run) under every compiler x ISA that ran it, with its efficiency, then the best Kokkos
    variant ÷ the best hand-written one per compiler. Only when the host results come from two or more
    compilers."""
    host = [c for c in configs if c.device_kind == "CPU" and not c.failed and c.space != "cuda"]
    if len({c.build.compiler for c in host}) < 2:
        return []
    lines = ["## Host compilers", "",
             "Each CPU variant at its fastest tuning under each compiler and ISA (the build's `-march`), in "
             "interactions/s, and its efficiency (fraction of the host's FP32 limit, SPEC §3); a configuration "
             "that several results files of one compiler and ISA ran shows its median run. The last row of "
             "each table: the fastest Kokkos variant ÷ the fastest hand-written one (serial, OpenMP) of the same "
             "build. The builds' full flags are in Appendix A.", ""]
    groups = {}
    for c in host:
        groups.setdefault((c.device, c.workload, c.n, c.d), []).append(c)
    for (device, workload, n, d), group in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2], kv[0][3])):
        columns = sorted({compiler_label(c.build) for c in group})
        # One configuration run by several files of the same compiler x ISA (repeated calls on a shared
        # host, whose runs differ by up to 2x): its median run, not its fastest.
        runs = {}
        for c in group:
            if c.values.get("interactions_per_second") is not None:
                runs.setdefault((c.variant, compiler_label(c.build), c.tuning_text), []).append(c)
        best = {}
        for (variant, label, _), same in runs.items():
            same.sort(key=lambda c: c.values["interactions_per_second"])
            c = same[(len(same) - 1) // 2]
            key = (variant, label)
            if key not in best or c.values["interactions_per_second"] > best[key].values["interactions_per_second"]:
                best[key] = c
        variants = sorted({v for v, _ in best}, key=lambda v: (v.startswith("kokkos."), v))
        header = ["variant"] + [f"{col}: {what}" for col in columns for what in ("interactions/s", "efficiency")]
        rows = []
        for v in variants:
            row = [v]
            for col in columns:
                c = best.get((v, col))
                row += [num(c.values["interactions_per_second"]) if c else "—",
                        num(c.efficiency) if c and c.efficiency is not None else "—"]
            rows.append(row)
        ratio_row = ["Kokkos ÷ hand-written"]
        for col in columns:
            in_col = [c for (v, label), c in best.items() if label == col]
            kokkos = [c for c in in_col if c.variant.startswith("kokkos.")]
            hand = [c for c in in_col if not c.variant.startswith("kokkos.")]
            if kokkos and hand:
                k = max(kokkos, key=lambda c: c.values["interactions_per_second"])
                h = max(hand, key=lambda c: c.values["interactions_per_second"])
                ratio_row += [num(k.values["interactions_per_second"] / h.values["interactions_per_second"]),
                              f"{k.variant} ÷ {h.variant}"]
            else:
                ratio_row += ["—", "—"]
        lines += [f"### {device}, {workload_text(workload)}, N = {n}, D = {d}", ""]
        lines += table(header, rows + [ratio_row])
    return lines


def main_workload(configs) -> tuple | None:
    """The workload report.md shows in detail: 2d/fp32/euler where measured, else the first measured."""
    measured = analysis.workloads(configs)
    return measured[0] if measured else None


def section_text(document: str, title: str) -> str:
    """One `## title` section of a rendered document, up to the next `## ` heading ('' if absent)."""
    lines = document.splitlines()
    start = next((i for i, line in enumerate(lines) if line == f"## {title}"), None)
    if start is None:
        return ""
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return "\n".join(lines[start:end]).strip() + "\n"


def render(sources, configs, stems: dict, ladder_tables, ladder_stems, pps: list, pp_stems: list,
           peer_runs: list = (), peer_comparisons: list = (), peer_stems: list = (), *,
           formats: tuple[str, ...], exposed: list = ()) -> tuple[str, str]:
    """report.md and appendix.md. A stem NOT_DRAWN leaves its figure out of the section that would show it."""
    # Runs over several ranks are their own "device" (`device × G ranks`): the per-device comparisons take
    # the single-process runs, the scaling section and the per-configuration tables take every run.
    all_configs = list(configs)
    configs = [c for c in all_configs if c.ranks == 1]
    anchors = failure_anchors(all_configs)
    devices = [dev for dev, _ in analysis.devices(all_configs)]
    main = main_workload(configs)
    main_pps = [(pp, stem) for pp, stem in zip(pps, pp_stems) if pp.workload == main]
    other_pps = [(pp, stem) for pp, stem in zip(pps, pp_stems) if pp.workload != main]

    lines = ["# N-body benchmark report", "",
             f"Written by `plot/nbody_plot.py` from {len(sources)} results file{'s' if len(sources) != 1 else ''} "
             f"on {' and '.join(devices)}. Times are per step (SPEC §3); numbers to three significant figures. "
             "Here: the answer (Kokkos against hand-written code on each device and workload), the summary of "
             + (f"the {workload_text(main)} workload" if main else "each workload") + " and the figures that "
             f"carry it. [{APPENDIX_FILE}]({APPENDIX_FILE}) holds the tables behind them: the other workloads' "
             "summaries, every configuration with its errors and times, the ladders, the results files, builds "
             "and contexts.", ""]
    lines += dirty_section(sources, all_configs)
    summary = analysis.summary(configs)
    lines += glance_section(summary, pps)
    lines += energy_glance_section(summary)
    lines += summary_section(configs, [t for t in summary if t.workload == main], [pp for pp, _ in main_pps],
                             anchors)
    lines += peer_section(list(peer_runs), list(peer_comparisons), list(peer_stems), formats)
    lines += ["## Portability ratio against N", "",
              "The fastest Kokkos variant's interactions/s ÷ the fastest hand-written variant's at each N both ran "
              "(1 = as fast), a line per device, build, workload and D; every point is in the "
              f"[appendix]({APPENDIX_FILE}#portability-ratio-against-n).", ""] + figure(
        stems["portability_ratio_vs_n"], "Portability ratio against N",
        "No line of two or more N where a Kokkos variant and its hand-written counterpart both ran in one build.",
        formats)
    lines += ["## Efficiency against N", "",
              "Efficiency = achieved interactions/s ÷ the device's limit (SPEC §3); the dashed line is the limit "
              "(efficiency 1). A panel per device and model; a line per variant and build.", ""] + figure(
        stems["efficiency_vs_n"], "Efficiency against N", "No N sweep with efficiencies in these results.", formats)
    lines += ["## Interactions per joule against N", "",
              "N² ÷ the energy per step over the timed phase (docs/results-format.md, \"Energy\"): how many "
              "interactions each joule bought. A panel per device and model; a line per variant and build.", ""] + figure(
        stems.get("interactions_per_joule_vs_n"), "Interactions per joule against N",
        "No N sweep with energy in these results.", formats)
    lines += ["## Time per step against N", ""] + figure(
        stems["time_vs_n"], "Time per step against N", "No N sweep (two or more N at one D) in these results.",
        formats)
    if any(c.ranks > 1 for c in all_configs):
        lines += rank_scaling_section(all_configs, stems.get("rank_scaling"), stems.get("scaling_efficiency"),
                                      formats, exposed)
    lines += portability_section([pp for pp, _ in main_pps], [stem for _, stem in main_pps], formats)
    if other_pps:
        lines += [f"The other workloads' tables: [{APPENDIX_FILE}]({APPENDIX_FILE}#performance-portability).", ""]

    appendix = ["# N-body benchmark report: appendix", "",
                f"The tables behind [{REPORT_FILE}]({REPORT_FILE}). Figures of the ladders, the thread scaling, the "
                "time against D and the other workloads' performance portability are drawn with `--all-figures`.",
                ""]
    others = [t for t in summary if t.workload != main]
    if others:
        appendix += summary_section(configs, others, [pp for pp, _ in other_pps], anchors,
                                    title="Summary of the other workloads")
    if other_pps:
        appendix += portability_section([pp for pp, _ in other_pps], [stem for _, stem in other_pps], formats)
    appendix += ratio_section(configs, NOT_DRAWN, formats)
    if stems["time_vs_d"] != NOT_DRAWN:
        appendix += ["## Time per step against D", ""] + figure(
            stems["time_vs_d"], "Time per step against D", "No D sweep (two or more D at one N) in these results.",
            formats)
    appendix += ladder_section(ladder_tables, ladder_stems, formats)
    appendix += tiling_ladder.section(configs, table)
    if stems["thread_scaling"] != NOT_DRAWN or analysis.thread_scaling(configs):
        appendix += scaling_section(configs, stems["thread_scaling"], formats)
    appendix += compiler_section(configs)
    appendix += verification_section(all_configs, anchors)
    appendix += measurements_section(all_configs)
    appendix += sources_section(sources, all_configs)
    appendix += devices_section(all_configs)
    appendix += context_section(sources)
    return "\n".join(lines), "\n".join(appendix)
