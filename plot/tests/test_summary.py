"""The summary per device and workload: the best of each model, Kokkos ÷ hand-written, verification counts, several
builds, dirty builds and refused tunings, and the workloads other than the default."""
import json
import math
import re
import tempfile
import unittest
from pathlib import Path

from plot_fixture import (FIXTURES, REL, SYNTHETIC_CPU, SYNTHETIC_GPU, assert_answer_first, expected_configurations,
                          import_tool, number, parse_table, strip_anchor, style_clashes, summary_table,
                          verdict_counts, write_other_build)
from plot_tool import read_report, report_of, run_tool


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


if __name__ == "__main__":
    unittest.main()
