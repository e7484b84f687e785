"""Tests of plot/nbody_plot.py on the committed fixture (plot/tests/fixture/, see its README).

Run: /usr/bin/python3 -m unittest discover -s plot/tests   (ctest runs the same)
The report's numbers are read back from report.md and compared with values taken from the JSON
here, independently of the tool's own loading code.
"""
import glob
import json
import math
import re
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree
from pathlib import Path

PLOT_DIR = Path(__file__).resolve().parent.parent
TOOL = PLOT_DIR / "nbody_plot.py"
FIXTURE_DIR = Path(__file__).resolve().parent / "fixture"
FIXTURES = [str(FIXTURE_DIR / "real_cpu.json"), str(FIXTURE_DIR / "synthetic.json")]
SYNTHETIC_GPU = "Synthetic GPU (plot test fixture)"
SYNTHETIC_CPU = "Synthetic CPU (plot test fixture) (16 CPUs)"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
REL = 5e-3  # the report prints three significant figures


def run_tool(*args):
    return subprocess.run([sys.executable, str(TOOL), *map(str, args)], capture_output=True, text=True,
                          timeout=300)


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


def parse_table(report: str, heading: str, occurrence: int = 0) -> list[dict]:
    """Rows (header -> cell text) of the first Markdown table after the given heading."""
    lines = report.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == heading]
    if len(starts) <= occurrence:
        raise AssertionError(f"heading {heading!r} not in the report")
    i = starts[occurrence] + 1
    while not lines[i].startswith("|"):
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


def verdict_counts(entries) -> dict:
    """Configurations verified, failed (verified false or an error) and not verified, from raw entries."""
    counts = {"verified": 0, "failed": 0, "not verified": 0}
    for e in entries:
        if e.get("verified") is False or "error" in e:
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
        result = run_tool(*FIXTURES, "--out", cls.out)
        if result.returncode != 0:
            raise AssertionError(f"nbody_plot.py failed ({result.returncode}): {result.stderr}")
        cls.report = (cls.out / "report.md").read_text(encoding="utf-8")
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
            self.assertIn(f"]({stem}.png)", self.report, f"{stem}.png not embedded in report.md")
        for referenced in [line.split("](")[1].rstrip(")") for line in self.report.splitlines()
                           if line.startswith("![")]:
            self.assertTrue((self.out / referenced).is_file(), f"report embeds missing {referenced}")

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
        limits = {v for t in thresholds.values() for v in t.items()}
        for r in rows:
            key = (strip_anchor(r["device"]), r["variant"], r["tuning"], int(r["N"]), int(r["D"]))
            e = next(e for k, e in self.expected.items() if k[:5] == key)
            self.assertEqual(r["verdict"], "PASS" if e["verified"] else "FAIL", key)
            for title, (field, limit_key) in columns.items():
                if e.get(field) is None:
                    self.assertEqual(r[title], "—")
                    continue
                value, relation, limit = r[title].split()
                self.assertClose(value, e[field], f"{key} {field}")
                self.assertIn((limit_key, float(limit)), {(k, float(f"{v:.4g}")) for k, v in limits})
                self.assertEqual(relation, "≤" if e[field] <= float(limit) else ">")
        self.assertIn("FAIL", {r["verdict"] for r in rows}, "the fixture's unverified configuration")
        failed = sum(r["verdict"] == "FAIL" for r in rows)
        self.assertEqual({r["verdict"] for r in rows[:failed]}, {"FAIL"}, "failures come first")
        self.assertIn(f"{len(rows)} configurations: {len(rows) - failed} verified, {failed} failed, 0 not verified.",
                      self.report)

    def fastest_times(self, device, variant, tuning=None):
        """(n, d) -> fastest time per step of the variant on the device (over tunings unless given)."""
        times = {}
        for (dev, v, t, n, d, _), e in self.expected.items():
            if dev == device and v == variant and e.get("verified") and (tuning is None or t == tuning):
                times[(n, d)] = min(times.get((n, d), math.inf), e["time_per_step_s"])
        return times

    def test_cuda_ladder_speedups_are_geometric_means_of_time_ratios(self):
        rows = parse_table(self.report, f"### CUDA ladder (seed reports 000 and 002) on {SYNTHETIC_GPU} (build unknown)")
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

        for family in ("kokkos.team_tiled", "kokkos.naive", "cuda.tiled"):
            effs = [family_efficiency(family, p) for p in platforms]
            for p, eff in zip(platforms, effs):
                self.assertEqual(rows[family][f"app eff on {p}"] == "—", eff is None)
                if eff is not None:
                    self.assertClose(rows[family][f"app eff on {p}"], eff, f"{family} on {p}")
            expected = 0.0 if None in effs else len(effs) / sum(1 / e for e in effs)
            self.assertClose(rows[family]["PP (app)"], expected, f"PP of {family}")
            ran = [e for e in effs if e is not None]
            self.assertClose(rows[family]["harmonic mean where it ran"], len(ran) / sum(1 / e for e in ran),
                             f"harmonic mean of {family} where it ran")
        kokkos_ran = [p for p in platforms if rows["kokkos.team_tiled"][f"app eff on {p}"] != "—"]
        self.assertGreaterEqual(len(kokkos_ran), 2, "the fixture's Kokkos family spans two platforms")
        self.assertEqual(number(rows["cuda.tiled"]["PP (app)"]), 0.0, "CUDA did not run on the CPUs")
        self.assertGreater(number(rows["cuda.tiled"]["harmonic mean where it ran"]), 0.0)


