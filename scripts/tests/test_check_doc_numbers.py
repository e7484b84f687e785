"""Tests of scripts/check_doc_numbers.py on a made-up repository and claims file: right claims pass; a
number changed in the doc, a wrong claim, a missing file, an ambiguous selection, a number the text
does not show and a marker left in the Markdown fail.

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


DOC = """# Made-up results
`cuda.sliced` reaches 2.52·10¹² interactions/s (the median, not the mean),
63.1 % of the limit; Kokkos 0.98 of it, and with slices=1: 2.31·10¹².
`verify` passes 808 of 808 checks. `kokkos.team_tiled@cuda` reaches 2.47·10¹².
"""
RIGHT = [
    ("reaches 2.52·10¹²", "results/run.json variant=cuda.sliced n=262144 field=interactions_per_second claim=2.52e12"),
    ("mean), 63.1 %", "results/run.json variant=cuda.sliced field=efficiency scale=100 claim=63.1"),
    ("Kokkos 0.98", "results/run.json variant=kokkos.team_tiled@cuda field=interactions_per_second best=max "
                    "/ variant=cuda.sliced field=interactions_per_second claim=0.98"),
    ("slices=1: 2.31·10¹²", "results/run.json variant=kokkos.team_tiled@cuda tuning.slices=1 "
                            "field=interactions_per_second claim=2.31e12"),
    ("passes 808 of 808", 'results/verify.txt contains="808 checks: 808 passed, 0 failed"'),
]


class CheckDocNumbers(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        (self.root / "results").mkdir()
        (self.root / "docs").mkdir()
        benchmarks = [entry("cuda.sliced", 262144, 2.6e12, "mean"), entry("cuda.sliced", 262144, 2.524e12, "median"),
                      entry("kokkos.team_tiled@cuda", 262144, 2.47e12, "median", {"slices": "auto"}),
                      entry("kokkos.team_tiled@cuda", 262144, 2.31e12, "median", {"slices": "1"}),
                      entry("omp.simd", 65536, 1.18e11)]
        (self.root / "results" / "run.json").write_text(json.dumps({"context": {}, "benchmarks": benchmarks}))
        (self.root / "results" / "verify.txt").write_text("...\n808 checks: 808 passed, 0 failed (8.1 s)\n")
        (self.root / "README.md").write_text(DOC)

    def tearDown(self):
        self.tmp.cleanup()

    def check(self, claims, doc=DOC):
        (self.root / "README.md").write_text(doc)
        (self.root / "docs" / "claims.json").write_text(json.dumps(
            {"claims": [{"doc": "README.md", "text": text, "check": check} for text, check in claims]}))
        result = subprocess.run([sys.executable, str(SCRIPT), "--root", str(self.root)],
                                capture_output=True, text=True, timeout=60)
        return result.returncode, result.stdout + result.stderr

    def test_right_claims_pass(self):
        code, out = self.check(RIGHT)
        self.assertEqual(code, 0, out)
        self.assertIn("5 claims in 1 docs, 0 wrong", out)

    def test_the_text_may_be_wrapped_differently_in_the_doc(self):
        code, out = self.check(RIGHT, DOC.replace("reaches 2.52", "reaches\n  2.52"))
        self.assertEqual(code, 0, out)

    def test_a_number_changed_in_the_doc_fails(self):
        code, out = self.check(RIGHT, DOC.replace("reaches 2.52·10¹²", "reaches 2.62·10¹²"))
        self.assertEqual(code, 1, out)
        self.assertIn("README.md: claim 0 ('reaches 2.52·10¹²'): the text is no longer in the doc", out)

    def test_a_text_found_twice_fails(self):
        code, out = self.check([("2.47·10¹²", "results/run.json variant=kokkos.team_tiled@cuda tuning.slices=auto "
                                               "field=interactions_per_second claim=2.47e12")],
                               DOC + "Again: 2.47·10¹².\n")
        self.assertEqual(code, 1, out)
        self.assertIn("the text is in the doc 2 times: lengthen it", out)

    def test_a_wrong_number_fails_and_names_the_value(self):
        doc = DOC.replace("reaches 2.52·10¹²", "reaches 2.62·10¹²")
        code, out = self.check([("reaches 2.62·10¹²", "results/run.json variant=cuda.sliced "
                                                      "field=interactions_per_second claim=2.62e12")], doc)
        self.assertEqual(code, 1, out)
        self.assertIn("claim=2.62e12 but results/run.json gives 2.524e+12", out)

    def test_a_claim_rounded_wrongly_fails(self):
        doc = DOC.replace("reaches 2.52·10¹²", "reaches 2.53·10¹²")
        code, out = self.check([("reaches 2.53·10¹²", "results/run.json variant=cuda.sliced "
                                                      "field=interactions_per_second claim=2.53e12")], doc)
        self.assertEqual(code, 1, out)

    def test_a_missing_results_file_fails(self):
        code, out = self.check([("reaches 2.52·10¹²", "results/gone.json variant=cuda.sliced "
                                                      "field=interactions_per_second claim=2.52e12")])
        self.assertEqual(code, 1, out)
        self.assertIn("gone.json: cited results file is missing", out)
        code, out = self.check([("passes 808 of 808", 'results/gone.txt contains="808 checks"')])
        self.assertEqual(code, 1, out)

    def test_a_log_without_the_stated_line_fails(self):
        code, out = self.check([("passes 808 of 808", 'results/verify.txt contains="808 checks: 807 passed"')])
        self.assertEqual(code, 1, out)
        self.assertIn("does not contain '808 checks: 807 passed'", out)

    def test_the_text_must_show_the_checked_number(self):
        code, out = self.check([("reaches 2.52·10¹²", "results/run.json variant=cuda.sliced "
                                                      "field=interactions_per_second claim=2.524e12")])
        self.assertEqual(code, 1, out)
        self.assertIn("the claim's text does not show 2.524", out)

    def test_several_configurations_need_best(self):
        code, out = self.check([("reaches 2.47·10¹²", "results/run.json variant=kokkos.team_tiled@cuda "
                                                      "field=interactions_per_second claim=2.47e12")])
        self.assertEqual(code, 1, out)
        self.assertIn("2 configurations match", out)

    def test_a_malformed_check_is_exit_2(self):
        code, out = self.check([("reaches 2.52·10¹²", "results/run.json variant=cuda.sliced claim=2.52")])
        self.assertEqual(code, 2, out)
        self.assertIn("malformed check", out)

    def test_a_malformed_claims_file_is_exit_2(self):
        code, out = self.check([("reaches 2.52·10¹²", "")])
        self.assertEqual(code, 2, out)
        self.assertIn("want exactly the non-empty strings doc, text, check", out)

    def test_a_marker_left_in_the_markdown_is_exit_2(self):
        doc = DOC.replace("2.52·10¹²", "2.52·10¹²<!-- check: results/run.json variant=cuda.sliced "
                                       "field=interactions_per_second claim=2.52e12 -->")
        code, out = self.check(RIGHT, doc)
        self.assertEqual(code, 2, out)
        self.assertIn("README.md:2: a check marker in the Markdown: move it to the claims file", out)


if __name__ == "__main__":
    unittest.main()
