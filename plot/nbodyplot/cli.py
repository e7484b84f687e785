"""Command line: results files in, figures (PNG and, unless --no-svg, SVG), report.md and appendix.md out; bad input
exits 2."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import analysis, cost_model, ladders, peer, performance_portability, report, schema
from .report_text import APPENDIX_FILE, NOT_DRAWN, REPORT_FILE
from .results import InputError, load


class OneLineParser(argparse.ArgumentParser):
    def error(self, message):
        raise InputError(message)


def parse_problem(text: str) -> tuple[int, int]:
    try:
        n, d = (int(part) for part in text.split(","))
        if n > 0 and d > 0:
            return n, d
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"--pp-problem wants N,D (two positive integers), got '{text}'")


def parse_exposed(text: str) -> cost_model.ExposedExchange:
    try:
        return cost_model.parse_exposed(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="nbody_plot.py",
        description="Figures (PNG and SVG) and a Markdown report (DIR/report.md, its tables in DIR/appendix.md) from "
                    "nbody-bench results JSON.")
    parser.add_argument("results", nargs="+", metavar="RESULTS.json",
                        help="results files of `nbody-bench matrix`; a later file's configuration replaces an "
                             "identical one of an earlier file")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder for the figures, report.md and appendix.md")
    parser.add_argument("--ladders", default=str(ladders.LADDERS_FILE), metavar="FILE",
                        help="ladder definition (default: %(default)s)")
    parser.add_argument("--pp-problem", type=parse_problem, metavar="N,D",
                        help="problem of the performance-portability tables, for every workload that measured it "
                             "(default: per workload, the one measured on the most devices, largest N)")
    parser.add_argument("--peer", action="append", default=[], metavar="LOG",
                        help="output of the CUDA samples' nbody as scripts/device_run.sh --peer writes it "
                             "(peer-nbody.txt); repeatable: compared with our variants on the same device")
    parser.add_argument("--exposed-exchange", type=parse_exposed, action="append", default=[],
                        metavar="W:N:G:SECONDS",
                        help="an all-gather's duration per step measured outside the results files (a `run`'s step "
                             "breakdown with exchange=allgather, e.g. 2d/fp32/euler:16384:4:13.594e-6), for the "
                             "scaling figure's cost model, fitted with the runs of that workload, N and G; "
                             "repeatable (files recording step_exposed_communication_s need none)")
    parser.add_argument("--check-with", metavar="NBODY_BENCH",
                        help="nbody-bench binary whose `check-results` each file must also pass (the consistency of "
                             "its numbers; the schema is checked without it)")
    parser.add_argument("--no-svg", dest="svg", action="store_false",
                        help="write each figure as PNG only, without its SVG (the committed reports do: the SVGs "
                             "about double a report's size)")
    parser.add_argument("--all-figures", action="store_true",
                        help="also draw the figures only appendix.md shows: the ladders, thread scaling, time against "
                             "D and the performance-portability heat maps of the workloads other than the main one")
    parser.add_argument("--summary", action="store_true",
                        help="print report.md's \"Portability at a glance\" section on stdout")
    return parser


def run(argv: list[str]) -> Path:
    args = build_parser().parse_args(argv)
    if args.check_with:
        for path in args.results:
            try:
                refusal = schema.check_with(args.check_with, path)
            except schema.SchemaInputError as e:
                raise InputError(str(e)) from None
            if refusal is not None:
                raise InputError(f"{refusal} (nbody-bench check-results)")
    sources, configs = load(args.results)
    peer_runs = [run for path in args.peer for run in peer.read_peer_log(path)]
    ladder_definitions = ladders.read_ladders(Path(args.ladders))
    from . import figures, scaling_figures  # matplotlib loads in a second or more: only once the input is known good
    out_dir = Path(args.out)
    # The files of each figure: the figures, report.md's links and forget_earlier_figures all take this.
    formats = ("png", "svg") if args.svg else ("png",)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"{out_dir}: cannot create the output folder ({e.strerror})") from None

    all_configs = configs
    # The per-device figures and tables compare single-process runs; runs over several ranks have their
    # own figures (rank_scaling, scaling_efficiency) and rows in the per-configuration tables.
    configs = [c for c in all_configs if c.ranks == 1]

    def appendix_figure(draw):
        """A figure only appendix.md shows (ladders, thread scaling, time against D, the heat maps of the workloads
        other than the main one): drawn with --all-figures."""
        return draw() if args.all_figures else NOT_DRAWN

    stems = {
        "rank_scaling": scaling_figures.rank_scaling(all_configs, out_dir, formats),
        "scaling_efficiency": scaling_figures.scaling_efficiency(all_configs, out_dir, formats, args.exposed_exchange),
        "time_vs_n": figures.time_vs(configs, "n", out_dir, formats),
        "time_vs_d": appendix_figure(lambda: figures.time_vs(configs, "d", out_dir, formats)),
        "efficiency_vs_n": figures.efficiency_vs_n(configs, out_dir, formats),
        "interactions_per_joule_vs_n": figures.interactions_per_joule_vs_n(configs, out_dir, formats),
        "portability_ratio_vs_n": figures.portability_ratio(configs, out_dir, formats),
        "thread_scaling": appendix_figure(lambda: scaling_figures.thread_scaling(configs, out_dir, formats)),
    }
    ladder_tables = ladders.ladder_tables(configs, ladder_definitions)
    ladder_stems = [appendix_figure(lambda t=t: figures.ladder(t, out_dir, formats)) for t in ladder_tables]
    pps = []
    for workload in analysis.workloads(configs):
        problem = args.pp_problem or performance_portability.pp_problem(configs, workload)
        pp = performance_portability.portability(configs, workload, problem) if problem else None
        if pp and pp.rows:
            pps.append(pp)
    if args.pp_problem and not pps:
        n, d = args.pp_problem
        raise InputError(f"--pp-problem {n},{d}: no successful measurement of that problem")
    main_workload = report.main_workload(configs)
    pp_stems = [figures.portability(pp, out_dir, formats) if pp.workload == main_workload
                else appendix_figure(lambda pp=pp: figures.portability(pp, out_dir, formats)) for pp in pps]

    peer_comparisons = peer.comparisons(configs, peer.points(peer_runs))
    peer_stems = [figures.peer_comparison(c, configs, out_dir, formats) for c in peer_comparisons]

    report_text, appendix_text = report.render(sources, all_configs, stems, ladder_tables, ladder_stems, pps,
                                               pp_stems, peer_runs, peer_comparisons, peer_stems, formats=formats,
                                               exposed=args.exposed_exchange)
    report_path = out_dir / REPORT_FILE
    report_path.write_text(report_text + "\n", encoding="utf-8")
    (out_dir / APPENDIX_FILE).write_text(appendix_text + "\n", encoding="utf-8")
    if args.summary:
        print(report.section_text(report_text, "Portability at a glance"))
    written = [stem for stem in [*stems.values(), *ladder_stems, *pp_stems, *peer_stems] if stem]
    forget_earlier_figures(out_dir, {f"{stem}.{ext}" for stem in written for ext in formats})
    return report_path


# The figures the last run wrote into its output folder, one file name per line.
WRITTEN_LIST = ".nbody_plot_figures"


def forget_earlier_figures(out_dir: Path, written: set[str]) -> None:
    """Deletes the figures an earlier run wrote into out_dir that this run did not write again (a figure
    is named after its data's device, build and workload, so a rerun on new results writes new names,
    and a rerun with --no-svg writes no SVG: the old files would linger beside report.md), then lists
    this run's. Only files an earlier run listed are deleted."""
    listed = out_dir / WRITTEN_LIST
    if listed.is_file():
        for name in listed.read_text(encoding="utf-8").split():
            if name not in written and "/" not in name and (out_dir / name).is_file():
                (out_dir / name).unlink()
    listed.write_text("".join(f"{name}\n" for name in sorted(written)), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    try:
        path = run(sys.argv[1:] if argv is None else argv)
    except InputError as e:
        print(f"nbody_plot: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # e.g. an output folder that cannot be written
        print(f"nbody_plot: error: {e.filename or ''}: {e.strerror}", file=sys.stderr)
        return 2
    except (ArithmeticError, RecursionError) as e:  # numbers the checks let through but no figure can use
        print(f"nbody_plot: error: cannot draw these results ({type(e).__name__}: {e}); `nbody-bench check-results "
              "FILE` says what is wrong with a file", file=sys.stderr)
        return 2
    print(f"nbody_plot: wrote {path} (its tables: {path.parent / APPENDIX_FILE})")
    return 0
