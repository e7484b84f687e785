"""The performance portability of one source on every platform: the report answers it first, names the best
single source, shows a family without a measurement of the problem on a platform as "not measured" (never 0),
never mixes in a measurement at another N, and labels the best-of row as a different source on each platform.

Run: /usr/bin/python3 -m unittest -v test_single_source   (from plot/tests)
The input is a small results file written here from the synthetic fixture's context (a GPU and a 16-core host):
made-up times chosen so that every efficiency below is a round number.
"""
import json
import math
import sys
import tempfile
import unittest
from pathlib import Path

from plot_tool import PLOT_DIR, report_of
from plot_fixture import (FIXTURE_DIR, REL, SYNTHETIC_CPU, SYNTHETIC_GPU, assert_answer_first, number,
                             parse_table, results_document as schema_document)

GPU, CPU = SYNTHETIC_GPU, SYNTHETIC_CPU
N, SMALL_N, LARGE_N = 65536, 16384, 262144

# (variant, device, n, time per step in ms). At N = 65536 the fastest are cuda.fast (GPU) and omp.simd (CPU).
MEASUREMENTS = [
    ("cuda.fast", "gpu", N, 1.0), ("omp.simd", "cpu", N, 10.0),
    ("kokkos.naive@cuda", "gpu", N, 2.0), ("kokkos.naive@openmp", "cpu", N, 20.0),            # 0.5 and 0.5
    ("kokkos.team_tiled@cuda", "gpu", N, 1.25), ("kokkos.team_tiled@openmp", "cpu", N, 100.0),  # 0.8 and 0.1
    ("kokkos.simd@openmp", "cpu", N, 12.5),            # 0.8 on the CPU, no GPU measurement at all
    ("kokkos.hierarchical@cuda", "gpu", N, 1.1),       # its CPU measurement is at another N only
    ("thrust.split_j@cuda", "gpu", N, 1.5), ("thrust.split_j@tbb", "cpu", N, 40.0),            # 2/3 and 0.25
    # Another N on both devices: kokkos.hierarchical@openmp as fast as omp.simd there.
    ("cuda.fast", "gpu", SMALL_N, 0.1), ("omp.simd", "cpu", SMALL_N, 1.0),
    ("kokkos.hierarchical@openmp", "cpu", SMALL_N, 1.0),
    # The largest N on both devices, but no single source on both.
    ("cuda.fast", "gpu", LARGE_N, 16.0), ("omp.simd", "cpu", LARGE_N, 160.0),
    ("kokkos.team_tiled@cuda", "gpu", LARGE_N, 20.0),
]
BEST = {("gpu", N): 1.0, ("cpu", N): 10.0}


def results_document() -> dict:
    template = json.loads((FIXTURE_DIR / "synthetic.json").read_text())
    limits = {"gpu": template["context"]["gpu"]["fp32_interaction_limit"],
              "cpu": template["context"]["host_cpu"]["fp32_interaction_limit"]}
    entries = []
    for variant, device, n, ms in MEASUREMENTS:
        space = variant.split("@", 1)[1] if "@" in variant else None
        name = f"{variant}/n:{n}/d:10/steps:10"
        rate = n * n / (ms / 1e3)
        entry = {"name": name, "run_name": name, "run_type": "iteration", "repetitions": 1, "repetition_index": 0,
                 "variant": variant, "backend": variant.split(".", 1)[0], "device": device, "tuning": {},
                 "n": n, "d": 10, "dim": 2, "precision": "fp32", "integrator": "euler", "steps": 10,
                 "verification": "sampled", "verify_steps": 1, "verified": True, "time_per_step_s": ms / 1e3,
                 "interactions_per_second": rate, "efficiency": rate / limits[device]}
        entry["execution_space"] = space or ""
        entries.append(entry)
    return schema_document({}, entries)


def harmonic_mean(values):
    return len(values) / sum(1 / v for v in values)


