"""Named, pluggable evaluation metrics, so that no report code assumes one kind of learner.

A :class:`Metric` says what it needs: ``kind="label"`` metrics compare predicted labels with the truth (risk,
accuracy), ``kind="score"`` metrics rank real-valued scores (AUC, truncated and partial AUC), ``kind="pvalue"``
metrics read a two-sample test's stored p-value (``reject``: its mean over runs is the test's power).
:func:`compute_metrics` evaluates the metrics a run asks for from whatever the learner provides and silently skips
those it cannot evaluate.
:func:`direction` tells whether higher is better for a stored metric name (``test_auc``, ``oob_risk``, ...).

A :class:`Measure` is a table cell computed across runs rather than averaged over them (:data:`MEASURES`):
depecker2010's ranking ``instability`` and the ``roc_envelope_width``; :func:`roc_envelope` gives the envelope
itself for figures. Measures read each run's stored arrays (``y_test``, ``test_scores``).

Binary labels are {-1, +1} with +1 the positive class (scores: larger means more likely +1).

The truncated AUC at level u (depecker2010's LocAUC) has several readings when points are tied with the score
quantile that bounds its top set: :func:`truncated_auc` implements them (``ties="include" | "pro_rata" | "exclude"``,
plus ``"interpolate"``); the metrics ``truncated_auc_20/10/05`` and ``partial_auc_20/10/05`` use the module default
:data:`TRUNCATED_AUC_TIES`, and ``truncated_auc_<u>_include/_prorata/_exclude`` name one reading each.

>>> import numpy as np
>>> y = np.array([-1, -1, 1, 1])
>>> compute_metrics(["risk", "accuracy", "auc"], y, y_pred=np.array([-1, 1, 1, 1]), scores=[0.1, 0.4, 0.35, 0.8])
{'test_risk': 0.25, 'test_accuracy': 0.75, 'test_auc': 0.75}
"""

from __future__ import annotations

import hashlib
import math
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

import numpy as np

from forestlab.errors import ConfigError

__all__ = [
    "MEASURES",
    "METRICS",
    "TIES_READINGS",
    "TRUNCATED_AUC_TIES",
    "Measure",
    "Metric",
    "accuracy",
    "auc",
    "compute_metrics",
    "direction",
    "get_measure",
    "get_metric",
    "instability",
    "partial_auc",
    "reject",
    "risk",
    "roc_curve",
    "roc_envelope",
    "roc_envelope_width",
    "tpr_at",
    "spearman_distance",
    "truncated_auc",
]

POS_LABEL = 1

#: The level of the two-sample tests' rejections (depecker2010 Table 6.1: power at level 5%).
LEVEL = 0.05


@dataclass(frozen=True)
class Metric:
    """A named metric.

    Parameters
    ----------
    name : str
        Registry key, also the suffix of the stored metric (``test_<name>``).
    kind : {"label", "score", "pvalue"}
        ``"label"``: ``func(y_true, y_pred)``; ``"score"``: ``func(y_true, scores)``; ``"pvalue"``:
        ``func(y_true, p_value)`` with ``p_value`` a two-sample test's scalar p-value (``y_true`` unused).
    greater_is_better : bool
        Direction, for tables that mark the best value.
    func : callable
        Returns a float.
    """

    name: str
    kind: Literal["label", "score", "pvalue"]
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
    return roc_auc_from_sorted(*_descending_counts(pos, s))