class Analysis(unittest.TestCase):
    """The arithmetic on hand-made numbers."""

    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, str(PLOT_DIR))
        from nbodyplot import analysis
        cls.analysis = analysis

    def test_pennycook_is_the_harmonic_mean_and_zero_where_a_platform_is_missing(self):
        pp = self.analysis.harmonic_mean_or_zero
        self.assertAlmostEqual(pp([0.5, 1.0], 2), 2 / (2 + 1))
        self.assertAlmostEqual(pp([0.25, 0.25, 1.0], 3), 3 / 9)
        self.assertEqual(pp([0.5], 2), 0.0)
        self.assertEqual(pp([0.5, None], 2), 0.0)

    def test_ladder_sweeps_are_the_longest_n_and_d_sweeps(self):
        problems = [(n, 10) for n in (1024, 2048, 4096)] + [(1024, d) for d in (1000, 5000)] + \
                   [(65536, 100), (1024, 100)]
        groups = self.analysis.sweep_groups(problems)
        self.assertEqual([g.label for g in groups], ["N sweep, D = 10", "D sweep, N = 1024"])
        self.assertEqual(groups[0].problems, [(1024, 10), (2048, 10), (4096, 10)])
        self.assertEqual(groups[1].problems, [(1024, 10), (1024, 100), (1024, 1000), (1024, 5000)])
        self.assertEqual([g.label for g in self.analysis.sweep_groups([(4096, 10)])], ["N = 4096, D = 10"])

    def test_ladder_ratio_uses_only_problems_both_steps_ran(self):
        ratio = self.analysis._ratio({(1, 1): 4.0, (2, 1): 9.0, (3, 1): 100.0}, {(1, 1): 1.0, (2, 1): 1.0},
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
            result = run_tool(path, "--out", Path(tmp) / "out")
            self.assertEqual(result.returncode, 0, result.stderr)
            report = (Path(tmp) / "out" / "report.md").read_text()
            self.assertFalse((Path(tmp) / "out" / "time_vs_n.png").exists())
        self.assertIn("No N sweep", report)
        self.assertIn("No thread sweep", report)
        row = parse_table(report, "## All measurements")[0]
        self.assertIn(f"Problem: N = {first['n']}, D = {first['d']};", report)
        self.assertTrue(math.isclose(number(row["time per step (s)"]), first["time_per_step_s"], rel_tol=REL))


    def test_files_that_disagree_on_a_device_limit_are_flagged(self):
        document = json.loads(Path(FIXTURES[0]).read_text())
        document["context"]["host_cpu"]["fp32_interaction_limit"] /= 2
        document["benchmarks"] = [e for e in document["benchmarks"] if e["n"] == 256]
        with tempfile.TemporaryDirectory() as tmp:
            halved = Path(tmp) / "halved.json"
            halved.write_text(json.dumps(document))
            result = run_tool(FIXTURES[0], halved, "--out", Path(tmp) / "out")
            self.assertEqual(result.returncode, 0, result.stderr)
            report = (Path(tmp) / "out" / "report.md").read_text()
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
            report = (Path(tmp) / "out" / "report.md").read_text()
        self.assertFalse("Note: the results files disagree" in report, "0.6 % is within the 1 % tolerance")
        self.assertIn("(files within 0.600 %)", report)

    def test_portability_problem_can_be_chosen(self):
        with tempfile.TemporaryDirectory() as tmp:
            result = run_tool(FIXTURES[0], "--pp-problem", "512,10", "--out", Path(tmp) / "out")
            self.assertEqual(result.returncode, 0, result.stderr)
            report = (Path(tmp) / "out" / "report.md").read_text()
        self.assertIn("Problem: N = 512, D = 10;", report)


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
            self.assertIn("not JSON", self.assertExit2OneLine(self.write(tmp, "a.json", "variant,n\n1,2\n")))

    def test_json_that_is_not_results(self):
        with tempfile.TemporaryDirectory() as tmp:
            message = self.assertExit2OneLine(self.write(tmp, "a.json", '{"benchmarks": []}'))
        self.assertIn("not a results file", message)

    def test_results_without_entries(self):
        with tempfile.TemporaryDirectory() as tmp:
            message = self.assertExit2OneLine(self.write(tmp, "a.json", '{"context": {}, "benchmarks": []}'))
        self.assertIn("no nbody benchmark entries", message)

    def test_entry_without_size(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = self.write(tmp, "a.json", json.dumps(
                {"context": {}, "benchmarks": [{"variant": "serial.reference", "d": 10}]}))
            self.assertIn("has no 'n'", self.assertExit2OneLine(path))

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


if __name__ == "__main__":
    unittest.main()
