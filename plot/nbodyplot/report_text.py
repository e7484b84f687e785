"""What the report's sections share: the two files' names, Markdown tables and figures, percentages, the
order of configurations, the anchors of failures and the verification counts."""
from __future__ import annotations

from . import analysis
from .results import Config, num

REPORT_FILE = "report.md"
APPENDIX_FILE = "appendix.md"
FAILURES_LISTED = 5  # per summary table; the verification table has every one
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


def counts_text(counts: dict) -> str:
    total = sum(counts.values())
    return (f"{total} configuration{'s' if total != 1 else ''}: {counts['verified']} verified, "
            f"{counts['failed']} failed, "
            + (f"{counts['inconclusive']} inconclusive, " if counts.get("inconclusive") else "")
            + f"{counts['refused']} refused, {counts['not verified']} not verified")
