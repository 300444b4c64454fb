"""Named, pluggable evaluation metrics, so that no report code assumes one kind of learner.

A :class:`Metric` says what it needs: ``kind="label"`` metrics compare predicted labels with the truth (risk,
accuracy), ``kind="score"`` metrics rank real-valued scores (AUC, truncated AUC). :func:`compute_metrics` evaluates
the metrics a run asks for from whatever the learner provides and silently skips those it cannot evaluate.

Binary labels are {-1, +1} with +1 the positive class (scores: larger means more likely +1).

>>> import numpy as np
>>> y = np.array([-1, -1, 1, 1])
>>> compute_metrics(["risk", "accuracy", "auc"], y, y_pred=np.array([-1, 1, 1, 1]), scores=[0.1, 0.4, 0.35, 0.8])
{'test_risk': 0.25, 'test_accuracy': 0.75, 'test_auc': 0.75}
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

import numpy as np
from sklearn import metrics as _skm

from forestlab.errors import ConfigError

__all__ = [
    "METRICS",
    "Metric",
    "accuracy",
    "auc",
    "compute_metrics",
    "get_metric",
    "risk",
    "roc_curve",
    "truncated_auc",
]

POS_LABEL = 1


@dataclass(frozen=True)
class Metric:
    """A named metric.

    Parameters
    ----------
    name : str
        Registry key, also the suffix of the stored metric (``test_<name>``).
    kind : {"label", "score"}
        ``"label"``: ``func(y_true, y_pred)``; ``"score"``: ``func(y_true, scores)``.
    greater_is_better : bool
        Direction, for tables that mark the best value.
    func : callable
        Returns a float.
    """

    name: str
    kind: Literal["label", "score"]
    greater_is_better: bool
    func: Callable[[Any, Any], float]

    def __call__(self, y_true: Any, values: Any) -> float:
        return float(self.func(y_true, values))


def _pair(y_true: Any, other: Any, what: str) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(y_true).ravel()
    v = np.asarray(other).ravel()
    if y.shape != v.shape:
        raise ValueError(f"y_true has {y.shape[0]} values but {what} has {v.shape[0]}")
    return y, v


def accuracy(y_true: Any, y_pred: Any) -> float:
    """Share of correct predictions.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        True and predicted labels.

    Returns
    -------
    float
        In [0, 1]; NaN for empty input.
    """
    y, p = _pair(y_true, y_pred, "y_pred")
    return float(np.mean(y == p)) if y.size else math.nan


def risk(y_true: Any, y_pred: Any) -> float:
    """Misclassification rate, 1 - accuracy (the studies' empirical risk R_T).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        True and predicted labels.

    Returns
    -------
    float
        In [0, 1]; NaN for empty input.
    """
    y, p = _pair(y_true, y_pred, "y_pred")
    return float(np.mean(y != p)) if y.size else math.nan


def _positives(y_true: Any, scores: Any, pos_label: Any) -> tuple[np.ndarray, np.ndarray]:
    y, s = _pair(y_true, scores, "scores")
    s = s.astype(np.float64)
    if not np.all(np.isfinite(s)):
        raise ValueError("scores must be finite")
    return y == pos_label, s


def auc(y_true: Any, scores: Any, *, pos_label: Any = POS_LABEL) -> float:
    """Area under the ROC curve; a tied positive/negative pair counts 1/2 (Mann-Whitney).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Labels; ``pos_label`` (+1) is positive, every other value negative.
    scores : array-like of shape (n_samples,)
        Real scores, larger meaning more likely positive.
    pos_label : default=1
        The positive label.

    Returns
    -------
    float
        In [0, 1]; NaN when only one class is present.
    """
    pos, s = _positives(y_true, scores, pos_label)
    if pos.all() or not pos.any():
        return math.nan
    return float(_skm.roc_auc_score(pos, s))


def truncated_auc(y_true: Any, scores: Any, u0: float = 0.1, *, pos_label: Any = POS_LABEL) -> float:
    """Truncated (local) AUC of Clémençon & Vayatis at level ``u0``, as reported by depecker2010 (Tables A.2, A.4).

    LocAUC(s, u0) = (1 / (n+ n-)) sum_{i: y_i = +1} sum_{j: y_j = -1} [1{s_i > s_j} + 1/2 1{s_i = s_j}] 1{s_i >= Q},
    where Q = Q̂_s(u0) is the empirical (1 - u0)-quantile of the scores of *all* observations, taken as the k-th
    largest score with k = ceil(u0 n) (at least 1): the top set {s >= Q} is the smallest set of top-ranked
    observations holding at least a share u0 of them, **plus every observation tied with Q**, so it can be much
    larger than u0 n for piecewise-constant scores. Tied (i, j) pairs count 1/2, as in :func:`auc` (the digest's
    "natural choice"); with u0 = 1 the result equals :func:`auc`. A perfect ranking scores about u0 / p, p the
    share of positives.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Labels; ``pos_label`` (+1) is positive, every other value negative.
    scores : array-like of shape (n_samples,)
        Real scores, larger meaning more likely positive.
    u0 : float, default=0.1
        Share of top-ranked observations, in (0, 1].
    pos_label : default=1
        The positive label.

    Returns
    -------
    float
        In [0, 1]; NaN when only one class is present.
    """
    if not 0.0 < u0 <= 1.0:
        raise ValueError(f"u0 must be in (0, 1], got {u0}")
    pos, s = _positives(y_true, scores, pos_label)
    n = s.size
    n_pos = int(pos.sum())
    n_neg = n - n_pos
    if n_pos == 0 or n_neg == 0:
        return math.nan
    k = min(n, max(1, math.ceil(u0 * n - 1e-9)))  # tolerance: 0.1 * 30 is 3.0000000000000004, not 4
    threshold = np.partition(s, n - k)[n - k]  # the k-th largest score
    top_pos = s[pos & (s >= threshold)]
    neg = np.sort(s[~pos])
    below = np.searchsorted(neg, top_pos, side="left")
    tied = np.searchsorted(neg, top_pos, side="right") - below
    return float((below.sum() + 0.5 * tied.sum()) / (n_pos * n_neg))


def roc_curve(y_true: Any, scores: Any, *, pos_label: Any = POS_LABEL) -> tuple[np.ndarray, np.ndarray]:
    """Empirical ROC curve from stored test scores, for figures.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Labels; ``pos_label`` (+1) is positive.
    scores : array-like of shape (n_samples,)
        Real scores.
    pos_label : default=1
        The positive label.

    Returns
    -------
    fpr, tpr : ndarray of shape (n_thresholds,)
        False and true positive rates, non-decreasing, from (0, 0) to (1, 1) (one point per distinct score, so the
        broken line through them has area :func:`auc`).
    """
    pos, s = _positives(y_true, scores, pos_label)
    fpr, tpr, _ = _skm.roc_curve(pos, s, pos_label=True, drop_intermediate=False)
    return fpr, tpr


#: Metric name -> Metric. ``truncated_auc`` is at u0 = 0.1; ``truncated_auc_20/10/05`` are depecker2010's levels.
METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("risk", "label", False, risk),
        Metric("accuracy", "label", True, accuracy),
        Metric("auc", "score", True, auc),
        Metric("truncated_auc", "score", True, partial(truncated_auc, u0=0.1)),
        Metric("truncated_auc_20", "score", True, partial(truncated_auc, u0=0.2)),
        Metric("truncated_auc_10", "score", True, partial(truncated_auc, u0=0.1)),
        Metric("truncated_auc_05", "score", True, partial(truncated_auc, u0=0.05)),
    )
}


def get_metric(name: str) -> Metric:
    """The metric registered under ``name``.

    Raises
    ------
    ConfigError
        If ``name`` is unknown; the message lists the valid names.
    """
    try:
        return METRICS[name]
    except (KeyError, TypeError):
        raise ConfigError(f"unknown metric '{name}'; valid metrics: {', '.join(sorted(METRICS))}") from None


def compute_metrics(
    names: Iterable[str],
    y_true: Any,
    y_pred: Any = None,
    scores: Any = None,
    prefix: str = "test_",
) -> dict[str, float]:
    """Evaluate the named metrics from what is available.

    Parameters
    ----------
    names : iterable of str
        Metric names (keys of :data:`METRICS`); an unknown name raises :class:`~forestlab.errors.ConfigError`.
    y_true : array-like of shape (n_samples,)
        True labels.
    y_pred : array-like of shape (n_samples,), optional
        Predicted labels; label metrics are skipped without it.
    scores : array-like of shape (n_samples,), optional
        Scores (e.g. ``decision_function``); score metrics are skipped without it.
    prefix : str, default="test_"
        Prepended to each metric name in the result.

    Returns
    -------
    dict of str to float
        E.g. ``{"test_risk": 0.12, "test_accuracy": 0.88}``, in the order of ``names``.
    """
    inputs = {"label": y_pred, "score": scores}
    out: dict[str, float] = {}
    for name in names:
        metric = get_metric(name)
        values = inputs[metric.kind]
        if values is not None:
            out[f"{prefix}{metric.name}"] = metric(y_true, values)
    return out