def _descending_counts(pos: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positives and negatives at each distinct score, from the highest score down."""
    order = np.argsort(-scores, kind="stable")
    ranked = scores[order]
    last = np.append(np.flatnonzero(np.diff(ranked)), len(ranked) - 1)  # the last point of each run of ties
    tps = np.cumsum(pos[order], dtype=np.int64)[last]
    n_pos = np.diff(tps, prepend=0)
    return n_pos, np.diff(last, prepend=-1) - n_pos


def roc_auc_from_sorted(n_pos: np.ndarray, n_neg: np.ndarray) -> float:
    """``sklearn.metrics.roc_auc_score`` of a ranking given as class counts per score level, best level first.

    The same floating-point steps as scikit-learn's ``roc_curve`` + ``auc`` (cumulative counts at each distinct
    score that occurs, collinear points dropped, rates, trapezoid rule), so the value is identical, bit for bit, to
    ``roc_auc_score`` on the scores, without its input validation (most of its cost on small inputs: model
    selection and pruning evaluate thousands). Levels with no point are skipped; both classes must be present.
    """
    present = (n_pos + n_neg) > 0  # roc_curve's thresholds are the distinct scores that occur
    tps = np.cumsum(n_pos[present]).astype(np.float64)
    fps = np.cumsum(n_neg[present]).astype(np.float64)
    if fps.shape[0] > 2:  # drop_intermediate=True
        keep = np.flatnonzero(np.concatenate([[True], np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), [True]]))
        fps, tps = fps[keep], tps[keep]
    tps = np.concatenate([[0.0], tps])
    fps = np.concatenate([[0.0], fps])
    from scipy.integrate import trapezoid

    return float(trapezoid(tps / tps[-1], fps / fps[-1]))


#: The tie readings of :func:`truncated_auc` and :func:`partial_auc` at the quantile threshold (depecker2010 §6 item
#: 13, §8): see :func:`truncated_auc`. ``"interpolate"`` is selectable but not registered as a metric.
TIES_READINGS = ("include", "pro_rata", "exclude", "interpolate", "fractional")

#: The reading that ``truncated_auc``, ``truncated_auc_20/10/05`` and ``partial_auc_20/10/05`` use (read at call
#: time). Changing it changes what those metric names mean: values already stored under them keep the reading they
#: were computed with (stored metrics are not recomputed), while ``truncated_auc_<u>_<reading>`` never change.
TRUNCATED_AUC_TIES = "fractional"  # the reading Tables A.2 and A.4 support: experiments/depecker2010/README.md


def _score_groups(pos: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct scores from the highest down: how many positives and how many negatives hold each."""
    _, group = np.unique(-s, return_inverse=True)
    n_pos = np.bincount(group.ravel(), weights=pos.astype(np.float64))
    n_all = np.bincount(group.ravel()).astype(np.float64)
    return n_pos, n_all - n_pos


def _ties(ties: str | None) -> str:
    reading = TRUNCATED_AUC_TIES if ties is None else ties
    if reading not in TIES_READINGS:
        raise ValueError(f"ties must be one of {', '.join(TIES_READINGS)}, got {reading!r}")
    return reading


def _top_set(counts: np.ndarray, u0: float, reading: str) -> tuple[int, float]:
    """``(g, w)``: the top set is the score groups ``0 .. g-1`` (those strictly above the threshold Q) plus a share
    ``w`` of group ``g`` (the group tied with Q, the k-th largest score, k = ceil(u0 n))."""
    n = int(counts.sum())
    cum = np.cumsum(counts)
    if reading == "fractional":  # exactly u0 n points, a fraction of the group straddling the mark
        k_real = u0 * n
        g = min(int(np.searchsorted(cum, k_real - 1e-9)), len(counts) - 1)
        above = cum[g] - counts[g]
        return g, float(min(1.0, max(0.0, (k_real - above) / counts[g])))
    k = min(n, max(1, math.ceil(u0 * n - 1e-9)))  # tolerance: 0.1 * 30 is 3.0000000000000004, not 4
    g = int(np.searchsorted(cum, k - 0.5))  # the first group whose cumulated size reaches k
    above = cum[g] - counts[g]
    tied = counts[g]
    if reading == "include":
        w = 1.0
    elif reading == "exclude":
        w = 1.0 if above + tied == k else 0.0
    else:  # pro_rata, interpolate: exactly k points
        w = (k - above) / tied
    return g, float(w)


def _groups_of(y_true: Any, scores: Any, pos_label: Any) -> tuple[np.ndarray, np.ndarray, float, float] | None:
    pos, s = _positives(y_true, scores, pos_label)
    n_pos = float(pos.sum())
    n_neg = float(s.size) - n_pos
    if n_pos == 0 or n_neg == 0:
        return None
    p, q = _score_groups(pos, s)
    return p, q, n_pos, n_neg


