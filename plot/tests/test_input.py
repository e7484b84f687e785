"""Input the tool must handle: small or unusual results that still give a report, bad input refused with one
line and exit 2, and the same acceptance as the harness's check-results on the fuzz corpus."""
import json
import math
import os
import tempfile
import unittest
from pathlib import Path

from plot_fixture import FIXTURES, REL, import_tool, number, parse_table
from plot_tool import PLOT_DIR, read_report, report_of, run_tool


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

    def report_with_a_second_limit(self, tmp: str, factor: float) -> tuple[Path, str]:
        """A copy of the real fixture's N = 256 entries whose host FP32 limit is the fixture's times factor, and the
        report of the fixture with that copy."""
        document = json.loads(Path(FIXTURES[0]).read_text())
        document["context"]["host_cpu"]["fp32_interaction_limit"] *= factor
        document["benchmarks"] = [e for e in document["benchmarks"] if e["n"] == 256]
        copy = Path(tmp) / "copy.json"
        copy.write_text(json.dumps(document))
        result = run_tool(FIXTURES[0], copy, "--out", Path(tmp) / "out")
        self.assertEqual(result.returncode, 0, result.stderr)
        return copy, read_report(Path(tmp) / "out")

    def test_files_that_disagree_on_a_device_limit_are_flagged(self):
        with tempfile.TemporaryDirectory() as tmp:
            halved, report = self.report_with_a_second_limit(tmp, 0.5)
        self.assertIn("Note: the results files disagree on the FP32 limit of AMD EPYC (2 CPUs) by 100 % (more than "
                      "the 1.00 % tolerance)", report)
        self.assertIn(f"in `{halved}`", report)
        self.assertEqual([line for line in report.splitlines() if "disagree" in line and "**" in line], [],
                         "a note, not a bold banner")

    def test_a_limit_within_the_tolerance_is_not_flagged(self):
        with tempfile.TemporaryDirectory() as tmp:
            _, report = self.report_with_a_second_limit(tmp, 1.006)
        self.assertFalse("Note: the results files disagree" in report, "0.6 % is within the 1 % tolerance")
        self.assertIn("(files within 0.600 %)", report)

    def test_portability_problem_can_be_chosen(self):
        with tempfile.TemporaryDirectory() as tmp:
            report = report_of(FIXTURES[0], "--pp-problem", "512,10", out=Path(tmp) / "out")
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
