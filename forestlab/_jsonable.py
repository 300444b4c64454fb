"""Frozen dataclasses (the resolved :class:`~forestlab.experiment.Experiment` and the specs it holds) as JSON and
back, exactly: a tuple stays a tuple, a list a list, a dict keeps its key order and its keys' types, None stays None,
and a nested dataclass is rebuilt from its fields. Decoding builds only the dataclasses reachable from the root
class through its fields' type hints, by name from that closed set: nothing read back can run code (no pickle, no
eval, no import by name).

The encoding: a str, int, float, bool or None is itself; anything else is a one-key JSON object, its key the kind:
``{"L": [...]}`` a list, ``{"T": [...]}`` a tuple, ``{"D": [[key, value], ...]}`` a dict, ``{"C": name, "F":
{field: value}}`` a dataclass. A value of any other type is refused (:class:`Unencodable`): the caller keeps nothing.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

_SCALARS = (str, int, float, bool, type(None))


class Unencodable(TypeError):
    """A value the encoding cannot keep exactly."""


def dataclass_closure(root: type) -> dict[str, type]:
    """The dataclasses reachable from ``root`` through its fields' type hints (``root`` included), by name."""
    found: dict[str, type] = {}

    def visit_hint(hint: Any) -> None:
        if dataclasses.is_dataclass(hint) and isinstance(hint, type):
            visit(hint)
        for arg in typing.get_args(hint):
            visit_hint(arg)

    def visit(cls: type) -> None:
        if cls.__name__ in found:
            if found[cls.__name__] is not cls:
                raise Unencodable(f"two dataclasses named {cls.__name__}")
            return
        found[cls.__name__] = cls
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            visit_hint(hints.get(f.name))

    visit(root)
    return found


def encode(value: Any, classes: dict[str, type], skip: frozenset[str] = frozenset()) -> Any:
    """``value`` as JSON-ready data (see the module docstring); ``skip``: fields of the root left out."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is list:
        return {"L": [encode(v, classes) for v in value]}
    if kind is tuple:
        return {"T": [encode(v, classes) for v in value]}
    if kind is dict:
        return {"D": [[encode(k, classes), encode(v, classes)] for k, v in value.items()]}
    if dataclasses.is_dataclass(value) and classes.get(kind.__name__) is kind:
        return {"C": kind.__name__, "F": {f.name: encode(getattr(value, f.name), classes)
                                         for f in dataclasses.fields(value) if f.name not in skip}}
    raise Unencodable(f"cannot keep a {kind.__module__}.{kind.__qualname__} exactly")


def decode(data: Any, classes: dict[str, type]) -> Any:
    """What :func:`encode` gave, rebuilt; ValueError for anything it cannot have given."""
    if type(data) in _SCALARS:
        return data
    if type(data) is not dict or len(data) not in (1, 2):
        raise ValueError(f"not an encoded value: {type(data).__name__}")
    if "C" in data:
        cls = classes.get(data["C"]) if type(data["C"]) is str else None
        fields = data.get("F")
        if cls is None or type(fields) is not dict:
            raise ValueError(f"not a known dataclass: {data['C']!r}")
        declared = {f.name: f for f in dataclasses.fields(cls)}
        if not set(fields) <= set(declared):
            raise ValueError(f"unknown fields of {cls.__name__}: {sorted(set(fields) - set(declared))}")
        values = {name: decode(v, classes) for name, v in fields.items()}
        obj = cls(**{k: v for k, v in values.items() if declared[k].init})
        for k, v in values.items():
            if not declared[k].init:
                object.__setattr__(obj, k, v)
        return obj
    (tag, items), = data.items()
    if type(items) is not list:
        raise ValueError(f"not an encoded {tag!r}")
    if tag == "L":
        return [decode(v, classes) for v in items]
    if tag == "T":
        return tuple(decode(v, classes) for v in items)
    if tag == "D":
        out = {}
        for pair in items:
            if type(pair) is not list or len(pair) != 2:
                raise ValueError("not an encoded dict entry")
            out[decode(pair[0], classes)] = decode(pair[1], classes)
        return out
    raise ValueError(f"not an encoded value: {tag!r}")
