"""--peer: the CUDA samples' nbody log read and set beside our variants on the same device."""
import json
import math
import statistics
import tempfile
import unittest
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from plot_fixture import FIXTURES, PNG_SIGNATURE, REL, SYNTHETIC_GPU, import_tool, number, parse_table, style_clashes
from plot_tool import report_of, run_tool


PEER_LOG_RUNS = [  # (precision, n, repetition, iterations, total ms); None: the run printed no time
    ("fp32", 16384, 1, 10, 4.0), ("fp32", 16384, 2, 10, 6.0), ("fp32", 16384, 3, 10, 4.5),
    ("fp32", 65536, 1, 10, 30.0), ("fp32", 65536, 2, 10, None),
    ("fp64", 16384, 1, 10, 12.0), ("fp64", 65536, 1, 3, 50.0),
]


def write_peer_log(path: Path, device: str = SYNTHETIC_GPU) -> None:
    """A log in scripts/device_run.sh --peer's shape, with the samples' own lines around the two it reads."""
    lines = []
    for precision, n, repetition, iterations, ms in PEER_LOG_RUNS:
        flags = " -fp64" if precision == "fp64" else ""
        lines += [f"== peer-nbody precision={precision} n={n} repetition={repetition} iterations={iterations} "
                  f"command: /carry/nbody -benchmark -numbodies={n} -i={iterations}{flags}",
                  "Run \"nbody -benchmark [-numbodies=<numBodies>]\" to measure performance.",
                  f"> {'Double' if flags else 'Single'} precision floating point simulation",
                  "GPU Device 0: \"Hopper\" with compute capability 9.0", "",
                  f"> Compute 9.0 CUDA device: [{device}]", f"number of bodies = {n}"]
        if ms is not None:
            lines += [f"{n} bodies, total time for {iterations} iterations: {ms:.3f} ms",
                      f"= {n * n * iterations / ms / 1e6:.3f} billion interactions per second"]
        else:
            lines += ["CUDA error at bodysystemcuda_impl.h:100 code=2(cudaErrorMemoryAllocation)"]
    path.write_text("\n".join(lines) + "\n")


