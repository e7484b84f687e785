"""What every figure shares: matplotlib's settings, file names and saving, line styles, legends, axes and the
grid of panels."""
from __future__ import annotations

import math
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import NullLocator, ScalarFormatter  # noqa: E402

from . import analysis  # noqa: E402
from .results import local_build_labels, workload_text  # noqa: E402

plt.rcParams.update({
    "svg.hashsalt": "nbody-portability-suite",  # reproducible SVG ids
    "font.size": 10,
    "legend.fontsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.3,
})
MARKERS = "osD^v<>ph*X"
REFERENCE = "reference"  # gid of a line that is not a series (a limit, the ideal): the style check skips it


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()


# savefig options per format; an SVG without a date is reproducible.
SAVE_OPTIONS = {"png": {"dpi": 120}, "svg": {"metadata": {"Date": None}}}


def save(fig, out_dir: Path, stem: str, formats: tuple[str, ...]) -> str:
    for ext in formats:
        fig.savefig(out_dir / f"{stem}.{ext}", bbox_inches="tight", **SAVE_OPTIONS[ext])
    plt.close(fig)
    return stem


def spans_decades(values, decades: float = 1.0) -> bool:
    values = [v for v in values if v and v > 0]
    return bool(values) and max(values) / min(values) >= 10 ** decades


def legend_outside(ax):
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)


def legend_beside(ax):
    handles, _ = ax.get_legend_handles_labels()
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, frameon=False,
              ncol=2 if len(handles) > 22 else 1, fontsize=7)


def device_panels(n_devices: int, width: float = 8.5, height: float = 3.6):
    fig, axes = plt.subplots(n_devices, 1, figsize=(width, height * n_devices), squeeze=False, layout="constrained")
    return fig, [row[0] for row in axes]


def _spaced(values: list, log: bool) -> list:
    """The values, less those too close to the previous one to label (1/10 of the axis)."""
    position = (lambda v: math.log10(v)) if log else (lambda v: v)
    gap = (position(values[-1]) - position(values[0])) / 10
    kept = [values[0]]
    for v in values[1:]:
        if position(v) - position(kept[-1]) >= gap:
            kept.append(v)
    return kept


def log_axis(ax, axis: str, values, always: bool = False):
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


def line_style(index: int):
    """Line style number `index`: solid, dashed, dotted, dash-dot, then ever longer dashes."""
    named = ["-", "--", ":", "-."]
    return named[index] if index < len(named) else (0, (index + 2, 2, 1, 2))


def variant_styles(configs) -> dict[str, tuple]:
    """A colour and marker per variant, the same in every figure; unique within a model (a panel holds
    one model), since 10 colours and 11 markers repeat together only after 110 variants."""
    styles = {}
    by_model: dict[str, set] = {}
    for c in configs:
        by_model.setdefault(c.model, set()).add(c.variant)
    colours = plt.get_cmap("tab10").colors
    for variants in by_model.values():
        for i, variant in enumerate(sorted(variants)):
            styles[variant] = (colours[i % len(colours)], MARKERS[i % len(MARKERS)])
    return styles


def series_context(key: analysis.SeriesKey, keys, fixed_name: str) -> tuple[str, str]:
    """(what the panel's lines share, what tells this line from the others of its variant): build,
    workload and the fixed axis value, each named where it is not the same for every line; a build by
    its report-wide label where the panel has one build, else by the parts of it that differ in the panel."""
    build = local_build_labels(keys)[key.build]
    parts = [("build", build, {k.build_label for k in keys}),
             ("workload", workload_text(key.workload), {k.workload for k in keys}),
             (fixed_name, f"{fixed_name} = {key.fixed}", {k.fixed for k in keys})]
    shared = [text for name, text, values in parts if len(values) == 1 and text]
    own = [text for name, text, values in parts if len(values) > 1]
    return ", ".join(shared), ", ".join(own)


def model_grid(panels: list[tuple], panel_width: float = 8.0, panel_height: float = 3.4, legend_rows: int = 0):
    """Panels (device, model) in rows: each hand-written model beside the Kokkos model compared with it
    (one y axis for the row, so that the two read against each other), the models without a partner two
    to a row. Returns (fig, {panel: ax})."""
    rows: list[tuple[list, bool]] = []  # (panels, shared y)
    devices = list(dict.fromkeys(device for device, _ in panels))
    for device in devices:
        models = [m for d, m in panels if d == device]
        singles = []
        for group in analysis.comparison_groups(models):
            if len(group) > 1:
                rows.append(([(device, m) for m in group], True))
            else:
                singles.append((device, group[0]))
        rows += [(singles[i:i + 2], False) for i in range(0, len(singles), 2)]
    columns = max(2, max(len(r) for r, _ in rows)) if len(panels) > 1 else 1
    height = max(panel_height, 0.14 * legend_rows + 0.8)
    fig, axes = plt.subplots(len(rows), columns, figsize=(panel_width * columns, height * len(rows)),
                             squeeze=False, layout="constrained")
    placed = {}
    for r, (row, shared) in enumerate(rows):
        for col in range(columns):
            if col < len(row):
                placed[row[col]] = axes[r][col]
                if shared and col > 0:
                    axes[r][col].sharey(axes[r][0])
            else:
                axes[r][col].set_visible(False)
    return fig, placed
