"""Tests of scripts/energy_overhead.py: the on/off ratios and spreads of alternating rounds, and a log
without both an off and an on run refused.

Run: /usr/bin/python3 -m unittest discover -s scripts/tests   (ctest runs the same)"""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "energy_overhead.py"


def run_block(round_, energy, seconds, joules=None, watts=None):
    lines = [f"== round {round_} variant omp_target.multi_i n 1024 energy {energy}",
             "problem          N=1024 D=10 steps=600 warm-up=1 G=9.8 dt=0.01 eps=2 seed=42",
             f"time per step    {seconds:e} s (0 us over 1.0 s timed)"]
    if joules is not None:
        lines.append(f"energy           1.0e+02 J over 1.0e+00 s ({joules:e} J/step), mean power {watts} W, "
                     "1.0e+07 interactions/J (nvml 0000:00:06.0)")
    else:
        lines.append("energy           not available (nvml): energy reading switched off (--energy off)")
    return lines


class EnergyOverhead(unittest.TestCase):
    def run_on(self, lines):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as log:
            log.write("\n".join(lines) + "\n")
        try:
            return subprocess.run([sys.executable, str(SCRIPT), log.name], capture_output=True, text=True, timeout=60)
        finally:
            Path(log.name).unlink()

    def test_ratios_and_spreads_of_alternating_rounds(self):
        lines = (run_block(1, "off", 2.0e-3) + run_block(1, "on", 2.2e-3, 0.22, 100.0) +
                 run_block(2, "off", 1.0e-3) + run_block(2, "on", 1.1e-3, 0.11, 110.0) +
                 run_block(3, "off", 1.5e-3) + run_block(3, "on", 1.65e-3, 0.165, 105.0))
        result = self.run_on(lines)
        self.assertEqual(result.returncode, 0, result.stderr)
        row = result.stdout.splitlines()[1].split()
        self.assertEqual(row[:3], ["omp_target.multi_i", "1024", "3"])
        self.assertEqual(row[5], "1.1000")  # median on / median off
        self.assertEqual(row[6], "1.1000")  # mean on / mean off
        self.assertEqual(row[7], "1.1000")  # every round 1.1: the paired ratio, with no spread
        self.assertEqual(row[8], "(1.100-1.100)")
        self.assertEqual(row[9], "66.7%")   # off: (2.0 - 1.0) / 1.5
        self.assertEqual(row[10], "9.5%")   # power: (110 - 100) / 105

    def test_a_log_without_an_on_run_is_refused(self):
        result = self.run_on(run_block(1, "off", 2.0e-3))
        self.assertEqual(result.returncode, 2)
        self.assertIn("no variant with both an off and an on run", result.stderr)


if __name__ == "__main__":
    unittest.main()
