"""The scaling figures: speedup over OpenMP threads, time and efficiency over ranks, and the strong-scaling
efficiency against bodies per rank with the fitted cost model; each written in the formats the caller names and
returning the file stem or None (no data)."""
from __future__ import annotations

from pathlib import Path

# figure_style first: it selects the Agg backend before pyplot loads.
from .figure_style import MARKERS, REFERENCE, device_panels, legend_outside, line_style, save, spans_decades

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullLocator  # noqa: E402

from . import scaling  # noqa: E402
from .results import num, workload_text  # noqa: E402


def thread_scaling(configs, out_dir: Path, formats: tuple[str, ...]) -> str | None:
    fig = draw_thread_scaling(configs)
    return save(fig, out_dir, "thread_scaling", formats) if fig else None


def draw_thread_scaling(configs):
    """Speedup and parallel efficiency against the `threads` tuning, a row of panels per device."""
    series = scaling.thread_scaling(configs)
    if not series:
        return None
    # Readable: per variant (and other tuning) its smallest D and at most its 3 largest N; the report's
    # table has every series.
    shown: dict[tuple, list] = {}
    for s in series:
        shown.setdefault((s.device, identity(s)), []).append(s)
    by_device: dict[str, list] = {}
    for (device, _), group in shown.items():
        d_min = min(s.d for s in group)
        by_device.setdefault(device, []).extend(
            sorted((s for s in group if s.d == d_min), key=lambda s: -s.n)[:3])
    colours = plt.get_cmap("tab10").colors
    heights = [max(4.2, 0.19 * len(v) + 1.5) for v in by_device.values()]
    fig, axes = plt.subplots(len(by_device), 2, squeeze=False, figsize=(12, sum(heights)),
                             gridspec_kw={"height_ratios": heights})
    for (ax_speedup, ax_eff), (device, device_series) in zip(axes, by_device.items()):
        all_threads = sorted({p[0] for s in device_series for p in s.points})
        identities = sorted({identity(s) for s in device_series}, key=str)
        for s in device_series:
            # colour (and marker beyond 10): the variant of one build and workload; line style: its N, largest first
            index = identities.index(identity(s))
            colour = colours[index % 10]
            sizes = sorted({x.n for x in device_series if identity(x) == identity(s)}, reverse=True)
            rank = sizes.index(s.n)
            # the other tunings, build and workload only where they tell this variant's series apart
            several = len({x.other_tuning for x in device_series if x.variant == s.variant}) > 1
            label = s.label if several else f"{s.variant} N={s.n} D={s.d}"
            builds = {x.build_label for x in device_series if x.variant == s.variant}
            workloads = {x.workload for x in device_series if x.variant == s.variant}
            label += (f" ({s.build_label})" if len(builds) > 1 else "") + \
                (f" ({workload_text(s.workload)})" if len(workloads) > 1 else "")
            if s.points[0][0] != min(all_threads):
                label += f" (vs {s.points[0][0]} threads)"
            style = {"marker": MARKERS[(rank + index // 10) % len(MARKERS)], "linestyle": line_style(rank),
                     "color": colour, "label": label}
            threads = [p[0] for p in s.points]
            ax_speedup.plot(threads, [p[2] for p in s.points], **style)
            ax_eff.plot(threads, [p[3] for p in s.points], **style)
        base = min(all_threads)
        ax_speedup.plot(all_threads, [t / base for t in all_threads], color="black", linewidth=0.8, label="ideal",
                        gid=REFERENCE)
        ax_eff.axhline(1.0, color="black", linewidth=0.8, label="ideal", gid=REFERENCE)
        for ax in (ax_speedup, ax_eff):
            ax.set_xlabel("threads")
            if spans_decades(all_threads, 0.9):
                ax.set_xscale("log", base=2)
                ax.xaxis.set_minor_locator(NullLocator())
            ax.set_xticks(all_threads, [str(t) for t in all_threads])
        ax_speedup.set_ylabel("speedup over the fewest threads measured (×)")
        ax_eff.set_ylabel("parallel efficiency")
        ax_eff.set_ylim(0, max(1.1, max(p[3] for s in device_series for p in s.points) * 1.05))
        ax_speedup.set_title(f"{device}: speedup", fontsize=10)
        ax_eff.set_title(f"{device}: speedup ÷ thread ratio", fontsize=10)
        legend_outside(ax_eff)
    fig.suptitle("Thread scaling (tuning `threads`; per variant its 3 largest N at its smallest D)")
    fig.tight_layout()
    return fig


def identity(s: scaling.ScalingSeries) -> tuple:
    """What a thread-scaling colour stands for: a variant with its other tunings, of one build and workload."""
    return (s.variant, s.other_tuning, s.build_label, s.workload)


def rank_scaling(configs, out_dir: Path, formats: tuple[str, ...]) -> str | None:
    fig = draw_rank_scaling(configs)
    return save(fig, out_dir, "rank_scaling", formats) if fig else None


def draw_rank_scaling(configs):
    """Time per step and parallel efficiency against the ranks G (one GPU or CPU set each): a row of
    panels for strong scaling (a line per variant and N, the ideal T_b G_b / G dotted for each) and one
    for weak scaling (N^2/G constant: the ideal is a flat time)."""
    series = scaling.rank_scaling(configs)
    if not series:
        return None
    kinds = [k for k in ("strong", "weak") if any(s.kind == k for s in series)]
    fig, axes = plt.subplots(len(kinds), 2, squeeze=False, figsize=(12, 4.6 * len(kinds)))
    colours = plt.get_cmap("tab10").colors
    for (ax_time, ax_eff), kind in zip(axes, kinds):
        kind_series = [s for s in series if s.kind == kind]
        identities = sorted({(s.device, s.variant, s.build_label, s.workload, s.tuning) for s in kind_series}, key=str)
        several = {name: len({i for i in identities if i[1] == name}) > 1 for name in {i[1] for i in identities}}
        all_ranks = sorted({p[0] for s in kind_series for p in s.points})
        for s in kind_series:
            index = identities.index((s.device, s.variant, s.build_label, s.workload, s.tuning))
            sizes = sorted({x.n for x in kind_series if (x.device, x.variant, x.build_label, x.workload, x.tuning)
                            == (s.device, s.variant, s.build_label, s.workload, s.tuning)}, reverse=True)
            rank = sizes.index(s.n)
            label = s.label
            if several[s.variant]:  # what tells this variant's series apart
                label += f" ({s.device}, {s.build_label}, {workload_text(s.workload)}" + \
                    (", " + " ".join(f"{k}={v}" for k, v in s.tuning) if s.tuning else "") + ")"
            style = {"marker": MARKERS[(rank + index // 10) % len(MARKERS)], "linestyle": line_style(rank),
                     "color": colours[index % 10], "label": label}
            g = [p[0] for p in s.points]
            ax_time.plot(g, [p[2] for p in s.points], **style)
            ax_eff.plot(g, [p[3] for p in s.points], **style)
            g0, _, t0, _ = s.points[0]
            ideal = [t0 * g0 / x for x in g] if kind == "strong" else [t0 for _ in g]
            ax_time.plot(g, ideal, color=colours[index % 10], linewidth=0.7, linestyle=(0, (1, 3)), gid=REFERENCE)
        ax_eff.axhline(1.0, color="black", linewidth=0.8, label="ideal", gid=REFERENCE)
        for ax in (ax_time, ax_eff):
            ax.set_xscale("log", base=2)
            ax.set_xticks(all_ranks)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.xaxis.set_minor_locator(NullLocator())
            ax.set_xlabel("ranks G (one GPU each; host-staged runs may share one)")
            ax.grid(True, which="both", alpha=0.3)
        ax_time.set_yscale("log")
        ax_time.set_ylabel("time per step (s)")
        ax_time.set_title(f"{kind} scaling: time per step (dotted: ideal)")
        ax_eff.set_ylabel("parallel efficiency")
        ax_eff.set_ylim(bottom=0)
        ax_eff.set_title(f"{kind} scaling: parallel efficiency" + (" (N fixed)" if kind == "strong" else " (N²/G fixed)"))
        ax_eff.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    return fig


def scaling_efficiency(configs, out_dir: Path, formats: tuple[str, ...], exposed=()) -> str | None:
    fig = draw_scaling_efficiency(configs, exposed)
    return save(fig, out_dir, "scaling_efficiency", formats) if fig else None


def draw_scaling_efficiency(configs, exposed=()):
    """Strong-scaling efficiency E(G) = T(1) / (G T(G)) against bodies per rank, a panel per device, variant,
    build and workload: a line per G and exchange, bars over the repetitions, and dashed beside it the
    efficiency of the cost model fitted to the same runs (cost_model.py; `exposed`: exchange durations measured
    outside the files). None without runs over ranks."""
    fits = scaling.strong_scaling_fits(configs, exposed)
    panels = [(f, w) for f in fits for w in sorted({p.config.workload for p in f.points})]
    if not panels:
        return None
    fig, axes = device_panels(len(panels), width=9.5, height=4.0)
    colours = plt.get_cmap("tab10").colors
    for ax, (group, workload) in zip(axes, panels):
        points = [p for p in group.points if p.config.workload == workload]
        lines = sorted({(p.ranks, scaling.exchange_of(p.config)) for p in points})
        for index, (ranks, exchange) in enumerate(lines):
            line = sorted((p for p in points if (p.ranks, scaling.exchange_of(p.config)) == (ranks, exchange)),
                          key=lambda p: p.bodies_per_rank)
            x = [p.bodies_per_rank for p in line]
            y = [p.efficiency for p in line]
            low, high = zip(*(p.efficiency_range for p in line))
            colour = colours[index % len(colours)]
            ax.plot(x, y, color=colour, marker=MARKERS[index % len(MARKERS)], linestyle="-",
                    label=f"G = {ranks}, {exchange}")
            ax.errorbar(x, y, yerr=[[e - lo for e, lo in zip(y, low)], [hi - e for e, hi in zip(y, high)]],
                        fmt="none", ecolor=colour, capsize=3)
            ax.plot(x, [group.model_efficiency(p) for p in line], color=colour, linestyle="--", linewidth=1.2,
                    label=f"G = {ranks}, {exchange}: model")
        ax.axhline(1.0, color="black", linewidth=0.8, label="ideal", gid=REFERENCE)
        handles, labels = ax.get_legend_handles_labels()
        order = sorted(range(len(labels)), key=lambda i: (labels[i] == "ideal", labels[i]))
        ax.legend([handles[i] for i in order], [labels[i] for i in order], loc="upper left",
                  bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)
        xs = sorted({p.bodies_per_rank for p in points})
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs, [str(v) for v in xs], fontsize=8)
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlabel("bodies per GPU, ⌈N/G⌉")
        ax.set_ylabel("E(G) = T(1) ÷ (G·T(G))")
        top = max(max(p.efficiency_range[1] for p in points), max(group.model_efficiency(p) for p in points))
        ax.set_ylim(0, max(1.1, top * 1.05))
        terms = group.fit.terms
        fixed = terms.fixed_s.get(workload)
        ax.set_title(f"{group.device}, {group.variant} ({group.build_label}), {workload_text(workload)}", fontsize=9)
        ax.text(0.99, 0.03, "model: λ " + num(terms.launch_s * 1e6) + " µs, α " + num(terms.latency_s * 1e6) +
                " µs/hop, B " +
                ("∞" if terms.inverse_bandwidth <= 0 else num(terms.bandwidth / 1e9) + " GB/s") +
                (f", t_fixed {num(fixed * 1e6)} µs" if fixed is not None else "") +
                (f", t_overlap {num(terms.overlap_s * 1e6)} µs" if terms.overlap_s is not None else ""),
                transform=ax.transAxes, ha="right", va="bottom", fontsize=7)
    fig.suptitle("Strong scaling: efficiency against bodies per GPU (bars: range over repetitions; "
                 "dashed: the cost model fitted to these runs, docs/scaling.md)", fontsize=10)
    return fig
