"""Metrics from a run's stored outputs.

Every run stores what its metrics are computed from (arrays beside its record):

=================  ==========================================================================
``y_test``         test labels (``y_train``: training labels)
``test_pred``      predicted labels of a classifier (``train_pred`` on the training part)
``test_scores``    scores, higher = more likely positive: a ranker's, a binary classifier's
                   ``decision_function`` (``train_scores`` on the training part)
``p_value``        a two-sample test's p-value (``statistic`` beside it)
=================  ==========================================================================

so a metric is a function of those arrays, computed by the worker right after the fit and, for a metric added to
an experiment later, from the store (``forestlab run`` backfills it; reports compute it in memory when it is
missing), refitting nothing. Stored names: ``test_<metric>`` and ``train_<metric>`` for label and score metrics,
``<metric>`` for a p-value metric.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from forestlab.metrics import compute_metrics, get_metric

__all__ = ["PARTS", "backfill", "expected_names", "missing_metrics", "outputs_metrics"]

PARTS = ("test", "train")
# The stored array a metric kind reads, per part.
_SOURCE = {"label": "{part}_pred", "score": "{part}_scores"}


def outputs_metrics(names: Iterable[str], arrays: Mapping[str, Any]) -> dict[str, float]:
    """The metrics ``names`` computed from a run's stored ``arrays`` (those a run cannot give are left out: a
    label metric of a ranker, a score metric of a multiclass classifier)."""
    names = list(names)
    out: dict[str, float] = {}
    for part in PARTS:
        y = arrays.get(f"y_{part}")
        if y is None:
            continue
        out.update(compute_metrics(names, y, arrays.get(f"{part}_pred"), arrays.get(f"{part}_scores"),
                                   prefix=f"{part}_"))
    if "p_value" in arrays:
        p_names = [n for n in names if get_metric(n).kind == "pvalue"]
        if p_names:
            out.update(compute_metrics(p_names, None, p_value=float(np.asarray(arrays["p_value"])), prefix=""))
    return out


def expected_names(name: str, array_names: Sequence[str]) -> list[str]:
    """The stored names metric ``name`` has on a run that stored ``array_names``."""
    metric = get_metric(name)
    have = set(array_names)
    if metric.kind == "pvalue":
        return [name] if "p_value" in have else []
    source = _SOURCE[metric.kind]
    return [f"{part}_{name}" for part in PARTS if f"y_{part}" in have and source.format(part=part) in have]


def missing_metrics(names: Iterable[str], stored: Mapping[str, Any], array_names: Sequence[str]) -> list[str]:
    """The metrics of ``names`` that a done run could give from its stored arrays but has not stored yet."""
    return [n for n in names if any(e not in stored for e in expected_names(n, array_names))]


def backfill(names: Iterable[str], stored: Mapping[str, Any] | None, array_names: Sequence[str] | None,
             load_arrays: Callable[[], Mapping[str, Any]]) -> dict[str, float]:
    """The metrics of ``names`` that a done run has not stored yet, computed from its stored outputs (read with
    ``load_arrays`` only when one is missing): what ``forestlab run`` stores and the reports compute in memory
    for a metric added to an experiment after its runs finished. Empty when nothing is missing."""
    missing = missing_metrics(names, stored or {}, array_names or [])
    return outputs_metrics(missing, load_arrays()) if missing else {}
