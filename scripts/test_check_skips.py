"""Tests of scripts/check_skips.py on JUnit XML as ctest writes it (run by ctest: check_skips_script)."""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent / "check_skips.py"

JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="Linux-c++" tests="3" failures="0" disabled="0" skipped="2" hostname="" time="1" timestamp="">
 <testcase name="Passes.Always" classname="Passes.Always" time="0.1" status="run"><system-out>ok</system-out></testcase>
 <testcase name="CudaMap.EveryStrategyCountsTheSameCells" classname="CudaMap.EveryStrategyCountsTheSameCells" time="0.1" status="notrun">
  <skipped message="Regular Expression match"/>
  <system-out>Running main()
/src/models/cuda/tests/test_cuda.cpp:300: Skipped
no CUDA device
[  SKIPPED ] CudaMap.EveryStrategyCountsTheSameCells (0 ms)</system-out>
 </testcase>
 <testcase name="%s" classname="%s" time="0.1" status="notrun">
  <skipped message="Regular Expression match"/>
  <system-out>/src/models/kokkos/tests/test_kokkos.cpp:144: Skipped
Kokkos could not start
[  SKIPPED ] %s (0 ms)</system-out>
 </testcase>
</testsuite>
"""


class CheckSkips(unittest.TestCase):
    def run_script(self, junit_text, *allowlist_texts):
        """check_skips.py on junit_text with one --allowlist per text; with none, its default allowlists."""
        with tempfile.TemporaryDirectory() as folder:
            junit = Path(folder) / "junit.xml"
            junit.write_text(junit_text)
            arguments = []
            for index, text in enumerate(allowlist_texts):
                allowlist = Path(folder) / ("allow.txt" if index == 0 else f"allow{index}.txt")
                allowlist.write_text(text)
                arguments += ["--allowlist", str(allowlist)]
            return subprocess.run([sys.executable, str(SCRIPT), str(junit), *arguments], capture_output=True, text=True)

    def test_a_skip_not_allowlisted_fails_naming_it_and_its_message(self):
        name = "Kokkos.EveryVariantRunsEveryWorkloadOnEverySpace"
        r = self.run_script(JUNIT % (name, name, name), "CudaMap.* | needs a GPU\n")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(f"unexpected skip: {name}: Kokkos could not start", r.stderr)
        self.assertIn("skipped as allowed: CudaMap.EveryStrategyCountsTheSameCells (needs a GPU)", r.stdout)

    def test_a_parameterised_name_is_matched_without_its_param_comment(self):
        name = "EveryModel/OutsideBodies.NeverCountAgainstTheMap/cuda  # GetParam() = cuda"
        r = self.run_script(JUNIT % (name, name, name), "CudaMap.* | needs a GPU\n*/OutsideBodies.*/cuda | needs a GPU\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("skipped as allowed: EveryModel/OutsideBodies.NeverCountAgainstTheMap/cuda (needs a GPU)", r.stdout)

    def test_every_skip_allowlisted_passes(self):
        name = "Kokkos.PersistentTeamsThatCannotAllRunAreAnErrorNotAHang"
        r = self.run_script(JUNIT % (name, name, name), "# comment\nCudaMap.* | needs a GPU\n" + name + " | needs @cuda\n")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_an_entry_without_a_reason_is_bad_input(self):
        r = self.run_script(JUNIT % ("A.B", "A.B", "A.B"), "CudaMap.*\n")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("allow.txt:1", r.stderr)

    def test_the_checked_in_allowlists_are_well_formed_and_read_by_default(self):
        # tests/skip_allowlist.txt and every models/*/skip_allowlist.txt: CudaMap.* is models/cuda's.
        r = self.run_script(JUNIT % ("A.B", "A.B", "A.B"))
        self.assertEqual(r.returncode, 1, r.stderr)  # A.B is in no allowlist
        self.assertIn("unexpected skip: A.B", r.stderr)
        self.assertIn("skipped as allowed: CudaMap.EveryStrategyCountsTheSameCells (needs a GPU)", r.stdout)
        self.assertIn("models/cuda/skip_allowlist.txt", r.stderr)

    def test_every_allowlist_given_counts(self):
        name = "Kokkos.PersistentTeamsThatCannotAllRunAreAnErrorNotAHang"
        r = self.run_script(JUNIT % (name, name, name), "CudaMap.* | needs a GPU\n", name + " | needs @cuda\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"skipped as allowed: {name} (needs @cuda)", r.stdout)


if __name__ == "__main__":
    unittest.main()
