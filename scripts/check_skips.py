#!/usr/bin/env python3
"""Fail on any skipped test that the allowlist does not name.

A GTEST_SKIP passes under ctest (gtest_discover_tests reports it as skipped), so a test that stops
running (a model no longer found, a device gone) would pass silently. This reads the JUnit XML that
`ctest --output-junit FILE` writes and exits 1 when a skipped test matches no pattern of the
allowlist, printing each such test with ctest's skip message; allowlisted skips are printed with
their reason.

Allowlists (tests/skip_allowlist.txt for the suite's own tests, and models/<name>/skip_allowlist.txt
for a model's, beside the model that declares it; --allowlist replaces them): one entry a line,
`PATTERN | REASON`; PATTERN is a shell-style
glob over ctest's test name (`*` and `?`), REASON why that skip is expected on some machine (such
as "needs a GPU"). `#` starts a comment line. An entry without a reason is an error (exit 2).

    ctest --preset cpu --output-junit "$PWD/build/cpu/junit.xml"
    python3 scripts/check_skips.py build/cpu/junit.xml
"""
import argparse
import fnmatch
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_ALLOWLISTS = [ROOT / "tests" / "skip_allowlist.txt"] + sorted(ROOT.glob("models/*/skip_allowlist.txt"))


def fail(message):
    """Bad input: one line, exit status 2."""
    print(f"check_skips: {message}", file=sys.stderr)
    sys.exit(2)


def read_allowlist(path):
    """[(pattern, reason)]; exits 2 naming the line of a malformed entry."""
    entries = []
    for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        pattern, bar, reason = text.partition("|")
        if not bar or not pattern.strip() or not reason.strip():
            fail(f"{path}:{number}: expected 'PATTERN | REASON', got {text!r}")
        entries.append((pattern.strip(), reason.strip()))
    return entries


def skipped_tests(junit_path):
    """[(test name, skip message)] of the test cases ctest reported as skipped."""
    try:
        root = ET.parse(junit_path).getroot()
    except (OSError, ET.ParseError) as error:
        fail(f"cannot read {junit_path}: {error}")
    found = []
    for case in root.iter("testcase"):
        skipped = case.find("skipped")
        if skipped is None and case.get("status") not in ("skipped", "notrun"):
            continue
        message = "" if skipped is None else (skipped.get("message") or skipped.text or "")
        # ctest puts the test's output in system-out; GoogleTest prints "FILE:LINE: Skipped" and
        # the GTEST_SKIP message on the next line.
        lines = (case.findtext("system-out") or "").splitlines()
        after = [lines[i + 1].strip() for i, l in enumerate(lines[:-1]) if l.rstrip().endswith(": Skipped")]
        # A value-parameterised test's ctest name ends "  # GetParam() = VALUE": matched without it.
        name = case.get("name", "?").split("  # GetParam()")[0]
        found.append((name, (after[0] if after and after[0] else message).strip()))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("junit", help="JUnit XML from ctest --output-junit")
    parser.add_argument("--allowlist", action="append",
                        help="a file of PATTERN | REASON lines; repeatable (default: tests/skip_allowlist.txt and "
                             "every models/*/skip_allowlist.txt)")
    args = parser.parse_args()
    allowlists = args.allowlist or [str(p) for p in DEFAULT_ALLOWLISTS]
    allowlist = [entry for path in allowlists for entry in read_allowlist(path)]
    unexpected = []
    for name, message in skipped_tests(args.junit):
        reason = next((r for p, r in allowlist if fnmatch.fnmatchcase(name, p)), None)
        if reason is None:
            unexpected.append((name, message))
        else:
            print(f"skipped as allowed: {name} ({reason})")
    for name, message in unexpected:
        print(f"unexpected skip: {name}" + (f": {message}" if message else ""), file=sys.stderr)
    if unexpected:
        print(f"check_skips: {len(unexpected)} skipped test(s) not in {', '.join(allowlists)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
