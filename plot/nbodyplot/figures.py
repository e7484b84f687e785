"""The figures, each written as PNG and SVG; every function returns the file stem or None (no data)."""
from __future__ import annotations

import itertools
import math
import re
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator, ScalarFormatter  # noqa: E402

from . import analysis  # noqa: E402

plt.rcParams.update({
    "svg.hashsalt": "nbody-portability-suite",  # reproducible SVG ids
    "font.size": 10,
    "legend.fontsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.3,
})
MARKERS = "osD^v<>ph*X"


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()


def save(fig, out_dir: Path, stem: str) -> str:
    fig.savefig(out_dir / f"{stem}.png", dpi=120, bbox_inches="tight")
    fig.savefig(out_dir / f"{stem}.svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    return stem


def spans_decades(values, decades: float = 1.0) -> bool:
    values = [v for v in values if v and v > 0]
    return bool(values) and max(values) / min(values) >= 10 ** decades


def style_cycle():
    colours = plt.get_cmap("tab10").colors
    return itertools.cycle([(c, m) for m in MARKERS[:3] for c in colours])


def legend_outside(ax):
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)


def _device_panels(n_devices: int, width: float = 8.5, height: float = 3.6):
    fig, axes = plt.subplots(n_devices, 1, figsize=(width, height * n_devices), squeeze=False, layout="constrained")
    return fig, [row[0] for row in axes]


def _spaced(values: list, log: bool) -> list:
    """The values, less those too close to the previous one to label (1/14 of the axis)."""
    position = (lambda v: math.log10(v)) if log else (lambda v: v)
    gap = (position(values[-1]) - position(values[0])) / 14
    kept = [values[0]]
    for v in values[1:]:
        if position(v) - position(kept[-1]) >= gap:
            kept.append(v)
    return kept


def _log_axis(ax, axis: str, values, always: bool = False):
    """Log scale where the values span a decade (or always); a size axis gets its measured values as ticks."""
    if always or spans_decades(values):
        getattr(ax, f"set_{axis}scale")("log")
    if axis == "x":
        sizes = sorted(set(values))
        if len(sizes) <= 8:
            ticks = _spaced(sizes, log=ax.get_xscale() == "log")
            ax.set_xticks(ticks, [str(v) for v in ticks], fontsize=8)
            ax.xaxis.set_minor_locator(NullLocator())
        else:
            ax.xaxis.set_major_formatter(ScalarFormatter())
            ax.xaxis.get_major_formatter().set_scientific(False)
    return ax


def time_vs(configs, axis: str, out_dir: Path) -> str | None:
    """Time per step against N (axis "n") or D (axis "d"), a panel per device, a line per variant."""
    lines = analysis.sweeps(configs, axis)
    if not lines:
        return None
    fixed = "D" if axis == "n" else "N"
    fig, axes = _device_panels(len(lines))
    for ax, (device, by_line) in zip(axes, lines.items()):
        styles = style_cycle()
        xs_all, ys_all = [], []
        for (variant, fixed_value), line in by_line.items():
            xs = [getattr(c, axis) for c in line]
            ys = [c.time for c in line]
            colour, marker = next(styles)
            ax.plot(xs, ys, marker=marker, color=colour, label=f"{variant} ({fixed} = {fixed_value})")
            xs_all += xs
            ys_all += ys
        _log_axis(ax, "x", xs_all, always=axis == "n")  # N: log-log always (time grows as N^2)
        _log_axis(ax, "y", ys_all, always=axis == "n")
        ax.set_title(device)
        ax.set_xlabel("bodies N" if axis == "n" else "activity map size D (D × D cells)")
        ax.set_ylabel("time per step (s)")
        legend_outside(ax)
    fig.suptitle(f"Time per step against {'N' if axis == 'n' else 'D'} (fastest tuning of each variant)")
    return save(fig, out_dir, f"time_vs_{axis}")


def efficiency_vs_n(configs, out_dir: Path) -> str | None:
    """Efficiency against N with the device's FP32 limit (efficiency 1.0) drawn."""
    lines = analysis.sweeps(configs, "n")
    limits = analysis.device_limits(configs)
    lines = {dev: {k: [c for c in v if c.efficiency is not None] for k, v in by.items()}
             for dev, by in lines.items()}
    lines = {dev: {k: v for k, v in by.items() if v} for dev, by in lines.items()}
    lines = {dev: by for dev, by in lines.items() if by}
    if not lines:
        return None
    fig, axes = _device_panels(len(lines))
    for ax, (device, by_line) in zip(axes, lines.items()):
        styles = style_cycle()
        xs_all, ys_all = [], [1.0]
        for (variant, d), line in by_line.items():
            xs = [c.n for c in line]
            ys = [c.efficiency for c in line]
            colour, marker = next(styles)
            ax.plot(xs, ys, marker=marker, color=colour, label=f"{variant} (D = {d})")
            xs_all += xs
            ys_all += ys
        limit = limits.get(device)
        on_cpu = next(iter(by_line.values()))[0].device_kind == "CPU"
        whole = f"{limit:.3g} interactions/s" if limit else "not recorded"
        ax.axhline(1.0, color="black", linestyle="--", linewidth=1.2,
                   label=f"FP32 limit of the cores used\n(all cores: {whole})" if on_cpu
                   else f"FP32 limit ({whole})")
        _log_axis(ax, "x", xs_all, always=True)
        if spans_decades(ys_all):
            ax.set_yscale("log")
            ax.yaxis.set_major_locator(LogLocator(base=10))
        else:
            ax.set_ylim(0, 1.1)
        ax.set_title(device)
        ax.set_xlabel("bodies N")
        ax.set_ylabel("efficiency (fraction of FP32 limit)")
        legend_outside(ax)
    fig.suptitle("Efficiency against N (achieved interactions/s ÷ device limit, SPEC §3)")
    return save(fig, out_dir, "efficiency_vs_n")


