"""The figures of the sweeps over N and D, the portability ratio, the ladders, the performance-portability heat maps
and the comparison with the CUDA samples' nbody, each written in the formats the caller names (png, svg); every function
returns the file stem or None (no data). The scaling figures are in scaling_figures.py."""
from __future__ import annotations

import math
import textwrap
from pathlib import Path

# figure_style first: it selects the Agg backend before pyplot loads.
from .figure_style import (MARKERS, REFERENCE, device_panels, legend_beside, legend_outside, line_style, log_axis,
                           model_grid, save, series_context, slug, spans_decades, variant_styles)

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

from . import analysis, ladders, performance_portability  # noqa: E402
from .results import local_build_labels, num, workload_text  # noqa: E402

# A sweep's quantity -> how a configuration gives it.
SWEEP_QUANTITIES = {"time": lambda c: c.time, "efficiency": lambda c: c.efficiency,
                    "interactions_per_joule": lambda c: c.interactions_per_joule}


def draw_sweep(configs, axis: str, quantity: str):
    """Time per step (quantity "time"), efficiency ("efficiency") or interactions per joule
    ("interactions_per_joule") against N (axis "n") or D ("d"): a panel per device and model, a line per
    variant, build, workload and fixed value of the other axis (points of different builds are never
    joined). Returns the figure, or None without a sweep."""
    lines = analysis.sweeps(configs, axis)
    value = SWEEP_QUANTITIES[quantity]
    if quantity != "time":
        lines = {panel: {k: [c for c in v if value(c) is not None] for k, v in by.items()}
                 for panel, by in lines.items()}
        lines = {panel: {k: v for k, v in by.items() if len(v) >= 2} for panel, by in lines.items()}
        lines = {panel: by for panel, by in lines.items() if by}
    if not lines:
        return None
    styles = variant_styles(configs)
    limits = analysis.device_limits(configs)
    fixed = "D" if axis == "n" else "N"
    legend_rows = max(len(by) for by in lines.values()) + 1
    fig, placed = model_grid(list(lines), legend_rows=legend_rows if legend_rows <= 22 else (legend_rows + 1) // 2)
    ys_by_ax = {}
    for (device, model), by_line in lines.items():
        ax = placed[(device, model)]
        keys = list(by_line)
        contexts = sorted({series_context(k, keys, fixed)[1] for k in keys})
        xs_all, ys_all = [], [1.0] if quantity == "efficiency" else []
        for key, line in by_line.items():
            xs = [getattr(c, axis) for c in line]
            ys = [value(c) for c in line]
            colour, marker = styles[key.variant]
            own = series_context(key, keys, fixed)[1]
            ax.plot(xs, ys, marker=marker, color=colour, linestyle=line_style(contexts.index(own)), markersize=4,
                    label=key.variant + (f" ({own})" if own else ""))
            xs_all += xs
            ys_all += ys
        if quantity == "efficiency":
            limit = limits.get(device)
            only_default = {k.workload for k in keys} == {analysis.DEFAULT_WORKLOAD}
            whole = f"{num(limit)} interactions/s" if limit and only_default else "the workload's, SPEC §3"
            on_cpu = line[0].device_kind == "CPU"
            ax.axhline(1.0, color="black", linestyle="--", linewidth=1.2, gid=REFERENCE,
                       label=f"limit of the cores used (all cores: {whole})" if on_cpu else f"device limit ({whole})")
        log_axis(ax, "x", xs_all, always=axis == "n")
        ys_by_ax[ax] = ys_all
        shared = series_context(keys[0], keys, fixed)[0]
        ax.set_title(f"{device}\n{model}" + (f" — {shared}" if shared else ""), fontsize=9)
        ax.set_xlabel("bodies N" if axis == "n" else "activity map size D (D × D cells)")
        ax.set_ylabel({"time": "time per step (s)", "efficiency": "efficiency (fraction of the limit)",
                       "interactions_per_joule": "interactions per joule"}[quantity])
        legend_beside(ax)
    for ax in ys_by_ax:
        # Log-log against N (time grows as N², efficiency is read as a roofline); against D where the
        # values span a decade; decided over the axes that share one y scale.
        row = [v for sibling in ax.get_shared_y_axes().get_siblings(ax) for v in ys_by_ax.get(sibling, [])]
        if axis == "n" or spans_decades(row):
            ax.set_yscale("log")
        elif quantity == "efficiency":
            ax.set_ylim(0, 1.1)
    name = "N" if axis == "n" else "D"
    fig.suptitle({"time": f"Time per step against {name}",
                  "efficiency": "Efficiency against N: achieved interactions/s ÷ the device's limit (SPEC §3)",
                  "interactions_per_joule": "Interactions per joule against N: N² ÷ the device's energy per step "
                                            "(NVML on a GPU, RAPL on a host)"}[quantity],
                 fontsize=11)
    fig.text(0.5, -0.005, "Each line: one variant of one build at its fastest tuning; colour and marker: the "
             "variant; line style: build / workload / " + fixed + " where a panel has several.",
             ha="center", va="top", fontsize=8)
    return fig


def time_vs(configs, axis: str, out_dir: Path, formats: tuple[str, ...]) -> str | None:
    fig = draw_sweep(configs, axis, "time")
    return save(fig, out_dir, f"time_vs_{axis}", formats) if fig else None


def efficiency_vs_n(configs, out_dir: Path, formats: tuple[str, ...]) -> str | None:
    fig = draw_sweep(configs, "n", "efficiency")
    return save(fig, out_dir, "efficiency_vs_n", formats) if fig else None


def interactions_per_joule_vs_n(configs, out_dir: Path, formats: tuple[str, ...]) -> str | None:
    fig = draw_sweep(configs, "n", "interactions_per_joule")
    return save(fig, out_dir, "interactions_per_joule_vs_n", formats) if fig else None


PORTABLE_COLOURS = {"cuda": "tab:green", "openmp": "tab:blue", "serial": "tab:gray", "hip": "tab:red",
                    "sycl": "tab:purple", "threads": "tab:cyan"}


def draw_portability_ratio(configs):
    """Kokkos ÷ hand-written interactions/s against N, a panel per device: a line per Kokkos execution
    space, build, workload and D with two or more N. Returns the figure, or None without such a line."""
    series = [s for s in analysis.portability_ratios(configs) if len(s.points) >= 2]  # lone points: the table
    if not series:
        return None
    by_device: dict[str, list] = {}
    for s in series:
        by_device.setdefault(s.device, []).append(s)
    fig, axes = device_panels(len(by_device), width=8.5, height=3.4)
    for ax, (device, device_series) in zip(axes, by_device.items()):
        contexts = sorted({_ratio_context(s, device_series)[1] for s in device_series})
        spaces = sorted({s.portable_model for s in device_series}, key=analysis.model_key)
        xs_all, ys_all = [], [1.0]
        for s in device_series:
            own = _ratio_context(s, device_series)[1]
            space = analysis.model_space(s.portable_model)
            xs = [p[0] for p in s.points]
            ys = [p[1] for p in s.points]
            ax.plot(xs, ys, color=PORTABLE_COLOURS.get(space, f"C{spaces.index(s.portable_model)}"),
                    marker=MARKERS[spaces.index(s.portable_model) % len(MARKERS)],
                    linestyle=line_style(contexts.index(own)),
                    label=f"{s.portable_model} ÷ {s.hand_model}" + (f" ({own})" if own else ""))
            xs_all += xs
            ys_all += ys
        ax.axhline(1.0, color="black", linewidth=0.8, label="as fast as hand-written", gid=REFERENCE)
        log_axis(ax, "x", xs_all, always=True)
        # A ratio and its inverse lie equally far from 1 on a log axis; ticks at powers of two.
        low, high = min(ys_all) / 1.15, max(ys_all) * 1.15
        ax.set_yscale("log")
        ax.set_ylim(low, high)
        ticks = [t for t in (2.0 ** k for k in range(math.floor(math.log2(low)), math.ceil(math.log2(high)) + 1))
                 if low <= t <= high]
        if len(ticks) < 3:  # within an octave or two: decimal ticks
            ticks = [t for t in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0, 3.0)
                     if low <= t <= high]
        ax.set_yticks(ticks, minor=False)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
        shared = _ratio_context(device_series[0], device_series)[0]
        ax.set_title(device + (f" — {shared}" if shared else ""), fontsize=10)
        ax.set_xlabel("bodies N")
        ax.set_ylabel("Kokkos ÷ hand-written\n(interactions/s ratio)")
        legend_outside(ax)
    fig.suptitle("Portability ratio against N: the fastest Kokkos variant's interactions/s ÷ the fastest "
                 "hand-written variant's\n(same device, build, workload, N and D; each at its fastest tuning)",
                 fontsize=10)
    return fig