class Peer(unittest.TestCase):
    """The CUDA samples' nbody log beside our 3D Euler variants of the same device (docs/peers.md)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        tmp = Path(cls.tmp.name)
        document = json.loads(Path(FIXTURES[1]).read_text())
        gpu = [e for e in document["benchmarks"] if e.get("device") == "gpu"]
        cls.entries = {}
        for precision, slower in (("fp32", 1.0), ("fp64", 2.5)):
            for e in gpu:
                copy = dict(e, dim=3, precision=precision, integrator="euler")
                if "time_per_step_s" in copy:
                    copy.update(time_per_step_s=e["time_per_step_s"] * slower,
                                interactions_per_second=e["interactions_per_second"] / slower)
                cls.entries.setdefault(precision, []).append(copy)
        document["benchmarks"] = cls.entries["fp32"] + cls.entries["fp64"]
        cls.results = tmp / "gpu_3d.json"
        cls.results.write_text(json.dumps(document))
        cls.log = tmp / "peer-nbody.txt"
        write_peer_log(cls.log)
        cls.out = tmp / "out"
        cls.report_text = report_of(cls.results, "--peer", cls.log, out=cls.out)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def table(self, precision):
        return parse_table(self.report_text, f"### {SYNTHETIC_GPU}, 3d/{precision}/euler")

    def best_rate(self, precision, prefix, n):
        """(variant, interactions/s) of our fastest configuration of a model at N, read from the entries:
        per configuration its median aggregate or its single repetition, failed ones left out."""
        groups = {}
        for e in self.entries[precision]:
            if e["variant"].startswith(prefix) and e["n"] == n:
                key = (e["variant"], json.dumps(e["tuning"], sort_keys=True), e["d"], e["steps"])
                groups.setdefault(key, []).append(e)
        candidates = []
        for entries in groups.values():
            medians = [e for e in entries if e.get("aggregate_name") == "median"]
            chosen = medians[0] if medians else next(e for e in entries if e["run_type"] == "iteration")
            if "time_per_step_s" in chosen and not any("error" in e for e in entries):
                candidates.append(chosen)
        best = min(candidates, key=lambda e: e["time_per_step_s"])
        return best["variant"], best["interactions_per_second"]

    def test_the_samples_rate_is_the_median_of_n_squared_iterations_over_time(self):
        for precision in ("fp32", "fp64"):
            for row in self.table(precision):
                n = int(row["N"])
                rates = [n * n * i / (ms / 1000) for p, size, _, i, ms in PEER_LOG_RUNS
                         if (p, size) == (precision, n) and ms is not None]
                self.assertTrue(math.isclose(number(row["samples: interactions/s"]), statistics.median(rates),
                                             rel_tol=REL), (precision, n))
                self.assertEqual(int(row["runs"]), len(rates))

    def test_our_best_of_each_model_and_its_ratio_to_the_samples(self):
        for precision in ("fp32", "fp64"):
            rows = self.table(precision)
            self.assertEqual([int(r["N"]) for r in rows], [16384, 65536])
            for row in rows:
                samples = number(row["samples: interactions/s"])
                for model, prefix in (("CUDA", "cuda."), ("Kokkos (cuda)", "kokkos.")):
                    variant, rate = self.best_rate(precision, prefix, int(row["N"]))
                    self.assertEqual(row[f"best {model}"], variant)
                    self.assertTrue(math.isclose(number(row[f"{model} interactions/s"]), rate, rel_tol=REL))
                    self.assertTrue(math.isclose(number(row[f"{model} ÷ samples"]),
                                                 rate / samples, rel_tol=2 * REL), (precision, model))

    def test_a_run_without_a_time_is_listed_not_counted(self):
        self.assertIn("printed no time: `", self.report_text)
        self.assertIn("(fp32, N = 65536, repetition 2)", self.report_text)

    def test_figures_are_written_embedded_and_styled_apart(self):
        import matplotlib.pyplot as plt
        for precision in ("fp32", "fp64"):
            stem = f"peer_synthetic_gpu_plot_test_fixture_3d_{precision}_euler"
            self.assertTrue((self.out / f"{stem}.png").read_bytes().startswith(PNG_SIGNATURE))
            ElementTree.parse(self.out / f"{stem}.svg")
            self.assertIn(f"({stem}.png)", self.report_text)
        tool = import_tool()
        figures, results = tool.figures, tool.results
        peer = __import__("nbodyplot.peer", fromlist=["peer"])
        configs = results.load([str(self.results)])[1]
        for comparison in peer.comparisons(configs, peer.points(peer.read_peer_log(str(self.log)))):
            with tempfile.TemporaryDirectory() as tmp:
                original_save = figures.save
                drawn = []
                figures.save = lambda fig, out_dir, stem, formats: drawn.append(fig) or stem
                try:
                    figures.peer_comparison(comparison, configs, Path(tmp), ("png",))
                finally:
                    figures.save = original_save
            self.assertEqual(len(drawn), 1)
            self.assertGreater(len(drawn[0].axes[0].get_lines()), 3)
            self.assertEqual(style_clashes(drawn[0]), [])
            plt.close(drawn[0])

    def test_another_device_is_not_compared(self):
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "other.txt"
            write_peer_log(log, device="Another GPU")
            rows = parse_table(report_of(self.results, "--peer", log, out=Path(tmp) / "out"),
                               "### Another GPU, 3d/fp32/euler")
        self.assertEqual({r["best CUDA"] for r in rows}, {"not measured"})

    def test_a_malformed_header_or_a_log_without_runs_is_bad_input(self):
        with tempfile.TemporaryDirectory() as tmp:
            bad = Path(tmp) / "bad.txt"
            bad.write_text("== peer-nbody precision=fp16 n=1 repetition=1 iterations=1 command: x\n")
            result = run_tool(self.results, "--peer", bad, "--out", Path(tmp) / "out")
            self.assertEqual(result.returncode, 2)
            self.assertIn("bad.txt:1: malformed run header", result.stderr)
            empty = Path(tmp) / "empty.txt"
            empty.write_text("nothing here\n")
            result = run_tool(self.results, "--peer", empty, "--out", Path(tmp) / "out")
            self.assertEqual(result.returncode, 2)
            self.assertIn("no '== peer-nbody' run header", result.stderr)


if __name__ == "__main__":
    unittest.main()
