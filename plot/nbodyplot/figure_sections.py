"""The sections around a figure: the portability ratio, the optimisation ladders, the scaling over threads and
ranks with the fitted cost model, and the comparison with the CUDA samples' nbody."""
from __future__ import annotations

from . import analysis, ladders, scaling
from .report_text import figure, percent, table
from .results import num, workload_text


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


def ladder_section(tables: list[ladders.LadderTable], stems: list[str], formats) -> list[str]:
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
            for s in scaling.thread_scaling(configs) for t, time, speedup, eff in s.points]
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
            for s in scaling.rank_scaling(configs) for g, n, time, eff in s.points]
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
    fits = scaling.strong_scaling_fits(configs, exposed)
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
            fitted = f.fit.point(p.config.workload, p.config.n, p.ranks, scaling.exchange_of(p.config))
            low, high = p.efficiency_range
            rows.append([f.device, f.variant, f.build_label, workload_text(p.config.workload),
                         scaling.exchange_of(p.config), p.ranks, p.config.n, p.bodies_per_rank, num(p.efficiency),
                         f"{num(low)}–{num(high)}", num(fitted.model_efficiency), percent(fitted.residual)])
    return lines + table(["device", "variant", "build", "workload", "exchange", "ranks", "N", "bodies per GPU",
                          "E(G)", "E over repetitions", "E model", "model residual"], rows)


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
