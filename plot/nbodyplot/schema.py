"""The acceptance rule of `nbody-bench check-results`, for the plot tool: a results file is read as the
harness reads JSON (harness/results/json_input.cpp: no repeated key, no NaN or number beyond the double
range, nesting at most 64 deep, a UTF-8 byte-order mark skipped) and validated against the same schema
file, harness/results/results.schema.json, with the same keywords and limits as
harness/results/json_schema.cpp (an "integer" is whole and holds in a double exactly, a string over 1024
characters fails a "pattern").
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "harness" / "results" / "results.schema.json"
MAX_DEPTH = 64
MAX_PATTERN_SUBJECT = 1024
MAX_PROBLEMS = 20
_IGNORED = {"$schema", "$id", "$defs", "$comment", "title", "description"}


class SchemaInputError(ValueError):
    """The text is not a document the harness would read; the message is one line."""


def _no_repeated_keys(pairs):
    document = {}
    for key, value in pairs:
        if key in document:
            raise SchemaInputError(f"key {json.dumps(key)[:60]} appears twice in one object")
        document[key] = value
    return document


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise SchemaInputError(f"number overflow parsing '{text[:40]}'")
    return value


class _NotJsonConstant(Exception):
    pass


def _not_a_number(text: str):
    raise _NotJsonConstant(text)


def _depth(document) -> int:
    """The nesting depth, counted without recursion."""
    deepest, stack = 0, [(document, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            deepest = max(deepest, depth)
            if depth > MAX_DEPTH:
                break
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))
    return deepest


def parse(text: str):
    """The document in `text`, read as the harness reads JSON; SchemaInputError otherwise."""
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        document = json.loads(text, object_pairs_hook=_no_repeated_keys, parse_float=_finite_float,
                              parse_constant=_not_a_number)
    except _NotJsonConstant as e:
        at = text.find(str(e))  # Python's reader does not say where: the first such word
        line = text.count("\n", 0, at) + 1
        raise SchemaInputError(f"not valid JSON at line {line}, column {at - text.rfind(chr(10), 0, at)}: "
                               f"{e} is not a JSON value") from None
    except RecursionError:
        raise SchemaInputError(f"nested deeper than {MAX_DEPTH} levels") from None
    except json.JSONDecodeError as e:
        raise SchemaInputError(f"not valid JSON at line {e.lineno}, column {e.colno}: {e.msg}") from None
    if _depth(document) > MAX_DEPTH:
        raise SchemaInputError(f"nested deeper than {MAX_DEPTH} levels")
    return document


def _pointer_token(key: str) -> str:
    token = "".join("~0" if c == "~" else "~1" if c == "/" else f"\\x{ord(c):02x}" if ord(c) < 0x20 or ord(c) == 0x7f
                    else c for c in key[:60])
    return token + ("..." if len(key) > 60 else "")


def _dump(value) -> str:
    """JSON text as the harness writes it in messages (no blanks)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _excerpt(value) -> str:
    text = json.dumps(value, separators=(",", ":"))
    return text if len(text) <= 60 else text[:60] + "..."