def truncated_auc(y_true: Any, scores: Any, u0: float = 0.1, *, ties: str | None = None,
                  pos_label: Any = POS_LABEL) -> float:
    """Truncated (local) AUC of Clémençon & Vayatis at level ``u0``, as reported by depecker2010 (Tables A.2, A.4).

    LocAUC(s, u0) = P{s(X) > s(X'), s(X) >= Q_s(u0) | Y = +1, Y' = -1}: the AUC with only the positives of the top
    set T (the top-ranked share u0 of all observations) counted. Empirically, with n points, k = ceil(u0 n) (at
    least 1), Q the k-th largest score of *all* observations (the empirical (1 - u0)-quantile), A = #{s > Q} and
    t = #{s = Q} (A < k <= A + t), each positive i enters with a weight w_i::

        LocAUC = 1 / (n+ n-) * sum_{i: y_i = +1} w_i * sum_{j: y_j = -1} [1{s_i > s_j} + 1/2 1{s_i = s_j}]

        w_i = 1 if s_i > Q,  0 if s_i < Q,  and for the tied group s_i = Q:
            ties="include"      w = 1                (T = {s >= Q}: A + t >= k points)
            ties="pro_rata"     w = (k - A) / t      (exactly k points)
            ties="exclude"      w = 1 if A + t == k else 0   (T = the largest set {s >= c} of at most k points)
            ties="interpolate"  as pro_rata, but the tied group's pairs with its own negatives weigh
                                w - w^2 / 2 instead of w / 2 (the linear ROC segment through the group cut at
                                its share w: the positive at place t in [0, w] of it beats the share 1 - t of
                                its negatives, and the integral of 1 - t over [0, w] is w - w^2 / 2)
            ties="fractional"   as pro_rata with k = u0 n itself, not rounded up: the top set holds exactly u0 n
                                points, the group at the u0 n mark counted for the fraction of it that fits; a
                                perfect ranking then scores exactly u0 / p on any fold (the cells of Tables A.2
                                and A.4 that sit at the ceiling u0 / p with no spread)

    The readings differ only when the tied group straddles the k-th place (A + t > k); without ties at Q they all
    give the top k points. ``"include"`` is the digest's reading (§2.1: every point tied with the quantile joins
    the top set, which explains printed values above u0 / p, p the share of positives) but the top set can swallow
    most of a test fold for piecewise-constant scores (§8); ``"pro_rata"`` is the expectation of the include
    formula over a top set of exactly k points whose members from the tied group are drawn at random (tied pairs
    still count 1/2); ``"exclude"`` drops a straddling group entirely (T can then be empty, giving 0);
    ``"interpolate"`` is the area of the linearly interpolated ROC curve (Convention 2) cut at the k-point mark,
    so that the thesis's identity LocAUC = PartAUC + beta(u0) - alpha(u0) beta(u0) holds (with :func:`partial_auc`
    and (alpha, beta) the rates of T); it exceeds pro_rata by w (1 - w) / 2 * (tied negatives / n-) * (tied
    positives / n+). Include and exclude satisfy the identity too; pro_rata does not.

    Tied (i, j) pairs count 1/2, as in :func:`auc`. With u0 = 1 every reading equals :func:`auc`. A perfect ranking
    scores k / n+ ~ u0 / p, the ceiling of pro_rata, interpolate and exclude; include can exceed it.
    ``ties=None`` (the default) uses the module's :data:`TRUNCATED_AUC_TIES`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Labels; ``pos_label`` (+1) is positive, every other value negative.
    scores : array-like of shape (n_samples,)
        Real scores, larger meaning more likely positive.
    u0 : float, default=0.1
        Share of top-ranked observations, in (0, 1].
    ties : {"include", "pro_rata", "exclude", "interpolate"}, optional
        The treatment of the points tied with the quantile; default :data:`TRUNCATED_AUC_TIES`.
    pos_label : default=1
        The positive label.

    Returns
    -------
    float
        In [0, 1]; NaN when only one class is present.
    """
    reading = _ties(ties)
    if not 0.0 < u0 <= 1.0:
        raise ValueError(f"u0 must be in (0, 1], got {u0}")
    groups = _groups_of(y_true, scores, pos_label)
    if groups is None:
        return math.nan
    p, q, n_pos, n_neg = groups
    g, w = _top_set(p + q, u0, reading)
    neg_above = np.concatenate(([0.0], np.cumsum(q)[:-1]))
    beaten = p * (n_neg - neg_above - 0.5 * q)  # each group's positives' pair scores, ties 1/2
    total = beaten[:g].sum() + w * beaten[g]
    if reading == "interpolate":
        total -= 0.5 * (w * w - w) * p[g] * q[g]
    return float(total / (n_pos * n_neg))


