"""The report's energy (docs/results-format.md, "Energy") on a small synthetic results file: interactions
per joule of each model's best variant on the first screen, the energy ratio beside the speed ratio, the
figure of interactions per joule against N, and the reason where a device read no energy.

Run: /usr/bin/python3 -m unittest -v test_energy_report   (from plot/tests; ctest runs the same)
"""
import json
import math
import tempfile
import unittest
from pathlib import Path

from plot_tool import report_of
from plot_fixture import PNG_SIGNATURE, REL, number, parse_table, results_document

GPU = "Synthetic GPU (energy)"
CPU = "Synthetic CPU (energy) (16 CPUs)"
LIMIT, LIMIT_CLOCK_HZ = 3.7e12, 1.98e9

# variant -> {N: (time per step, energy per step in J, mean SM clock in MHz)}
GPU_RUNS = {
    "cuda.folded_mass": {1024: (4e-6, 2.0e-4, 1980.0), 65536: (2.0e-3, 1.2, 1900.0), 262144: (3.0e-2, 18.0, 1800.0)},
    "kokkos.folded_mass@cuda": {1024: (5e-6, 2.6e-4, 1980.0), 65536: (2.1e-3, 1.3, 1900.0),
                                262144: (3.2e-2, 20.7, 1750.0)},
}
CPU_REASON = "permission denied reading /sys/class/powercap/intel-rapl:0/energy_uj (readable by root only on this kernel)"


def entry(variant, n, time, device, energy=None, clock=None, reason=None):
    e = {"name": f"{variant}/n:{n}", "run_name": f"{variant}/n:{n}", "run_type": "iteration", "repetitions": 1,
         "repetition_index": 0, "variant": variant, "backend": variant.split(".")[0],
         "execution_space": "cuda" if device == "gpu" else "openmp", "device": device, "tuning": {}, "n": n, "d": 10,
         "dim": 2, "precision": "fp32", "integrator": "euler", "steps": 10, "warmup_steps": 1,
         "time_per_step_s": time, "interactions_per_second": n * n / time, "verified": True, "timed_steps": 10,
         "verification": "full"}
    if device == "gpu":
        e.update(efficiency=n * n / time / LIMIT, efficiency_limit=LIMIT,
                 efficiency_limit_inputs={"sm_count": 132, "sm_clock_hz": LIMIT_CLOCK_HZ, "lanes_per_sm": 128,
                                          "lanes_source": "synthetic", "instructions_per_interaction": 9})
    if energy is not None:
        window = time * 10
        e.update(energy_j=energy * 10, energy_per_step_j=energy, mean_power_w=energy * 10 / window,
                 interactions_per_joule=n * n / energy, mean_sm_clock_mhz=clock,
                 efficiency_at_clock=n * n / time / (LIMIT * clock * 1e6 / LIMIT_CLOCK_HZ),
                 energy={"meter": "nvml", "available": True, "device": "0000:1B:00.0", "window_s": window,
                         "clock_samples": 12})
    if reason is not None:
        e["energy"] = {"meter": "rapl", "available": False, "reason": reason}
    return e


def write_results(directory: Path) -> Path:
    entries = [entry(v, n, t, "gpu", energy, clock) for v, runs in GPU_RUNS.items() for n, (t, energy, clock) in runs.items()]
    entries += [entry("omp.simd", n, 1e-3 * n / 1024, "cpu", reason=CPU_REASON) for n in (1024, 65536)]
    entries += [entry("kokkos.simd@openmp", n, 1.2e-3 * n / 1024, "cpu", reason=CPU_REASON) for n in (1024, 65536)]
    context = {"git_commit": "abcdef0123456789abcdef0123456789abcdef01", "compiler": "GNU 12", "build_type": "Release", "build_flags": "-O3",
               "num_cpus": 16, "gpu": {"name": GPU}, "host_cpu": {"model_name": "Synthetic CPU (energy)"},
               "matrix": {"name": "energy"}}
    path = directory / "energy.json"
    path.write_text(json.dumps(results_document(context, entries)))
    return path


class EnergyReport(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        directory = Path(cls.tmp.name)
        cls.out = directory / "report"
        cls.report = report_of(write_results(directory), "--no-svg", out=cls.out)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_interactions_per_joule_of_each_models_best_on_the_first_screen(self):
        lines = self.report.splitlines()
        self.assertLess(lines.index("## Energy at a glance"), 40, "the energy table within the first screen")
        rows = parse_table(self.report, "## Energy at a glance")
        gpu = {(r["model"], r["N / D"]): r for r in rows if r["device"] == GPU}
        for variant, runs in GPU_RUNS.items():
            model = "CUDA" if variant.startswith("cuda") else "Kokkos (cuda)"
            for n in (1024, 262144):  # the summary's large and small N
                time, energy, clock = runs[n]
                r = gpu[(model, f"{n} / 10")]
                self.assertEqual(r["best variant"], variant)
                self.assertTrue(math.isclose(number(r["interactions/J"]), n * n / energy, rel_tol=REL), r)
                self.assertTrue(math.isclose(number(r["J/step"]), energy, rel_tol=REL), r)
                self.assertTrue(math.isclose(number(r["mean W"]), energy / time, rel_tol=REL), r)
                self.assertTrue(math.isclose(number(r["SM clock (MHz)"]), clock, rel_tol=REL), r)
                self.assertRegex(r["SM clock (MHz)"], r"^\d+$", "a clock in whole MHz")
                at_clock = n * n / time / (LIMIT * clock * 1e6 / LIMIT_CLOCK_HZ)
                self.assertTrue(math.isclose(number(r["efficiency at clock"]), at_clock, rel_tol=REL), r)
        cpu = [r for r in rows if r["device"] == CPU]
        self.assertTrue(cpu and all(r["interactions/J"] == "—" for r in cpu), cpu)
        self.assertIn(f"No energy (—): {CPU}: {CPU_REASON}.", self.report)

    def test_the_energy_ratio_stands_beside_the_speed_ratio(self):
        glance = [r for r in parse_table(self.report, "### A different source on each platform", column="device") if r["device"] == GPU]
        self.assertEqual(len(glance), 1, glance)
        hand, kokkos = GPU_RUNS["cuda.folded_mass"][262144], GPU_RUNS["kokkos.folded_mass@cuda"][262144]
        self.assertTrue(math.isclose(number(glance[0]["ratio"]), hand[0] / kokkos[0], rel_tol=REL), glance)
        # Kokkos joules per interaction ÷ CUDA's: 20.7 / 18.0.
        self.assertTrue(math.isclose(number(glance[0]["energy ratio"]), kokkos[1] / hand[1], rel_tol=REL), glance)
        cpu = [r for r in parse_table(self.report, "### A different source on each platform", column="device") if r["device"] == CPU]
        self.assertEqual([r["energy ratio"] for r in cpu], ["—"])

    def test_a_figure_of_interactions_per_joule_against_n(self):
        self.assertIn("## Interactions per joule against N", self.report)
        figure = self.out / "interactions_per_joule_vs_n.png"
        self.assertTrue(figure.is_file())
        self.assertEqual(figure.read_bytes()[:8], PNG_SIGNATURE)
        self.assertIn("(interactions_per_joule_vs_n.png)", self.report)


if __name__ == "__main__":
    unittest.main()
