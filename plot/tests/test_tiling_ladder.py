"""Tests of plot/nbodyplot/tiling_ladder.py: the published Table 2 recomputed from its raw times,
the rungs told apart by their tunings, and our table built from the fastest verified run.

Run: /usr/bin/python3 -m unittest discover -s plot/tests -p 'test_tiling_ladder.py'"""
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nbodyplot import tiling_ladder  # noqa: E402
from nbodyplot.report_text import table  # noqa: E402
from nbodyplot.results import Build, Config  # noqa: E402

BUILD = Build(commit="c", compiler="g", build_type="Release", flags="", facts=())


def config(variant, tuning, n, seconds, verified=True, workload=tiling_ladder.WORKLOAD, device="H100"):
    return Config(source="s.json", device=device, device_kind="GPU", build=BUILD, workload=workload,
                  variant=variant, backend="cuda", tuning=dict(tuning), n=n, d=10, steps=20,
                  values={"time_per_step_s": seconds}, verified=verified)


class ReportTable(unittest.TestCase):
    def test_the_reports_table_2_from_its_raw_times(self):
        rows = {row[0].split()[0]: row[1:] for row in tiling_ladder.table_rows(tiling_ladder.REPORT_SECONDS)}
        # Printed in the published Table 2: vs previous, vs GPU0, vs GPU1 at 20k, 100k, 200k.
        self.assertEqual(rows["GPU1"][3:6], ["2.92×", "3.05×", "3.23×"])
        self.assertEqual(rows["GPU4"][3:6], ["6.61×", "7.10×", "7.07×"])
        self.assertEqual(rows["GPU3"][0:3], ["1.58×", "1.58×", "1.56×"])
        self.assertEqual(rows["GPU7"][0:3], ["0.992×", "1.04×", "1.07×"])  # the report rounds 0.9924 to 0.99
        self.assertEqual(rows["GPU8"][6:9], ["2.34×", "2.53×", "2.36×"])
        self.assertEqual(rows["GPU2"][0:3], ["", "", ""])  # not built on GPU1
        self.assertEqual(rows["GPU0"][3:9], [""] * 6)


class Rungs(unittest.TestCase):
    def test_each_rung_is_its_predecessor_plus_one_tuning(self):
        names = list(tiling_ladder.RUNG_TUNINGS)
        for before, after in zip(names, names[1:]):
            changed = {k for k in tiling_ladder.RUNG_TUNINGS[after]
                       if tiling_ladder.RUNG_TUNINGS[after][k] != tiling_ladder.RUNG_TUNINGS[before].get(k)}
            self.assertEqual(len(changed), 1, (before, after, changed))

    def test_configurations_are_told_apart_by_their_tunings(self):
        self.assertEqual(tiling_ladder.rung_of(config("cuda.pairwise", {"block_size": "16"}, 20000, 1)), "GPU0")
        self.assertEqual(tiling_ladder.rung_of(config("cuda.tiled", {}, 20000, 1)), "GPU1")
        for rung, tunings in tiling_ladder.RUNG_TUNINGS.items():
            self.assertEqual(tiling_ladder.rung_of(config(tiling_ladder.STEPWISE, {**tunings, "len": "1"}, 20000, 1)), rung)
        mixed = {**tiling_ladder.RUNG_TUNINGS["GPU2"], "register_reduction": "on"}  # on no rung
        self.assertIsNone(tiling_ladder.rung_of(config(tiling_ladder.STEPWISE, mixed, 20000, 1)))
        self.assertIsNone(tiling_ladder.rung_of(config("cuda.sliced", {}, 20000, 1)))


class OurTable(unittest.TestCase):
    def test_fastest_verified_run_of_the_reports_workload(self):
        gpu4 = tiling_ladder.RUNG_TUNINGS["GPU4"]
        configs = [config("cuda.pairwise", {"block_size": "64"}, 20000, 0.010),
                   config("cuda.pairwise", {"block_size": "128"}, 20000, 0.008),
                   config("cuda.tiled", {}, 20000, 0.004),
                   config(tiling_ladder.STEPWISE, {**gpu4, "len": "1"}, 20000, 0.002),
                   config(tiling_ladder.STEPWISE, {**gpu4, "len": "2"}, 20000, 0.001, verified=False),
                   config(tiling_ladder.STEPWISE, {**gpu4, "len": "4"}, 20000, 0.0005, workload=(2, "fp32", "euler"))]
        best = tiling_ladder.best_times(configs)
        self.assertEqual(best[("H100", "GPU0", 20000)][0], 0.008)
        self.assertEqual(best[("H100", "GPU4", 20000)][0], 0.002)
        lines = tiling_ladder.section(configs, table)
        text = "\n".join(lines)
        self.assertIn("Ours on H100:", text)
        ours = text.split("Ours on H100:")[1]
        gpu4_row = next(line for line in ours.splitlines() if line.startswith("| GPU4"))
        cells = [c.strip() for c in gpu4_row.strip("|").split("|")]
        self.assertEqual(cells[4], "4.00×")  # vs GPU0 at 20k: 0.008 / 0.002
        self.assertEqual(cells[7], "2.00×")  # vs GPU1 at 20k
        self.assertEqual(cells[5], "—")      # not measured at 100k

    def test_no_ladder_no_section(self):
        self.assertEqual(tiling_ladder.section([config("cuda.sliced", {}, 20000, 1)], table), [])


if __name__ == "__main__":
    unittest.main()


class ThreadScalingIsCpuOnly(unittest.TestCase):
    """A GPU variant's `threads` tuning (omp_target: warps per team) is no CPU thread count: the
    thread-scaling series take CPU configurations only."""

    def test_gpu_threads_tuning_makes_no_series(self):
        from nbodyplot import scaling
        workload = (2, "fp32", "euler")
        gpu = [Config(source="s.json", device="H100", device_kind="GPU", build=BUILD, workload=workload,
                      variant="omp_target.simd", backend="omp_target", tuning={"threads": str(t)}, n=65536, d=10,
                      steps=3, values={"time_per_step_s": 0.02}, verified=True) for t in (4, 8)]
        cpu = [Config(source="s.json", device="Xeon (16 CPUs)", device_kind="CPU", build=BUILD, workload=workload,
                      variant="omp.simd", backend="omp", tuning={"threads": str(t)}, n=65536, d=10,
                      steps=3, values={"time_per_step_s": 1.0 / t}, verified=True) for t in (1, 2)]
        series = scaling.thread_scaling(gpu + cpu)
        self.assertEqual([s.variant for s in series], ["omp.simd"])
        self.assertEqual([p[0] for p in series[0].points], [1, 2])