class SingleSource(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        tmp = Path(cls.tmp.name)
        cls.path = tmp / "single_source.json"
        cls.path.write_text(json.dumps(results_document()))
        cls.reports = {}
        for name, extra in (("default", ()), ("largest", ("--pp-problem", f"{LARGE_N},10"))):
            cls.reports[name] = report_of(cls.path, *extra, "--no-svg", out=tmp / name)
        cls.report = cls.reports["default"]
        cls.rows = {r["family"]: r for r in parse_table(cls.report, "## Performance portability")}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def assertNumber(self, text: str, value: float, what: str):
        self.assertTrue(math.isclose(number(text), value, rel_tol=REL),
                        f"{what}: report says {text}, expected {value:.4g}")

    @staticmethod
    def efficiencies(family: str) -> dict:
        """Platform -> the family's application efficiency at N = 65536, from MEASUREMENTS."""
        return {GPU if device == "gpu" else CPU: BEST[(device, n)] / ms
                for variant, device, n, ms in MEASUREMENTS if variant.split("@")[0] == family and n == N}

    def test_the_default_problem_is_one_with_single_sources_on_every_platform(self):
        # N = 262144 ran on both devices too, and is larger, but no single source ran on both there.
        self.assertIn(f"Workload 2d/fp32/euler. Problem: N = {N}, D = 10; platforms H: {GPU}, {CPU}.", self.report)

    def test_a_single_source_is_the_harmonic_mean_of_its_efficiencies_on_every_platform(self):
        for family in ("kokkos.naive", "kokkos.team_tiled", "thrust.split_j"):
            row, effs = self.rows[family], self.efficiencies(family)
            self.assertEqual(row["source"], "one source")
            self.assertEqual(set(effs), {GPU, CPU})
            for platform, eff in effs.items():
                self.assertNumber(row[f"app eff on {platform}"], eff, f"{family} on {platform}")
            self.assertNumber(row["PP (app)"], harmonic_mean(list(effs.values())), f"PP of {family}")

    def test_a_family_missing_on_one_platform_is_not_measured_not_zero(self):
        row = self.rows["kokkos.simd"]
        self.assertEqual(row[f"app eff on {GPU}"], "not measured")
        self.assertNumber(row[f"app eff on {CPU}"], 0.8, "kokkos.simd on the CPU")
        self.assertEqual(row["PP (app)"], "not measured")
        self.assertEqual(row["PP (arch)"], "not measured")
        self.assertNumber(row["harmonic mean where it ran"], 0.8, "where it ran")
        glance = parse_table(self.report, "### One source on every platform", column="best single source")[0]
        self.assertIn(f"kokkos.simd not measured on {GPU}", glance["every single source (PP)"])

    def test_a_family_measured_at_another_n_is_not_mixed_in(self):
        row = self.rows["kokkos.hierarchical"]
        self.assertNumber(row[f"app eff on {GPU}"], 1.0 / 1.1, "kokkos.hierarchical on the GPU")
        self.assertEqual(row[f"app eff on {CPU}"], "not measured", "its CPU run is at N = 16384 only")
        self.assertEqual(row["PP (app)"], "not measured")
        # The same in the analysis: nothing of another N is chosen.
        sys.path.insert(0, str(PLOT_DIR))
        from nbodyplot import performance_portability, results
        configs = results.load([str(self.path)])[1]
        pp = performance_portability.portability(configs, (2, "fp32", "euler"), (N, 10))
        hierarchical = next(r for r in pp.rows if r.family == "kokkos.hierarchical")
        self.assertEqual({c.n for c in hierarchical.chosen.values()}, {N})
        self.assertEqual(hierarchical.not_measured, [CPU])
        self.assertIsNone(hierarchical.pp_app)

    def test_the_best_single_source_is_named_first(self):
        best = harmonic_mean([0.5, 0.5])
        glance = parse_table(self.report, "### One source on every platform", column="best single source")
        self.assertEqual([(r["workload"], r["N / D"], r["best single source"]) for r in glance],
                         [("2d/fp32/euler", f"{N} / 10", "kokkos.naive")])
        self.assertNumber(glance[0]["PP"], best, "best single source")
        listed = [part.split()[0] for part in glance[0]["every single source (PP)"].split("; ")]
        self.assertEqual(listed, ["kokkos.naive", "thrust.split_j", "kokkos.team_tiled", "kokkos.hierarchical",
                                  "kokkos.simd"], "by PP, the ones not measured on every platform last")
        self.assertIn(f"One source on every platform: the best is kokkos.naive, PP = {0.5:.3f}.", self.report)
        summary = next(line for line in self.report.splitlines() if line.startswith("Performance portability ("))
        self.assertIn("one source on every platform: the best, kokkos.naive, PP = 0.500 (application efficiency)",
                      summary)
        self.assertLess(summary.index("one source on every platform"), summary.index("best Kokkos variant"))
        single = [r["family"] for r in parse_table(self.report, "## Performance portability")
                  if r["source"] == "one source"]
        self.assertEqual(single, listed, "the table lists the single sources first, in the same order")

    def test_the_best_of_row_is_a_different_source_on_each_platform(self):
        row = self.rows["best Kokkos variant"]
        self.assertEqual(row["source"],
                         "a different source on each platform: kokkos.hierarchical@cuda, kokkos.simd@openmp")
        self.assertNumber(row["PP (app)"], harmonic_mean([1.0 / 1.1, 0.8]), "best Kokkos variant of each platform")
        best_of = parse_table(self.report, "### A different source on each platform",
                              column="Kokkos variant on each platform")
        self.assertEqual(best_of[0]["Kokkos variant on each platform"], row["source"])
        self.assertEqual(best_of[0]["PP"], row["PP (app)"])

    def test_the_first_screen_leads_with_one_source_then_the_best_of_each_platform(self):
        assert_answer_first(self, self.report, within=20)

    def test_a_variant_of_one_kind_of_device_has_pennycooks_zero(self):
        # cuda.fast cannot run on a CPU: PP 0 is Pennycook's value, not a missing measurement.
        row = self.rows["cuda.fast"]
        self.assertEqual(row["source"], "GPU only")
        self.assertEqual(row[f"app eff on {CPU}"], "no CPU variant")
        self.assertEqual(number(row["PP (app)"]), 0.0)

    def test_at_a_problem_without_a_single_source_on_every_platform_none_reads_zero(self):
        report = self.reports["largest"]
        rows = {r["family"]: r for r in parse_table(report, "## Performance portability")}
        self.assertEqual(rows["kokkos.team_tiled"][f"app eff on {CPU}"], "not measured")
        self.assertEqual(rows["kokkos.team_tiled"]["PP (app)"], "not measured")
        glance = parse_table(report, "### One source on every platform", column="best single source")[0]
        self.assertEqual(glance["best single source"], "none measured on every platform")
        self.assertIn(f"single sources were measured on every platform at N = {N}, D = 10 (`--pp-problem {N},10`)",
                      report)
        summary = next(line for line in report.splitlines() if line.startswith("Performance portability ("))
        self.assertIn("one source on every platform: none measured on every platform at this problem", summary)
        self.assertNotIn("PP = 0", summary)


if __name__ == "__main__":
    unittest.main()
