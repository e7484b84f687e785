"""Figures and a Markdown report from nbody-bench results (Google Benchmark JSON, SPEC §6)."""
