"""Tests of scripts/step_times_csv.py: one comment line per source file, then one row per median
aggregate with the columns test_estimate reads; a file that is no results file is refused.

Run: /usr/bin/python3 -m unittest discover -s scripts/tests   (ctest runs the same)"""
import csv
import io
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "step_times_csv.py"


def entry(variant, n, aggregate, seconds):
    return {"run_name": f"{variant}/n:{n}", "run_type": "aggregate", "aggregate_name": aggregate, "variant": variant,
            "dim": 3, "precision": "fp64", "integrator": "leapfrog", "n": n, "d": 10, "time_per_step_s": seconds,
            "efficiency_limit": 1.39392e12, "verified": True}


class StepTimesCsv(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.file = Path(self.tmp.name) / "sweep.json"
        context = {"git_commit": "0123456789abcdef", "date": "2026-12-02T07:23:58+00:00", "gpu": {"name": "NVIDIA H200"},
                   "matrix": {"name": "estimate-gpu"}}
        benchmarks = [entry("cuda.sliced", 1024, "median", 2.5e-5), entry("cuda.sliced", 1024, "stddev", 1e-7),
                      entry("omp_target.simd", 4096, "median", 4.2e-3)]
        self.file.write_text(json.dumps({"context": context, "benchmarks": benchmarks}))

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, *files):
        return subprocess.run([sys.executable, str(SCRIPT), *map(str, files)], capture_output=True, text=True, timeout=60)

    def test_one_row_per_median_after_a_line_naming_the_run(self):
        result = self.run_script(self.file)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        self.assertTrue(lines[0].startswith("# "), lines[0])
        for fact in ("estimate-gpu", "0123456789abcdef", "NVIDIA H200", "2026-12-02"):
            self.assertIn(fact, lines[0])
        rows = list(csv.DictReader(io.StringIO("\n".join(lines[1:]))))
        self.assertEqual([(r["variant"], r["n"], r["time_per_step_s"]) for r in rows],
                         [("cuda.sliced", "1024", "2.5e-05"), ("omp_target.simd", "4096", "0.0042")])
        self.assertEqual((rows[0]["dim"], rows[0]["precision"], rows[0]["integrator"], rows[0]["d"], rows[0]["verified"]),
                         ("3", "fp64", "leapfrog", "10", "true"))

    def test_a_file_that_is_no_results_file_is_refused(self):
        bad = Path(self.tmp.name) / "bad.json"
        bad.write_text("[1, 2]")
        result = self.run_script(bad)
        self.assertEqual(result.returncode, 2)
        self.assertIn("bad.json", result.stderr)
        self.assertEqual(len(result.stderr.strip().splitlines()), 1)


if __name__ == "__main__":
    unittest.main()
