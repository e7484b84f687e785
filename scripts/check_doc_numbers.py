#!/usr/bin/env python3
"""Checks the numbers README.md and docs/*.md cite against the results files they cite.

A checked claim carries a marker right after the number, in an HTML comment (invisible on the page):

    2.52·10¹² interactions/s<!-- check: results/h100-peer-nbody.json variant=cuda.sliced n=262144 dim=2
         field=interactions_per_second claim=2.52e12 -->

  * the first word is the results file, relative to the repository root;
  * `key=value` words select benchmark entries: a top-level field (variant, n, d, dim, precision,
    integrator, steps) or a tuning (`tuning.slices=1`); only median aggregates count, or the single
    repetition of a configuration run once;
  * `field=F` names the entry's number; `scale=100` multiplies it (percentages);
  * `best=max|min` takes the largest or smallest over the selected configurations; without it the
    selection must be exactly one configuration;
  * ` / ` divides by a second selection of the same form (a ratio; its file may differ: `file=...`);
  * `claim=X` is the number the text states, to its printed digits: it must equal the value rounded
    to those digits, and the 80 characters before the marker must show its significant digits.

A claim about a text log states a line the log must contain:

    808 of 808 checks<!-- check: results/h100-verify-gpu.txt contains="808 checks: 808 passed, 0 failed" -->

Exit status 0 when every claim holds, 1 with one line per failed claim, 2 on a malformed marker.
Usage: check_doc_numbers.py [--root DIR] [FILE.md ...]   (default: README.md and docs/*.md)
"""
from __future__ import annotations

import argparse
import json
import math
import re
import shlex
import sys
from decimal import Decimal, InvalidOperation
from pathlib import Path

MARKER = re.compile(r"<!--\s*check:\s*(.*?)\s*-->", re.S)
CONTEXT_CHARS = 80  # how far before a marker its number must be visible


class MarkerError(Exception):
    """A marker that cannot be read (exit status 2)."""


class Selection:
    def __init__(self, path: str, filters: dict, field: str, scale: float, best: str | None):
        self.path, self.filters, self.field, self.scale, self.best = path, filters, field, scale, best

    def value(self, root: Path, cache: dict) -> float:
        document = load(root / self.path, cache)
        entries = [e for e in document["benchmarks"] if isinstance(e, dict) and counts(e, document["benchmarks"])
                   and all(matches(e, k, v) for k, v in self.filters.items())]
        values = [e.get(self.field) for e in entries]
        values = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)]
        where = f"{self.path} {' '.join(f'{k}={v}' for k, v in self.filters.items())}"
        if not values:
            raise ValueError(f"no entry of {where} has a number '{self.field}'")
        if self.best is None and len(values) > 1:
            raise ValueError(f"{len(values)} configurations match {where}: narrow it or add best=max|min")
        chosen = max(values) if self.best == "max" else min(values) if self.best == "min" else values[0]
        return chosen * self.scale


def counts(entry: dict, benchmarks: list) -> bool:
    """The entry that stands for its configuration: a median aggregate, or the one repetition of a
    configuration without aggregates."""
    if entry.get("run_type") == "aggregate":
        return entry.get("aggregate_name") == "median"
    if entry.get("repetitions", 1) == 1:
        return True
    return not any(e.get("run_name") == entry.get("run_name") and e.get("aggregate_name") == "median"
                   for e in benchmarks)


def matches(entry: dict, key: str, wanted: str) -> bool:
    if key.startswith("tuning."):
        value = (entry.get("tuning") or {}).get(key[len("tuning."):])
    else:
        value = entry.get(key)
    return value is not None and str(value) == wanted


def load(path: Path, cache: dict) -> dict:
    if path not in cache:
        if not path.is_file():
            raise FileNotFoundError(f"{path}: cited results file is missing")
        document = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(document, dict) or not isinstance(document.get("benchmarks"), list):
            raise ValueError(f"{path}: not a results file")
        cache[path] = document
    return cache[path]


