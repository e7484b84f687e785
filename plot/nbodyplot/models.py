"""What each programming model declares about itself (its `models/<name>/model.cmake`, the
`nbody_register_model()` call; docs/adding-a-model.md): display name, report family and order, and
the execution spaces of Kokkos it is the hand-written code of.

A results file written by a build that records them carries them in `context.models`; for files
written before, the same declarations are read from this checkout's `models/*/model.cmake`. The
report then names, orders and groups models by what the models say, not by a list of its own.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

CHECKOUT_MODELS = Path(__file__).resolve().parent.parent.parent / "models"
# Where a model declares no order (a results file naming a model no declaration knows): after the others.
UNORDERED = 1 << 30

_ONE_VALUE = ("NAME", "TITLE", "IN_BUILD", "STATUS", "LIBRARY", "REGISTER_FUNCTION", "PORTABLE_FUNCTION", "FAMILY",
              "REPORT_ORDER")
_MANY_VALUES = ("PACKAGES", "NATIVE_SPACES")
_TOKEN = re.compile(r'"((?:[^"\\]|\\.)*)"|#[^\n]*|([^\s()"#]+)|(\))')


@dataclass(frozen=True)
class Model:
    id: str                   # the model part of variant ids: "omp"
    name: str                 # display name: "OpenMP"
    family: str               # the report's "best <family> variant" row it counts in
    order: int                # its place in the report's tables and legends, smaller first
    native_spaces: tuple = ()  # execution spaces of Kokkos whose hand-written code it is ("openmp", "threads")


class DeclarationError(Exception):
    """A model.cmake whose nbody_register_model() call cannot be read; the message names the file."""


def _register_call_arguments(text: str, path: str) -> list[str]:
    """The arguments of the nbody_register_model( ... ) call, quotes removed (CMake's quoted and unquoted
    arguments; comments skipped)."""
    calls = [m for m in re.finditer(r"^[ \t]*nbody_register_model[ \t]*\(", text, re.MULTILINE)]
    if len(calls) != 1:
        raise DeclarationError(f"{path}: expected one nbody_register_model( call, found {len(calls)}")
    arguments = []
    for token in _TOKEN.finditer(text, calls[0].end()):
        quoted, unquoted, close = token.groups()
        if close:
            return arguments
        if quoted is not None:
            arguments.append(re.sub(r"\\(.)", r"\1", quoted))
        elif unquoted is not None:
            arguments.append(unquoted)
    raise DeclarationError(f"{path}: nbody_register_model( has no closing parenthesis")


def parse_declaration(text: str, path: str = "model.cmake") -> Model:
    """The Model a model.cmake declares (its nbody_register_model call, as cmake/NbodyModels.cmake reads it)."""
    values: dict[str, list[str]] = {}
    key = None
    for argument in _register_call_arguments(text, path):
        if argument in _ONE_VALUE or argument in _MANY_VALUES:
            key = argument
            values[key] = []
        elif key is None or (key in _ONE_VALUE and values[key]):
            raise DeclarationError(f"{path}: nbody_register_model: unexpected argument {argument!r}")
        else:
            values[key].append(argument)
    name = (values.get("NAME") or [""])[0]
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise DeclarationError(f"{path}: nbody_register_model: NAME {name!r} is not a model name")
    order = (values.get("REPORT_ORDER") or [""])[0]
    if not order.isdigit():
        raise DeclarationError(f"{path}: nbody_register_model({name}): REPORT_ORDER {order!r} is not an integer")
    title = (values.get("TITLE") or [name])[0]
    return Model(name, title, (values.get("FAMILY") or [title])[0], int(order), tuple(values.get("NATIVE_SPACES", ())))


def from_checkout(models_dir: Path | None = None) -> dict[str, Model]:
    """Every model of a checkout's models/ folder (default: this one's), by id."""
    declared = {}
    for path in sorted((models_dir or CHECKOUT_MODELS).glob("*/model.cmake")):
        model = parse_declaration(path.read_text(encoding="utf-8"), str(path))
        declared[model.id] = model
    return declared


def from_context(context: dict) -> dict[str, Model]:
    """The models a results file's context declares and its build had (`context.models`; {} in older files)."""
    declared = {}
    entries = context.get("models")
    for entry in entries if isinstance(entries, list) else ():
        if isinstance(entry, dict) and entry.get("in_build") is True:
            declared[entry["id"]] = Model(entry["id"], entry["name"], entry["family"], int(entry["order"]),
                                          tuple(entry.get("native_spaces") or ()))
    return declared


class Catalog:
    """The models the report knows, by id."""

    def __init__(self, declared: dict[str, Model]):
        self.by_id = dict(declared)

    def name(self, model_id: str) -> str:
        """Display name of a model id ("omp_target" -> "OpenMP offload"); the id where none is declared."""
        model = self.by_id.get(model_id)
        return model.name if model else model_id

    def named(self, name: str) -> Model | None:
        """The model of a display name."""
        return next((m for m in self.by_id.values() if m.name == name), None)

    def native_to(self, space: str) -> Model | None:
        """The model that is the hand-written code of a Kokkos execution space (openmp -> omp); None for one
        that has none (serial: the reference is not a tuned serial code)."""
        return next((m for m in self.by_id.values() if space in m.native_spaces), None)

    def families(self) -> dict[str, set[str]]:
        """Each declared family -> the ids of its models, families in the models' order."""
        grouped: dict[str, set[str]] = {}
        for model in sorted(self.by_id.values(), key=lambda m: (m.order, m.id)):
            grouped.setdefault(model.family, set()).add(model.id)
        return grouped


_checkout: dict[str, Model] | None = None
_current: Catalog | None = None


def checkout_models() -> dict[str, Model]:
    """This checkout's declarations, read once ({} where the tool runs without the models: names fall back to ids)."""
    global _checkout
    if _checkout is None:
        _checkout = from_checkout() if CHECKOUT_MODELS.is_dir() else {}
    return _checkout


def use_contexts(contexts: list[dict]) -> Catalog:
    """Makes the catalog of the results being reported current: the checkout's declarations, replaced by those
    each file's context records (a later file's over an earlier one's)."""
    global _current
    declared = dict(checkout_models())
    for context in contexts:
        declared.update(from_context(context))
    _current = Catalog(declared)
    return _current


def current() -> Catalog:
    """The catalog of the results last loaded (results.load); before any, the checkout's."""
    return _current if _current is not None else use_contexts([])
