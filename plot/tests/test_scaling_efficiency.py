"""The strong-scaling efficiency figure and its fitted cost model (docs/scaling.md) on small synthetic
results files: one per rank count G, both exchanges, times made here from known model terms, the
single-rank run recorded with exchange=overlap only (as scripts/scaling_run.sh runs it).

Run: /usr/bin/python3 -m unittest -v test_scaling_efficiency   (from plot/tests; ctest runs the same)
"""
import json
import math
import tempfile
import unittest
from pathlib import Path

from plot_tool import read_report, report_of, run_tool
from plot_fixture import PNG_SIGNATURE, REL, import_tool, number, parse_table, results_document, style_clashes

GPU = "Synthetic GPU (strong scaling)"
HEADING = "### Strong-scaling efficiency against bodies per GPU"

# The model's terms the times are made from; the fit must find them again.
LAUNCH = 8e-6            # per all-gather
LATENCY = 5e-6           # per ring hop
BANDWIDTH = 40e9         # bytes/s
FIXED = 20e-6            # the part of a step that does not divide over ranks
OVERLAP = 10e-6          # the overlapped exchange's own cost
RATE = 2.5e12            # interactions/s of the divided part
SIZES = (4096, 16384, 65536)
SPREAD = 0.01            # repetitions at (1 - SPREAD, 1, 1 + SPREAD) x the median


def single_time(n: int) -> float:
    return n * n / RATE + FIXED


def exchange(n: int, ranks: int) -> float:
    return LAUNCH + (ranks - 1) * LATENCY + (ranks - 1) / ranks * 8 * n / BANDWIDTH  # 2D float32: 8 bytes a body


def step_time(n: int, ranks: int, kind: str) -> float:
    """The model of docs/scaling.md written out here, apart from the tool's code."""
    compute = single_time(n) / ranks + (1 - 1 / ranks) * FIXED
    if kind == "allgather":
        return compute + exchange(n, ranks)
    hidden_by = (single_time(n) - FIXED) / ranks ** 2  # the owned block's pull from itself
    return compute + OVERLAP + max(0.0, exchange(n, ranks) - hidden_by)


def entries(n: int, ranks: int, kind: str) -> list:
    median = step_time(n, ranks, kind) if ranks > 1 else single_time(n)
    tuning = {"block_size": "256", "exchange": kind}
    name = f"cuda.sliced/n:{n}/exchange:{kind}"
    common = {"name": name, "run_name": name, "repetitions": 3, "variant": "cuda.sliced", "backend": "cuda",
              "execution_space": "cuda", "device": "gpu", "tuning": tuning, "n": n, "d": 100, "dim": 2,
              "precision": "fp32", "integrator": "euler", "steps": 5, "ranks": ranks, "verified": True,
              "verification": "sampled"}
    result = [dict(common, run_type="iteration", repetition_index=i, time_per_step_s=median * factor)
              for i, factor in enumerate((1 - SPREAD, 1.0, 1 + SPREAD))]
    median_entry = dict(common, run_type="aggregate", aggregate_name="median", time_per_step_s=median)
    if ranks > 1 and kind == "allgather":  # the breakdown: what the all-gather itself took
        median_entry["step_exposed_communication_s"] = exchange(n, ranks)
    return result + [median_entry]


def write_results(directory: Path, ranks: int) -> Path:
    kinds = ("overlap",) if ranks == 1 else ("allgather", "overlap")
    benchmarks = [e for n in SIZES for kind in kinds for e in entries(n, ranks, kind)]
    context = {"git_commit": "abcdef0123456789abcdef0123456789abcdef01", "compiler": "GNU 12", "build_type": "Release", "build_flags": "-O3",
               "gpu": {"name": GPU, "sm_count": 132}, "matrix": {"name": "overlap-scaling"},
               "distribution": {"ranks": ranks, "nodes": 1, "ranks_per_node": ranks, "communicator": "MPI"}}
    path = directory / f"g{ranks}.json"
    path.write_text(json.dumps(results_document(context, benchmarks)))
    return path


def expected_efficiency(n: int, ranks: int, kind: str) -> float:
    return single_time(n) / (ranks * step_time(n, ranks, kind))


