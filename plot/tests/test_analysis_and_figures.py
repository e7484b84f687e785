"""The tool's modules called directly: the arithmetic on hand-made numbers, the number formats and the figures'
line styles."""
import tempfile
import unittest
from pathlib import Path

from plot_fixture import FIXTURES, import_tool, style_clashes, write_other_build


class Analysis(unittest.TestCase):
    """The arithmetic on hand-made numbers."""

    @classmethod
    def setUpClass(cls):
        tool = import_tool()
        cls.analysis, cls.ladders, cls.performance_portability = tool.analysis, tool.ladders, tool.performance_portability

    def test_pennycook_is_the_harmonic_mean_and_zero_where_a_platform_is_missing(self):
        pp = self.performance_portability.harmonic_mean_or_zero
        self.assertAlmostEqual(pp([0.5, 1.0], 2), 2 / (2 + 1))
        self.assertAlmostEqual(pp([0.25, 0.25, 1.0], 3), 3 / 9)
        self.assertEqual(pp([0.5], 2), 0.0)
        self.assertEqual(pp([0.5, None], 2), 0.0)

    def test_only_kokkos_is_paired_with_a_hand_written_model(self):
        # Thrust and OpenACC's host builds have @space ids too, but no "Kokkos ÷ hand-written" ratio.
        partner = self.analysis.kokkos_partner
        self.assertEqual(partner("Kokkos (cuda)"), "CUDA")
        self.assertEqual(partner("Kokkos (openmp)"), "OpenMP")
        for model in ("Kokkos (serial)", "Thrust (cuda)", "Thrust (omp)", "OpenACC (host)", "CUDA", "stdpar"):
            self.assertIsNone(partner(model), model)
        groups = self.analysis.comparison_groups(["Thrust (omp)", "Thrust (cuda)", "Kokkos (cuda)", "CUDA", "stdpar"])
        self.assertEqual(groups, [["CUDA", "Kokkos (cuda)"], ["stdpar"], ["Thrust (cuda)"], ["Thrust (omp)"]])

    def test_each_new_model_has_its_best_of_family(self):
        families = self.performance_portability.best_of_families()
        for family, member, other in (("best Thrust variant", "thrust.packed@tbb", "kokkos.simd@openmp"),
                                      ("best stdpar variant", "stdpar.blocked", "omp.simd"),
                                      ("best OpenACC variant", "openacc.naive@host", "omp_target.naive")):
            self.assertTrue(families[family](member), family)
            self.assertFalse(families[family](other), family)
        self.assertFalse(families["best hand-written variant"]("thrust.naive@cuda"))

    def test_ladder_sweeps_are_the_longest_n_and_d_sweeps(self):
        problems = [(n, 10) for n in (1024, 2048, 4096)] + [(1024, d) for d in (1000, 5000)] + \
                   [(65536, 100), (1024, 100)]
        groups = self.ladders.sweep_groups(problems)
        self.assertEqual([g.label for g in groups], ["N sweep, D = 10", "D sweep, N = 1024"])
        self.assertEqual(groups[0].problems, [(1024, 10), (2048, 10), (4096, 10)])
        self.assertEqual(groups[1].problems, [(1024, 10), (1024, 100), (1024, 1000), (1024, 5000)])
        self.assertEqual([g.label for g in self.ladders.sweep_groups([(4096, 10)])], ["N = 4096, D = 10"])

    def test_ladder_ratio_uses_only_problems_both_steps_ran(self):
        ratio = self.ladders._ratio({(1, 1): 4.0, (2, 1): 9.0, (3, 1): 100.0}, {(1, 1): 1.0, (2, 1): 1.0},
                                     [(1, 1), (2, 1), (3, 1)])
        self.assertAlmostEqual(ratio, 6.0)  # geometric mean of 4 and 9


class Formatting(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tool = import_tool()

    def test_three_significant_figures(self):
        num = self.tool.results.num
        cases = {0.97491: "0.975", 1.0021: "1.00", 1.0: "1.00", 2.86e12: "2.86e+12", 123456.0: "1.23e+05",
                 100.0: "100", 479.2: "479", 0.000719: "0.000719", 3.25e-05: "3.25e-05", 0.0: "0.00",
                 13.949: "13.9", None: "—"}
        for value, text in cases.items():
            self.assertEqual(num(value), text, value)
        self.assertEqual(self.tool.report_text.percent(0.0006), "0.0600 %")


class Styles(unittest.TestCase):
    """No two series in one panel share colour, marker and line style."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        other = write_other_build(Path(cls.tmp.name))
        tool = import_tool()
        cls.figures, cls.scaling_figures, results = tool.figures, tool.scaling_figures, tool.results
        cls.inputs = {"fixture": results.load(FIXTURES)[1],
                      "fixture and a second build": results.load(FIXTURES + [str(other)])[1]}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_no_two_series_in_a_panel_share_colour_and_style(self):
        import matplotlib.pyplot as plt
        for name, configs in self.inputs.items():
            drawn = {"time against N": self.figures.draw_sweep(configs, "n", "time"),
                     "time against D": self.figures.draw_sweep(configs, "d", "time"),
                     "efficiency against N": self.figures.draw_sweep(configs, "n", "efficiency"),
                     "portability ratio": self.figures.draw_portability_ratio(configs),
                     "thread scaling": self.scaling_figures.draw_thread_scaling(configs)}
            for figure_name, fig in drawn.items():
                self.assertIsNotNone(fig, f"{name}: no {figure_name} figure")
                self.assertGreater(sum(len(ax.get_lines()) for ax in fig.axes), 2)
                self.assertEqual(style_clashes(fig), [], f"{name}, {figure_name}")
                plt.close(fig)

    def test_the_check_finds_two_series_of_one_style(self):
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots()
        ax.plot([1, 2], [1, 2], color="tab:blue", marker="o", label="a")
        ax.plot([1, 2], [2, 3], color="tab:blue", marker="s", label="b")
        ax.plot([1, 2], [3, 4], color="tab:blue", marker="o", label="c")
        ax.plot([1, 2], [4, 5], color="tab:blue", marker="o", linestyle=(0, (6, 2, 1, 2)), label="d")
        ax.plot([1, 2], [5, 6], color="tab:blue", marker="o", linestyle=(0, (7, 2, 1, 2)), label="e")
        ax.axhline(1.0, color="tab:blue", marker="o", gid="reference", label="limit")
        self.assertEqual([(a, b) for _, a, b in style_clashes(fig)], [("a", "c")])
        plt.close(fig)


if __name__ == "__main__":
    unittest.main()
