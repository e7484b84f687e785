"""The two files' layout: report.md's sections and the appendix's, and every link between them."""
import re
import tempfile
import unittest
from pathlib import Path

from plot_fixture import FIXTURES, parse_table
from plot_tool import run_or_fail, run_tool


def headings(document: str) -> list[str]:
    return [line for line in document.splitlines() if line.startswith("## ")]


def anchors(document: str) -> set[str]:
    """The link targets a Markdown document defines: each heading's GitHub slug and each <a id="...">."""
    slugs = {re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
             for line in document.splitlines() if line.startswith("#")}
    return slugs | set(re.findall(r'<a id="([^"]+)"></a>', document))


def section_of(document: str, heading: str) -> list[str]:
    """The lines of the section under a `## ` heading, up to the next one."""
    lines = document.splitlines()
    start = lines.index(heading)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start:end]


class Layout(unittest.TestCase):
    """report.md leads with the answer and the figures that carry it, appendix.md holds the tables behind them;
    by default only the figures report.md shows are drawn (--all-figures draws the appendix's too); --summary
    prints the glance section, then the report's path."""

    MAIN_FIGURES = {"time_vs_n.png", "efficiency_vs_n.png", "portability_ratio_vs_n.png",
                    "portability_2d_fp32_euler.png"}

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = Path(cls.tmp.name) / "report"
        cls.result = run_or_fail(*FIXTURES, "--summary", "--out", cls.out)
        cls.main = (cls.out / "report.md").read_text(encoding="utf-8")
        cls.appendix = (cls.out / "appendix.md").read_text(encoding="utf-8")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_the_report_leads_with_the_answer_and_its_figures(self):
        sections = headings(self.main)
        self.assertEqual(sections[:3], ["## Portability at a glance", "## Energy at a glance", "## Summary"])
        for title in ("## Portability ratio against N", "## Efficiency against N", "## Time per step against N",
                      "## Performance portability"):
            self.assertIn(title, sections)

    def test_the_per_configuration_tables_are_in_the_appendix(self):
        for title in ("## Portability ratio against N", "## Optimisation ladders", "## Thread scaling",
                      "## Verification", "## All measurements", "## Appendix A: results files and builds",
                      "## Appendix B: devices", "## Appendix C: context of each results file"):
            self.assertIn(title, headings(self.appendix))
        for title in ("## Optimisation ladders", "## Thread scaling", "## Verification", "## All measurements",
                      "## Appendix C: context of each results file"):
            self.assertNotIn(title, headings(self.main))
        ratio_rows = [line for line in section_of(self.main, "## Portability ratio against N") if line.startswith("|")]
        self.assertEqual(ratio_rows, [], "report.md shows the ratio's figure, the appendix its points")
        self.assertTrue(parse_table(self.appendix, "## Portability ratio against N"))
        self.assertLess(len(self.main.splitlines()), len(self.appendix.splitlines()) / 4)

    def test_every_link_between_the_two_files_lands(self):
        self.assertIn("[appendix.md](appendix.md)", self.main)
        self.assertIn("[report.md](report.md)", self.appendix)
        for document, name in ((self.main, "report.md"), (self.appendix, "appendix.md")):
            links = re.findall(r"\]\((report\.md|appendix\.md)?#([^)]+)\)", document)
            self.assertTrue(links or name == "appendix.md", f"{name} links into the appendix")
            for target, anchor in links:
                text = {"report.md": self.main, "appendix.md": self.appendix}[target or name]
                self.assertIn(anchor, anchors(text), f"{name} links to {target}#{anchor}, which is not there")

    def test_only_the_figures_the_report_shows_are_drawn(self):
        pngs = {p.name for p in self.out.glob("*.png")}
        self.assertEqual(pngs, self.MAIN_FIGURES)
        self.assertEqual({p.name for p in self.out.glob("*.svg")}, {n[:-4] + ".svg" for n in pngs})
        for name in pngs:
            self.assertIn(f"]({name})", self.main)
        self.assertNotIn("![", self.appendix)

    def test_all_figures_draws_the_appendix_figures_too(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "report"
            result = run_tool(*FIXTURES, "--all-figures", "--no-svg", "--out", out)
            self.assertEqual(result.returncode, 0, result.stderr)
            pngs = {p.name for p in out.glob("*.png")}
            appendix = (out / "appendix.md").read_text(encoding="utf-8")
            main = (out / "report.md").read_text(encoding="utf-8")
        self.assertLess(self.MAIN_FIGURES, pngs)
        extra = pngs - self.MAIN_FIGURES
        self.assertTrue({"time_vs_d.png", "thread_scaling.png"} <= extra)
        self.assertTrue(any(name.startswith("ladder_") for name in extra))
        for name in extra:
            self.assertIn(f"]({name})", appendix)
            self.assertNotIn(f"]({name})", main)
        self.assertEqual(result.stdout.splitlines(), [f"nbody_plot: wrote {out / 'report.md'} (its tables: "
                                                      f"{out / 'appendix.md'})"], "no glance without --summary")

    def test_summary_prints_the_glance_then_where_the_report_is(self):
        glance = "\n".join(section_of(self.main, "## Portability at a glance")).strip()
        self.assertTrue(glance.startswith("## Portability at a glance"))
        self.assertIn("| device | workload |", glance)
        printed = self.result.stdout.strip()
        self.assertTrue(printed.startswith(glance), printed[:200])
        self.assertEqual(printed.splitlines()[-1],
                         f"nbody_plot: wrote {self.out / 'report.md'} (its tables: {self.out / 'appendix.md'})")


if __name__ == "__main__":
    unittest.main()
