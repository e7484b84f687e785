"""The report on the committed fixture (plot/tests/fixture/, see its README): every configuration, number,
figure and link read back from report.md and appendix.md and compared with values taken from the JSON here,
independently of the tool's own loading code; and --no-svg."""
import glob
import json
import math
import re
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from plot_fixture import (FIXTURES, PNG_SIGNATURE, REL, SYNTHETIC_CPU, SYNTHETIC_GPU, device_name,
                          expected_configurations, number, parse_table, short_commit, strip_anchor)
from plot_tool import read_report, run_or_fail, run_tool


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


if __name__ == "__main__":
    unittest.main()
