"""Tests of scripts/check_repo_budget.py on made-up git repositories: a tree within the budget passes,
and a tree that breaks each limit (the tree's size, results/'s size and file count, one file's size,
a commit in a path under results/) fails with a line that names the limit and what to do.

Run: /usr/bin/python3 -m unittest discover -s scripts/tests   (ctest runs the same)"""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "check_repo_budget.py"
KB = 1000


class CheckRepoBudget(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.git("init", "-q")
        self.add("README.md", 10 * KB)
        self.add("results/README.md", 2 * KB)
        self.add("results/h200x4-scaling/2d-fp32-strong-g1.json", 300 * KB)

    def tearDown(self):
        self.tmp.cleanup()

    def git(self, *args):
        subprocess.run(["git", "-C", str(self.root), *args], check=True, capture_output=True)

    def add(self, path, size):
        """A tracked (staged) file of `size` bytes."""
        file = self.root / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(b"x" * size)
        self.git("add", path)

    def check(self, root=None):
        result = subprocess.run([sys.executable, str(SCRIPT), "--root", str(root or self.root)],
                                capture_output=True, text=True, timeout=60)
        return result.returncode, result.stdout + result.stderr

    def test_a_tree_within_the_budget_passes(self):
        code, out = self.check()
        self.assertEqual(code, 0, out)
        self.assertIn("results/ 0.30 MB in 2 files, 0 limits broken", out)

    def test_a_tree_over_10_mb_fails(self):
        for i in range(20):  # 10.2 MB outside results/, every file under the per-file limit
            self.add(f"src/part{i}.bin", 500 * KB)
        code, out = self.check()
        self.assertEqual(code, 1, out)
        self.assertIn("tracked tree is 10.31 MB, over the 10.00 MB limit: remove or shrink", out)
        self.assertNotIn("results/ is", out)

    def test_results_over_6_mb_fails(self):
        for i in range(12):
            self.add(f"results/run{i}.json", 500 * KB)
        code, out = self.check()
        self.assertEqual(code, 1, out)
        self.assertIn("results/ is 6.30 MB, over the 6.00 MB limit: remove superseded runs", out)
        self.assertNotIn("tracked tree is", out)

    def test_results_over_120_files_fails(self):
        for i in range(119):
            self.add(f"results/report/figure{i}.svg", 100)
        code, out = self.check()
        self.assertEqual(code, 1, out)
        self.assertIn("results/ holds 121 files, over the 120 limit", out)
        self.git("rm", "-q", "--cached", "results/report/figure0.svg")  # the index counts, not the folder
        code, out = self.check()
        self.assertEqual(code, 0, out)

    def test_a_file_over_512_kib_fails_wherever_it_is(self):
        self.add("docs/figure.png", 512 * 1024)  # the limit itself is allowed
        self.assertEqual(self.check()[0], 0)
        self.add("plot/tests/fixture/big.json", 512 * 1024 + 1)
        code, out = self.check()
        self.assertEqual(code, 1, out)
        self.assertIn("plot/tests/fixture/big.json is 524289 bytes, over the 524288-byte limit per file", out)

    def test_a_commit_in_a_results_path_fails(self):
        self.add("results/h200x4-scaling-peer/ab-3cbe231/2d-fp32-g1.json", 100)
        self.add("results/report-h100/ladder_cuda_nvidia_h100_a432e24.png", 100)
        code, out = self.check()
        self.assertEqual(code, 1, out)
        self.assertIn("results/h200x4-scaling-peer/ab-3cbe231/2d-fp32-g1.json names commit 3cbe231: rename it", out)
        self.assertIn("ladder_cuda_nvidia_h100_a432e24.png names commit a432e24", out)

    def test_names_that_only_look_like_hex_pass(self):
        for path in ["results/h200x4-scaling/3d-fp64-weak262144-g4.json", "results/2026-11-26/run.json",
                     "results/run-20261126/run.json", "results/deadbeefcafe/run.json", "src/a432e24.cpp"]:
            self.add(path, 100)
        code, out = self.check()
        self.assertEqual(code, 0, out)

    def test_a_folder_that_is_not_a_checkout_is_refused(self):
        with tempfile.TemporaryDirectory() as plain:
            code, out = self.check(plain)
        self.assertEqual(code, 2, out)
        self.assertIn("not a git checkout", out)


if __name__ == "__main__":
    unittest.main()
