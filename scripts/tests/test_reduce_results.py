"""Tests of scripts/reduce_results.py: a configuration run several times keeps its median and stddev
aggregates, one run once and an error entry stay, the context stays, and bad input is refused with
the file left as it was.

Run: /usr/bin/python3 -m unittest discover -s scripts/tests   (ctest runs the same)"""
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "reduce_results.py"


def entries(run_name, repetitions):
    """A configuration's entries as Google Benchmark writes them: its repetitions, then aggregates."""
    out = [{"run_name": run_name, "run_type": "iteration", "repetitions": repetitions, "repetition_index": i,
            "time_per_step_s": 1.0 + i} for i in range(repetitions)]
    if repetitions > 1:
        out += [{"run_name": run_name, "run_type": "aggregate", "repetitions": repetitions, "aggregate_name": name,
                 "time_per_step_s": value} for name, value in (("mean", 2.0), ("median", 2.0), ("stddev", 1.0), ("cv", 0.5))]
    return out


class ReduceResults(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.file = Path(self.tmp.name) / "run.json"
        self.context = {"git_commit": "0123456789abcdef", "gpu": {"name": "H200"}}
        failed = {"run_name": "c", "run_type": "iteration", "repetitions": 3, "repetition_index": 0,
                  "error_occurred": True, "error_message": "refused"}
        self.file.write_text(json.dumps({"context": self.context,
                                         "benchmarks": entries("a", 3) + entries("b", 1) + [failed]}, indent=2))

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, *files):
        return subprocess.run([sys.executable, str(SCRIPT), *map(str, files)], capture_output=True, text=True, timeout=60)

    def test_repetitions_give_way_to_median_and_stddev(self):
        result = self.run_script(self.file)
        self.assertEqual(result.returncode, 0, result.stderr)
        document = json.loads(self.file.read_text())
        self.assertEqual(document["context"], self.context)
        kept = [(e["run_name"], e["run_type"], e.get("aggregate_name")) for e in document["benchmarks"]]
        self.assertEqual(kept, [("a", "aggregate", "median"), ("a", "aggregate", "stddev"),
                                ("b", "iteration", None), ("c", "iteration", None)])
        self.assertNotIn("\n  ", self.file.read_text())  # no indentation
        self.assertRegex(result.stdout, r"run\.json: \d+ -> \d+ bytes")

    def test_a_reduced_file_stays_as_it_is(self):
        self.run_script(self.file)
        once = self.file.read_text()
        self.assertEqual(self.run_script(self.file).returncode, 0)
        self.assertEqual(self.file.read_text(), once)

    def test_a_file_that_is_not_results_is_refused_and_left_whole(self):
        bad = Path(self.tmp.name) / "bad.json"
        for text in ("{not json", '{"benchmarks": []}', '{"context": {}, "benchmarks": [1]}'):
            bad.write_text(text)
            result = self.run_script(bad)
            self.assertEqual(result.returncode, 2, text)
            self.assertIn(f"reduce_results: {bad}: not ", result.stderr)
            self.assertEqual(bad.read_text(), text)
        self.assertEqual(sorted(p.name for p in Path(self.tmp.name).iterdir()), ["bad.json", "run.json"])

    def test_a_missing_file_is_refused(self):
        result = self.run_script(Path(self.tmp.name) / "gone.json")
        self.assertEqual(result.returncode, 2)
        self.assertIn("gone.json", result.stderr)


if __name__ == "__main__":
    unittest.main()
