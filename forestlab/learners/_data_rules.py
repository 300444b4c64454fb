"""Parameters that cannot apply to the data: one rule per case, read by ``fit`` and, before any run, by the plan.

A learner whose parameters can name more than the data hold (``max_features=1000`` on 60 features, more folds than
points, ...) declares ``_data_problems(params, n_samples, n_features, n_classes) -> list[str]`` (a staticmethod):
one sentence per parameter that cannot apply to data of that shape, naming the parameter, its value and the data's
size. ``fit`` raises a ValueError with those sentences (:func:`raise_data_problems`) instead of clipping the value;
:func:`forestlab.learners.check_params_for_data` gives them for a registry name and a config's parameters (and
grid), so a run that would fail on them is refused before it starts. A value a learner *derives* from the data by
its documented definition (a fraction of the features, at least 1; ``"sqrt"``; a bootstrap sample of ``round(f n)``
rows, at least 2) is not a problem: the learner reports the applied value in a fitted attribute.

>>> from forestlab.learners import check_params_for_data
>>> check_params_for_data("rf", {"max_features": 1000}, n_samples=200, n_features=60, n_classes=2)
['max_features=1000 exceeds the 60 features of the data']
>>> check_params_for_data("rf", {"max_features": "sqrt"}, n_samples=200, n_features=60, n_classes=2)
[]
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["count_exceeds", "data_problems", "raise_data_problems"]


def count_exceeds(name: str, value: Any, available: int, what: str) -> str | None:
    """The problem of an integer count ``value`` of parameter ``name`` above the ``available`` ones (``what``
    names them, e.g. "features of the data"); None when it fits or is not an integer count (a fraction, a named
    rule, None: those are resolved within the data by their definition).

    >>> count_exceeds("max_features", 1000, 60, "features of the data")
    'max_features=1000 exceeds the 60 features of the data'
    >>> count_exceeds("max_features", 0.5, 60, "features of the data") is None
    True
    """
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)) and int(value) > available:
        return f"{name}={int(value)} exceeds the {available} {what}"
    return None


def _full_params(cls: type, params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` over the defaults of ``cls.__init__`` (what an instance built from them would hold)."""
    defaults = {name: p.default for name, p in inspect.signature(cls.__init__).parameters.items()
                if p.default is not inspect.Parameter.empty}
    return {**defaults, **dict(params)}


def data_problems(cls: type, params: Mapping[str, Any], n_samples: int, n_features: int,
                  n_classes: int) -> list[str]:
    """The sentences of ``cls._data_problems`` for ``params`` (over the class's defaults); [] for a class without
    data rules."""
    rule = getattr(cls, "_data_problems", None)
    if rule is None:
        return []
    return list(rule(_full_params(cls, params), int(n_samples), int(n_features), int(n_classes)))


def raise_data_problems(estimator: Any, n_samples: int, n_features: int, n_classes: int) -> None:
    """ValueError naming every parameter of ``estimator`` that cannot apply to data of this shape (what fit calls,
    with the rule :func:`forestlab.learners.check_params_for_data` applies before the run)."""
    problems = data_problems(type(estimator), estimator.get_params(deep=False), n_samples, n_features, n_classes)
    if problems:
        raise ValueError(f"{type(estimator).__name__}: " + "; ".join(problems))