def ladder(table: analysis.LadderTable, out_dir: Path) -> str:
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
            ax.bar_label(bars, labels=[f"{v:.2f}×" for v in xs], fontsize=7, padding=2)
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
    fig.suptitle(f"{table.ladder.title} on {table.device}\n"
                 "speedup: geometric mean over the sweep's problems of the ratio of times per step", fontsize=10)
    fig.tight_layout()
    return save(fig, out_dir, f"ladder_{slug(table.ladder.name)}_{slug(table.device)}")


def thread_scaling(configs, out_dir: Path) -> str | None:
    """Speedup and parallel efficiency against the `threads` tuning, a row of panels per device."""
    series = analysis.thread_scaling(configs)
    if not series:
        return None
    # Readable: per variant (and other tuning) its smallest D and at most its 3 largest N; the report's
    # table has every series.
    shown: dict[tuple, list] = {}
    for s in series:
        shown.setdefault((s.device, s.variant, s.other_tuning), []).append(s)
    by_device: dict[str, list] = {}
    for (device, _, _), group in shown.items():
        d_min = min(s.d for s in group)
        by_device.setdefault(device, []).extend(
            sorted((s for s in group if s.d == d_min), key=lambda s: -s.n)[:3])
    colours = plt.get_cmap("tab10").colors
    heights = [max(4.2, 0.19 * len(v) + 1.5) for v in by_device.values()]
    fig, axes = plt.subplots(len(by_device), 2, squeeze=False, figsize=(12, sum(heights)),
                             gridspec_kw={"height_ratios": heights})
    for (ax_speedup, ax_eff), (device, device_series) in zip(axes, by_device.items()):
        all_threads = sorted({p[0] for s in device_series for p in s.points})
        variants = sorted({(s.variant, s.other_tuning) for s in device_series})
        for s in device_series:
            # colour: the variant; marker and line style: its N, largest first
            colour = colours[variants.index((s.variant, s.other_tuning)) % 10]
            sizes = sorted({x.n for x in device_series if (x.variant, x.other_tuning) == (s.variant, s.other_tuning)},
                           reverse=True)
            rank = sizes.index(s.n)
            # the other tunings only where they tell this variant's series apart
            several = len({x.other_tuning for x in device_series if x.variant == s.variant}) > 1
            label = s.label if several else f"{s.variant} N={s.n} D={s.d}"
            if s.points[0][0] != min(all_threads):
                label += f" (vs {s.points[0][0]} threads)"
            style = {"marker": MARKERS[rank], "linestyle": ("-", "--", ":")[rank], "color": colour, "label": label}
            threads = [p[0] for p in s.points]
            ax_speedup.plot(threads, [p[2] for p in s.points], **style)
            ax_eff.plot(threads, [p[3] for p in s.points], **style)
        base = min(all_threads)
        ax_speedup.plot(all_threads, [t / base for t in all_threads], color="black", linewidth=0.8, label="ideal")
        ax_eff.axhline(1.0, color="black", linewidth=0.8, label="ideal")
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
    return save(fig, out_dir, "thread_scaling")


def portability(pp: analysis.Portability, out_dir: Path) -> str | None:
    """Heat maps (family × platform) of application and architectural efficiency, with the PP column."""
    if not pp.rows:
        return None
    columns = pp.platforms + ["PP"]
    fig, axes = plt.subplots(1, 2, figsize=(4.5 + 2.4 * len(columns), 0.42 * len(pp.rows) + 2.6),
                             layout="constrained")
    cmap = plt.get_cmap("viridis").copy()
    cmap.set_bad("#dddddd")
    for ax, kind in zip(axes, ("app", "arch")):
        grid = np.full((len(pp.rows), len(columns)), np.nan)
        for i, row in enumerate(pp.rows):
            effs = row.app_eff if kind == "app" else row.arch_eff
            for j, platform in enumerate(pp.platforms):
                if platform in effs:
                    grid[i, j] = effs[platform]
            metric = row.pp_app if kind == "app" else row.pp_arch
            if metric is not None:
                grid[i, -1] = metric
        image = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto")
        for i in range(grid.shape[0]):
            for j in range(grid.shape[1]):
                value = grid[i, j]
                text = "did not run" if np.isnan(value) else f"{value:.3f}"
                dark = not np.isnan(value) and value < 0.6
                ax.text(j, i, text, ha="center", va="center", fontsize=7,
                        color="white" if dark else "black", fontweight="bold" if j == len(columns) - 1 else None)
        ax.axvline(len(pp.platforms) - 0.5, color="white", linewidth=3)
        ax.set_xticks(range(len(columns)), [c.replace(" (", "\n(") for c in columns], fontsize=7)
        ax.set_yticks(range(len(pp.rows)), [r.family for r in pp.rows], fontsize=8)
        ax.grid(False)
        ax.set_title("application efficiency (best time on platform ÷ time)" if kind == "app"
                     else "architectural efficiency (fraction of FP32 limit)", fontsize=9)
        fig.colorbar(image, ax=ax, shrink=0.8, label="efficiency")
    n, d = pp.problem
    fig.suptitle(f"Performance portability (Pennycook) at N = {n}, D = {d}: PP = harmonic mean over the "
                 "platforms, 0 where a family did not run on one", fontsize=10)
    return save(fig, out_dir, "portability")