def partial_auc(y_true: Any, scores: Any, u0: float = 0.1, *, ties: str | None = None,
                pos_label: Any = POS_LABEL) -> float:
    """Partial AUC of Dodd & Pepe at level ``u0`` (depecker2010 §2.1): the area under the ROC curve up to the false
    positive rate of the top set, PartAUC(s, u0) = integral_0^{alpha_s(u0)} beta_s(a) da.

    The ROC curve is the empirical one with its points joined by segments (Convention 2, :func:`roc_curve`), and
    (alpha_s(u0), beta_s(u0)) are the false and true positive rates of the top set T of :func:`truncated_auc` under
    the same ``ties`` reading: with "include" the vertex after the group tied with the quantile, with "exclude" the
    vertex before it when that group straddles the k-th place, with "pro_rata" and "interpolate" (identical here)
    the point a share (k - A) / t along that group's segment, i.e. where the curve meets the control line
    n+ beta + n- alpha = k. With u0 = 1 it equals :func:`auc`. A perfect ranking scores alpha_s(u0) (0 when u0 <= p:
    its top set holds no negative), so unlike the truncated AUC this is not largest for the best rankings.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Labels; ``pos_label`` (+1) is positive, every other value negative.
    scores : array-like of shape (n_samples,)
        Real scores, larger meaning more likely positive.
    u0 : float, default=0.1
        Share of top-ranked observations, in (0, 1].
    ties : {"include", "pro_rata", "exclude", "interpolate"}, optional
        The treatment of the points tied with the quantile; default :data:`TRUNCATED_AUC_TIES`.
    pos_label : default=1
        The positive label.

    Returns
    -------
    float
        In [0, alpha_s(u0)]; NaN when only one class is present.
    """
    reading = _ties(ties)
    if not 0.0 < u0 <= 1.0:
        raise ValueError(f"u0 must be in (0, 1], got {u0}")
    groups = _groups_of(y_true, scores, pos_label)
    if groups is None:
        return math.nan
    p, q, n_pos, n_neg = groups
    g, w = _top_set(p + q, u0, reading)
    tpr = np.concatenate(([0.0], np.cumsum(p))) / n_pos  # the ROC vertices, from (0, 0)
    fpr_steps = q / n_neg
    area = 0.5 * np.dot(fpr_steps[:g], tpr[:g] + tpr[1:g + 1])
    area += 0.5 * w * fpr_steps[g] * (2.0 * tpr[g] + w * (tpr[g + 1] - tpr[g]))
    return float(area)


def roc_curve(y_true: Any, scores: Any, *, pos_label: Any = POS_LABEL) -> tuple[np.ndarray, np.ndarray]:
    """Empirical ROC curve from stored test scores, for figures: its vertices, to be joined by straight segments
    (linear interpolation, depecker2010's Convention 2).

    One vertex per distinct score, from the highest down: (alpha, beta) = the shares of negatives and positives
    scoring at least that value. A group of tied points is the straight segment between two vertices (the expected
    curve under random tie-breaking), never a staircase, so the broken line has area :func:`auc` with tied pairs
    counting 1/2, and a piecewise-constant score gives a piecewise-linear curve.

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
        False and true positive rates, non-decreasing, from (0, 0) to (1, 1).
    """
    pos, s = _positives(y_true, scores, pos_label)
    from sklearn.metrics import roc_curve

    fpr, tpr, _ = roc_curve(pos, s, pos_label=True, drop_intermediate=False)
    return fpr, tpr


