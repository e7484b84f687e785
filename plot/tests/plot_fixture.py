"""The committed fixture (plot/tests/fixture/, see its README) as the plot tests read it, results files made from it,
the tool's modules for the tests that call them, and readers of the report's tables and the figures' styles."""
import json
import re
import sys
import unittest
from pathlib import Path

from plot_tool import PLOT_DIR


FIXTURE_DIR = Path(__file__).resolve().parent / "fixture"
FIXTURES = [str(FIXTURE_DIR / "real_cpu.json"), str(FIXTURE_DIR / "synthetic.json")]
SYNTHETIC_GPU = "Synthetic GPU (plot test fixture)"
SYNTHETIC_CPU = "Synthetic CPU (plot test fixture) (16 CPUs)"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
REL = 5e-3  # the report prints three significant figures


def device_name(entry, context):
    if entry["device"] == "gpu":
        return context["gpu"]["name"]
    return f"{context['host_cpu']['model_name']} ({context['num_cpus']} CPUs)"


def expected_configurations():
    """(device, variant, tuning text, n, d, steps) -> the entry whose numbers the report must show:
    the median aggregate, else the single repetition; failed configurations -> their error entry."""
    groups = {}
    for path in FIXTURES:
        document = json.loads(Path(path).read_text())
        for e in document["benchmarks"]:
            tuning = " ".join(f"{k}={v}" for k, v in sorted(e["tuning"].items())) or "-"
            key = (device_name(e, document["context"]), e["variant"], tuning, e["n"], e["d"], e["steps"])
            groups.setdefault(key, []).append(e)
    chosen = {}
    for key, entries in groups.items():
        medians = [e for e in entries if e.get("aggregate_name") == "median"]
        iterations = [e for e in entries if e["run_type"] == "iteration"]
        chosen[key] = medians[0] if medians else iterations[0]
        assert medians or len(iterations) == 1, f"fixture configuration {key} needs a median aggregate"
    return chosen


def parse_table(report: str, heading: str, occurrence: int = 0, column: str | None = None) -> list[dict]:
    """Rows (header -> cell text) of the first Markdown table after the given heading (with column: the first
    whose header has that column)."""
    lines = report.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == heading]
    if len(starts) <= occurrence:
        raise AssertionError(f"heading {heading!r} not in the report")
    i = starts[occurrence] + 1
    while not (lines[i].startswith("|") and not lines[i - 1].startswith("|")
               and (column is None or f"| {column} |" in lines[i])):
        i += 1
    header = [c.strip() for c in lines[i].strip("|").split(" | ")]
    rows = []
    for line in lines[i + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip()[1:-1].split(" | ")]
        rows.append(dict(zip(header, cells)))
    return rows


def number(text: str) -> float:
    return float(text.split()[0])


def strip_anchor(text: str) -> str:
    return re.sub(r'<a id="[^"]*"></a>', "", text)


def short_commit(path) -> str:
    commit = json.loads(Path(path).read_text())["context"]["git_commit"]
    return commit[:7] + ("-dirty" if commit.endswith("-dirty") else "")


# The harness's messages for a tuning over the device's resources (registers, scratch, memory).
REFUSAL = re.compile(r"registers and scratch allow|do not fit this kernel|needs \d+ MiB of per-thread")


def verdict_counts(entries) -> dict:
    """Configurations verified, refused (a resource refusal, no time), failed (verified false or another
    error) and not verified, from raw entries."""
    counts = {"verified": 0, "failed": 0, "refused": 0, "not verified": 0}
    for e in entries:
        if "time_per_step_s" not in e and REFUSAL.search(e.get("error", "")):
            counts["refused"] += 1
        elif e.get("verified") is False or "error" in e:
            counts["failed"] += 1
        elif e.get("verified"):
            counts["verified"] += 1
        else:
            counts["not verified"] += 1
    return counts


