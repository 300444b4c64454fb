"""Metrics: risk/accuracy, AUC with ties, truncated AUC (depecker2010's LocAUC) against a brute-force double loop,
the registry and compute_metrics."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forestlab.errors import ConfigError
from forestlab.metrics import (
    METRICS,
    Metric,
    accuracy,
    auc,
    compute_metrics,
    get_metric,
    risk,
    roc_curve,
    truncated_auc,
)


def brute_truncated_auc(y, s, u0):
    """The empirical LocAUC written out: top set = every score >= the ceil(u0 n)-th largest; tied pairs count 1/2."""
    y, s = np.asarray(y), np.asarray(s, dtype=float)
    n = len(s)
    k = max(1, math.ceil(round(u0 * n, 9)))
    q = sorted(s, reverse=True)[k - 1]
    pos, neg = s[y == 1], s[y != 1]
    total = 0.0
    for si in pos:
        if si < q:
            continue
        for sj in neg:
            total += 1.0 if si > sj else 0.5 if si == sj else 0.0
    return total / (len(pos) * len(neg))


def brute_auc(y, s):
    return brute_truncated_auc(y, s, 1.0)


def test_risk_and_accuracy():
    y = np.array([-1, 1, 1, -1, 1])
    p = np.array([-1, 1, -1, 1, 1])
    assert risk(y, p) == pytest.approx(0.4)
    assert accuracy(y, p) == pytest.approx(0.6)
    assert risk(y, y) == 0.0 and accuracy(y, -y) == 0.0
    assert math.isnan(risk([], []))
    with pytest.raises(ValueError, match="y_pred"):
        risk(y, p[:3])


def test_auc_by_hand_with_ties():
    # positives 0.8, 0.4, 0.4; negatives 0.4, 0.1. Pairs: (0.8>0.4) 1, (0.8>0.1) 1, (0.4=0.4) 1/2, (0.4>0.1) 1,
    # (0.4=0.4) 1/2, (0.4>0.1) 1 -> 5 / 6
    y = np.array([1, 1, 1, -1, -1])
    s = np.array([0.8, 0.4, 0.4, 0.4, 0.1])
    assert auc(y, s) == pytest.approx(5 / 6)
    assert auc(y, np.zeros(5)) == pytest.approx(0.5)  # all tied
    assert auc(y, -s) == pytest.approx(1 - 5 / 6)
    assert math.isnan(auc(np.ones(4), np.arange(4)))  # one class only


def test_truncated_auc_by_hand():
    # n = 10, u0 = 0.2 -> k = 2: top set {s >= 0.8}, which holds 3 points because 0.8 is tied.
    y = np.array([1, 1, -1, 1, -1, 1, -1, -1, -1, -1])
    s = np.array([0.9, 0.8, 0.8, 0.5, 0.5, 0.3, 0.2, 0.2, 0.1, 0.0])
    # positives in the top set: 0.9 (beats all 6 negatives) and 0.8 (beats 5, ties 1) -> (6 + 5.5) / (4 * 6)
    assert truncated_auc(y, s, u0=0.2) == pytest.approx(11.5 / 24)
    # u0 = 0.1 -> k = 1: top set {0.9} -> 6 / 24
    assert truncated_auc(y, s, u0=0.1) == pytest.approx(6 / 24)
    assert truncated_auc(y, s, u0=1.0) == pytest.approx(auc(y, s))


def test_truncated_auc_quantile_is_not_fooled_by_rounding():
    # 0.1 * 30 = 3.0000000000000004 in floating point: the top set must still be the top 3, not 4
    y = np.array([1] * 15 + [-1] * 15)
    s = np.arange(30.0)[::-1]  # positives ranked first
    assert truncated_auc(y, s, u0=0.1) == pytest.approx(3 / 15)


def test_truncated_auc_of_a_perfect_ranking_is_u0_over_p():
    y = np.array([1] * 40 + [-1] * 60)
    s = np.linspace(1, 0, 100)
    for u0 in (0.2, 0.1, 0.05):
        assert truncated_auc(y, s, u0=u0) == pytest.approx(u0 / 0.4)


@settings(max_examples=150, deadline=None)
@given(
    data=st.lists(st.tuples(st.sampled_from([-1, 1]), st.integers(0, 6)), min_size=2, max_size=40),
    u0=st.sampled_from([0.05, 0.1, 0.2, 0.3, 0.5, 1.0]),
)
def test_truncated_auc_matches_brute_force(data, u0):
    y = np.array([d[0] for d in data])
    s = np.array([d[1] for d in data], dtype=float) / 3  # few distinct values: many ties
    if len(set(y)) < 2:
        assert math.isnan(truncated_auc(y, s, u0))
        return
    assert truncated_auc(y, s, u0) == pytest.approx(brute_truncated_auc(y, s, u0))
    assert auc(y, s) == pytest.approx(brute_auc(y, s))
    assert truncated_auc(y, s, u0) <= auc(y, s) + 1e-12


def test_truncated_auc_rejects_bad_levels():
    for u0 in (0.0, -0.1, 1.5):
        with pytest.raises(ValueError, match="u0"):
            truncated_auc([1, -1], [0.5, 0.1], u0=u0)


def test_roc_curve():
    y = np.array([1, 1, 1, -1, -1])
    s = np.array([0.8, 0.4, 0.4, 0.4, 0.1])
    fpr, tpr = roc_curve(y, s)
    assert fpr[0] == 0 and tpr[0] == 0 and fpr[-1] == 1 and tpr[-1] == 1
    assert np.all(np.diff(fpr) >= 0) and np.all(np.diff(tpr) >= 0)
    assert np.trapezoid(tpr, fpr) == pytest.approx(auc(y, s))


def test_registry():
    assert {"risk", "accuracy", "auc", "truncated_auc"} <= set(METRICS)
    for name, metric in METRICS.items():
        assert isinstance(metric, Metric) and metric.name == name and metric.kind in ("label", "score")
    assert not METRICS["risk"].greater_is_better and METRICS["auc"].greater_is_better
    with pytest.raises(Exception):  # noqa: B017 - frozen dataclass
        METRICS["risk"].name = "x"
    assert get_metric("auc") is METRICS["auc"]
    with pytest.raises(ConfigError, match="unknown metric 'f1'.*valid metrics: accuracy, auc"):
        get_metric("f1")
    y = np.array([1] * 10 + [-1] * 10)
    s = np.linspace(1, 0, 20)
    assert METRICS["truncated_auc_20"](y, s) == pytest.approx(truncated_auc(y, s, u0=0.2))
    assert METRICS["truncated_auc_05"](y, s) == pytest.approx(truncated_auc(y, s, u0=0.05))


def test_compute_metrics_uses_what_is_available():
    y = np.array([-1, -1, 1, 1])
    pred = np.array([-1, 1, 1, 1])
    scores = np.array([0.1, 0.4, 0.35, 0.8])
    names = ["risk", "accuracy", "auc", "truncated_auc"]
    full = compute_metrics(names, y, pred, scores)
    assert list(full) == ["test_risk", "test_accuracy", "test_auc", "test_truncated_auc"]
    assert full["test_risk"] == pytest.approx(0.25) and full["test_accuracy"] == pytest.approx(0.75)
    assert full["test_auc"] == pytest.approx(0.75)
    assert compute_metrics(names, y, y_pred=pred, prefix="train_") == {"train_risk": 0.25, "train_accuracy": 0.75}
    assert set(compute_metrics(names, y, scores=scores)) == {"test_auc", "test_truncated_auc"}
    assert compute_metrics(names, y) == {}
    with pytest.raises(ConfigError):
        compute_metrics(["nope"], y, pred)
