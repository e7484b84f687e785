#!/usr/bin/env python3
"""Checks the repository's size budget on the files git tracks (the index: what the next commit holds).

The limits (the one place they are set):
  * the tracked tree at most 10 MB (10·10⁶ bytes);
  * results/ at most 6 MB and at most 120 files;
  * no tracked file over 512 KiB;
  * no path under results/ naming a commit (a word of 7 to 40 hex digits with a letter and a digit):
    the commit belongs inside the file (`context.git_commit`), not in its name.

results/ is the evidence the README, docs/ and the committed reports cite, nothing more: superseded
runs leave the tree (git keeps them), large per-repetition files keep the entries the docs cite, and
figures are SVG or optimised PNG (results/README.md says how).

Exit status 0 within the budget, 1 with one line per limit broken (each says what to do), 2 when the
folder is not a git checkout.
Usage: check_repo_budget.py [--root DIR]
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

MB = 1_000_000
LIMITS = {
    "tree_bytes": 10 * MB,
    "results_bytes": 6 * MB,
    "results_files": 120,
    "file_bytes": 512 * 1024,
}
RESULTS = "results/"
# A hex word of 7-40 digits standing alone in a path, with at least one letter and one digit (so a
# date or a plain number is not taken for a commit).
COMMIT_WORD = re.compile(r"(?<![0-9A-Za-z])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![0-9A-Za-z])")


def tracked_sizes(root: Path) -> dict[str, int]:
    """Path -> size in bytes of every file in the index (staged content, not the working tree)."""
    def git(*args: str, stdin: str | None = None) -> str:
        result = subprocess.run(["git", "-C", str(root), *args], input=stdin, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(result.stderr.strip() or f"git {' '.join(args)} failed")
        return result.stdout

    entries = []  # (object id, path)
    for record in git("ls-files", "--stage", "-z").split("\0"):
        if record:
            meta, path = record.split("\t", 1)
            mode, object_id, _stage = meta.split()
            if mode != "160000":  # a submodule is a commit, not a file
                entries.append((object_id, path))
    sizes_of = {}
    if entries:
        out = git("cat-file", "--batch-check=%(objectname) %(objectsize)",
                  stdin="".join(f"{object_id}\n" for object_id, _ in entries))
        for line in out.splitlines():
            object_id, size = line.split()
            sizes_of[object_id] = int(size)
    return {path: sizes_of[object_id] for object_id, path in entries}


def human(size: int) -> str:
    return f"{size / MB:.2f} MB"


def budget_problems(sizes: dict[str, int]) -> list[str]:
    """One line per limit broken, each saying what to do."""
    problems = []
    total = sum(sizes.values())
    results = {p: s for p, s in sizes.items() if p.startswith(RESULTS)}
    results_bytes = sum(results.values())
    if total > LIMITS["tree_bytes"]:
        problems.append(f"tracked tree is {human(total)}, over the {human(LIMITS['tree_bytes'])} limit: "
                        "remove or shrink the largest files (git ls-tree -r -l HEAD | sort -k4 -n)")
    if results_bytes > LIMITS["results_bytes"]:
        problems.append(f"results/ is {human(results_bytes)}, over the {human(LIMITS['results_bytes'])} limit: "
                        "remove superseded runs (git keeps them), keep the entries the docs cite, "
                        "optimise or drop figures (results/README.md)")
    if len(results) > LIMITS["results_files"]:
        problems.append(f"results/ holds {len(results)} files, over the {LIMITS['results_files']} limit: "
                        "remove superseded runs and figures the docs do not cite (results/README.md)")
    for path, size in sorted(sizes.items()):
        if size > LIMITS["file_bytes"]:
            problems.append(f"{path} is {size} bytes, over the {LIMITS['file_bytes']}-byte limit per file: "
                            "keep only the entries the docs cite, split it, or optimise the figure")
    for path in sorted(results):
        word = COMMIT_WORD.search(path)
        if word:
            problems.append(f"{path} names commit {word.group(0)}: rename it (the commit belongs inside "
                            "the file, context.git_commit) and update what cites it")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=str(Path(__file__).resolve().parent.parent),
                        help="repository root (default: this script's)")
    args = parser.parse_args(argv)
    try:
        sizes = tracked_sizes(Path(args.root))
    except (RuntimeError, OSError) as e:
        print(f"check_repo_budget: {args.root}: not a git checkout ({e})", file=sys.stderr)
        return 2
    problems = budget_problems(sizes)
    for problem in problems:
        print(problem)
    results = [s for p, s in sizes.items() if p.startswith(RESULTS)]
    print(f"check_repo_budget: tree {human(sum(sizes.values()))} in {len(sizes)} files, results/ "
          f"{human(sum(results))} in {len(results)} files, {len(problems)} limits broken")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
