"""Tests of scripts/check_doc_numbers.py on a made-up repository: right claims pass, a deliberately
wrong claim, a missing file, an ambiguous selection and a number the text does not show fail.

Run: /usr/bin/python3 -m unittest discover -s scripts/tests   (ctest runs the same)"""
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "check_doc_numbers.py"


def entry(variant, n, rate, aggregate=None, tuning=None):
    e = {"variant": variant, "n": n, "d": 10, "dim": 2, "precision": "fp32", "integrator": "euler",
         "tuning": tuning or {}, "interactions_per_second": rate, "efficiency": rate / 4e12,
         "run_name": f"{variant}/n:{n}/{tuning}", "repetitions": 3 if aggregate else 1}
    if aggregate:
        e.update(run_type="aggregate", aggregate_name=aggregate)
    else:
        e.update(run_type="iteration", repetition_index=0)
    return e


class CheckDocNumbers(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        (self.root / "results").mkdir()
        benchmarks = [entry("cuda.sliced", 262144, 2.6e12, "mean"), entry("cuda.sliced", 262144, 2.524e12, "median"),
                      entry("kokkos.team_tiled@cuda", 262144, 2.47e12, "median", {"slices": "auto"}),
                      entry("kokkos.team_tiled@cuda", 262144, 2.31e12, "median", {"slices": "1"}),
                      entry("omp.simd", 65536, 1.18e11)]
        (self.root / "results" / "run.json").write_text(json.dumps({"context": {}, "benchmarks": benchmarks}))
        (self.root / "results" / "verify.txt").write_text("...\n808 checks: 808 passed, 0 failed (8.1 s)\n")

    def tearDown(self):
        self.tmp.cleanup()

    def check(self, text):
        doc = self.root / "doc.md"
        doc.write_text(text)
        result = subprocess.run([sys.executable, str(SCRIPT), "--root", str(self.root), str(doc)],
                                capture_output=True, text=True, timeout=60)
        return result.returncode, result.stdout + result.stderr

    def test_right_claims_pass(self):
        code, out = self.check(
            "cuda.sliced reaches 2.52·10¹²<!-- check: results/run.json variant=cuda.sliced n=262144 "
            "field=interactions_per_second claim=2.52e12 --> (the median, not the mean),\n"
            "63.1 % of the limit<!-- check: results/run.json variant=cuda.sliced field=efficiency scale=100 "
            "claim=63.1 -->; Kokkos 0.98 of it<!-- check: results/run.json variant=kokkos.team_tiled@cuda "
            "field=interactions_per_second best=max / variant=cuda.sliced field=interactions_per_second "
            "claim=0.98 -->, slices=1: 2.31·10¹²<!-- check: results/run.json variant=kokkos.team_tiled@cuda "
            "tuning.slices=1 field=interactions_per_second claim=2.31e12 -->;\n"
            "808 of 808 pass<!-- check: results/verify.txt contains=\"808 checks: 808 passed, 0 failed\" -->\n")
        self.assertEqual(code, 0, out)
        self.assertIn("5 claims in 1 files, 0 wrong", out)

    def test_a_wrong_number_fails_and_names_the_line_and_the_value(self):
        code, out = self.check("intro\ncuda.sliced reaches 2.62·10¹²<!-- check: results/run.json variant=cuda.sliced "
                               "field=interactions_per_second claim=2.62e12 -->\n")
        self.assertEqual(code, 1, out)
        self.assertIn("doc.md:2: claim=2.62e12 but results/run.json gives 2.524e+12", out)

    def test_a_claim_rounded_wrongly_fails(self):
        code, out = self.check("2.53·10¹²<!-- check: results/run.json variant=cuda.sliced "
                               "field=interactions_per_second claim=2.53e12 -->")
        self.assertEqual(code, 1, out)

    def test_a_missing_results_file_fails(self):
        code, out = self.check("2.52·10¹²<!-- check: results/gone.json variant=cuda.sliced "
                               "field=interactions_per_second claim=2.52e12 -->")
        self.assertEqual(code, 1, out)
        self.assertIn("gone.json: cited results file is missing", out)
        code, out = self.check("808<!-- check: results/gone.txt contains=\"808 checks\" -->")
        self.assertEqual(code, 1, out)

    def test_a_log_without_the_stated_line_fails(self):
        code, out = self.check("2115/2115<!-- check: results/verify.txt contains=\"2115 checks: 2115 passed\" -->")
        self.assertEqual(code, 1, out)
        self.assertIn("does not contain '2115 checks: 2115 passed'", out)

    def test_the_text_must_show_the_checked_number(self):
        code, out = self.check("cuda.sliced reaches 2.6·10¹²<!-- check: results/run.json variant=cuda.sliced "
                               "field=interactions_per_second claim=2.52e12 -->")
        self.assertEqual(code, 1, out)
        self.assertIn("does not show 2.52", out)

    def test_several_configurations_need_best(self):
        code, out = self.check("2.47·10¹²<!-- check: results/run.json variant=kokkos.team_tiled@cuda "
                               "field=interactions_per_second claim=2.47e12 -->")
        self.assertEqual(code, 1, out)
        self.assertIn("2 configurations match", out)

    def test_a_malformed_marker_is_exit_2(self):
        code, out = self.check("2.52<!-- check: results/run.json variant=cuda.sliced claim=2.52 -->")
        self.assertEqual(code, 2, out)
        self.assertIn("malformed marker", out)


if __name__ == "__main__":
    unittest.main()
