"""Small predicates on config and stored values that several layers share (no numpy: the config layer uses them).

A YAML or JSON ``true`` is a Python ``bool``, which is also an ``int``: every "is this an integer" check of forestlab
must refuse it, and these do, once.
"""

from __future__ import annotations

import numbers
from typing import Any


def is_int(value: Any) -> bool:
    """An integer (Python or numpy), not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """A real number (Python or numpy, integer or float), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def as_list(value: Any) -> list[str]:
    """A name or a list of names as a list of strings (None: empty)."""
    if isinstance(value, str):
        return [value]
    return [str(v) for v in (value or [])]
