"""Runs plot/nbody_plot.py for the plot tests and reads back the report it writes."""
import subprocess
import sys
from pathlib import Path

PLOT_DIR = Path(__file__).resolve().parent.parent
TOOL = PLOT_DIR / "nbody_plot.py"


def run_tool(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(TOOL), *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def run_or_fail(*args) -> subprocess.CompletedProcess:
    """run_tool, for a run the test needs to succeed: a failure raises with the tool's exit status and stderr."""
    result = run_tool(*args)
    if result.returncode != 0:
        raise AssertionError(f"nbody_plot.py failed ({result.returncode}): {result.stderr}")
    return result


def report_of(*args, out) -> str:
    """The report.md the tool writes into out from args; a failed run raises with its stderr."""
    run_or_fail(*args, "--out", out)
    return (Path(out) / "report.md").read_text(encoding="utf-8")


def read_report(out) -> str:
    """report.md, then appendix.md: the answer and the tables behind it, for the tests that read any table."""
    return "\n".join((Path(out) / name).read_text(encoding="utf-8") for name in ("report.md", "appendix.md"))