def _json_equal(a, b) -> bool:
    """Equality as JSON values compare (1 == 1.0; true is no number)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_integer(value) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(value, int) and -2**63 <= value < 2**64:  # what the harness's reader holds as an integer
        return True
    number = float(value)
    return math.isfinite(number) and number == math.trunc(number) and abs(number) <= 2.0**53


_TYPES = {"object": lambda v: isinstance(v, dict), "array": lambda v: isinstance(v, list),
          "string": lambda v: isinstance(v, str), "boolean": lambda v: isinstance(v, bool),
          "null": lambda v: v is None, "number": _is_number, "integer": _is_integer}


class _Validator:
    def __init__(self, root: dict):
        self.root = root
        self.problems: list[str] = []

    def fail(self, record: bool, where: str, what: str) -> bool:
        if record and len(self.problems) < MAX_PROBLEMS:
            self.problems.append(f"{where or '/'}: {what}")
        return False

    def resolve(self, reference: str):
        if not reference.startswith("#/"):
            raise ValueError(f"only local $ref is supported: {reference}")
        node = self.root
        for part in reference[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def check(self, schema, value, where: str, record: bool) -> bool:
        if isinstance(schema, bool):
            return schema or self.fail(record, where, "no value is allowed here")
        ok = True
        for keyword, argument in schema.items():
            if len(self.problems) >= MAX_PROBLEMS:
                return False
            if keyword in _IGNORED or keyword in ("then", "else"):
                continue
            if keyword == "$ref":
                ok &= self.check(self.resolve(argument), value, where, record)
            elif keyword == "type":
                names = argument if isinstance(argument, list) else [argument]
                ok &= any(_TYPES[name](value) for name in names) or self.fail(
                    record, where, f"value {_excerpt(value)} is not of type {_dump(argument)}")
            elif keyword == "enum":
                ok &= any(_json_equal(option, value) for option in argument) or self.fail(
                    record, where, f"value {_excerpt(value)} is not one of {_dump(argument)}")
            elif keyword == "const":
                ok &= _json_equal(argument, value) or self.fail(
                    record, where, f"value {_excerpt(value)} is not {_dump(argument)}")
            elif keyword == "minimum":
                if _is_number(value) and value < argument:
                    ok &= self.fail(record, where, f"{_excerpt(value)} is below the minimum {_dump(argument)}")
            elif keyword == "exclusiveMinimum":
                if _is_number(value) and value <= argument:
                    ok &= self.fail(record, where, f"{_excerpt(value)} is not above {_dump(argument)}")
            elif keyword == "minLength":
                if isinstance(value, str) and len(value.encode("utf-8")) < argument:
                    ok &= self.fail(record, where, f"string shorter than {argument}")
            elif keyword == "pattern":
                if isinstance(value, str) and len(value.encode("utf-8")) > MAX_PATTERN_SUBJECT:
                    ok &= self.fail(record, where, f"string longer than {MAX_PATTERN_SUBJECT} characters, "
                                                  f"pattern {_dump(argument)}")
                elif isinstance(value, str) and not re.search(argument, value):
                    ok &= self.fail(record, where, f"{_excerpt(value)} does not match {_dump(argument)}")
            elif keyword == "required":
                if isinstance(value, dict):
                    for name in argument:
                        if name not in value:
                            ok &= self.fail(record, where, f'missing required field "{name}"')
            elif keyword == "properties":
                if isinstance(value, dict):
                    for name, sub in argument.items():
                        if name in value:
                            ok &= self.check(sub, value[name], f"{where}/{_pointer_token(name)}", record)
            elif keyword == "additionalProperties":
                if isinstance(value, dict):
                    listed = schema.get("properties", {})
                    for name, sub in value.items():
                        if name not in listed:
                            ok &= self.check(argument, sub, f"{where}/{_pointer_token(name)}", record)
            elif keyword == "items":
                if isinstance(value, list):
                    for i, item in enumerate(value):
                        ok &= self.check(argument, item, f"{where}/{i}", record)
            elif keyword == "allOf":
                for sub in argument:
                    ok &= self.check(sub, value, where, record)
            elif keyword == "anyOf":
                ok &= any(self.check(sub, value, where, False) for sub in argument) or self.fail(
                    record, where, f"value {_excerpt(value)} matches none of the {len(argument)} alternatives the "
                                   "schema allows here")
            elif keyword == "if":
                branch = "then" if self.check(argument, value, where, False) else "else"
                if branch in schema:
                    ok &= self.check(schema[branch], value, where, record)
            else:
                ok &= self.fail(True, where, f'schema keyword "{keyword}" is not supported by this validator')
        return ok


_schema_cache: dict = {}


def problems(document, schema_file: Path = SCHEMA_FILE) -> list[str]:
    """Where `document` breaks the results schema, as "<JSON pointer>: <what is wrong>"; empty when valid."""
    if schema_file not in _schema_cache:
        _schema_cache[schema_file] = json.loads(schema_file.read_text(encoding="utf-8"))
    schema = _schema_cache[schema_file]
    validator = _Validator(schema)
    validator.check(schema, document, "", True)
    return validator.problems


def check_with(bench: str, path: str) -> str | None:
    """The rest of the rule (the consistency of each entry's numbers) is the harness's own: `BENCH
    check-results PATH`. Its one-line refusal, less the program's name, or None when it accepts the file."""
    import subprocess
    try:
        result = subprocess.run([bench, "check-results", path], capture_output=True, text=True, errors="replace",
                                timeout=600)
    except OSError as e:
        raise SchemaInputError(f"{bench}: cannot run it to check {path} ({e.strerror})") from None
    if result.returncode == 0:
        return None
    lines = result.stderr.strip().splitlines()
    message = lines[-1] if lines else f"exit status {result.returncode}"
    return message.removeprefix("nbody-bench: ")
