"""Tests of scripts/energy_repeatability.py: two runs agreeing within the tolerance pass, one
configuration beyond it fails the comparison, energy that follows the time keeps the mean power, a
run with the counters off gives the on/off time ratio, and a file that is not a results file is
refused.

Run: /usr/bin/python3 -m unittest discover -s scripts/tests   (ctest runs the same)"""
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "energy_repeatability.py"


def median(variant, n, time, energy=None):
    entry = {"run_name": f"{variant}/{n}", "run_type": "aggregate", "aggregate_name": "median", "repetitions": 3,
             "variant": variant, "n": n, "d": 10, "dim": 2, "precision": "fp32", "integrator": "euler",
             "time_per_step_s": time}
    if energy is not None:
        entry["energy_per_step_j"] = energy
    return entry


class EnergyRepeatability(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, entries):
        path = self.dir / name
        path.write_text(json.dumps({"context": {}, "benchmarks": entries}))
        return path

    def run_script(self, *args):
        return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=60)

    def test_runs_within_the_tolerance_agree(self):
        first = self.write("a.json", [median("cuda.x", 1024, 1e-5, 0.010), median("cuda.x", 4096, 1e-4, 0.100)])
        second = self.write("b.json", [median("cuda.x", 1024, 1e-5, 0.0104), median("cuda.x", 4096, 1e-4, 0.097)])
        result = self.run_script(first, second)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("2 of 2 configurations: energy per step of the two runs within 5 %", result.stdout)
        self.assertIn("+4.00", result.stdout)

    def test_one_configuration_beyond_the_tolerance_fails(self):
        first = self.write("a.json", [median("cuda.x", 1024, 1e-5, 0.010), median("cuda.x", 4096, 1e-4, 0.100)])
        second = self.write("b.json", [median("cuda.x", 1024, 1e-5, 0.0107), median("cuda.x", 4096, 1e-4, 0.100)])
        result = self.run_script(first, second)
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertIn("1 of 2 configurations: energy per step", result.stdout)
        self.assertIn("1 of 2 configurations: mean power", result.stdout)
        self.assertEqual(self.run_script(first, second, "--tolerance", "0.1").returncode, 0)

    def test_energy_that_follows_the_time_keeps_the_mean_power(self):
        first = self.write("a.json", [median("cuda.x", 1024, 1.0e-5, 0.010)])
        second = self.write("b.json", [median("cuda.x", 1024, 1.1e-5, 0.0111)])
        result = self.run_script(first, second)
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertIn("0 of 1 configurations: energy per step", result.stdout)
        self.assertIn("1 of 1 configurations: mean power of the two runs within 5 %", result.stdout)
        self.assertIn("+0.91", result.stdout)

    def test_the_run_without_counters_gives_the_time_ratio(self):
        first = self.write("a.json", [median("cuda.x", 1024, 1.01e-5, 0.010)])
        off = self.write("off.json", [median("cuda.x", 1024, 1.0e-5)])
        result = self.run_script(first, first, "--off", off)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("1.0100", result.stdout)

    def test_bad_input_is_refused(self):
        not_results = self.dir / "x.json"
        not_results.write_text("[1, 2]")
        result = self.run_script(not_results, not_results)
        self.assertEqual(result.returncode, 2)
        self.assertIn("not a results file", result.stderr)
        no_energy = self.write("n.json", [median("cuda.x", 1024, 1e-5)])
        self.assertEqual(self.run_script(no_energy, no_energy).returncode, 2)
        self.assertEqual(self.run_script(no_energy, no_energy, "--tolerance", "2").returncode, 2)


if __name__ == "__main__":
    unittest.main()
