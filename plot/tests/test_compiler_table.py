"""The report's host compiler table: each CPU variant under each compiler, its efficiency, and
the Kokkos ÷ hand-written ratio per compiler, checked against numbers computed here from the JSON.

Run: /usr/bin/python3 -m unittest -v test_compiler_table   (from plot/tests)
The inputs are the committed real_cpu.json fixture (GCC) and a copy of it relabelled as a Clang build,
with its rates scaled and one variant renamed to a Kokkos one, so that both compilers and both kinds
of variant are present.
"""
import copy
import hashlib
import json
import tempfile
import unittest
from pathlib import Path

from plot_tool import read_report, run_or_fail, run_tool
from plot_fixture import FIXTURE_DIR, number, parse_table

CLANG = "Clang 16.0.6"
CLANG_SCALE = 1.25  # the Clang copy's rates ÷ GCC's
N = 1024


def clang_copy(document: dict) -> dict:
    """The fixture as a Clang build: rates scaled, omp.edge_sharing renamed kokkos.simd@openmp."""
    out = copy.deepcopy(document)
    out["context"]["compiler"] = CLANG
    out["context"]["build_flags"] = f"CXX ({CLANG}): -march=x86-64-v4 -O3 -DNDEBUG; portable binary OFF"
    for e in out["benchmarks"]:
        for field in ("interactions_per_second", "efficiency"):
            if field in e:
                e[field] *= CLANG_SCALE
        for field in ("time_per_step_s", "real_time", "cpu_time"):
            if field in e:
                e[field] /= CLANG_SCALE
        if e["variant"] == "omp.edge_sharing":
            e["name"] = e["name"].replace("omp.edge_sharing", "kokkos.simd@openmp")
            e["run_name"] = e["run_name"].replace("omp.edge_sharing", "kokkos.simd@openmp")
            e["variant"], e["backend"], e["execution_space"] = "kokkos.simd@openmp", "kokkos", "openmp"
    return out


def medians(document: dict, n: int) -> dict:
    """variant -> the entry the report shows for its fastest tuning at N = n, D = 10: a configuration's
    median aggregate, else its single repetition."""
    chosen = {}
    for e in document["benchmarks"]:
        if e["n"] != n or e["d"] != 10 or e["run_type"] == "aggregate" and e.get("aggregate_name") != "median":
            continue
        key = (e["variant"], json.dumps(e["tuning"], sort_keys=True))
        if e.get("aggregate_name") == "median" or key not in chosen:
            chosen[key] = e
    best = {}
    for (variant, _), e in chosen.items():
        if variant not in best or e["interactions_per_second"] > best[variant]["interactions_per_second"]:
            best[variant] = e
    return best


class CompilerTable(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.gcc = json.loads((FIXTURE_DIR / "real_cpu.json").read_text())
        cls.clang = clang_copy(cls.gcc)
        cls.tmp = tempfile.TemporaryDirectory()
        tmp = Path(cls.tmp.name)
        (tmp / "gcc.json").write_text(json.dumps(cls.gcc))
        (tmp / "clang.json").write_text(json.dumps(cls.clang))
        run_or_fail(tmp / "gcc.json", tmp / "clang.json", "--out", tmp / "out")
        cls.report = read_report(tmp / "out")
        device = f"{cls.gcc['context']['host_cpu']['model_name']} ({cls.gcc['context']['num_cpus']} CPUs)"
        cls.rows = parse_table(cls.report, f"### {device}, 2d/fp32/euler, N = {N}, D = 10")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def column(self, compiler: str, what: str) -> str:
        return f"{compiler}, default ISA: {what}" if compiler == "GNU 12.2.0" else f"{compiler}, -march=x86-64-v4: {what}"

    def test_each_variant_under_each_compiler(self):
        gcc, clang = medians(self.gcc, N), medians(self.clang, N)
        by_variant = {r["variant"]: r for r in self.rows}
        for variant, entry in gcc.items():
            row = by_variant[variant]
            self.assertAlmostEqual(number(row[self.column("GNU 12.2.0", "interactions/s")]) /
                                   entry["interactions_per_second"], 1, delta=5e-3)
            self.assertAlmostEqual(number(row[self.column("GNU 12.2.0", "efficiency")]) / entry["efficiency"], 1,
                                   delta=5e-3)
            # Only GCC ran omp.edge_sharing; only Clang ran kokkos.simd@openmp.
            clang_cell = row[self.column(CLANG, "interactions/s")]
            if variant in clang:
                self.assertAlmostEqual(number(clang_cell) / clang[variant]["interactions_per_second"], 1, delta=5e-3)
            else:
                self.assertEqual(clang_cell, "—")
        self.assertEqual(by_variant["kokkos.simd@openmp"][self.column("GNU 12.2.0", "interactions/s")], "—")

    def test_kokkos_over_hand_written_per_compiler(self):
        ratio = {r["variant"]: r for r in self.rows}["Kokkos ÷ hand-written"]
        self.assertEqual(ratio[self.column("GNU 12.2.0", "interactions/s")], "—")  # no Kokkos variant in GCC's file
        clang = medians(self.clang, N)
        hand = max(e["interactions_per_second"] for v, e in clang.items() if not v.startswith("kokkos."))
        self.assertAlmostEqual(number(ratio[self.column(CLANG, "interactions/s")]) /
                               (clang["kokkos.simd@openmp"]["interactions_per_second"] / hand), 1, delta=5e-3)
        # The efficiency column divides by the hand-written variant of the best efficiency (on the
        # fixture's busy 2-core host that may be serial.reference, measured on one core).
        best = max((e["efficiency"], v) for v, e in clang.items() if not v.startswith("kokkos."))[1]
        self.assertIn(f"kokkos.simd@openmp ÷ {best}", ratio[self.column(CLANG, "efficiency")])

    def test_a_configuration_run_by_several_files_shows_its_median_run(self):
        def scaled(factor: float) -> dict:  # another build (commit) of the same compiler and ISA
            out = copy.deepcopy(self.gcc)
            commit = f"{out['context'].get('git_commit', '')}-scaled-{factor}"
            out["context"]["git_commit"] = hashlib.sha1(commit.encode()).hexdigest()
            for e in out["benchmarks"]:
                for field in ("interactions_per_second", "efficiency"):
                    if field in e:
                        e[field] *= factor
            return out
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            files = []
            for name, document in (("slow", scaled(0.5)), ("same", scaled(1.0)), ("fast", scaled(3.0)),
                                   ("clang", self.clang)):
                files.append(tmp / f"{name}.json")
                files[-1].write_text(json.dumps(document))
            result = run_tool(*files, "--out", tmp / "out")
            self.assertEqual(result.returncode, 0, result.stderr)
            device = f"{self.gcc['context']['host_cpu']['model_name']} ({self.gcc['context']['num_cpus']} CPUs)"
            rows = parse_table(read_report(tmp / "out"), f"### {device}, 2d/fp32/euler, N = {N}, D = 10")
        gcc = medians(self.gcc, N)
        by_variant = {r["variant"]: r for r in rows}
        for variant, entry in gcc.items():
            self.assertAlmostEqual(number(by_variant[variant][self.column("GNU 12.2.0", "interactions/s")]) /
                                   entry["interactions_per_second"], 1, delta=5e-3)

    def test_absent_with_one_compiler(self):
        with tempfile.TemporaryDirectory() as tmp:
            result = run_tool(FIXTURE_DIR / "real_cpu.json", "--out", Path(tmp) / "out")
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertNotIn("## Host compilers", read_report(Path(tmp) / "out"))


if __name__ == "__main__":
    unittest.main()
