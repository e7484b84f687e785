"""Tests of plot/nbody_plot.py on the committed fixture (plot/tests/fixture/, see its README).

Run: /usr/bin/python3 -m unittest discover -s plot/tests   (ctest runs the same)
The report's numbers are read back from report.md and appendix.md and compared with values taken from the
JSON here, independently of the tool's own loading code.
"""
import glob
import json
import math
import os
import re
import statistics
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from plot_tool import PLOT_DIR, read_report, report_of, run_or_fail, run_tool

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


class ReportOnFixture(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = Path(cls.tmp.name) / "report"
        run_or_fail(*FIXTURES, "--all-figures", "--out", cls.out)
        cls.report = read_report(cls.out)
        cls.expected = expected_configurations()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def assertClose(self, reported: str, value: float, what: str):
        self.assertTrue(math.isclose(number(reported), value, rel_tol=REL, abs_tol=1e-300),
                        f"{what}: report says {reported}, JSON says {value:.6g}")

    def test_fixture_has_what_every_figure_needs(self):
        self.assertGreaterEqual(len(FIXTURES), 2, "fixture: a real file and the synthetic one")

    def test_every_figure_is_written_as_png_and_svg_and_embedded(self):
        stems = ["time_vs_n", "time_vs_d", "efficiency_vs_n", "thread_scaling", "portability_2d_fp32_euler",
                 "portability_ratio_vs_n"]
        stems += [Path(p).stem for p in glob.glob(str(self.out / "ladder_*.png"))]
        self.assertTrue(any(s.startswith("ladder_cuda_") for s in stems), "no CUDA ladder figure")
        self.assertTrue(any(s.startswith("ladder_openmp_") for s in stems), "no CPU ladder figure")
        for stem in stems:
            png = self.out / f"{stem}.png"
            svg = self.out / f"{stem}.svg"
            self.assertTrue(png.is_file() and png.stat().st_size > 1000, f"{png} missing or tiny")
            self.assertEqual(png.read_bytes()[:8], PNG_SIGNATURE, f"{png} is not a PNG")
            self.assertTrue(svg.is_file(), f"{svg} missing")
            self.assertTrue(ElementTree.parse(svg).getroot().tag.endswith("svg"), f"{svg} is not an SVG")
            self.assertIn(f"]({stem}.png)", self.report, f"{stem}.png not embedded in report.md or appendix.md")
            self.assertIn(f"[SVG]({stem}.svg)", self.report, f"{stem}.svg not linked from report.md or appendix.md")
        for referenced in [line.split("](")[1].rstrip(")") for line in self.report.splitlines()
                           if line.startswith(("![", "[SVG]("))]:
            self.assertTrue((self.out / referenced).is_file(), f"report embeds missing {referenced}")

    def test_a_rerun_deletes_the_figures_of_earlier_results_and_nothing_else(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "report"
            self.assertEqual(run_tool(*FIXTURES, "--all-figures", "--out", out).returncode, 0)
            first = {p.name for p in out.glob("*.png")}
            mine = out / "notes.png"  # not the tool's: stays
            mine.write_bytes(PNG_SIGNATURE)
            self.assertEqual(run_tool(FIXTURES[0], "--all-figures", "--out", out).returncode, 0)
            second = {p.name for p in out.glob("*.png")} - {mine.name}
            self.assertTrue(mine.is_file())
            self.assertLess(second, first, "the second run, on fewer results, wrote the same figures")
            report = read_report(out)
            for name in second:
                self.assertIn(f"]({name})", report, f"{name} is left in the folder but not in the report")

    def test_every_measurement_is_reported_with_the_json_numbers(self):
        rows = parse_table(self.report, "## All measurements")
        reported = {(r["device"], r["variant"], r["tuning"], int(r["N"]), int(r["D"]), int(r["steps"])): r
                    for r in rows}
        measured = {k: e for k, e in self.expected.items() if e.get("verified") and "error" not in e}
        self.assertEqual(set(reported), set(measured))
        builds = {device_name(e, json.loads(Path(p).read_text())["context"]): short_commit(p)
                  for p in FIXTURES for e in json.loads(Path(p).read_text())["benchmarks"]}
        for key, e in measured.items():
            r = reported[key]
            self.assertEqual(r["build"], builds[key[0]], f"{key}: one build per fixture file, named by its commit")
            self.assertEqual(r["workload"], "2d/fp32/euler", f"{key}: entries without workload fields")
            self.assertClose(r["time per step (s)"], e["time_per_step_s"], f"{key} time")
            self.assertClose(r["interactions/s"], e["interactions_per_second"], f"{key} interactions/s")
            self.assertClose(r["efficiency"], e["efficiency"], f"{key} efficiency")
            self.assertClose(r["upload (s)"], e["upload_s"], f"{key} upload")
            self.assertClose(r["download (s)"], e["download_s"], f"{key} download")
            self.assertEqual(int(r["repetitions"]), e["repetitions"], f"{key} repetitions")
            self.assertEqual(r["reproducibility"], e.get("reproducibility", "—"), f"{key} reproducibility")

    def test_numbers_in_tables_have_three_significant_figures(self):
        body = self.report.split("## Appendix C")[0]  # the context appendix lists values as recorded
        decimals = re.compile(r"^-?(\d+\.\d*|\d+(\.\d*)?e[+-]\d+)$")
        checked = 0
        for line in body.splitlines():
            if not line.startswith("| ") or line.startswith("| file "):
                continue
            # cells that start with a number (an error message quoted from the JSON starts with a word)
            cells = [c for c in line.strip()[1:-1].split(" | ") if c[:1].isdigit() or c[:1] == "-"]
            for token in " ".join(cells).split():
                if decimals.match(token):
                    digits = token.split("e")[0].replace("-", "").replace(".", "").lstrip("0") or "0"
                    self.assertLessEqual(len(digits), 3, f"{token} in: {line[:120]}")
                    self.assertTrue(len(digits) == 3 or float(token) == 0, f"{token}: three figures, zeros kept")
                    checked += 1
        self.assertGreater(checked, 500)

    def test_failed_configurations_are_listed_with_their_error(self):
        rows = parse_table(self.report, "### Failed configurations")
        failed = {k: e for k, e in self.expected.items() if not e.get("verified")}
        self.assertEqual({(r["device"], r["variant"], r["tuning"], int(r["N"]), int(r["D"]), int(r["steps"]))
                          for r in rows}, set(failed))
        for r in rows:
            e = failed[(r["device"], r["variant"], r["tuning"], int(r["N"]), int(r["D"]), int(r["steps"]))]
            self.assertEqual(r["error"], e["error"])

    def test_verification_table_shows_each_error_against_its_threshold(self):
        rows = parse_table(self.report, "## Verification")
        self.assertEqual(len(rows), len(self.expected))
        thresholds = {}
        for path in FIXTURES:
            context = json.loads(Path(path).read_text())["context"]
            thresholds[path] = context["matrix"]["verification"]
        columns = {"max pos err": ("max_pos_err", "max_pos_err"), "RMS pos err": ("rms_pos_err", "max_rms_pos_err"),
                   "max vel err": ("max_vel_err", "max_vel_err"), "map diff": ("map_diff", "max_map_diff")}
        # Version 2 also holds each precision's thresholds (by_precision); null: the map is explained.
        limits = set()
        for t in thresholds.values():
            for per in [t] + list(t.get("by_precision", {}).values()):
                limits |= {(k, v) for k, v in per.items() if isinstance(v, (int, float))}
        for r in rows:
            key = (strip_anchor(r["device"]), r["variant"], r["tuning"], int(r["N"]), int(r["D"]))
            e = next(e for k, e in self.expected.items() if k[:5] == key)
            self.assertEqual(r["verdict"], "PASS" if e["verified"] else "FAIL", key)
            for title, (field, limit_key) in columns.items():
                if e.get(field) is None:
                    self.assertEqual(r[title], "—")
                    continue
                if len(r[title].split()) == 1:  # no threshold (null): the map is explained, not bounded
                    self.assertClose(r[title], e[field], f"{key} {field}")
                    self.assertIn(None, {per.get(limit_key, 0) for t in thresholds.values()
                                         for per in [t] + list(t.get("by_precision", {}).values())}, f"{key} {field}")
                    continue
                value, relation, limit = r[title].split()
                self.assertClose(value, e[field], f"{key} {field}")
                self.assertIn((limit_key, float(limit)), {(k, float(f"{v:.4g}")) for k, v in limits})
                self.assertEqual(relation, "≤" if e[field] <= float(limit) else ">")
        self.assertIn("FAIL", {r["verdict"] for r in rows}, "the fixture's unverified configuration")
        failed = sum(r["verdict"] == "FAIL" for r in rows)
        self.assertEqual({r["verdict"] for r in rows[:failed]}, {"FAIL"}, "failures come first")
        self.assertIn(f"{len(rows)} configurations: {len(rows) - failed} verified, {failed} failed, 0 refused, 0 not verified.",
                      self.report)

    def fastest_times(self, device, variant, tuning=None):
        """(n, d) -> fastest time per step of the variant on the device (over tunings unless given)."""
        times = {}
        for (dev, v, t, n, d, _), e in self.expected.items():
            if dev == device and v == variant and e.get("verified") and (tuning is None or t == tuning):
                times[(n, d)] = min(times.get((n, d), math.inf), e["time_per_step_s"])
        return times

    def test_cuda_ladder_speedups_are_geometric_means_of_time_ratios(self):
        rows = parse_table(self.report,
                           f"### CUDA ladder on {SYNTHETIC_GPU} (build unknown)")
        baseline32 = self.fastest_times(SYNTHETIC_GPU, "cuda.baseline_aos", "block_size=32 map=atomic")
        baseline = self.fastest_times(SYNTHETIC_GPU, "cuda.baseline_aos")
        rsqrt = self.fastest_times(SYNTHETIC_GPU, "cuda.rsqrt")
        every_step = set(baseline)
        for r in rows:  # "cuda.baseline_aos block_size=32": the variant's configurations with that tuning
            variant, *tuning = r["variant"].split()
            every_step &= {(n, d) for (dev, v, t, n, d, _), e in self.expected.items()
                           if (dev, v) == (SYNTHETIC_GPU, variant) and e.get("verified") and set(tuning) <= set(t.split())}
        n_sweep = sorted(p for p in every_step if p[1] == 10)
        self.assertIn(f"- N sweep, D = 10: N = {', '.join(str(n) for n, _ in n_sweep)} (every step ran these)",
                      self.report)

        def geomean(a, b):
            return math.exp(sum(math.log(a[p] / b[p]) for p in n_sweep) / len(n_sweep))

        by_variant = {r["variant"]: r for r in rows}
        self.assertEqual(rows[0]["variant"], "cuda.baseline_aos block_size=32")
        self.assertClose(by_variant["cuda.baseline_aos"]["speedup vs previous (N sweep, D = 10)"],
                         geomean(baseline32, baseline), "block size step")
        self.assertClose(by_variant["cuda.rsqrt"]["speedup vs previous (N sweep, D = 10)"],
                         geomean(baseline, rsqrt), "rsqrt step")
        self.assertClose(by_variant["cuda.rsqrt"]["cumulative (N sweep, D = 10)"],
                         geomean(baseline32, rsqrt), "rsqrt cumulative")

    def test_thread_scaling_is_relative_to_the_fewest_threads(self):
        rows = parse_table(self.report, "## Thread scaling")
        self.assertTrue(rows)

        def time_at(r, threads):
            other = [] if r["other tuning"] == "-" else r["other tuning"].split()
            tuning = " ".join(sorted(other + [f"threads={threads}"]))
            return min(e["time_per_step_s"] for (dev, v, t, n, d, _), e in self.expected.items()
                       if (dev, v, t, n, d) == (r["device"], r["variant"], tuning, int(r["N"]), int(r["D"])))

        for r in rows:
            speedup = time_at(r, 1) / time_at(r, r["threads"])
            self.assertClose(r["time per step (s)"], time_at(r, r["threads"]), "time")
            self.assertClose(r["speedup"], speedup, "speedup")
            self.assertClose(r["parallel efficiency"], speedup / int(r["threads"]), "parallel efficiency")

    def test_portability_is_the_harmonic_mean_of_application_efficiencies(self):
        rows = {r["family"]: r for r in parse_table(self.report, "## Performance portability")}
        problem = next(line for line in self.report.splitlines()
                       if line.startswith("Workload 2d/fp32/euler. Problem: N = "))
        n = int(problem.split("N = ")[1].split(",")[0])
        d = int(problem.split("D = ")[1].split(";")[0])
        platforms = problem.split("platforms H: ")[1].rstrip(".").split(", ")
        self.assertIn(SYNTHETIC_GPU, platforms)
        self.assertIn(SYNTHETIC_CPU, platforms)
        best = {p: min(e["time_per_step_s"] for (dev, _, _, nn, dd, _), e in self.expected.items()
                       if dev == p and (nn, dd) == (n, d) and e.get("verified")) for p in platforms}

        def family_efficiency(family, platform):
            times = [e["time_per_step_s"] for (dev, v, _, nn, dd, _), e in self.expected.items()
                     if dev == platform and v.split("@")[0] == family and (nn, dd) == (n, d) and e.get("verified")]
            return best[platform] / min(times) if times else None

        gpu_only = {"cuda.tiled"}
        for family in ("kokkos.team_tiled", "kokkos.naive", "cuda.tiled"):
            effs = [family_efficiency(family, p) for p in platforms]
            for p, eff in zip(platforms, effs):
                if eff is None:  # a CUDA variant cannot run on a CPU; a Kokkos one was not measured there
                    self.assertEqual(rows[family][f"app eff on {p}"],
                                     "no CPU variant" if family in gpu_only else "not measured", f"{family} on {p}")
                else:
                    self.assertClose(rows[family][f"app eff on {p}"], eff, f"{family} on {p}")
            if family in gpu_only:
                self.assertEqual(number(rows[family]["PP (app)"]), 0.0, "Pennycook's 0: CUDA does not run on CPUs")
            elif None in effs:
                self.assertEqual(rows[family]["PP (app)"], "not measured", f"{family}: not 0")
            else:
                self.assertClose(rows[family]["PP (app)"], len(effs) / sum(1 / e for e in effs), f"PP of {family}")
            ran = [e for e in effs if e is not None]
            self.assertClose(rows[family]["harmonic mean where it ran"], len(ran) / sum(1 / e for e in ran),
                             f"harmonic mean of {family} where it ran")
        kokkos_ran = [p for p in platforms if rows["kokkos.team_tiled"][f"app eff on {p}"] != "not measured"]
        self.assertGreaterEqual(len(kokkos_ran), 2, "the fixture's Kokkos family spans two platforms")
        self.assertGreater(number(rows["cuda.tiled"]["harmonic mean where it ran"]), 0.0)


class NoSvg(unittest.TestCase):
    """--no-svg: no .svg is written or linked, and a rerun with it deletes the SVGs an earlier run wrote into
    the folder."""

    @staticmethod
    def names(out: Path, pattern: str) -> set[str]:
        return {p.name for p in out.glob(pattern)}

    def test_no_svg_writes_and_links_only_png(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "report"
            result = run_tool(*FIXTURES, "--no-svg", "--out", out)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(self.names(out, "*.svg"), set())
            pngs = self.names(out, "*.png")
            self.assertIn("time_vs_n.png", pngs)
            report = read_report(out)
            self.assertNotIn(".svg", report)
            for name in pngs:
                self.assertIn(f"]({name})", report)
            self.assertEqual(set((out / ".nbody_plot_figures").read_text().split()), pngs)

    def test_a_rerun_with_no_svg_deletes_the_svgs_of_an_earlier_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "report"
            self.assertEqual(run_tool(*FIXTURES, "--out", out).returncode, 0)
            pngs = self.names(out, "*.png")
            svgs = self.names(out, "*.svg")
            self.assertEqual(svgs, {name[:-len(".png")] + ".svg" for name in pngs})
            self.assertIn("[SVG](time_vs_n.svg)", (out / "report.md").read_text(encoding="utf-8"))
            mine = out / "notes.svg"  # not the tool's: stays
            mine.write_text("<svg/>")
            self.assertEqual(run_tool(*FIXTURES, "--no-svg", "--out", out).returncode, 0)
            self.assertEqual(self.names(out, "*.svg"), {mine.name})
            self.assertEqual(self.names(out, "*.png"), pngs)
            self.assertNotIn("[SVG](", read_report(out))


class Analysis(unittest.TestCase):
    """The arithmetic on hand-made numbers."""

    @classmethod
    def setUpClass(cls):
        tool = import_tool()
        cls.analysis, cls.ladders, cls.performance_portability = tool.analysis, tool.ladders, tool.performance_portability

    def test_pennycook_is_the_harmonic_mean_and_zero_where_a_platform_is_missing(self):
        pp = self.performance_portability.harmonic_mean_or_zero
        self.assertAlmostEqual(pp([0.5, 1.0], 2), 2 / (2 + 1))
        self.assertAlmostEqual(pp([0.25, 0.25, 1.0], 3), 3 / 9)
        self.assertEqual(pp([0.5], 2), 0.0)
        self.assertEqual(pp([0.5, None], 2), 0.0)

    def test_only_kokkos_is_paired_with_a_hand_written_model(self):
        # Thrust and OpenACC's host builds have @space ids too, but no "Kokkos ÷ hand-written" ratio.
        partner = self.analysis.kokkos_partner
        self.assertEqual(partner("Kokkos (cuda)"), "CUDA")
        self.assertEqual(partner("Kokkos (openmp)"), "OpenMP")
        for model in ("Kokkos (serial)", "Thrust (cuda)", "Thrust (omp)", "OpenACC (host)", "CUDA", "stdpar"):
            self.assertIsNone(partner(model), model)
        groups = self.analysis.comparison_groups(["Thrust (omp)", "Thrust (cuda)", "Kokkos (cuda)", "CUDA", "stdpar"])
        self.assertEqual(groups, [["CUDA", "Kokkos (cuda)"], ["stdpar"], ["Thrust (cuda)"], ["Thrust (omp)"]])

    def test_each_new_model_has_its_best_of_family(self):
        families = self.performance_portability.best_of_families()
        for family, member, other in (("best Thrust variant", "thrust.packed@tbb", "kokkos.simd@openmp"),
                                      ("best stdpar variant", "stdpar.blocked", "omp.simd"),
                                      ("best OpenACC variant", "openacc.naive@host", "omp_target.naive")):
            self.assertTrue(families[family](member), family)
            self.assertFalse(families[family](other), family)
        self.assertFalse(families["best hand-written variant"]("thrust.naive@cuda"))

    def test_ladder_sweeps_are_the_longest_n_and_d_sweeps(self):
        problems = [(n, 10) for n in (1024, 2048, 4096)] + [(1024, d) for d in (1000, 5000)] + \
                   [(65536, 100), (1024, 100)]
        groups = self.ladders.sweep_groups(problems)
        self.assertEqual([g.label for g in groups], ["N sweep, D = 10", "D sweep, N = 1024"])
        self.assertEqual(groups[0].problems, [(1024, 10), (2048, 10), (4096, 10)])
        self.assertEqual(groups[1].problems, [(1024, 10), (1024, 100), (1024, 1000), (1024, 5000)])
        self.assertEqual([g.label for g in self.ladders.sweep_groups([(4096, 10)])], ["N = 4096, D = 10"])

    def test_ladder_ratio_uses_only_problems_both_steps_ran(self):
        ratio = self.ladders._ratio({(1, 1): 4.0, (2, 1): 9.0, (3, 1): 100.0}, {(1, 1): 1.0, (2, 1): 1.0},
                                     [(1, 1), (2, 1), (3, 1)])
        self.assertAlmostEqual(ratio, 6.0)  # geometric mean of 4 and 9


class SmallInput(unittest.TestCase):
    def test_one_configuration_gives_a_report_that_says_what_is_missing(self):
        document = json.loads(Path(FIXTURES[0]).read_text())
        first = next(e for e in document["benchmarks"] if e["run_type"] == "iteration" and e["repetitions"] == 1)
        document["benchmarks"] = [first]
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "one.json"
            path.write_text(json.dumps(document))
            result = run_tool(path, "--all-figures", "--out", Path(tmp) / "out")
            self.assertEqual(result.returncode, 0, result.stderr)
            report = read_report(Path(tmp) / "out")
            self.assertFalse((Path(tmp) / "out" / "time_vs_n.png").exists())
        self.assertIn("No N sweep", report)
        self.assertIn("No thread sweep", report)
        row = parse_table(report, "## All measurements")[0]
        self.assertIn(f"Problem: N = {first['n']}, D = {first['d']};", report)
        self.assertTrue(math.isclose(number(row["time per step (s)"]), first["time_per_step_s"], rel_tol=REL))

    def test_the_reproducibility_class_each_entry_records_is_shown(self):
        document = json.loads(Path(FIXTURES[0]).read_text())
        entries = [e for e in document["benchmarks"] if e["run_type"] == "iteration" and e["repetitions"] == 1
                   and e.get("verified") and "error" not in e]
        variants = sorted({e["variant"] for e in entries})[:3]
        classes = dict(zip(variants, ["bitwise", "order-fixed", "run-to-run"]))
        document["benchmarks"] = [e for e in entries if e["variant"] in classes]
        for e in document["benchmarks"]:
            e["reproducibility"] = classes[e["variant"]]
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "classes.json"
            path.write_text(json.dumps(document))
            result = run_tool(path, "--out", Path(tmp) / "out")
            self.assertEqual(result.returncode, 0, result.stderr)
            report = read_report(Path(tmp) / "out")
        rows = parse_table(report, "## All measurements")
        self.assertEqual({r["variant"] for r in rows}, set(classes))
        for r in rows:
            self.assertEqual(r["reproducibility"], classes[r["variant"]], r["variant"])


    def test_files_that_disagree_on_a_device_limit_are_flagged(self):
        document = json.loads(Path(FIXTURES[0]).read_text())
        document["context"]["host_cpu"]["fp32_interaction_limit"] /= 2
        document["benchmarks"] = [e for e in document["benchmarks"] if e["n"] == 256]
        with tempfile.TemporaryDirectory() as tmp:
            halved = Path(tmp) / "halved.json"
            halved.write_text(json.dumps(document))
            result = run_tool(FIXTURES[0], halved, "--out", Path(tmp) / "out")
            self.assertEqual(result.returncode, 0, result.stderr)
            report = read_report(Path(tmp) / "out")
        self.assertIn("Note: the results files disagree on the FP32 limit of AMD EPYC (2 CPUs) by 100 % (more than "
                      "the 1.00 % tolerance)", report)
        self.assertIn(f"in `{halved}`", report)
        self.assertEqual([line for line in report.splitlines() if "disagree" in line and "**" in line], [],
                         "a note, not a bold banner")

    def test_a_limit_within_the_tolerance_is_not_flagged(self):
        document = json.loads(Path(FIXTURES[0]).read_text())
        document["context"]["host_cpu"]["fp32_interaction_limit"] *= 1.006
        document["benchmarks"] = [e for e in document["benchmarks"] if e["n"] == 256]
        with tempfile.TemporaryDirectory() as tmp:
            close = Path(tmp) / "close.json"
            close.write_text(json.dumps(document))
            result = run_tool(FIXTURES[0], close, "--out", Path(tmp) / "out")
            self.assertEqual(result.returncode, 0, result.stderr)
            report = read_report(Path(tmp) / "out")
        self.assertFalse("Note: the results files disagree" in report, "0.6 % is within the 1 % tolerance")
        self.assertIn("(files within 0.600 %)", report)

    def test_portability_problem_can_be_chosen(self):
        with tempfile.TemporaryDirectory() as tmp:
            report = report_of(FIXTURES[0], "--pp-problem", "512,10", out=Path(tmp) / "out")
        self.assertIn("Problem: N = 512, D = 10;", report)


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


class Summary(unittest.TestCase):
    """The report opens with, per device, the best of each model, Kokkos ÷ hand-written and the verification
    counts; every number equal to one computed here from the fixture JSON."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.main = report_of(*FIXTURES, out=Path(cls.tmp.name) / "report")
        cls.report = read_report(Path(cls.tmp.name) / "report")
        cls.expected = expected_configurations()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def best(self, device, prefix, space, problem):
        """The fastest verified entry of a model (variant prefix, Kokkos space or None) at (n, d)."""
        entries = [e for (dev, v, _, n, d, _), e in self.expected.items()
                   if dev == device and v.startswith(prefix + ".") and (v.split("@")[1] if "@" in v else None) == space
                   and (n, d) == problem and e.get("verified") and "error" not in e]
        return min(entries, key=lambda e: e["time_per_step_s"]) if entries else None

    def problems(self, device, prefix, space):
        return {(n, d) for (dev, v, _, n, d, _), e in self.expected.items()
                if dev == device and v.startswith(prefix + ".") and (v.split("@")[1] if "@" in v else None) == space
                and e.get("verified") and "error" not in e}

    def check_pair(self, device, hand, hand_prefix, kokkos, space):
        rows = summary_table(self.report, device)[1]
        common = self.problems(device, hand_prefix, None) & self.problems(device, "kokkos", space)
        large = max(common, key=lambda p: (p[0], -p[1]))
        for problem in (large, (1024, 10)):
            by_model = {r["model"]: r for r in rows if (int(r["N"]), int(r["D"])) == problem}
            fast_hand = self.best(device, hand_prefix, None, problem)
            fast_kokkos = self.best(device, "kokkos", space, problem)
            for model, e in ((hand, fast_hand), (kokkos, fast_kokkos)):
                r = by_model[model]
                self.assertEqual(r["best variant"], e["variant"], f"{device} {model} {problem}")
                for column, field in (("time per step (s)", "time_per_step_s"),
                                      ("interactions/s", "interactions_per_second"), ("efficiency", "efficiency")):
                    self.assertTrue(math.isclose(number(r[column]), e[field], rel_tol=REL),
                                    f"{device} {model} {problem} {column}: {r[column]} against {e[field]}")
            ratio = by_model[kokkos]["Kokkos ÷ hand-written"]
            self.assertTrue(ratio.endswith(f" × {hand}"), ratio)
            expected = fast_hand["time_per_step_s"] / fast_kokkos["time_per_step_s"]
            self.assertTrue(math.isclose(number(ratio), expected, rel_tol=REL), f"{ratio} against {expected:.4g}")
            self.assertEqual(by_model[hand]["Kokkos ÷ hand-written"], "")

    def glance_ratios(self) -> list[dict]:
        """The first screen's Kokkos ÷ hand-written table, under the best-of answer."""
        return parse_table(self.report, "### A different source on each platform", column="device")

    def test_the_portability_answer_comes_first_then_its_energy_then_the_summary(self):
        assert_answer_first(self, self.report, within=25)
        self.assertTrue(any(r["device"] == SYNTHETIC_GPU for r in self.glance_ratios()))

    def test_the_glance_gives_kokkos_on_each_parallel_space_against_its_hand_written_model(self):
        glance = self.glance_ratios()
        default = {(r["device"], r["ratio of"]): r for r in glance if r["workload"] == "2d/fp32/euler"}
        self.assertEqual(set(default), {(SYNTHETIC_GPU, "Kokkos (cuda) ÷ CUDA"),
                                        (SYNTHETIC_CPU, "Kokkos (openmp) ÷ OpenMP")})
        for (device, _), r in default.items():
            summary_row = next(s for s in summary_table(self.report, device)[1]
                               if s["model"] == r["ratio of"].split(" ÷ ")[0])
            self.assertEqual(number(r["ratio"]), number(summary_row["Kokkos ÷ hand-written"]))
            self.assertEqual(r["Kokkos variant"], summary_row["best variant"])

    def test_kokkos_serial_is_never_a_portability_ratio(self):
        self.assertNotIn("Kokkos (serial) ÷", self.report)
        self.assertNotIn("× serial", self.report)

    def test_kokkos_against_cuda_on_the_gpu(self):
        self.check_pair(SYNTHETIC_GPU, "CUDA", "cuda", "Kokkos (cuda)", "cuda")

    def test_kokkos_against_openmp_on_the_host(self):
        self.check_pair(SYNTHETIC_CPU, "OpenMP", "omp", "Kokkos (openmp)", "openmp")

    def test_a_model_without_a_partner_is_shown_at_its_own_largest_n(self):
        rows = summary_table(self.report, "AMD EPYC (2 CPUs)")[1]
        largest = max(self.problems("AMD EPYC (2 CPUs)", "serial", None), key=lambda p: (p[0], -p[1]))
        serial = [r for r in rows if r["model"] == "serial"]
        self.assertEqual([(int(r["N"]), int(r["D"])) for r in serial], [largest])
        self.assertEqual(serial[0]["Kokkos ÷ hand-written"], "")

    def test_verification_counts_per_device(self):
        by_device = {}
        for key, e in self.expected.items():
            by_device.setdefault(key[0], []).append(e)
        for device, entries in by_device.items():
            counts = verdict_counts(entries)
            heading = summary_table(self.report, device)[0]
            self.assertTrue(heading.endswith(f"— {len(entries)} configurations: {counts['verified']} verified, "
                                             f"{counts['failed']} failed, {counts['refused']} refused, "
                                             f"{counts['not verified']} not verified"),
                            heading)
        self.assertGreater(verdict_counts(by_device[SYNTHETIC_GPU])["failed"], 0, "the fixture has failures")

    def test_failures_link_to_their_rows(self):
        """The summary in report.md links each failure to its row of the verification table in appendix.md."""
        links = re.findall(r"\[([^\]]+)\]\(appendix\.md#(failure-\d+)\)", self.main)
        failed = {(k[0], k[1], k[3], k[4]) for k, e in self.expected.items()
                  if e.get("verified") is False or "error" in e}
        self.assertEqual(len(links), len(failed))
        self.assertNotIn("## Verification", self.main)
        rows = parse_table(self.report, "## Verification")
        for text, anchor in links:
            row = next(r for r in rows if f'<a id="{anchor}"></a>' in r["device"])
            self.assertEqual(row["verdict"], "FAIL")
            variant, n, d = text.split()[:3]
            self.assertEqual((row["variant"], f"N={row['N']}", f"D={row['D']}"), (variant, n, d))
            self.assertIn((strip_anchor(row["device"]), variant, int(row["N"]), int(row["D"])), failed)


class Builds(unittest.TestCase):
    """Results of two builds of one variant (here the same file as if from an x86-64-v4 binary) are two
    series, never one line, and the legend and tables say which is which."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.other = write_other_build(Path(cls.tmp.name))
        tool = import_tool()
        cls.analysis, cls.figures, results = tool.analysis, tool.figures, tool.results
        cls.sources, cls.configs = results.load([FIXTURES[0], str(cls.other)])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_two_builds_of_one_variant_are_two_series(self):
        panel = self.analysis.sweeps(self.configs, "n")[("AMD EPYC (2 CPUs)", "OpenMP")]
        simd = {key: line for key, line in panel.items() if key.variant == "omp.simd"}
        self.assertEqual(sorted(key.build.isa for key in simd), ["-march=x86-64-v4", "default ISA"])
        for key, line in simd.items():
            self.assertEqual(len({c.source for c in line}), 1, f"{key}: points of one file (one build) only")
            self.assertEqual([c.n for c in line], [256, 512, 1024])

    def test_the_legend_says_which_build_is_which(self):
        fig = self.figures.draw_sweep(self.configs, "n", "time")
        labels = {line.get_label() for ax in fig.axes for line in ax.get_lines()}
        self.assertIn("omp.simd (-march=x86-64-v4)", labels)
        self.assertIn("omp.simd (default ISA)", labels)

    def test_the_report_keeps_both_builds(self):
        with tempfile.TemporaryDirectory() as tmp:
            result = run_tool(FIXTURES[0], self.other, "--out", Path(tmp) / "out")
            self.assertEqual(result.returncode, 0, result.stderr)
            report = read_report(Path(tmp) / "out")
        rows = [r for r in parse_table(report, "## All measurements")
                if (r["variant"], r["N"], r["D"]) == ("omp.simd", "1024", "10")]
        self.assertEqual(sorted(r["build"] for r in rows), ["-march=x86-64-v4", "default ISA"])
        fast, slow = sorted(rows, key=lambda r: number(r["time per step (s)"]))
        self.assertEqual(fast["build"], "-march=x86-64-v4")
        self.assertIn("### CPU ladder on AMD EPYC (2 CPUs) (build default ISA)", report)
        self.assertIn("### CPU ladder on AMD EPYC (2 CPUs) (build -march=x86-64-v4)", report)

    def test_one_build_loaded_twice_is_one(self):
        results = import_tool().results
        once = results.load([FIXTURES[0]])[1]
        twice = results.load([FIXTURES[0], FIXTURES[0]])[1]
        self.assertEqual(len(twice), len(once))


class DirtyAndRefused(unittest.TestCase):
    """A run from a dirty build (git_commit ending in -dirty) is flagged where a reader looks first and
    on each of its rows; a tuning the variant refused for resources reads "refused" with its reason,
    never "failed"."""

    REASON = ("tunings team_size=32 x vector_length=32 exceed the 28 x 32 threads per team this kernel's "
              "registers and scratch allow on cuda for 2d/fp32/euler")

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        tmp = Path(cls.tmp.name)
        document = json.loads(Path(FIXTURES[1]).read_text())
        document["context"]["git_commit"] = "0123456789abcdef0123456789abcdef01234567"
        template = next(e for e in document["benchmarks"] if e["variant"] == "kokkos.naive@cuda")
        refused = {k: v for k, v in template.items() if k not in (
            "time_per_step_s", "interactions_per_second", "efficiency", "real_time", "cpu_time", "upload_s",
            "download_s", "aggregate_name", "aggregate_unit")}
        refused.update(run_type="iteration", repetitions=1, repetition_index=0, iterations=0, n=4099,
                       tuning={"team_size": "32", "vector_length": "32"}, verified=False, error_occurred=True,
                       error_message=cls.REASON, error=cls.REASON)
        document["benchmarks"].append(refused)
        cls.clean = tmp / "clean.json"
        cls.clean.write_text(json.dumps(document))
        document["context"]["git_commit"] += "-dirty"
        cls.dirty = tmp / "dirty.json"
        cls.dirty.write_text(json.dumps(document))
        cls.counts = verdict_counts([e for e in document["benchmarks"] if e["run_type"] == "iteration"
                                     or e.get("aggregate_name") == "median"])
        cls.reports = {}
        for name, path in (("clean", cls.clean), ("dirty", cls.dirty)):
            result = run_tool(path, "--out", tmp / name, "--no-svg")
            assert result.returncode == 0, result.stderr
            cls.reports[name] = read_report(tmp / name)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_a_dirty_build_is_flagged_under_the_title_and_on_every_row(self):
        report = self.reports["dirty"]
        warning = next(i for i, line in enumerate(report.splitlines()) if line.startswith("**Warning: 1 of 1 builds"))
        self.assertLess(warning, 8, "the warning comes before the summary")
        self.assertIn(f"(commit 0123456-dirty): `{self.dirty}`", report)
        rows = parse_table(report, "## All measurements")
        self.assertTrue(rows)
        self.assertEqual({r["dirty build"] for r in rows}, {"DIRTY"})
        self.assertIn("From a dirty build (code in no commit): ", report)

    def test_a_clean_build_is_not_flagged(self):
        report = self.reports["clean"]
        self.assertNotIn("**Warning", report)
        self.assertNotIn("From a dirty build", report)
        self.assertEqual({r["dirty build"] for r in parse_table(report, "## All measurements")}, {""})

    def test_a_resource_refusal_is_refused_with_its_reason_not_failed(self):
        report = self.reports["clean"]
        rows = [r for r in parse_table(report, "## Verification") if "team_size=32" in r["tuning"]]
        self.assertEqual(len(rows), 1)
        self.assertEqual(rows[0]["verdict"], "REFUSED")
        self.assertEqual(rows[0]["error"], self.REASON)
        refused = parse_table(report, "### Refused tunings")
        self.assertEqual([(r["variant"], r["N"], r["reason"]) for r in refused],
                         [("kokkos.naive@cuda", "4099", self.REASON)])
        self.assertNotIn("team_size=32", "".join(r["tuning"] for r in parse_table(report, "### Failed configurations")))
        heading = summary_table(report, SYNTHETIC_GPU)[0]
        self.assertIn(f"{self.counts['failed']} failed, 1 refused,", heading)
        self.assertIn("Refused (a tuning over the device's resources, never run): kokkos.naive@cuda N=4099 D=10 "
                      f"team_size=32 vector_length=32: {self.REASON}.", report)

    def test_another_error_without_a_time_still_fails(self):
        self.assertIn("| FAIL | CUDA error: out of memory (synthetic) |", self.reports["clean"])


class Styles(unittest.TestCase):
    """No two series in one panel share colour, marker and line style."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        other = write_other_build(Path(cls.tmp.name))
        tool = import_tool()
        cls.figures, cls.scaling_figures, results = tool.figures, tool.scaling_figures, tool.results
        cls.inputs = {"fixture": results.load(FIXTURES)[1],
                      "fixture and a second build": results.load(FIXTURES + [str(other)])[1]}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_no_two_series_in_a_panel_share_colour_and_style(self):
        import matplotlib.pyplot as plt
        for name, configs in self.inputs.items():
            drawn = {"time against N": self.figures.draw_sweep(configs, "n", "time"),
                     "time against D": self.figures.draw_sweep(configs, "d", "time"),
                     "efficiency against N": self.figures.draw_sweep(configs, "n", "efficiency"),
                     "portability ratio": self.figures.draw_portability_ratio(configs),
                     "thread scaling": self.scaling_figures.draw_thread_scaling(configs)}
            for figure_name, fig in drawn.items():
                self.assertIsNotNone(fig, f"{name}: no {figure_name} figure")
                self.assertGreater(sum(len(ax.get_lines()) for ax in fig.axes), 2)
                self.assertEqual(style_clashes(fig), [], f"{name}, {figure_name}")
                plt.close(fig)

    def test_the_check_finds_two_series_of_one_style(self):
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots()
        ax.plot([1, 2], [1, 2], color="tab:blue", marker="o", label="a")
        ax.plot([1, 2], [2, 3], color="tab:blue", marker="s", label="b")
        ax.plot([1, 2], [3, 4], color="tab:blue", marker="o", label="c")
        ax.plot([1, 2], [4, 5], color="tab:blue", marker="o", linestyle=(0, (6, 2, 1, 2)), label="d")
        ax.plot([1, 2], [5, 6], color="tab:blue", marker="o", linestyle=(0, (7, 2, 1, 2)), label="e")
        ax.axhline(1.0, color="tab:blue", marker="o", gid="reference", label="limit")
        self.assertEqual([(a, b) for _, a, b in style_clashes(fig)], [("a", "c")])
        plt.close(fig)


class Formatting(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tool = import_tool()

    def test_three_significant_figures(self):
        num = self.tool.results.num
        cases = {0.97491: "0.975", 1.0021: "1.00", 1.0: "1.00", 2.86e12: "2.86e+12", 123456.0: "1.23e+05",
                 100.0: "100", 479.2: "479", 0.000719: "0.000719", 3.25e-05: "3.25e-05", 0.0: "0.00",
                 13.949: "13.9", None: "—"}
        for value, text in cases.items():
            self.assertEqual(num(value), text, value)
        self.assertEqual(self.tool.report_text.percent(0.0006), "0.0600 %")


class Workloads(unittest.TestCase):
    """Entries with `dim`, `precision`, `integrator` (SPEC §2) are their own series and summary table;
    entries without them are 2d/fp32/euler."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        document = json.loads(Path(FIXTURES[0]).read_text())
        third = []
        for e in document["benchmarks"]:
            copy = dict(e, dim=3, precision="fp64", integrator="leapfrog")
            if "time_per_step_s" in copy:
                copy.update(time_per_step_s=e["time_per_step_s"] * 3,
                            interactions_per_second=e["interactions_per_second"] / 3, efficiency=e["efficiency"] / 3)
            third.append(copy)
        document["benchmarks"] += third
        cls.path = Path(cls.tmp.name) / "two_workloads.json"
        cls.path.write_text(json.dumps(document))
        cls.third = third
        cls.main = report_of(cls.path, out=Path(cls.tmp.name) / "out")
        cls.report_text = read_report(Path(cls.tmp.name) / "out")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_each_workload_has_its_summary_table(self):
        for workload, factor in (("2d/fp32/euler", 1), ("3d/fp64/leapfrog", 3)):
            rows = summary_table(self.report_text, "AMD EPYC (2 CPUs)", workload)[1]
            simd = next(r for r in rows if r["model"] == "OpenMP" and r["N"] == "1024")
            fastest = min(e["time_per_step_s"] for (dev, v, _, n, d, _), e in expected_configurations().items()
                          if dev == "AMD EPYC (2 CPUs)" and v.startswith("omp.") and (n, d) == (1024, 10)
                          and "time_per_step_s" in e)
            self.assertTrue(math.isclose(number(simd["time per step (s)"]), fastest * factor, rel_tol=REL), workload)

    def test_the_main_workload_is_in_the_report_the_others_in_the_appendix(self):
        self.assertTrue(summary_table(self.main, "AMD EPYC (2 CPUs)", "2d/fp32/euler")[1])
        self.assertNotIn(", 3d/fp64/leapfrog — ", self.main)
        appendix = self.report_text[len(self.main):]
        self.assertLess(appendix.index("## Summary of the other workloads"),
                        appendix.index(summary_table(appendix, "AMD EPYC (2 CPUs)", "3d/fp64/leapfrog")[0]))
        self.assertIn("Workload 2d/fp32/euler. Problem: N = ", self.main)
        self.assertNotIn("Workload 3d/fp64/leapfrog. Problem: N = ", self.main)

    def test_each_workload_has_its_portability_table(self):
        self.assertIn("Workload 2d/fp32/euler. Problem: N = ", self.report_text)
        self.assertIn("Workload 3d/fp64/leapfrog. Problem: N = ", self.report_text)

    def test_workloads_are_separate_series(self):
        tool = import_tool()
        figures, results = tool.figures, tool.results
        configs = results.load([str(self.path)])[1]
        fig = figures.draw_sweep(configs, "n", "time")
        labels = {line.get_label() for ax in fig.axes for line in ax.get_lines()}
        self.assertIn("omp.simd (2d/fp32/euler)", labels)
        self.assertIn("omp.simd (3d/fp64/leapfrog)", labels)
        self.assertEqual(style_clashes(fig), [])

    def test_an_unknown_workload_value_is_bad_input(self):
        document = json.loads(Path(FIXTURES[0]).read_text())
        document["benchmarks"][0]["precision"] = "fp16"
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "fp16.json"
            path.write_text(json.dumps(document))
            result = run_tool(path, "--out", Path(tmp) / "out")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn('/benchmarks/0/precision: value "fp16" is not one of ["fp32","fp64"]', result.stderr)


def headings(document: str) -> list[str]:
    return [line for line in document.splitlines() if line.startswith("## ")]


def anchors(document: str) -> set[str]:
    """The link targets a Markdown document defines: each heading's GitHub slug and each <a id="...">."""
    slugs = {re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
             for line in document.splitlines() if line.startswith("#")}
    return slugs | set(re.findall(r'<a id="([^"]+)"></a>', document))


class Layout(unittest.TestCase):
    """report.md leads with the answer and the figures that carry it, appendix.md holds the tables behind them;
    by default only the figures report.md shows are drawn (--all-figures draws the appendix's too); --summary
    prints the glance section, then the report's path."""

    MAIN_FIGURES = {"time_vs_n.png", "efficiency_vs_n.png", "portability_ratio_vs_n.png",
                    "portability_2d_fp32_euler.png"}

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = Path(cls.tmp.name) / "report"
        cls.result = run_or_fail(*FIXTURES, "--summary", "--out", cls.out)
        cls.main = (cls.out / "report.md").read_text(encoding="utf-8")
        cls.appendix = (cls.out / "appendix.md").read_text(encoding="utf-8")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_the_report_leads_with_the_answer_and_its_figures(self):
        sections = headings(self.main)
        self.assertEqual(sections[:3], ["## Portability at a glance", "## Energy at a glance", "## Summary"])
        for title in ("## Portability ratio against N", "## Efficiency against N", "## Time per step against N",
                      "## Performance portability"):
            self.assertIn(title, sections)

    def test_the_per_configuration_tables_are_in_the_appendix(self):
        for title in ("## Portability ratio against N", "## Optimisation ladders", "## Thread scaling",
                      "## Verification", "## All measurements", "## Appendix A: results files and builds",
                      "## Appendix B: devices", "## Appendix C: context of each results file"):
            self.assertIn(title, headings(self.appendix))
        for title in ("## Optimisation ladders", "## Thread scaling", "## Verification", "## All measurements",
                      "## Appendix C: context of each results file"):
            self.assertNotIn(title, headings(self.main))
        ratio_rows = [line for line in section_of(self.main, "## Portability ratio against N") if line.startswith("|")]
        self.assertEqual(ratio_rows, [], "report.md shows the ratio's figure, the appendix its points")
        self.assertTrue(parse_table(self.appendix, "## Portability ratio against N"))
        self.assertLess(len(self.main.splitlines()), len(self.appendix.splitlines()) / 4)

    def test_every_link_between_the_two_files_lands(self):
        self.assertIn("[appendix.md](appendix.md)", self.main)
        self.assertIn("[report.md](report.md)", self.appendix)
        for document, name in ((self.main, "report.md"), (self.appendix, "appendix.md")):
            links = re.findall(r"\]\((report\.md|appendix\.md)?#([^)]+)\)", document)
            self.assertTrue(links or name == "appendix.md", f"{name} links into the appendix")
            for target, anchor in links:
                text = {"report.md": self.main, "appendix.md": self.appendix}[target or name]
                self.assertIn(anchor, anchors(text), f"{name} links to {target}#{anchor}, which is not there")

    def test_only_the_figures_the_report_shows_are_drawn(self):
        pngs = {p.name for p in self.out.glob("*.png")}
        self.assertEqual(pngs, self.MAIN_FIGURES)
        self.assertEqual({p.name for p in self.out.glob("*.svg")}, {n[:-4] + ".svg" for n in pngs})
        for name in pngs:
            self.assertIn(f"]({name})", self.main)
        self.assertNotIn("![", self.appendix)

    def test_all_figures_draws_the_appendix_figures_too(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "report"
            result = run_tool(*FIXTURES, "--all-figures", "--no-svg", "--out", out)
            self.assertEqual(result.returncode, 0, result.stderr)
            pngs = {p.name for p in out.glob("*.png")}
            appendix = (out / "appendix.md").read_text(encoding="utf-8")
            main = (out / "report.md").read_text(encoding="utf-8")
        self.assertLess(self.MAIN_FIGURES, pngs)
        extra = pngs - self.MAIN_FIGURES
        self.assertTrue({"time_vs_d.png", "thread_scaling.png"} <= extra)
        self.assertTrue(any(name.startswith("ladder_") for name in extra))
        for name in extra:
            self.assertIn(f"]({name})", appendix)
            self.assertNotIn(f"]({name})", main)
        self.assertEqual(result.stdout.splitlines(), [f"nbody_plot: wrote {out / 'report.md'} (its tables: "
                                                      f"{out / 'appendix.md'})"], "no glance without --summary")

    def test_summary_prints_the_glance_then_where_the_report_is(self):
        glance = "\n".join(section_of(self.main, "## Portability at a glance")).strip()
        self.assertTrue(glance.startswith("## Portability at a glance"))
        self.assertIn("| device | workload |", glance)
        printed = self.result.stdout.strip()
        self.assertTrue(printed.startswith(glance), printed[:200])
        self.assertEqual(printed.splitlines()[-1],
                         f"nbody_plot: wrote {self.out / 'report.md'} (its tables: {self.out / 'appendix.md'})")


def section_of(document: str, heading: str) -> list[str]:
    """The lines of the section under a `## ` heading, up to the next one."""
    lines = document.splitlines()
    start = lines.index(heading)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start:end]


PEER_LOG_RUNS = [  # (precision, n, repetition, iterations, total ms); None: the run printed no time
    ("fp32", 16384, 1, 10, 4.0), ("fp32", 16384, 2, 10, 6.0), ("fp32", 16384, 3, 10, 4.5),
    ("fp32", 65536, 1, 10, 30.0), ("fp32", 65536, 2, 10, None),
    ("fp64", 16384, 1, 10, 12.0), ("fp64", 65536, 1, 3, 50.0),
]


def write_peer_log(path: Path, device: str = SYNTHETIC_GPU) -> None:
    """A log in scripts/device_run.sh --peer's shape, with the samples' own lines around the two it reads."""
    lines = []
    for precision, n, repetition, iterations, ms in PEER_LOG_RUNS:
        flags = " -fp64" if precision == "fp64" else ""
        lines += [f"== peer-nbody precision={precision} n={n} repetition={repetition} iterations={iterations} "
                  f"command: /carry/nbody -benchmark -numbodies={n} -i={iterations}{flags}",
                  "Run \"nbody -benchmark [-numbodies=<numBodies>]\" to measure performance.",
                  f"> {'Double' if flags else 'Single'} precision floating point simulation",
                  "GPU Device 0: \"Hopper\" with compute capability 9.0", "",
                  f"> Compute 9.0 CUDA device: [{device}]", f"number of bodies = {n}"]
        if ms is not None:
            lines += [f"{n} bodies, total time for {iterations} iterations: {ms:.3f} ms",
                      f"= {n * n * iterations / ms / 1e6:.3f} billion interactions per second"]
        else:
            lines += ["CUDA error at bodysystemcuda_impl.h:100 code=2(cudaErrorMemoryAllocation)"]
    path.write_text("\n".join(lines) + "\n")


class Peer(unittest.TestCase):
    """The CUDA samples' nbody log beside our 3D Euler variants of the same device (docs/peers.md)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        tmp = Path(cls.tmp.name)
        document = json.loads(Path(FIXTURES[1]).read_text())
        gpu = [e for e in document["benchmarks"] if e.get("device") == "gpu"]
        cls.entries = {}
        for precision, slower in (("fp32", 1.0), ("fp64", 2.5)):
            for e in gpu:
                copy = dict(e, dim=3, precision=precision, integrator="euler")
                if "time_per_step_s" in copy:
                    copy.update(time_per_step_s=e["time_per_step_s"] * slower,
                                interactions_per_second=e["interactions_per_second"] / slower)
                cls.entries.setdefault(precision, []).append(copy)
        document["benchmarks"] = cls.entries["fp32"] + cls.entries["fp64"]
        cls.results = tmp / "gpu_3d.json"
        cls.results.write_text(json.dumps(document))
        cls.log = tmp / "peer-nbody.txt"
        write_peer_log(cls.log)
        cls.out = tmp / "out"
        cls.report_text = report_of(cls.results, "--peer", cls.log, out=cls.out)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def table(self, precision):
        return parse_table(self.report_text, f"### {SYNTHETIC_GPU}, 3d/{precision}/euler")

    def best_rate(self, precision, prefix, n):
        """(variant, interactions/s) of our fastest configuration of a model at N, read from the entries:
        per configuration its median aggregate or its single repetition, failed ones left out."""
        groups = {}
        for e in self.entries[precision]:
            if e["variant"].startswith(prefix) and e["n"] == n:
                key = (e["variant"], json.dumps(e["tuning"], sort_keys=True), e["d"], e["steps"])
                groups.setdefault(key, []).append(e)
        candidates = []
        for entries in groups.values():
            medians = [e for e in entries if e.get("aggregate_name") == "median"]
            chosen = medians[0] if medians else next(e for e in entries if e["run_type"] == "iteration")
            if "time_per_step_s" in chosen and not any("error" in e for e in entries):
                candidates.append(chosen)
        best = min(candidates, key=lambda e: e["time_per_step_s"])
        return best["variant"], best["interactions_per_second"]

    def test_the_samples_rate_is_the_median_of_n_squared_iterations_over_time(self):
        for precision in ("fp32", "fp64"):
            for row in self.table(precision):
                n = int(row["N"])
                rates = [n * n * i / (ms / 1000) for p, size, _, i, ms in PEER_LOG_RUNS
                         if (p, size) == (precision, n) and ms is not None]
                self.assertTrue(math.isclose(number(row["samples: interactions/s"]), statistics.median(rates),
                                             rel_tol=REL), (precision, n))
                self.assertEqual(int(row["runs"]), len(rates))

    def test_our_best_of_each_model_and_its_ratio_to_the_samples(self):
        for precision in ("fp32", "fp64"):
            rows = self.table(precision)
            self.assertEqual([int(r["N"]) for r in rows], [16384, 65536])
            for row in rows:
                samples = number(row["samples: interactions/s"])
                for model, prefix in (("CUDA", "cuda."), ("Kokkos (cuda)", "kokkos.")):
                    variant, rate = self.best_rate(precision, prefix, int(row["N"]))
                    self.assertEqual(row[f"best {model}"], variant)
                    self.assertTrue(math.isclose(number(row[f"{model} interactions/s"]), rate, rel_tol=REL))
                    self.assertTrue(math.isclose(number(row[f"{model} ÷ samples"]),
                                                 rate / samples, rel_tol=2 * REL), (precision, model))

    def test_a_run_without_a_time_is_listed_not_counted(self):
        self.assertIn("printed no time: `", self.report_text)
        self.assertIn("(fp32, N = 65536, repetition 2)", self.report_text)

    def test_figures_are_written_embedded_and_styled_apart(self):
        import matplotlib.pyplot as plt
        for precision in ("fp32", "fp64"):
            stem = f"peer_synthetic_gpu_plot_test_fixture_3d_{precision}_euler"
            self.assertTrue((self.out / f"{stem}.png").read_bytes().startswith(PNG_SIGNATURE))
            ElementTree.parse(self.out / f"{stem}.svg")
            self.assertIn(f"({stem}.png)", self.report_text)
        tool = import_tool()
        figures, results = tool.figures, tool.results
        peer = __import__("nbodyplot.peer", fromlist=["peer"])
        configs = results.load([str(self.results)])[1]
        for comparison in peer.comparisons(configs, peer.points(peer.read_peer_log(str(self.log)))):
            with tempfile.TemporaryDirectory() as tmp:
                original_save = figures.save
                drawn = []
                figures.save = lambda fig, out_dir, stem, formats: drawn.append(fig) or stem
                try:
                    figures.peer_comparison(comparison, configs, Path(tmp), ("png",))
                finally:
                    figures.save = original_save
            self.assertEqual(len(drawn), 1)
            self.assertGreater(len(drawn[0].axes[0].get_lines()), 3)
            self.assertEqual(style_clashes(drawn[0]), [])
            plt.close(drawn[0])

    def test_another_device_is_not_compared(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "other.txt"
            write_peer_log(log, device="Another GPU")
            rows = parse_table(report_of(self.results, "--peer", log, out=Path(tmp) / "out"),
                               "### Another GPU, 3d/fp32/euler")
        self.assertEqual({r["best CUDA"] for r in rows}, {"not measured"})

    def test_a_malformed_header_or_a_log_without_runs_is_bad_input(self):
        with tempfile.TemporaryDirectory() as tmp:
            bad = Path(tmp) / "bad.txt"
            bad.write_text("== peer-nbody precision=fp16 n=1 repetition=1 iterations=1 command: x\n")
            result = run_tool(self.results, "--peer", bad, "--out", Path(tmp) / "out")
            self.assertEqual(result.returncode, 2)
            self.assertIn("bad.txt:1: malformed run header", result.stderr)
            empty = Path(tmp) / "empty.txt"
            empty.write_text("nothing here\n")
            result = run_tool(self.results, "--peer", empty, "--out", Path(tmp) / "out")
            self.assertEqual(result.returncode, 2)
            self.assertIn("no '== peer-nbody' run header", result.stderr)


class BadInput(unittest.TestCase):
    def assertExit2OneLine(self, *args):
        with tempfile.TemporaryDirectory() as tmp:
            result = run_tool(*args, "--out", Path(tmp) / "out")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        self.assertEqual(result.stdout, "")
        return result.stderr

    def write(self, tmp, name, text):
        path = Path(tmp) / name
        path.write_text(text, encoding="utf-8")
        return path

    def test_missing_file(self):
        self.assertIn("no such file", self.assertExit2OneLine("/nonexistent/results.json"))

    def test_not_json(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.assertIn("not valid JSON at line 1, column 1",
                          self.assertExit2OneLine(self.write(tmp, "a.json", "variant,n\n1,2\n")))

    def test_json_that_is_not_results(self):
        with tempfile.TemporaryDirectory() as tmp:
            message = self.assertExit2OneLine(self.write(tmp, "a.json", '{"benchmarks": []}'))
        self.assertIn('not a valid results file (1 problem, first: /: missing required field "context"', message)

    def test_results_without_entries(self):
        document = json.loads(Path(FIXTURES[0]).read_text())
        document["benchmarks"] = []
        with tempfile.TemporaryDirectory() as tmp:
            message = self.assertExit2OneLine(self.write(tmp, "a.json", json.dumps(document)))
        self.assertIn("no nbody benchmark entries", message)

    def test_entry_without_size(self):
        document = json.loads(Path(FIXTURES[0]).read_text())
        del document["benchmarks"][0]["n"]
        with tempfile.TemporaryDirectory() as tmp:
            message = self.assertExit2OneLine(self.write(tmp, "a.json", json.dumps(document)))
        self.assertIn('/benchmarks/0: missing required field "n"', message)

    # A time of 0 made every rate a ZeroDivisionError and a traceback; the schema now requires a measured
    # time above 0 (check-results refuses it too).
    def test_a_zero_time_is_one_line(self):
        document = json.loads(Path(FIXTURES[0]).read_text())
        index = next(i for i, e in enumerate(document["benchmarks"])
                     if e["run_type"] == "iteration" and "time_per_step_s" in e)
        document["benchmarks"][index]["time_per_step_s"] = 0
        with tempfile.TemporaryDirectory() as tmp:
            message = self.assertExit2OneLine(self.write(tmp, "a.json", json.dumps(document)))
        self.assertIn(f"/benchmarks/{index}/time_per_step_s: 0 is not above 0", message)
        self.assertNotIn("Traceback", message)

    # Python's reader recursed once per level (RecursionError); the harness refuses nesting beyond 64.
    def test_deep_nesting_is_one_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            for text in ("[" * 100000 + "]" * 100000, '{"context": ' + "[" * 70 + "]" * 70 + ', "benchmarks": []}'):
                message = self.assertExit2OneLine(self.write(tmp, "a.json", text))
                self.assertIn("nested deeper than 64 levels", message)
                self.assertNotIn("Traceback", message)

    # Files the old loader drew although check-results refuses them: a context without its compiler,
    # a key given twice, an entry of another device kind.
    def test_what_check_results_refuses_is_refused(self):
        fixture = Path(FIXTURES[0]).read_text()
        no_compiler = json.loads(fixture)
        del no_compiler["context"]["compiler"]
        other_device = json.loads(fixture)
        other_device["benchmarks"][0]["device"] = "tpu"
        cases = {json.dumps(no_compiler): '/context: missing required field "compiler"',
                 fixture.replace('"context": {', '"context": {"date": "x", ', 1): 'key "date" appears twice',
                 json.dumps(other_device): '/benchmarks/0/device: value "tpu" is not one of ["cpu","gpu"]'}
        with tempfile.TemporaryDirectory() as tmp:
            for text, part in cases.items():
                self.assertIn(part, self.assertExit2OneLine(self.write(tmp, "a.json", text)))

    def test_one_bad_file_among_good_ones(self):
        self.assertIn("no such file", self.assertExit2OneLine(FIXTURES[0], "/nonexistent.json"))

    def test_bad_portability_problem(self):
        self.assertIn("--pp-problem", self.assertExit2OneLine(FIXTURES[0], "--pp-problem", "1024"))
        self.assertIn("no successful measurement",
                      self.assertExit2OneLine(FIXTURES[0], "--pp-problem", "999,10"))

    def test_no_arguments(self):
        result = run_tool()
        self.assertEqual(result.returncode, 2)
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)


CORPUS = PLOT_DIR.parent / "fuzz" / "corpus"
# The refusals of check-results that come from the consistency of an entry's numbers, not from the schema
# or the JSON reader: the plot tool leaves those to the harness (--check-with).
CONSISTENCY_REFUSALS = ("does not fit the range of an int", "is not n^2 / time_per_step_s", "iteration entries for",
                        "does not name its fields")


def results_corpus():
    """(path, outcome, message part) of every results file of the fuzz corpus (fuzz/corpus/expected.tsv)."""
    rows = []
    for line in (CORPUS / "expected.tsv").read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        if fields[0] == "results" and (CORPUS / "results" / fields[1]).is_file():
            rows.append((CORPUS / "results" / fields[1], fields[3], fields[4]))
    return rows


class SameRuleAsCheckResults(unittest.TestCase):
    """The plot tool accepts what `nbody-bench check-results` accepts: the corpus's results files, each
    with the outcome the harness gives it (the corpus tests of tests/test_reliability.cpp)."""

    @classmethod
    def setUpClass(cls):
        cls.results = import_tool().results
        from nbodyplot import schema
        cls.schema = schema
        cls.rows = results_corpus()

    def refusal(self, path, bench=None):
        """The tool's one-line refusal of the file at load time, None when it loads."""
        try:
            if bench and (message := self.schema.check_with(bench, str(path))) is not None:
                return message
            self.results.read_file(str(path))
        except self.results.InputError as e:
            return str(e)
        return None

    def test_the_schema_and_reader_refuse_what_check_results_refuses_for_them(self):
        self.assertGreaterEqual(len(self.rows), 20)
        for path, outcome, part in self.rows:
            with self.subTest(file=path.name):
                refusal = self.refusal(path)
                if outcome == "accepted" or any(c in part for c in CONSISTENCY_REFUSALS):
                    self.assertIsNone(refusal)
                else:
                    self.assertIsNotNone(refusal)
                    self.assertIn(part, refusal)
                    self.assertEqual(len(refusal.splitlines()), 1)

    def test_with_the_harness_every_outcome_is_check_results_own(self):
        bench = os.environ.get("NBODY_BENCH")
        if not bench:
            self.skipTest("NBODY_BENCH names no nbody-bench (ctest sets it)")
        for path, outcome, part in self.rows:
            with self.subTest(file=path.name):
                refusal = self.refusal(path, bench)
                if outcome == "accepted":
                    self.assertIsNone(refusal)
                else:
                    self.assertIn(part, refusal or "")

    def test_the_tool_takes_the_harness_from_check_with(self):
        bench = os.environ.get("NBODY_BENCH")
        if not bench:
            self.skipTest("NBODY_BENCH names no nbody-bench (ctest sets it)")
        with tempfile.TemporaryDirectory() as tmp:
            result = run_tool(CORPUS / "results" / "inconsistent-rate.json", "--check-with", bench, "--out", Path(tmp) / "o")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        self.assertIn("interactions_per_second is not n^2 / time_per_step_s", result.stderr)


if __name__ == "__main__":
    unittest.main()