class StrongScaling(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        directory = Path(cls.tmp.name)
        cls.files = [str(write_results(directory, g)) for g in (1, 2, 4)]
        tool = import_tool()
        cls.scaling, cls.cost_model, cls.scaling_figures, cls.results = (tool.scaling, tool.cost_model,
                                                                           tool.scaling_figures, tool.results)
        cls.configs = cls.results.load(cls.files)[1]
        cls.fits = cls.scaling.strong_scaling_fits(cls.configs)
        cls.out = directory / "report"
        cls.report = report_of(*cls.files, "--no-svg", out=cls.out)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_run_over_ranks_is_a_point_against_the_single_rank_run(self):
        self.assertEqual(len(self.fits), 1)
        seen = {(p.config.n, p.ranks, self.scaling.exchange_of(p.config)) for p in self.fits[0].points}
        self.assertEqual(seen, {(n, g, kind) for n in SIZES for g in (2, 4) for kind in ("allgather", "overlap")})

    def test_efficiency_is_the_single_rank_time_over_g_times_the_time(self):
        for p in self.fits[0].points:
            kind = self.scaling.exchange_of(p.config)
            expected = expected_efficiency(p.config.n, p.ranks, kind)
            # The all-gather runs have no single-rank run of their own: the overlap one is their base.
            self.assertEqual(p.base.tuning["exchange"], "overlap")
            self.assertTrue(math.isclose(p.efficiency, expected, rel_tol=1e-9), (p.config.n, p.ranks, kind))
            self.assertEqual(p.bodies_per_rank, p.config.n // p.ranks)
        # By hand, N = 4096 on 4 ranks with the all-gather: T(1) = 6.711 + 20 = 26.711 us, T(4) = 6.678 + 15
        # + 8 + 3 x 5 + 0.75 x 32768 B / 40 GB/s = 45.292 us, E = 26.711 / (4 x 45.292).
        point = next(p for p in self.fits[0].points if (p.config.n, p.ranks) == (4096, 4)
                     and self.scaling.exchange_of(p.config) == "allgather")
        self.assertTrue(math.isclose(point.efficiency, 0.14744, rel_tol=1e-4), point.efficiency)

    def test_the_range_spans_the_repetitions_of_both_runs(self):
        for p in self.fits[0].points:
            low, high = p.efficiency_range
            kind = self.scaling.exchange_of(p.config)
            t1, t = single_time(p.config.n), step_time(p.config.n, p.ranks, kind)
            self.assertTrue(math.isclose(low, t1 * (1 - SPREAD) / (p.ranks * t * (1 + SPREAD)), rel_tol=1e-9))
            self.assertTrue(math.isclose(high, t1 * (1 + SPREAD) / (p.ranks * t * (1 - SPREAD)), rel_tol=1e-9))

    def test_the_fit_finds_the_terms_the_times_were_made_from(self):
        terms = self.fits[0].fit.terms
        self.assertTrue(math.isclose(terms.launch_s, LAUNCH, rel_tol=1e-4), terms)
        self.assertTrue(math.isclose(terms.latency_s, LATENCY, rel_tol=1e-4), terms)
        self.assertTrue(math.isclose(terms.bandwidth, BANDWIDTH, rel_tol=1e-4), terms)
        self.assertTrue(math.isclose(terms.fixed_s[(2, "fp32", "euler")], FIXED, rel_tol=1e-4), terms)
        self.assertTrue(math.isclose(terms.overlap_s, OVERLAP, rel_tol=1e-4), terms)
        for p in self.fits[0].points:
            self.assertTrue(math.isclose(self.fits[0].model_efficiency(p), p.efficiency, rel_tol=1e-6))
        # Both sides of the overlap's max(0, X - H) occur, or the test would not test the branch.
        sides = {exchange(n, g) > (single_time(n) - FIXED) / g ** 2 for n in SIZES for g in (2, 4)}
        self.assertEqual(sides, {True, False})

    def test_the_figure_draws_each_line_measured_and_modelled(self):
        import matplotlib.pyplot as plt
        fig = self.scaling_figures.draw_scaling_efficiency(self.configs)
        ax = fig.axes[0]
        lines = {line.get_label(): line for line in ax.get_lines()}
        for g in (2, 4):
            for kind in ("allgather", "overlap"):
                measured, model = lines[f"G = {g}, {kind}"], lines[f"G = {g}, {kind}: model"]
                self.assertEqual(list(measured.get_xdata()), [n // g for n in SIZES])
                for y, n in zip(measured.get_ydata(), SIZES):
                    self.assertTrue(math.isclose(y, expected_efficiency(n, g, kind), rel_tol=1e-9))
                self.assertEqual(model.get_linestyle(), "--")
                self.assertEqual(measured.get_color(), model.get_color())
        self.assertEqual(style_clashes(fig), [])
        plt.close(fig)

    def test_the_report_embeds_the_figure_and_tabulates_the_points(self):
        self.assertEqual((self.out / "scaling_efficiency.png").read_bytes()[:8], PNG_SIGNATURE)
        self.assertIn("](scaling_efficiency.png)", self.report)
        self.assertLess(self.report.index("## Scaling over ranks"), self.report.index(HEADING))
        rows = parse_table(self.report, HEADING)
        self.assertEqual(len(rows), 12)
        for r in rows:
            n, g, kind = int(r["N"]), int(r["ranks"]), r["exchange"]
            self.assertTrue(math.isclose(number(r["E(G)"]), expected_efficiency(n, g, kind), rel_tol=REL), r)
            self.assertTrue(math.isclose(number(r["E model"]), expected_efficiency(n, g, kind), rel_tol=REL), r)

    def test_a_recorded_breakdown_past_two_to_the_16_does_not_enter_the_fit(self):
        # There the all-gather's wait holds the slower GPU's lag: not the exchange's cost.
        cost_model = self.cost_model
        workload, n = (2, "fp32", "euler"), 262144
        late = cost_model.Observation(workload, n, 2, "allgather", time=1.0, single_time=2.0, exposed=4e-3)
        kept = cost_model.Observation(workload, 65536, 2, "allgather", time=0.1, single_time=0.2, exposed=2e-5)
        fit = cost_model.fit([late, kept])
        self.assertEqual([(e.n, e.seconds) for e, _ in fit.exposed], [(65536, 2e-5)])

    def test_an_exposed_exchange_given_on_the_command_line_reaches_the_fit(self):
        # Without the breakdown in the files the fit still runs; an exposed exchange given apart enters it.
        stripped = []
        for path in self.files:
            document = json.loads(Path(path).read_text())
            for e in document["benchmarks"]:
                e.pop("step_exposed_communication_s", None)
            target = Path(self.tmp.name) / f"stripped-{Path(path).name}"
            target.write_text(json.dumps(document))
            stripped.append(str(target))
        configs = self.results.load(stripped)[1]
        given = self.cost_model.parse_exposed(f"2d/fp32/euler:4096:4:{exchange(4096, 4)!r}")
        fit = self.scaling.strong_scaling_fits(configs, [given])[0].fit
        self.assertEqual([e for e, _ in fit.exposed], [given])
        self.assertTrue(math.isclose(fit.exposed[0][1], exchange(4096, 4), rel_tol=1e-3))


class NoRunsOverRanks(unittest.TestCase):
    def test_single_rank_results_have_no_strong_scaling_figure(self):
        with tempfile.TemporaryDirectory() as tmp:
            single = write_results(Path(tmp), 1)
            out = Path(tmp) / "report"
            report_of(single, "--no-svg", out=out)
            self.assertNotIn(HEADING, read_report(out))
            self.assertFalse((out / "scaling_efficiency.png").exists())

    def test_a_malformed_exposed_exchange_is_bad_input(self):
        with tempfile.TemporaryDirectory() as tmp:
            single = write_results(Path(tmp), 1)
            result = run_tool(single, "--exposed-exchange", "2d/fp32:4096:4", "--out", Path(tmp) / "r")
            self.assertEqual(result.returncode, 2, result.stderr)
            self.assertIn("W:N:G:SECONDS", result.stderr)


if __name__ == "__main__":
    unittest.main()