def reject(p_value: Any, level: float = LEVEL) -> float:
    """1.0 when a test's p-value is below ``level`` (the null hypothesis is rejected), else 0.0.

    Averaged over runs this is the rejection rate: the power of the test under an alternative, its size under the
    null (depecker2010 Table 6.1, level 5%).

    Parameters
    ----------
    p_value : float
        A p-value in [0, 1].
    level : float, default=0.05
        The test's level.

    Returns
    -------
    float
        1.0 or 0.0; NaN for a NaN p-value.
    """
    p = float(np.asarray(p_value, dtype=np.float64).reshape(()))
    if math.isnan(p):
        return math.nan
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"a p-value must be in [0, 1], got {p}")
    return 1.0 if p < level else 0.0


def _reject_metric(y_true: Any, p_value: Any) -> float:
    return reject(p_value)


#: The truncated and partial AUC levels of depecker2010 (Tables A.2, A.4), as metric-name suffixes.
LEVELS = {"20": 0.2, "10": 0.1, "05": 0.05}
#: Metric-name suffix of each registered tie reading (``truncated_auc_20_prorata``, ...).
_READING_SUFFIX = {"include": "include", "pro_rata": "prorata", "exclude": "exclude", "fractional": "fractional"}

#: Metric name -> Metric. ``truncated_auc`` is at u0 = 0.1. ``truncated_auc_<u>`` (u = 20, 10, 05 percent) and
#: ``partial_auc_<u>`` use the default tie reading :data:`TRUNCATED_AUC_TIES`; ``truncated_auc_<u>_include``,
#: ``_prorata`` and ``_exclude`` name one reading each, for comparing them (see :func:`truncated_auc`).
METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        Metric("risk", "label", False, risk),
        Metric("accuracy", "label", True, accuracy),
        Metric("auc", "score", True, auc),
        Metric("truncated_auc", "score", True, partial(truncated_auc, u0=0.1)),
        *(Metric(f"truncated_auc_{tag}", "score", True, partial(truncated_auc, u0=u)) for tag, u in LEVELS.items()),
        *(Metric(f"truncated_auc_{tag}_{suffix}", "score", True, partial(truncated_auc, u0=u, ties=reading))
          for tag, u in LEVELS.items() for reading, suffix in _READING_SUFFIX.items()),
        *(Metric(f"partial_auc_{tag}", "score", True, partial(partial_auc, u0=u)) for tag, u in LEVELS.items()),
        Metric("reject", "pvalue", True, _reject_metric),
    )
}


def get_metric(name: str) -> Metric:
    """The metric registered under ``name``.

    Raises
    ------
    ConfigError
        If ``name`` is unknown; the message lists the valid names.
    """
    return _lookup(METRICS, name, "metric")


def _lookup(registry: dict[str, Any], name: str, what: str) -> Any:
    """``registry[name]``, or a ConfigError listing the valid names."""
    try:
        return registry[name]
    except (KeyError, TypeError):
        raise ConfigError(f"unknown {what} '{name}'; valid {what}s: {', '.join(sorted(registry))}") from None