def results_document(context: dict, entries: list) -> dict:
    """A results file the schema accepts (the tool refuses others, as check-results does) from a test's own
    context fields and entries: the synthetic fixture's context with the test's fields merged in, and each
    entry with the fields the test leaves out at neutral values (no limit, no errors, the rate N^2 / time)."""
    base = json.loads(Path(FIXTURES[1]).read_text())["context"]
    for key, value in context.items():
        base[key] = dict(base[key], **value) if isinstance(value, dict) and isinstance(base.get(key), dict) else value
    if "distribution" in base:
        base["distribution"].setdefault("hosts", ["node"] * base["distribution"]["ranks"])
    filled = []
    for entry in entries:
        e = {"family_index": 0, "per_family_instance_index": 0, "threads": 1, "iterations": 1, "warmup_steps": 1,
             "run_type": "iteration", "efficiency": None, "efficiency_limit": None, "efficiency_limit_inputs": None,
             "cores_used": None, "verify_steps": 1, "upload_s": 0.0, "download_s": 0.0, "time_unit": "us",
             "max_pos_err": None, "rms_pos_err": None, "max_vel_err": None, "map_diff": None, **entry}
        e.setdefault("name", e["run_name"])
        if e["run_type"] == "iteration":
            e.setdefault("repetition_index", 0)
        else:
            e.setdefault("aggregate_unit", "time")
        if "time_per_step_s" in e:
            e.setdefault("real_time", e["time_per_step_s"] * 1e6)
            e.setdefault("cpu_time", e["real_time"])
            e.setdefault("interactions_per_second", e["n"] * e["n"] / e["time_per_step_s"])
        filled.append(e)
    return {"context": base, "benchmarks": filled}


def import_tool():
    """The tool's package with the modules the tests call directly loaded (nbodyplot.analysis, .figures, ...), for
    the tests that look at numbers and figures before they are written."""
    if str(PLOT_DIR) not in sys.path:
        sys.path.insert(0, str(PLOT_DIR))
    import nbodyplot
    from nbodyplot import (analysis, cost_model, figures, ladders, performance_portability, report_text,  # noqa: F401
                           results, scaling, scaling_figures)
    return nbodyplot


def write_other_build(directory: Path) -> Path:
    """real_cpu.json as if from the host-avx512 preset's binary (-march=x86-64-v4, same commit), twice as
    fast, so that its lines cannot coincide with the original's."""
    document = json.loads(Path(FIXTURES[0]).read_text())
    document["context"]["build_flags"] = "CXX (GNU 12.2.0): -march=x86-64-v4 -O3 -DNDEBUG; portable binary OFF"
    for e in document["benchmarks"]:
        if "time_per_step_s" in e:
            e["time_per_step_s"] /= 2
            e["interactions_per_second"] *= 2
            e["efficiency"] *= 2
    path = directory / "real_cpu_x86_64_v4.json"
    path.write_text(json.dumps(document))
    return path


def style_clashes(fig) -> list:
    """Pairs of series in one panel with the same colour, marker and line style (reference lines, such as a
    limit or the ideal, excluded)."""
    from matplotlib.colors import to_rgba
    clashes = []
    for ax in fig.axes:
        seen = {}
        for line in ax.get_lines():
            if line.get_gid() == "reference" or line.get_label().startswith("_"):
                continue
            # Matplotlib has no public getter of a custom dash pattern; two different ones are both "--".
            dashes = getattr(line, "_unscaled_dash_pattern", None)
            style = (to_rgba(line.get_color()), line.get_marker(), line.get_linestyle(), str(dashes))
            if style in seen:
                clashes.append((ax.get_title(), seen[style], line.get_label()))
            seen[style] = line.get_label()
    return clashes


def summary_table(report: str, device: str, workload: str = "2d/fp32/euler") -> tuple[str, list[dict]]:
    """The heading line and the rows of the summary table of a device and workload."""
    heading = next(line for line in report.splitlines() if line.startswith(f"### {device} (")
                   and f", {workload} — " in line)
    return heading, parse_table(report, heading)


def assert_answer_first(test: unittest.TestCase, report: str, within: int):
    """The report opens with the single-source answer, its first row within the first `within` lines, then the
    best of each platform, the energy and the summary."""
    lines = report.splitlines()
    sections = [line for line in lines if line.startswith("## ") or line.startswith("### ")]
    test.assertEqual(sections[:5], ["## Portability at a glance", "### One source on every platform",
                                    "### A different source on each platform", "## Energy at a glance",
                                    "## Summary"])
    first_row = next(i for i, line in enumerate(lines) if line.startswith("| 2d/fp32/euler |"))
    test.assertLess(first_row, within, f"the single-source answer within the first {within} lines")
