#!/usr/bin/python3
"""Figures and report.md from nbody-bench results:
    /usr/bin/python3 plot/nbody_plot.py RESULTS.json [MORE.json ...] --out DIR
See docs/plots.md."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from nbodyplot.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
