"""report.md: the figures embedded, with the tables whose numbers they show."""
from __future__ import annotations

from . import analysis
from .results import ERROR_FIELDS, Config, Source

ERROR_TITLES = {"max_pos_err": "max pos err", "rms_pos_err": "RMS pos err",
                "max_vel_err": "max vel err", "map_diff": "map diff"}


def num(value) -> str:
    """Four significant digits; the tests read these back and compare them with the JSON."""
    return "—" if value is None else f"{value:.4g}"


def cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def table(header: list[str], rows: list[list]) -> list[str]:
    lines = ["| " + " | ".join(cell(h) for h in header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return lines + [""]


def figure(stem: str | None, caption: str, missing: str) -> list[str]:
    if stem is None:
        return [f"_{missing}_", ""]
    return [f"![{caption}]({stem}.png)", "", f"[SVG]({stem}.svg)", ""]


def sort_key(c: Config):
    return (c.device_kind != "GPU", c.device, c.variant, c.tuning_text, c.n, c.d, c.steps)


def scalars(mapping: dict, prefix: str = ""):
    """(dotted key, value) of every scalar in a context, nested objects flattened (lists left out)."""
    for key, value in mapping.items():
        if isinstance(value, dict):
            yield from scalars(value, f"{prefix}{key}.")
        elif value is None or isinstance(value, (str, int, float, bool)):
            yield f"{prefix}{key}", "—" if value is None else value


def sources_section(sources: list[Source]) -> list[str]:
    """One line per results file: where and when it ran, on what, built how."""
    rows = []
    for s in sources:
        c = dict(scalars(s.context))
        clock = c.get("gpu.sm_clock_hz")
        commit = str(c.get("git_commit", "—"))
        commit = commit[:12] + ("-dirty" if commit.endswith("-dirty") else "")
        rows.append([s.path, c.get("date", "—"), commit, c.get("matrix.name", "—"),
                     f"{c.get('host_cpu.model_name', '—')} ({c.get('num_cpus', '?')} CPUs, "
                     f"{c.get('host_cpu.physical_cores', '?')} cores counted for the limit)",
                     c.get("gpu.name", "—"), c.get("gpu.sm_count", "—"),
                     f"{clock / 1e9:.3g} GHz" if isinstance(clock, (int, float)) else "—",
                     c.get("cuda_runtime_version", "—"), c.get("kokkos_version", "—"), c.get("compiler", "—")])
    return ["## Results files", ""] + table(
        ["file", "date", "commit", "matrix", "host CPU", "GPU", "SMs", "SM clock", "CUDA runtime", "Kokkos",
         "compiler"], rows) + ["Every context value is listed at the end of this report.", ""]


def context_section(sources: list[Source]) -> list[str]:
    lines = ["## Context of each results file", "", "Every scalar of each file's `context` (docs/results-format.md).", ""]
    for s in sources:
        lines += [f"**{s.path}**", ""] + table(["context key", "value"], list(scalars(s.context)))
    return lines


def devices_section(configs) -> list[str]:
    rows, disagreeing = [], []
    for dev, kind in analysis.devices(configs):
        on = [c for c in configs if c.device == dev]
        recorded = {}
        for c in on:
            if c.device_limit:
                recorded.setdefault(num(c.device_limit), set()).add(c.source)
        if len(recorded) > 1:
            disagreeing += [f"- {dev}: " + "; ".join(f"{limit} in {', '.join(f'`{f}`' for f in sorted(files))}"
                                                     for limit, files in sorted(recorded.items()))]
        rows.append([dev, kind, " / ".join(sorted(recorded)) or "—", len(on), sum(c.failed for c in on)])
    return ["## Devices", "",
            "The device of a GPU variant is the GPU named in its file's context; of a CPU variant, the host "
            "CPU (with the number of CPUs Google Benchmark counted, `num_cpus`). The FP32 limit (SPEC §3) is the one recorded in the context: "
            "`gpu.fp32_interaction_limit` or `host_cpu.fp32_interaction_limit` (all cores; a CPU entry's "
            "`efficiency` is against the cores it used).", ""] + table(
        ["device", "kind", "FP32 limit (interactions/s)", "configurations", "failed"], rows) + (
        ["**The results files disagree on a device's FP32 limit** (so the efficiencies from these files "
         "are not comparable; check each file's `host_cpu` / `gpu` context below):", ""] + disagreeing + [""]
        if disagreeing else [])


def ladder_section(tables: list[analysis.LadderTable], stems: list[str]) -> list[str]:
    lines = ["## Optimisation ladders", "",
             "Each step is a variant (at its fastest tuning unless the ladder fixes one, see "
             "`plot/ladders.json`); steps absent from the results are skipped. Speedup = geometric mean, "
             "over the problems of the sweep that every step ran (listed above each table), of the ratio "
             "of times per step; so the step speedups multiply to the cumulative one, which is against the "
             "first step present.", ""]
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
        lines += [f"### {t.ladder.title} on {t.device}", ""] + [f"- {c}" for c in compared] + [""]
        lines += table(header, rows)
        lines += figure(stem, f"{t.ladder.title} on {t.device}", "")
    return lines


def scaling_section(configs, stem) -> list[str]:
    series = analysis.thread_scaling(configs)
    lines = ["## Thread scaling", "",
             "Configurations that differ only in the `threads` tuning. Speedup is against the smallest "
             "thread count measured; parallel efficiency = speedup ÷ (threads ÷ smallest thread count).", ""]
    lines += figure(stem, "Thread scaling", "No thread sweep in these results.")
    rows = [[s.device, s.variant, s.n, s.d, " ".join(f"{k}={v}" for k, v in s.other_tuning) or "-",
             t, num(time), num(speedup), num(eff)]
            for s in series for t, time, speedup, eff in s.points]
    return lines + (table(["device", "variant", "N", "D", "other tuning", "threads", "time per step (s)",
                           "speedup", "parallel efficiency"], rows) if rows else [])


def portability_section(pp: analysis.Portability | None, stem) -> list[str]:
    lines = ["## Performance portability", "",
             "Pennycook's metric for a family a on the platforms H: PP(a, H) = |H| ÷ Σ_{i∈H} 1/e_i(a), "
             "0 when a did not run on some platform of H. A family is a variant id without its execution "
             "space (`kokkos.naive@cuda` and `kokkos.naive@openmp` are `kokkos.naive`); the *best ...* rows "
             "take the fastest member of a model on each platform. Application efficiency e_i = time of the "
             "fastest variant on platform i ÷ the family's time; architectural efficiency = the harness's "
             "`efficiency` (fraction of the device FP32 limit). Each family at its fastest tuning.", ""]
    if pp is None or not pp.rows:
        return lines + ["_No measurements to compare._", ""]
    n, d = pp.problem
    lines += [f"Problem: N = {n}, D = {d}; platforms H: {', '.join(pp.platforms)}.", ""]
    header = ["family"] + [f"app eff on {p}" for p in pp.platforms] + ["PP (app)", "harmonic mean where it ran"]
    header += [f"arch eff on {p}" for p in pp.platforms] + ["PP (arch)"]
    rows = []
    for r in pp.rows:
        rows.append([r.family] + [num(r.app_eff.get(p)) for p in pp.platforms] + [num(r.pp_app), num(r.hmean_app_ran)]
                    + [num(r.arch_eff.get(p)) for p in pp.platforms] + [num(r.pp_arch)])
    return lines + table(header, rows) + figure(stem, "Performance portability", "")


def error_cell(c: Config, name: str) -> str:
    value, limit = c.values.get(name), c.thresholds.get(name)
    if value is None:
        return "—"
    if limit is None:
        return num(value)
    return f"{num(value)} {'≤' if value <= limit else '>'} {num(limit)}"


def verification_section(configs) -> list[str]:
    rows = []
    # Failures first, so that a long table cannot hide them.
    for c in sorted(configs, key=lambda c: (c.verified is not False and c.error is None, sort_key(c))):
        if c.verified is None and c.error is None and not any(n in c.values for n in ERROR_FIELDS):
            continue
        verdict = "PASS" if c.verified else ("FAIL" if c.verified is False or c.error else "—")
        check = "—" if c.verification is None else (
            c.verification + (f", {c.verify_steps} step{'s' if c.verify_steps != 1 else ''}"
                              if c.verify_steps is not None else ""))
        rows.append([c.device, c.variant, c.tuning_text, c.n, c.d, check]
                    + [error_cell(c, n) for n in ERROR_FIELDS] + [verdict, c.error or ""])
    failed = sum(r[-2] == "FAIL" for r in rows)
    passed = sum(r[-2] == "PASS" for r in rows)
    return ["## Verification", "",
            f"**{passed} of {len(rows)} configurations PASS, {failed} FAIL.**", "",
            "Errors against the float64 reference (SPEC §5), each against its threshold "
            "(`context.matrix.verification`) where the results record one; PASS/FAIL is the harness's "
            "`verified`. Check: `full` = the whole state against the reference after that many steps, "
            "`sampled` = accelerations of a sample of bodies after the first step (large N).", ""] + table(
        ["device", "variant", "tuning", "N", "D", "check"] + [ERROR_TITLES[n] for n in ERROR_FIELDS]
        + ["verdict", "error"], rows)


def measurements_section(configs) -> list[str]:
    rows = [[c.device, c.variant, c.tuning_text, c.n, c.d, c.steps, c.repetitions, num(c.time),
             num(c.time_stddev_s), num(c.values.get("interactions_per_second")), num(c.efficiency),
             num(c.values.get("upload_s")), num(c.values.get("download_s"))]
            for c in sorted(configs, key=sort_key) if not c.failed]
    failed = [[c.device, c.variant, c.tuning_text, c.n, c.d, c.steps, num(c.time), c.error or "no time recorded"]
              for c in sorted(configs, key=sort_key) if c.failed]
    lines = ["## All measurements", "",
             "Median of the repetitions (Google Benchmark's median aggregate where present). Upload of the "
             "initial state and download of state and map are timed apart from the steps (SPEC §3).", ""]
    lines += table(["device", "variant", "tuning", "N", "D", "steps", "repetitions", "time per step (s)",
                    "stddev (s)", "interactions/s", "efficiency", "upload (s)", "download (s)"], rows)
    if failed:
        lines += ["### Failed configurations", "",
                  "Not in the figures: a configuration that raised an error or did not verify.", ""] + table(
            ["device", "variant", "tuning", "N", "D", "steps", "time per step (s)", "error"], failed)
    return lines


def render(sources, configs, stems: dict, ladder_tables, ladder_stems, pp) -> str:
    lines = ["# N-body benchmark report", "",
             "Written by `plot/nbody_plot.py` from " + ", ".join(f"`{s.path}`" for s in sources) + ". "
             "Times are per step (SPEC §3); lines and bars use each variant's fastest tuning.", ""]
    lines += sources_section(sources)
    lines += devices_section(configs)
    lines += ["## Time per step against N", ""] + figure(
        stems["time_vs_n"], "Time per step against N", "No N sweep (two or more N at one D) in these results.")
    lines += ["## Time per step against D", ""] + figure(
        stems["time_vs_d"], "Time per step against D", "No D sweep (two or more D at one N) in these results.")
    lines += ladder_section(ladder_tables, ladder_stems)
    lines += ["## Efficiency against N", "",
              "Efficiency = achieved interactions/s ÷ the device's FP32 limit (SPEC §3); the dashed line is "
              "the limit (efficiency 1).", ""] + figure(
        stems["efficiency_vs_n"], "Efficiency against N", "No N sweep with efficiencies in these results.")
    lines += scaling_section(configs, stems["thread_scaling"])
    lines += portability_section(pp, stems["portability"])
    lines += verification_section(configs)
    lines += measurements_section(configs)
    lines += context_section(sources)
    return "\n".join(lines)