def _ratio_context(s: analysis.RatioSeries, others) -> tuple[str, str]:
    """As series_context, for a ratio line."""
    parts = [(local_build_labels(others)[s.build], {o.build_label for o in others}),
             (workload_text(s.workload), {o.workload for o in others}),
             (f"D = {s.d}", {o.d for o in others})]
    return (", ".join(text for text, values in parts if len(values) == 1 and text),
            ", ".join(text for text, values in parts if len(values) > 1))


def portability_ratio(configs, out_dir: Path, formats: tuple[str, ...]) -> str | None:
    fig = draw_portability_ratio(configs)
    return save(fig, out_dir, "portability_ratio_vs_n", formats) if fig else None


def ladder(table: ladders.LadderTable, out_dir: Path, formats: tuple[str, ...]) -> str:
    """Speedup bars of one ladder on one device: step over step and cumulative, a panel per sweep."""
    groups = table.groups
    labels = [f"{r.step.label}\n{r.step.variant}" + "".join(f" {k}={v}" for k, v in r.step.tuning.items())
              for r in table.rows]
    fig, axes = plt.subplots(1, len(groups), figsize=(4.2 * len(groups) + 2.5, 0.62 * len(labels) + 1.6),
                             sharey=True, squeeze=False)
    positions = list(range(len(labels)))
    height = 0.4
    for ax, group in zip(axes[0], groups):
        step = [r.vs_previous.get(group.label) for r in table.rows]
        cumulative = [r.cumulative.get(group.label) for r in table.rows]
        for offset, values, name, colour in ((-height / 2, step, "vs previous step", "tab:blue"),
                                             (height / 2, cumulative, "cumulative (vs first step)", "tab:orange")):
            ys = [p + offset for p, v in zip(positions, values) if v is not None]
            xs = [v for v in values if v is not None]
            bars = ax.barh(ys, xs, height, label=name, color=colour)
            ax.bar_label(bars, labels=[f"{num(v)}×" for v in xs], fontsize=7, padding=2)
        everything = [v for v in step + cumulative if v]
        if spans_decades(everything, 1.5):
            ax.set_xscale("log")
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_yticks(positions, labels, fontsize=8)
        ax.grid(axis="y", visible=False)
        ax.set_xlabel("speedup (×)")
        ax.set_title(group.label, fontsize=10)
        ax.margins(x=0.15)
    axes[0][0].invert_yaxis()  # shared: once inverts all
    axes[0][-1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.suptitle(f"{ladder_title(table)}\n"
                 "speedup: geometric mean over the sweep's problems of the ratio of times per step", fontsize=10)
    fig.tight_layout()
    return save(fig, out_dir, ladder_stem(table), formats)


def ladder_title(table: ladders.LadderTable) -> str:
    """The ladder, the device, and the build and workload (named where not the only ones / not the default)."""
    extra = ([f"build {table.build_label}"] if table.build_label else []) + \
        ([workload_text(table.workload)] if table.workload != analysis.DEFAULT_WORKLOAD else [])
    return f"{table.ladder.title} on {table.device}" + (f" ({', '.join(extra)})" if extra else "")


def ladder_stem(table: ladders.LadderTable) -> str:
    parts = [table.ladder.name, table.device, table.build_label]
    if table.workload != analysis.DEFAULT_WORKLOAD:
        parts.append(workload_text(table.workload))
    return "ladder_" + "_".join(slug(p) for p in parts if p)


def portability_row_label(row: performance_portability.PortabilityRow) -> str:
    """A heat map's row: the family, and for a best-of row whether it takes a different source on each platform."""
    if row.kind != performance_portability.BEST_OF or len(row.chosen) < 2:
        return row.family
    return f"{row.family} ({'a different source on each platform' if len(row.sources) > 1 else 'one source here'})"


def portability(pp: performance_portability.Portability, out_dir: Path, formats: tuple[str, ...]) -> str | None:
    """Heat maps (family × platform) of application and architectural efficiency, with the PP column: the single
    sources first, then the best-of rows, then the variants of one kind of device, as the report's table."""
    if not pp.rows:
        return None
    columns = pp.platforms + ["PP"]
    fig, axes = plt.subplots(1, 2, figsize=(5.5 + 2.4 * len(columns), 0.42 * len(pp.rows) + 2.6),
                             layout="constrained")
    cmap = plt.get_cmap("viridis").copy()
    cmap.set_bad("#dddddd")
    for ax, kind in zip(axes, ("app", "arch")):
        grid = np.full((len(pp.rows), len(columns)), np.nan)
        texts = [[""] * len(columns) for _ in pp.rows]
        for i, row in enumerate(pp.rows):
            effs = row.app_eff if kind == "app" else row.arch_eff
            for j, platform in enumerate(pp.platforms):
                if platform in effs:
                    grid[i, j] = effs[platform]
                    texts[i][j] = num(effs[platform])
                elif platform in row.not_measured:
                    texts[i][j] = "not\nmeasured"
                elif platform in row.cannot_run:
                    texts[i][j] = f"no {pp.kinds[platform]}\nvariant"
            metric = row.pp_app if kind == "app" else row.pp_arch
            if metric is not None:
                grid[i, -1] = metric
                texts[i][-1] = num(metric)
            else:
                texts[i][-1] = "not\nmeasured" if row.not_measured else "—"
        image = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto")
        for i in range(grid.shape[0]):
            for j in range(grid.shape[1]):
                value = grid[i, j]
                dark = not np.isnan(value) and value < 0.6
                ax.text(j, i, texts[i][j], ha="center", va="center", fontsize=7 if np.isfinite(value) else 6,
                        color="white" if dark else "black", fontweight="bold" if j == len(columns) - 1 else None)
        ax.axvline(len(pp.platforms) - 0.5, color="white", linewidth=3)
        for i in range(1, len(pp.rows)):  # a white line between single sources, best-of rows and one-kind variants
            if pp.rows[i].kind != pp.rows[i - 1].kind:
                ax.axhline(i - 0.5, color="white", linewidth=3)
        ax.set_xticks(range(len(columns)), [textwrap.fill(c, 16) for c in columns], fontsize=7)
        ax.set_yticks(range(len(pp.rows)), [portability_row_label(r) for r in pp.rows], fontsize=8)
        ax.grid(False)
        ax.set_title("application efficiency (best time on platform ÷ time)" if kind == "app"
                     else "architectural efficiency (fraction of FP32 limit)", fontsize=9)
        fig.colorbar(image, ax=ax, shrink=0.8, label="efficiency")
    n, d = pp.problem
    fig.suptitle(f"Performance portability (Pennycook), {workload_text(pp.workload)} at N = {n}, D = {d}: single "
                 "sources first; PP = harmonic mean over the platforms, 0 for a variant of one kind of device",
                 fontsize=10)
    return save(fig, out_dir, f"portability_{slug(workload_text(pp.workload))}", formats)


def peer_comparison(comparison, configs, out_dir: Path, formats: tuple[str, ...]) -> str | None:
    """Our CUDA and Kokkos-on-CUDA variants against the CUDA samples' nbody on one device and workload:
    interactions/s against N (a line per variant and build at its fastest tuning, the samples in black),
    and our best of each model ÷ the samples at each N."""
    from . import peer
    lines = {k: v for (device, model), by in analysis.sweeps(configs, "n").items()
             if device == comparison.device and model in peer.COMPARED_MODELS
             for k, v in by.items() if k.workload == comparison.workload}
    samples = [row.peer for row in comparison.rows]
    if not samples:
        return None
    styles = variant_styles(configs)
    keys = list(lines)
    models = {k: lines[k][0].model for k in keys}
    # Line style per (model, what tells the line from the others of its variant): CUDA and Kokkos
    # variants may share a colour and marker (each model numbers its own), never a line style.
    kinds = sorted({(models[k], series_context(k, keys, "D")[1]) for k in keys},
                   key=lambda m: (analysis.model_key(m[0]), m[1]))
    fig, (ax_rate, ax_ratio) = plt.subplots(1, 2, figsize=(15, 4.8), layout="constrained")
    xs_all = [p.n for p in samples]
    for key, line in lines.items():
        own = series_context(key, keys, "D")[1]
        colour, marker = styles[key.variant]
        ax_rate.plot([c.n for c in line], [c.values.get("interactions_per_second") for c in line], color=colour,
                     marker=marker, markersize=4, linestyle=line_style(kinds.index((models[key], own))),
                     label=key.variant + (f" ({own})" if own else ""))
        xs_all += [c.n for c in line]
    runs = sorted({len(p.runs) for p in samples})
    ax_rate.plot([p.n for p in samples], [p.interactions_per_second for p in samples], color="black", marker="X",
                 markersize=7, linewidth=2.0, linestyle="-",
                 label=f"{peer.PEER_NAME} (median of {'/'.join(map(str, runs))} runs)")
    log_axis(ax_rate, "x", xs_all, always=True)
    ax_rate.set_yscale("log")
    ax_rate.set_xlabel("bodies N")
    ax_rate.set_ylabel("interactions/s (N² per step)")
    ax_rate.set_title("interactions/s: each variant at its fastest tuning", fontsize=9)
    legend_beside(ax_rate)

    ratio_colours = {"CUDA": "tab:green", "Kokkos (cuda)": "tab:purple"}
    ys_all = [1.0]
    for index, model in enumerate(peer.COMPARED_MODELS):
        points = [(row.n, row.ratio(model)) for row in comparison.rows if row.ratio(model) is not None]
        if points:
            ax_ratio.plot([p[0] for p in points], [p[1] for p in points], color=ratio_colours[model],
                          marker=MARKERS[index], linestyle=line_style(index),
                          label=f"best {model} ÷ {peer.PEER_NAME}")
            ys_all += [p[1] for p in points]
    ax_ratio.axhline(1.0, color="black", linewidth=0.8, label=f"as fast as {peer.PEER_NAME}", gid=REFERENCE)
    log_axis(ax_ratio, "x", [p.n for p in samples], always=True)
    ax_ratio.set_ylim(0, max(ys_all) * 1.15)
    ax_ratio.set_xlabel("bodies N")
    ax_ratio.set_ylabel(f"÷ {peer.PEER_NAME}\n(interactions/s ratio)")
    ax_ratio.set_title("our fastest of each model ÷ the samples, same N", fontsize=9)
    legend_outside(ax_ratio)
    fig.suptitle(f"Against the {peer.PEER_NAME} on {comparison.device}, {workload_text(comparison.workload)} "
                 "(its kick-then-drift Euler beside our Euler: one force evaluation per step)", fontsize=10)
    return save(fig, out_dir, f"peer_{slug(comparison.device)}_{slug(workload_text(comparison.workload))}", formats)
