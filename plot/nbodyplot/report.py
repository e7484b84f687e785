"""Two Markdown files. report.md leads with the answer: Kokkos ÷ hand-written per device and workload, the
summary of the main workload, and the figures that carry it. appendix.md holds the tables behind them: the
other workloads' summaries, every configuration with its errors and time, the ladders, the results files and
their contexts."""
from __future__ import annotations

from . import analysis, scaling, tiling_ladder
from .answer_sections import (dirty_section, energy_glance_section, glance_section, portability_section,
                              summary_section)
from .appendix_sections import (compiler_section, context_section, devices_section, measurements_section,
                                sources_section, verification_section)
from .figure_sections import ladder_section, peer_section, rank_scaling_section, ratio_section, scaling_section
from .report_text import APPENDIX_FILE, NOT_DRAWN, REPORT_FILE, failure_anchors, figure, table
from .results import workload_text


def main_workload(configs) -> tuple | None:
    """The workload report.md shows in detail: 2d/fp32/euler where measured, else the first measured."""
    measured = analysis.workloads(configs)
    return measured[0] if measured else None


def section_text(document: str, title: str) -> str:
    """One `## title` section of a rendered document, up to the next `## ` heading ('' if absent)."""
    lines = document.splitlines()
    start = next((i for i, line in enumerate(lines) if line == f"## {title}"), None)
    if start is None:
        return ""
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return "\n".join(lines[start:end]).strip() + "\n"


def render(sources, configs, stems: dict, ladder_tables, ladder_stems, pps: list, pp_stems: list,
           peer_runs: list = (), peer_comparisons: list = (), peer_stems: list = (), *,
           formats: tuple[str, ...], exposed: list = ()) -> tuple[str, str]:
    """report.md and appendix.md. A stem NOT_DRAWN leaves its figure out of the section that would show it."""
    # Runs over several ranks are their own "device" (`device × G ranks`): the per-device comparisons take
    # the single-process runs, the scaling section and the per-configuration tables take every run.
    all_configs = list(configs)
    configs = [c for c in all_configs if c.ranks == 1]
    anchors = failure_anchors(all_configs)
    devices = [dev for dev, _ in analysis.devices(all_configs)]
    main = main_workload(configs)
    main_pps = [(pp, stem) for pp, stem in zip(pps, pp_stems) if pp.workload == main]
    other_pps = [(pp, stem) for pp, stem in zip(pps, pp_stems) if pp.workload != main]

    lines = ["# N-body benchmark report", "",
             f"Written by `plot/nbody_plot.py` from {len(sources)} results file{'s' if len(sources) != 1 else ''} "
             f"on {' and '.join(devices)}. Times are per step (SPEC §3); numbers to three significant figures. "
             "Here: the answer (Kokkos against hand-written code on each device and workload), the summary of "
             + (f"the {workload_text(main)} workload" if main else "each workload") + " and the figures that "
             f"carry it. [{APPENDIX_FILE}]({APPENDIX_FILE}) holds the tables behind them: the other workloads' "
             "summaries, every configuration with its errors and times, the ladders, the results files, builds "
             "and contexts.", ""]
    lines += dirty_section(sources, all_configs)
    summary = analysis.summary(configs)
    lines += glance_section(summary, pps)
    lines += energy_glance_section(summary)
    lines += summary_section(configs, [t for t in summary if t.workload == main], [pp for pp, _ in main_pps],
                             anchors)
    lines += peer_section(list(peer_runs), list(peer_comparisons), list(peer_stems), formats)
    lines += ["## Portability ratio against N", "",
              "The fastest Kokkos variant's interactions/s ÷ the fastest hand-written variant's at each N both ran "
              "(1 = as fast), a line per device, build, workload and D; every point is in the "
              f"[appendix]({APPENDIX_FILE}#portability-ratio-against-n).", ""] + figure(
        stems["portability_ratio_vs_n"], "Portability ratio against N",
        "No line of two or more N where a Kokkos variant and its hand-written counterpart both ran in one build.",
        formats)
    lines += ["## Efficiency against N", "",
              "Efficiency = achieved interactions/s ÷ the device's limit (SPEC §3); the dashed line is the limit "
              "(efficiency 1). A panel per device and model; a line per variant and build.", ""] + figure(
        stems["efficiency_vs_n"], "Efficiency against N", "No N sweep with efficiencies in these results.", formats)
    lines += ["## Interactions per joule against N", "",
              "N² ÷ the energy per step over the timed phase (docs/results-format.md, \"Energy\"): how many "
              "interactions each joule bought. A panel per device and model; a line per variant and build.", ""] + figure(
        stems.get("interactions_per_joule_vs_n"), "Interactions per joule against N",
        "No N sweep with energy in these results.", formats)
    lines += ["## Time per step against N", ""] + figure(
        stems["time_vs_n"], "Time per step against N", "No N sweep (two or more N at one D) in these results.",
        formats)
    if any(c.ranks > 1 for c in all_configs):
        lines += rank_scaling_section(all_configs, stems.get("rank_scaling"), stems.get("scaling_efficiency"),
                                      formats, exposed)
    lines += portability_section([pp for pp, _ in main_pps], [stem for _, stem in main_pps], formats)
    if other_pps:
        lines += [f"The other workloads' tables: [{APPENDIX_FILE}]({APPENDIX_FILE}#performance-portability).", ""]

    appendix = ["# N-body benchmark report: appendix", "",
                f"The tables behind [{REPORT_FILE}]({REPORT_FILE}). Figures of the ladders, the thread scaling, the "
                "time against D and the other workloads' performance portability are drawn with `--all-figures`.",
                ""]
    others = [t for t in summary if t.workload != main]
    if others:
        appendix += summary_section(configs, others, [pp for pp, _ in other_pps], anchors,
                                    title="Summary of the other workloads")
    if other_pps:
        appendix += portability_section([pp for pp, _ in other_pps], [stem for _, stem in other_pps], formats)
    appendix += ratio_section(configs, NOT_DRAWN, formats)
    if stems["time_vs_d"] != NOT_DRAWN:
        appendix += ["## Time per step against D", ""] + figure(
            stems["time_vs_d"], "Time per step against D", "No D sweep (two or more D at one N) in these results.",
            formats)
    appendix += ladder_section(ladder_tables, ladder_stems, formats)
    appendix += tiling_ladder.section(configs, table)
    if stems["thread_scaling"] != NOT_DRAWN or scaling.thread_scaling(configs):
        appendix += scaling_section(configs, stems["thread_scaling"], formats)
    appendix += compiler_section(configs)
    appendix += verification_section(all_configs, anchors)
    appendix += measurements_section(all_configs)
    appendix += sources_section(sources, all_configs)
    appendix += devices_section(all_configs)
    appendix += context_section(sources)
    return "\n".join(lines), "\n".join(appendix)
