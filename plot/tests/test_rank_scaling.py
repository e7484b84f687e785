"""The scaling-over-ranks figure and table (docs/scaling.md) on small synthetic results files, as
scripts/scaling_run.sh writes them: one file per scaling kind and rank count G.

Run: /usr/bin/python3 -m unittest -v test_rank_scaling   (from plot/tests; ctest runs the same)
"""
import json
import math
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from plot_tool import read_report, report_of, run_tool
from plot_fixture import PNG_SIGNATURE, REL, number, parse_table, results_document

GPU = "Synthetic GPU (rank scaling)"
HEADING = "## Scaling over ranks"

# (kind, G) -> {N: time per step}: strong scaling at two N, weak scaling with N^2/G constant.
TIMES = {
    ("strong", 1): {4096: 8.0, 8192: 32.0},
    ("strong", 2): {4096: 5.0, 8192: 16.8},
    ("strong", 4): {4096: 4.0, 8192: 10.0},
    ("weak", 1): {4096: 8.0},
    ("weak", 2): {5793: 8.5},   # 4096 x sqrt(2), as written: the efficiency uses the N recorded
    ("weak", 4): {8192: 10.0},
}


def write_results(directory: Path, kind: str, ranks: int) -> Path:
    entries = []
    for n, time in TIMES[(kind, ranks)].items():
        entries.append({
            "name": f"cuda.sliced/n:{n}", "run_name": f"cuda.sliced/n:{n}", "run_type": "iteration",
            "repetitions": 1, "repetition_index": 0, "variant": "cuda.sliced", "backend": "cuda",
            "execution_space": "cuda", "device": "gpu", "tuning": {"block": "256"}, "n": n, "d": 100,
            "dim": 2, "precision": "fp32", "integrator": "euler", "steps": 5, "warmup_steps": 1, "ranks": ranks,
            "time_per_step_s": time, "interactions_per_second": n * n / time, "verified": True,
            "verification": "sampled"})
    context = {"git_commit": "abcdef0123456789abcdef0123456789abcdef01", "compiler": "GNU 12", "build_type": "Release",
               "build_flags": "-O3", "gpu": {"name": GPU}, "matrix": {"name": f"scaling-{kind}"},
               "distribution": {"ranks": ranks, "nodes": 1, "ranks_per_node": ranks, "communicator": "MPI",
                                "hosts": ["node"] * ranks}}
    path = directory / f"{kind}-g{ranks}.json"
    path.write_text(json.dumps(results_document(context, entries)))
    return path


def expected_efficiency(kind: str, ranks: int, n: int) -> float:
    """Interactions per second per rank relative to G = 1 (of the same N in strong scaling)."""
    base_n = n if kind == "strong" else 4096
    base = base_n * base_n / TIMES[(kind, 1)][base_n]
    return n * n / (ranks * TIMES[(kind, ranks)][n]) / base


class RankScaling(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        directory = Path(cls.tmp.name)
        files = [write_results(directory, kind, g) for kind, g in TIMES]
        cls.out = directory / "report"
        cls.main = report_of(*files, out=cls.out)
        cls.report = read_report(cls.out)
        cls.rows = parse_table(cls.main, HEADING)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_the_figure_is_written_and_embedded(self):
        png = self.out / "rank_scaling.png"
        self.assertEqual(png.read_bytes()[:8], PNG_SIGNATURE)
        self.assertTrue((self.out / "rank_scaling.svg").is_file())
        self.assertIn("](rank_scaling.png)", self.main)

    def test_every_kind_rank_count_and_size_has_a_row(self):
        seen = {(r["scaling"], int(r["ranks"]), int(r["N"])) for r in self.rows}
        expected = {(kind, g, n) for (kind, g), times in TIMES.items() for n in times}
        # The strong and the weak run at G = 1 measure the same problem: both are kept.
        self.assertEqual(seen, expected)
        self.assertTrue(all(r["device"] == GPU for r in self.rows), self.rows)

    def test_times_and_parallel_efficiency_are_per_rank_rates_relative_to_one_rank(self):
        for r in self.rows:
            kind, g, n = r["scaling"], int(r["ranks"]), int(r["N"])
            self.assertTrue(math.isclose(number(r["time per step (s)"]), TIMES[(kind, g)][n], rel_tol=REL), r)
            self.assertTrue(math.isclose(number(r["parallel efficiency"]), expected_efficiency(kind, g, n), rel_tol=REL),
                            f"{r}: expected {expected_efficiency(kind, g, n):.4g}")
        # Strong scaling at N = 4096 on 4 ranks: 8 s -> 4 s is half the ideal 2 s.
        strong = [r for r in self.rows if r["scaling"] == "strong" and r["ranks"] == "4" and r["N"] == "4096"]
        self.assertTrue(math.isclose(number(strong[0]["parallel efficiency"]), 0.5, rel_tol=REL))

    def test_runs_over_several_ranks_are_their_own_device_in_the_per_device_tables(self):
        self.assertIn(f"{GPU} × 2 ranks", self.report)
        self.assertIn(f"{GPU} × 4 ranks", self.report)

    def test_results_without_ranks_have_no_scaling_figure(self):
        with tempfile.TemporaryDirectory() as tmp:
            single = write_results(Path(tmp), "strong", 1)
            out = Path(tmp) / "report"
            report_of(single, out=out)
            self.assertNotIn("## Scaling over ranks", read_report(out))
            self.assertFalse((out / "rank_scaling.png").exists())

    def test_a_rank_count_below_one_is_bad_input(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = write_results(Path(tmp), "strong", 2)
            document = json.loads(path.read_text())
            document["benchmarks"][0]["ranks"] = 0
            path.write_text(json.dumps(document))
            result = run_tool(path, "--out", Path(tmp) / "r")
            self.assertEqual(result.returncode, 2, result.stderr)
            self.assertIn("/benchmarks/0/ranks: 0 is below the minimum 1", result.stderr)


class EfficiencyTable(unittest.TestCase):
    """scripts/scaling_efficiency.py's table: each row's kind and E(G) from the G = 1 run it divides."""
    SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "scaling_efficiency.py"

    def table(self, *keys):
        with tempfile.TemporaryDirectory() as tmp:
            files = [str(write_results(Path(tmp), kind, g)) for kind, g in keys]
            result = subprocess.run([sys.executable, str(self.SCRIPT), *files], capture_output=True, text=True,
                                    timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        rows = {}
        for line in result.stdout.splitlines()[1:]:
            fields = line.split()
            rows[(int(fields[4]), int(fields[5]))] = (fields[1], float(fields[9]))  # (N, G) -> (kind, E)
        return rows

    def test_a_run_with_the_same_n_at_one_rank_is_strong_scaling(self):
        rows = self.table(("strong", 1), ("strong", 2))
        self.assertEqual(rows[(4096, 2)][0], "strong")
        self.assertAlmostEqual(rows[(4096, 2)][1], expected_efficiency("strong", 2, 4096), places=3)

    def test_a_run_with_n_over_root_g_at_one_rank_is_weak_scaling(self):
        rows = self.table(("weak", 1), ("weak", 2))
        self.assertEqual(rows[(5793, 2)][0], "weak")
        self.assertAlmostEqual(rows[(5793, 2)][1], TIMES[("weak", 1)][4096] / TIMES[("weak", 2)][5793], places=3)

    def test_a_run_without_its_one_rank_run_has_no_kind_and_no_efficiency(self):
        rows = self.table(("strong", 4))
        self.assertEqual(rows[(4096, 4)][0], "-")
        self.assertTrue(math.isnan(rows[(4096, 4)][1]))


if __name__ == "__main__":
    unittest.main()
