#!/usr/bin/env python3
"""Checks the numbers README.md and docs/*.md state against the results files they cite.

The claims live beside the docs, in docs/claims.json, not in the Markdown: one entry per checked
number, `{"doc": ..., "text": ..., "check": ...}`:

  * `doc`: the Markdown file, relative to the repository root;
  * `text`: the words of the doc that state the number, as written (line breaks and runs of spaces
    count as one space), long enough to occur exactly once in the doc; a doc whose number or
    wording changes no longer contains it, and the claim fails until the claim is updated too;
  * `check`: what the number must match, one of two forms.

A number in a results file:

    results/h100-peer-nbody.json variant=cuda.sliced n=262144 dim=2 field=interactions_per_second claim=2.52e12

  * the first word is the results file, relative to the repository root;
  * `key=value` words select benchmark entries: a top-level field (variant, n, d, dim, precision,
    integrator, steps) or a tuning (`tuning.slices=1`); only median aggregates count, or the single
    repetition of a configuration run once;
  * `field=F` names the entry's number; `scale=100` multiplies it (percentages);
  * `best=max|min` takes the largest or smallest over the selected configurations; without it the
    selection must be exactly one configuration;
  * ` / ` divides by a second selection of the same form (a ratio; its file may differ: `file=...`);
  * `claim=X` is the number the text states, to its printed digits: it must equal the value rounded
    to those digits, and the text must show its significant digits.

A line a text log must contain:

    results/h100-verify-gpu.txt contains="808 checks: 808 passed, 0 failed"

A `<!-- check: ... -->` marker left in README.md or docs/*.md is refused: its claim belongs in the
claims file.

Exit status 0 when every claim holds, 1 with one line per failed claim, 2 on a malformed claims file
or a marker in the Markdown.
Usage: check_doc_numbers.py [--root DIR] [--claims FILE]   (default: docs/claims.json)
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


class ClaimError(Exception):
    """A claims file or check that cannot be read, or a marker left in the Markdown (exit status 2)."""


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
            raise ClaimError(f"'{word}' is not key=value")
        key, value = word.split("=", 1)
        if key == "file":
            path = value
        elif key == "field":
            field = value
        elif key == "scale":
            scale = float(value)
        elif key == "best":
            if value not in ("max", "min"):
                raise ClaimError(f"best={value}: want max or min")
            best = value
        else:
            filters[key] = value
    if path is None or field is None:
        raise ClaimError("a selection needs a results file and field=")
    return Selection(path, filters, field, scale, best)


def significant(claim: str) -> str:
    """The digits a reader sees: 2.52e12 -> 2.52, 67.9 -> 67.9."""
    return claim.lower().split("e", 1)[0].lstrip("+")


def rounds_to(value: float, claim: str) -> bool:
    """Whether value, rounded to the claim's last printed digit, is the claim."""
    try:
        stated = Decimal(claim)
    except InvalidOperation:
        raise ClaimError(f"claim={claim} is not a number") from None
    unit = Decimal(1).scaleb(stated.as_tuple().exponent)
    return abs(Decimal(repr(value)) - stated) <= unit / 2


def check_claim(body: str, text: str, root: Path, cache: dict) -> str | None:
    """None when the claim holds, else what is wrong."""
    try:
        words = shlex.split(body)
    except ValueError as e:
        raise ClaimError(str(e)) from None
    if not words:
        raise ClaimError("empty check")
    contains = [w.split("=", 1)[1] for w in words if w.startswith("contains=")]
    if contains:
        path = root / words[0]
        if not path.is_file():
            return f"{words[0]}: cited results file is missing"
        log = path.read_text(encoding="utf-8", errors="replace")
        missing = [c for c in contains if c not in log]
        return f"{words[0]} does not contain {missing[0]!r}" if missing else None
    claims = [w for w in words if w.startswith("claim=")]
    if len(claims) != 1:
        raise ClaimError("a number check needs one claim=")
    claim = claims[0].split("=", 1)[1]
    words = [w for w in words if not w.startswith("claim=")]
    parts = [[]]
    for w in words:
        if w == "/":
            parts.append([])
        else:
            parts[-1].append(w)
    if len(parts) > 2:
        raise ClaimError("at most one ' / '")
    numerator = parse_selection(parts[0], None)
    try:
        value = numerator.value(root, cache)
        if len(parts) == 2:
            value /= parse_selection(parts[1], numerator.path).value(root, cache)
    except (FileNotFoundError, ValueError) as e:
        return str(e)
    if significant(claim) not in text:
        return f"claim={claim}: the claim's text does not show {significant(claim)}"
    if not rounds_to(value, claim):
        return f"claim={claim} but {numerator.path} gives {value:.6g}"
    return None


def flat(text: str) -> str:
    """Text with each run of white space as one space: a claim's text survives re-wrapping."""
    return " ".join(text.split())


def load_claims(path: Path) -> list[dict]:
    if not path.is_file():
        raise ClaimError(f"{path}: no such claims file")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ClaimError(f"{path}: not JSON ({e})") from None
    claims = document.get("claims") if isinstance(document, dict) else None
    if not isinstance(claims, list):
        raise ClaimError(f'{path}: want {{"claims": [...]}}')
    for i, claim in enumerate(claims):
        if not isinstance(claim, dict) or set(claim) != {"doc", "text", "check"} or \
                not all(isinstance(v, str) and v.strip() for v in claim.values()):
            raise ClaimError(f"{path}: claim {i}: want exactly the non-empty strings doc, text, check")
    return claims


def check_claims(claims: list[dict], root: Path) -> list[str]:
    """One line per failed claim."""
    docs: dict[str, str | None] = {}
    cache: dict = {}
    failures = []
    for i, claim in enumerate(claims):
        where = f"{claim['doc']}: claim {i} ({claim['text'][-40:]!r})"
        if claim["doc"] not in docs:
            doc = root / claim["doc"]
            docs[claim["doc"]] = flat(doc.read_text(encoding="utf-8")) if doc.is_file() else None
        doc_text = docs[claim["doc"]]
        if doc_text is None:
            failures.append(f"{claim['doc']}: no such doc")
            continue
        text = flat(claim["text"])
        found = doc_text.count(text)
        if found != 1:
            failures.append(f"{where}: the text is {'no longer in the doc' if not found else f'in the doc {found} times'}: "
                            f"{'update the claim with the doc' if not found else 'lengthen it'}")
            continue
        try:
            problem = check_claim(claim["check"], text, root, cache)
        except ClaimError as e:
            raise ClaimError(f"{where}: malformed check: {e}") from None
        if problem:
            failures.append(f"{where}: {problem}")
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=str(Path(__file__).resolve().parent.parent),
                        help="repository root (default: this script's)")
    parser.add_argument("--claims", help="claims file (default: ROOT/docs/claims.json)")
    args = parser.parse_args(argv)
    root = Path(args.root)
    try:
        claims = load_claims(Path(args.claims) if args.claims else root / "docs" / "claims.json")
        for doc in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
            text = doc.read_text(encoding="utf-8") if doc.is_file() else ""
            if MARKER.search(text):
                line = text.count("\n", 0, MARKER.search(text).start()) + 1
                raise ClaimError(f"{doc}:{line}: a check marker in the Markdown: move it to the claims file")
        failures = check_claims(claims, root)
    except ClaimError as e:
        print(f"check_doc_numbers: {e}", file=sys.stderr)
        return 2
    for failure in failures:
        print(failure)
    print(f"check_doc_numbers: {len(claims)} claims in {len({c['doc'] for c in claims})} docs, {len(failures)} wrong")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