def parse_selection(words: list[str], default_path: str | None) -> Selection:
    path = default_path
    filters, field, scale, best = {}, None, 1.0, None
    for i, word in enumerate(words):
        if "=" not in word:
            if i == 0 and default_path is None:
                path = word
                continue
            raise MarkerError(f"'{word}' is not key=value")
        key, value = word.split("=", 1)
        if key == "file":
            path = value
        elif key == "field":
            field = value
        elif key == "scale":
            scale = float(value)
        elif key == "best":
            if value not in ("max", "min"):
                raise MarkerError(f"best={value}: want max or min")
            best = value
        else:
            filters[key] = value
    if path is None or field is None:
        raise MarkerError("a selection needs a results file and field=")
    return Selection(path, filters, field, scale, best)


def significant(claim: str) -> str:
    """The digits a reader sees: 2.52e12 -> 2.52, 67.9 -> 67.9."""
    return claim.lower().split("e", 1)[0].lstrip("+")


def rounds_to(value: float, claim: str) -> bool:
    """Whether value, rounded to the claim's last printed digit, is the claim."""
    try:
        stated = Decimal(claim)
    except InvalidOperation:
        raise MarkerError(f"claim={claim} is not a number") from None
    unit = Decimal(1).scaleb(stated.as_tuple().exponent)
    return abs(Decimal(repr(value)) - stated) <= unit / 2


def check_marker(body: str, before: str, root: Path, cache: dict) -> str | None:
    """None when the claim holds, else what is wrong."""
    try:
        words = shlex.split(body)
    except ValueError as e:
        raise MarkerError(str(e)) from None
    if not words:
        raise MarkerError("empty marker")
    contains = [w.split("=", 1)[1] for w in words if w.startswith("contains=")]
    if contains:
        path = root / words[0]
        if not path.is_file():
            return f"{words[0]}: cited results file is missing"
        text = path.read_text(encoding="utf-8", errors="replace")
        missing = [c for c in contains if c not in text]
        return f"{words[0]} does not contain {missing[0]!r}" if missing else None
    claims = [w for w in words if w.startswith("claim=")]
    if len(claims) != 1:
        raise MarkerError("a number marker needs one claim=")
    claim = claims[0].split("=", 1)[1]
    words = [w for w in words if not w.startswith("claim=")]
    parts = [[]]
    for w in words:
        if w == "/":
            parts.append([])
        else:
            parts[-1].append(w)
    if len(parts) > 2:
        raise MarkerError("at most one ' / '")
    numerator = parse_selection(parts[0], None)
    try:
        value = numerator.value(root, cache)
        if len(parts) == 2:
            value /= parse_selection(parts[1], numerator.path).value(root, cache)
    except (FileNotFoundError, ValueError) as e:
        return str(e)
    if significant(claim) not in before[-CONTEXT_CHARS:]:
        return f"claim={claim}: the text before the marker does not show {significant(claim)}"
    if not rounds_to(value, claim):
        return f"claim={claim} but {numerator.path} gives {value:.6g}"
    return None


def check_file(path: Path, root: Path, cache: dict) -> tuple[int, list[str]]:
    text = path.read_text(encoding="utf-8")
    checked, failures = 0, []
    for m in MARKER.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        line_start = text.rfind("\n", 0, m.start()) + 1
        try:
            problem = check_marker(m.group(1), text[line_start:m.start()], root, cache)
        except MarkerError as e:
            raise MarkerError(f"{path}:{line}: malformed marker: {e}") from None
        checked += 1
        if problem:
            failures.append(f"{path}:{line}: {problem}")
    return checked, failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=str(Path(__file__).resolve().parent.parent),
                        help="repository root (default: this script's)")
    parser.add_argument("files", nargs="*", help="Markdown files (default: README.md and docs/*.md)")
    args = parser.parse_args(argv)
    root = Path(args.root)
    files = [Path(f) for f in args.files] or [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    cache: dict = {}
    total, failures = 0, []
    try:
        for f in files:
            if not f.is_file():
                print(f"check_doc_numbers: {f}: no such file", file=sys.stderr)
                return 2
            checked, failed = check_file(f, root, cache)
            total += checked
            failures += failed
    except MarkerError as e:
        print(f"check_doc_numbers: {e}", file=sys.stderr)
        return 2
    for failure in failures:
        print(failure)
    print(f"check_doc_numbers: {total} claims in {len(files)} files, {len(failures)} wrong")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