def compute_metrics(
    names: Iterable[str],
    y_true: Any,
    y_pred: Any = None,
    scores: Any = None,
    prefix: str = "test_",
    p_value: Any = None,
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
    p_value : float, optional
        A two-sample test's p-value; p-value metrics (``reject``) are skipped without it.

    Returns
    -------
    dict of str to float
        E.g. ``{"test_risk": 0.12, "test_accuracy": 0.88}``, in the order of ``names``.
    """
    inputs = {"label": y_pred, "score": scores, "pvalue": p_value}
    out: dict[str, float] = {}
    for name in names:
        metric = get_metric(name)
        values = inputs[metric.kind]
        if values is not None:
            out[f"{prefix}{metric.name}"] = metric(y_true, values)
    return out


#: Prefixes of stored metric names (``test_auc``, ``train_risk``, ``oob_risk``).
STORED_PREFIXES = ("test_", "train_", "oob_")


def direction(stored_name: str) -> bool | None:
    """Whether higher is better for a stored metric name: True, False, or None when unknown.

    The prefix ``test_``, ``train_`` or ``oob_`` is stripped and the rest looked up in :data:`METRICS`; a name that
    is not a metric is looked up in :data:`MEASURES` (cross-run cells such as ``instability``).

    >>> direction("test_auc"), direction("oob_risk"), direction("test_truncated_auc_05"), direction("n_train")
    (True, False, True, None)
    """
    if not isinstance(stored_name, str):
        return None
    base = stored_name
    for prefix in STORED_PREFIXES:
        if stored_name.startswith(prefix):
            base = stored_name[len(prefix):]
            break
    for name in (base, stored_name):
        if name in METRICS:
            return METRICS[name].greater_is_better
    for name in (stored_name, base):
        if name in MEASURES:
            return MEASURES[name].greater_is_better
    return None


# ---------------------------------------------------------------------------------------------------------------
# Cross-run measures: a table cell computed from a set of runs (depecker2010's instability, ROC envelopes).
# ---------------------------------------------------------------------------------------------------------------
Run = Mapping[str, Any]


@dataclass(frozen=True)
class Measure:
    """A named statistic over a set of runs.

    Parameters
    ----------
    name : str
        Registry key, also the name of the table cell.
    greater_is_better : bool
        Direction, for tables that mark the best value.
    func : callable
        ``func(runs) -> float``, each run a mapping of its stored arrays (at least ``y_test`` and ``test_scores``).
    """

    name: str
    greater_is_better: bool
    func: Callable[[Sequence[Run]], float]

    def __call__(self, runs: Sequence[Run]) -> float:
        return float(self.func(runs))


def _run_arrays(runs: Sequence[Run], what: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each run's (y_test, test_scores), checked: present, same length, finite scores."""
    out = []
    for i, run in enumerate(runs):
        if "y_test" not in run or "test_scores" not in run:
            raise ValueError(f"{what}: run {i} has no stored y_test and test_scores (the learner gave no scores)")
        y, s = _pair(run["y_test"], run["test_scores"], "test_scores")
        s = s.astype(np.float64)
        if not np.all(np.isfinite(s)):
            raise ValueError(f"{what}: run {i} has non-finite test scores")
        out.append((y, s))
    return out


def _midranks(scores: np.ndarray) -> np.ndarray:
    """Ranks 1..N, ties sharing their mean rank (depecker2010's midrank convention, rankdata 'average')."""
    from scipy.stats import rankdata

    return rankdata(scores, method="average")


#: Values computed from runs' arrays, kept by what they are and the arrays' content (:func:`_kept`), oldest first,
#: and their total size in bytes. A claim measures the same runs again on each of its 200 bootstrap resamples.
_KEPT: OrderedDict[bytes, np.ndarray] = OrderedDict()
_KEPT_BYTES = [0]
_KEPT_MAX_BYTES = 64 * 2**20


def _kept(what: str, arrays: Sequence[np.ndarray], compute: Callable[[], np.ndarray]) -> np.ndarray:
    """``compute()`` (an array, returned read only), a pure function of ``what`` and ``arrays``, kept by a digest of
    them (their dtypes, shapes and bytes: never stale) up to :data:`_KEPT_MAX_BYTES`, the oldest let go first."""
    digest = hashlib.blake2b(what.encode(), digest_size=20)
    for a in arrays:
        digest.update(f"{a.dtype.str}{a.shape}".encode())
        digest.update(np.ascontiguousarray(a).tobytes())
    key = digest.digest()
    found = _KEPT.get(key)
    if found is None:
        found = compute()
        found.flags.writeable = False
        _KEPT[key] = found
        _KEPT_BYTES[0] += found.nbytes
        while _KEPT_BYTES[0] > _KEPT_MAX_BYTES and len(_KEPT) > 1:
            _KEPT_BYTES[0] -= _KEPT.popitem(last=False)[1].nbytes
    return found


def _kept_midranks(scores: np.ndarray) -> np.ndarray:
    """:func:`_midranks` of a 1-d float64 array (read only), kept by its content (:func:`_kept`)."""
    return _kept("midranks", [scores], lambda: _midranks(scores))


def spearman_distance(scores_a: Any, scores_b: Any) -> float:
    """depecker2010's Spearman-rho distance between the rankings two scorers induce on one sample.

    delta(a, b) = 100 (1 - rho), rho = 1 - 6 sum_i (R_a(z_i) - R_b(z_i))^2 / (N (N^2 - 1)) (eq. 4.6), with R the
    midranks of the scores on the N points (ties share their mean rank); so delta = 600 sum_i d_i^2 / (N (N^2 - 1)),
    in [0, 200]: 0 for the same ranking, 200 for reversed rankings without ties. See :func:`instability`.

    Parameters
    ----------
    scores_a, scores_b : array-like of shape (N,)
        Two scorers' values on the same points.

    Returns
    -------
    float
        NaN when N < 2.
    """
    a, b = _pair(scores_a, scores_b, "scores_b")
    n = a.size
    if n < 2:
        return math.nan
    d = _midranks(a.astype(np.float64)) - _midranks(b.astype(np.float64))
    return float(600.0 * np.dot(d, d) / (n * (n * n - 1.0)))


def instability(runs: Sequence[Run]) -> float:
    """depecker2010's ranking instability Instab_N: the mean over all pairs of runs of the Spearman distance between
    the rankings their scorers induce on the common test set (chapter 4, eqs. 4.21-4.22; Table 4.2's italic column).

    Formula::

        Instab_N = 2 / (N (N - 1)) * sum_{b < b'} delta(s_b, s_b'),
        delta(s, s') = 100 * (1 - rho(s, s')),
        rho(s, s')  = 1 - 6 * sum_i (R_s(x_i) - R_s'(x_i))^2 / (m (m^2 - 1)),

    N runs, m test points, R the **midranks** of the test scores (ties share their mean rank, the digest's §2.10
    convention). rho is the thesis's eq. 4.6 applied to midranks; delta is the digest's "most plausible" scale
    (§2.12, §6 item 12: the average over pairs of 100 (1 - rho)), in [0, 200]: 0 when every run ranks the test set
    alike, 200 for two exactly reversed rankings without ties (the maximum). Lower is more stable. With ties, eq.
    4.6 on midranks differs from ``scipy.stats.spearmanr`` (the Pearson correlation of midranks); eq. 4.6 is used
    because it is the thesis's formula, is a squared distance between rank vectors (a pseudo-metric, as the
    thesis's delta must be), and stays defined for a constant scorer. The other scale the digest mentions,
    (1 - rho) / 2 * 100, is this value halved.

    Which runs are passed in is the reading of the measure, not a different function (§6 item 12, §8): the thesis's
    definition compares scorers learned on independent training sets (the N repetitions of the ``resample``
    protocol against its fixed test set); §8 notes that the printed values of the bagged forests (~3) may rather
    measure the forest's own randomness, i.e. N forests grown with different seeds on one training set. Both are
    this function applied to the corresponding set of runs.

    Parameters
    ----------
    runs : sequence of mapping
        Each run's stored arrays, at least ``y_test`` and ``test_scores``.

    Returns
    -------
    float
        NaN with fewer than two runs.

    Raises
    ------
    ValueError
        If the runs do not share one test set (their ``y_test`` differ), or a run lacks scores.
    """
    pairs = _run_arrays(runs, "instability")
    if pairs:
        y0 = pairs[0][0]
        for y, _ in pairs[1:]:
            if y.shape != y0.shape or not np.array_equal(y, y0):
                raise ValueError("instability: the runs do not share a test set (their y_test differ); the "
                                 "measure compares rankings of one common test set")
    if len(pairs) < 2:
        return math.nan
    # every run's midranks (the same numbers as rankdata along the rows of their stack), each kept by content: a
    # claim measures the same runs again on each of its bootstrap resamples
    ranks = np.vstack([_kept_midranks(s) for _, s in pairs])
    m = ranks.shape[1]
    if m < 2:
        return math.nan
    from scipy.spatial.distance import pdist

    sq = pdist(ranks, metric="sqeuclidean")  # sum_i d_i^2 for every pair b < b'
    return float(np.mean(600.0 * sq / (m * (m * m - 1.0))))


#: The default false-positive-rate grid of :func:`roc_envelope`.
ROC_GRID = np.linspace(0.0, 1.0, 201)


def tpr_at(fpr: np.ndarray, tpr: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """The broken-line ROC curve through (fpr, tpr) evaluated at ``grid`` (depecker2010's Convention 2: points
    joined by segments); on a vertical segment (several points at one FPR) the curve's highest TPR."""
    u, first = np.unique(fpr, return_index=True)
    last = np.r_[first[1:] - 1, len(fpr) - 1]
    lower, upper = tpr[first], tpr[last]  # tpr is non-decreasing along the curve
    k = np.clip(np.searchsorted(u, grid, side="right") - 1, 0, len(u) - 1)
    out = upper[k].astype(np.float64)
    between = (grid > u[k]) & (k + 1 < len(u))
    kb = k[between]
    t = (grid[between] - u[kb]) / (u[kb + 1] - u[kb])
    out[between] = upper[kb] + t * (lower[kb + 1] - upper[kb])
    return out


_tpr_at = tpr_at  # the name report/figures.py imports


def roc_envelope(runs: Sequence[Run], grid: Any = ROC_GRID) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The pointwise envelope of the runs' test ROC curves, for figures (depecker2010 Figs 4.1, 4.3).

    Each run's empirical ROC curve (:func:`roc_curve`, its points joined by segments) is evaluated at every false
    positive rate of ``grid`` (on a vertical segment, its highest TPR); the envelope is the pointwise min, mean and
    max over runs. The runs need not share a test set (each curve is computed on its own ``y_test``), though the
    thesis's envelopes are over one test set.

    Parameters
    ----------
    runs : sequence of mapping
        Each run's stored arrays, at least ``y_test`` and ``test_scores``.
    grid : array-like, default=np.linspace(0, 1, 201)
        False positive rates in [0, 1].

    Returns
    -------
    grid, tpr_min, tpr_mean, tpr_max : ndarray of shape (len(grid),)

    Raises
    ------
    ValueError
        No runs, a run without scores, or a test set with one class only.
    """
    g = np.asarray(grid, dtype=np.float64).ravel()
    if g.size == 0 or not np.all((g >= 0.0) & (g <= 1.0)):
        raise ValueError("roc_envelope: the grid must be non-empty false positive rates in [0, 1]")
    pairs = _run_arrays(runs, "roc_envelope")
    if not pairs:
        raise ValueError("roc_envelope: no runs")
    curves = []
    for i, (y, s) in enumerate(pairs):
        pos = y == POS_LABEL
        if pos.all() or not pos.any():
            raise ValueError(f"roc_envelope: run {i}'s test set has a single class, so it has no ROC curve")
        curves.append(_kept("tpr_at", [y, s, g], lambda y=y, s=s: tpr_at(*roc_curve(y, s), g)))
    tprs = np.vstack(curves)
    return g, tprs.min(axis=0), tprs.mean(axis=0), tprs.max(axis=0)


def roc_envelope_width(runs: Sequence[Run], grid: Any = ROC_GRID) -> float:
    """Mean over ``grid`` of the width (max - min TPR) of the runs' ROC envelope: a table summary of
    :func:`roc_envelope` (about the envelope's area with the default uniform grid; depecker2010 reports bagging
    shrinking it by 40-50%). 0 when every curve is the same; lower is more stable."""
    _, lo, _, hi = roc_envelope(runs, grid)
    return float(np.mean(hi - lo))


#: Measure name -> Measure.
MEASURES: dict[str, Measure] = {
    m.name: m
    for m in (
        Measure("instability", False, instability),
        Measure("roc_envelope_width", False, roc_envelope_width),
    )
}


def get_measure(name: str) -> Measure:
    """The cross-run measure registered under ``name``.

    Raises
    ------
    ConfigError
        If ``name`` is unknown; the message lists the valid names.
    """
    return _lookup(MEASURES, name, "measure")
