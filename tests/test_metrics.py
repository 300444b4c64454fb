"""Metrics: risk/accuracy, AUC with ties, truncated AUC (depecker2010's LocAUC) under each tie reading and the partial
AUC against brute-force double loops and hand-computed cases, the registry and compute_metrics."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import forestlab.metrics as metrics_module
from forestlab.errors import ConfigError
from forestlab.metrics import (
    MEASURES,
    METRICS,
    Measure,
    Metric,
    accuracy,
    auc,
    compute_metrics,
    direction,
    get_measure,
    get_metric,
    instability,
    partial_auc,
    reject,
    risk,
    roc_curve,
    roc_envelope,
    roc_envelope_width,
    spearman_distance,
    truncated_auc,
)


def brute_truncated_auc(y, s, u0, ties="include"):
    """The empirical LocAUC written out: Q = the ceil(u0 n)-th largest score; positives above Q weigh 1, those tied
    with Q the reading's weight; tied (i, j) pairs count 1/2."""
    y, s = np.asarray(y), np.asarray(s, dtype=float)
    n = len(s)
    if ties == "fractional":  # exactly u0 n points: each score group weighs the share of it above the mark
        pos, neg = s[y == 1], s[y != 1]
        total = 0.0
        for si in pos:
            above, tied = np.sum(s > si), np.sum(s == si)
            w = min(1.0, max(0.0, (u0 * n - above) / tied))
            total += w * sum(1.0 if si > sj else 0.5 if si == sj else 0.0 for sj in neg)
        return total / (len(pos) * len(neg))
    k = max(1, math.ceil(round(u0 * n, 9)))
    q = sorted(s, reverse=True)[k - 1]
    above, tied = int(np.sum(s > q)), int(np.sum(s == q))
    w_tied = {"include": 1.0, "pro_rata": (k - above) / tied, "exclude": 1.0 if above + tied == k else 0.0}[ties]
    pos, neg = s[y == 1], s[y != 1]
    total = 0.0
    for si in pos:
        w = 1.0 if si > q else w_tied if si == q else 0.0
        for sj in neg:
            total += w * (1.0 if si > sj else 0.5 if si == sj else 0.0)
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
    assert truncated_auc(y, s, u0=0.2, ties="include") == pytest.approx(11.5 / 24)
    # the default reading keeps exactly u0 n = 2 points: 0.9 and half of the tied pair at 0.8
    assert truncated_auc(y, s, u0=0.2) == pytest.approx((6 + 0.5 * 5.5) / 24)
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
        assert math.isnan(partial_auc(y, s, u0))
        return
    assert truncated_auc(y, s, u0) == pytest.approx(brute_truncated_auc(y, s, u0, metrics_module.TRUNCATED_AUC_TIES))
    assert auc(y, s) == pytest.approx(brute_auc(y, s))
    values = {}
    for ties in ("include", "pro_rata", "exclude", "fractional"):
        values[ties] = truncated_auc(y, s, u0, ties=ties)
        assert values[ties] == pytest.approx(brute_truncated_auc(y, s, u0, ties))
    values["interpolate"] = truncated_auc(y, s, u0, ties="interpolate")
    # include counts the most of the tied group, exclude none; interpolate adds the tied group's inner triangle
    assert (auc(y, s) + 1e-12 >= values["include"] >= values["interpolate"] - 1e-12
            and values["interpolate"] + 1e-12 >= values["pro_rata"] >= values["exclude"] - 1e-12)
    # exactly k points (or fewer): never above the ceiling k / n+
    k = max(1, math.ceil(round(u0 * len(s), 9)))
    for ties in ("pro_rata", "exclude", "interpolate"):
        assert values[ties] <= k / np.sum(y == 1) + 1e-12
    # the thesis's identity LocAUC = PartAUC + beta - alpha beta, (alpha, beta) the rates of the top set
    for ties in ("include", "exclude", "interpolate"):
        alpha, beta = _top_rates(y, s, u0, ties)
        assert values[ties] == pytest.approx(partial_auc(y, s, u0, ties=ties) + beta - alpha * beta)
    assert partial_auc(y, s, u0, ties="pro_rata") == pytest.approx(partial_auc(y, s, u0, ties="interpolate"))


def _top_rates(y, s, u0, ties):
    """(alpha, beta): the weighted shares of negatives and positives in the reading's top set."""
    n = len(s)
    k = max(1, math.ceil(round(u0 * n, 9)))
    q = sorted(s, reverse=True)[k - 1]
    above, tied = int(np.sum(s > q)), int(np.sum(s == q))
    w = {"include": 1.0, "exclude": 1.0 if above + tied == k else 0.0}.get(ties, (k - above) / tied)
    weight = np.where(s > q, 1.0, np.where(s == q, w, 0.0))
    return weight[y != 1].sum() / np.sum(y != 1), weight[y == 1].sum() / np.sum(y == 1)


@settings(max_examples=60, deadline=None)
@given(
    data=st.lists(st.tuples(st.sampled_from([-1, 1]), st.floats(0, 1)), min_size=2, max_size=40,
                  unique_by=lambda d: d[1]),
    u0=st.sampled_from([0.05, 0.1, 0.2, 0.3, 0.5, 1.0]),
)
def test_without_ties_every_reading_agrees(data, u0):
    y = np.array([d[0] for d in data])
    s = np.array([d[1] for d in data])
    if len(set(y)) < 2:
        return
    ceil_readings = [t for t in metrics_module.TIES_READINGS if t != "fractional"]  # top k = ceil(u0 n) points
    values = [truncated_auc(y, s, u0, ties=t) for t in ceil_readings]
    assert values == pytest.approx([values[0]] * 4)
    partials = [partial_auc(y, s, u0, ties=t) for t in ceil_readings]
    assert partials == pytest.approx([partials[0]] * 4)
    if float(u0 * len(y)).is_integer():  # u0 n whole: the fractional reading keeps the same top set
        assert truncated_auc(y, s, u0, ties="fractional") == pytest.approx(values[0])


def test_truncated_auc_readings_by_hand():
    # n = 10 (4 positives, 6 negatives). u0 = 0.2 -> k = 2; Q = 0.8, the 2nd largest, is tied: 1 point above it
    # (0.9, positive) and 2 tied with it (a positive and a negative), so the tied group straddles the 2nd place.
    y = np.array([1, 1, -1, 1, -1, 1, -1, -1, -1, -1])
    s = np.array([0.9, 0.8, 0.8, 0.5, 0.5, 0.3, 0.2, 0.2, 0.1, 0.0])
    # pair scores: positive 0.9 beats all 6 negatives; positive 0.8 beats 5 and ties 1 -> 5.5
    assert truncated_auc(y, s, 0.2, ties="include") == pytest.approx((6 + 5.5) / 24)  # top set of 3
    assert truncated_auc(y, s, 0.2, ties="pro_rata") == pytest.approx((6 + 0.5 * 5.5) / 24)  # w = (2 - 1) / 2
    assert truncated_auc(y, s, 0.2, ties="exclude") == pytest.approx(6 / 24)  # top set {0.9}
    # interpolate: the tied positive counts w = 1/2 of the 6 negatives not above it, less w^2 / 2 for the tied one
    assert truncated_auc(y, s, 0.2, ties="interpolate") == pytest.approx((6 + 0.5 * 6 - 0.25 / 2) / 24)
    # the docstring's rule: the straddling group's pairs with its own negatives weigh w - w^2 / 2 (not w^2 / 2),
    # its pairs with the negatives below it w: 5 such negatives, 1 tied, w = 1/2
    w = 0.5
    assert truncated_auc(y, s, 0.2, ties="interpolate") == pytest.approx((6 + w * 5 + (w - w * w / 2) * 1) / 24)
    # u0 = 0.3 -> k = 3 = 1 above + 2 tied: the tied group fits, every reading gives the same top set
    for ties in metrics_module.TIES_READINGS:
        assert truncated_auc(y, s, 0.3, ties=ties) == pytest.approx(11.5 / 24)
        assert truncated_auc(y, s, 0.1, ties=ties) == pytest.approx(6 / 24)
        assert truncated_auc(y, s, 1.0, ties=ties) == pytest.approx(auc(y, s))


def test_partial_auc_by_hand():
    y = np.array([1, 1, -1, 1, -1, 1, -1, -1, -1, -1])
    s = np.array([0.9, 0.8, 0.8, 0.5, 0.5, 0.3, 0.2, 0.2, 0.1, 0.0])
    # ROC vertices (alpha, beta): (0, 0), (0, 1/4) after 0.9, (1/6, 1/2) after 0.8, (1/3, 3/4) after 0.5, ...
    assert partial_auc(y, s, 0.2, ties="include") == pytest.approx(0.5 * (1 / 6) * (1 / 4 + 1 / 2))  # to 1/6
    assert partial_auc(y, s, 0.2, ties="exclude") == 0.0  # the top set {0.9} has no negative
    # pro rata: halfway along the tied segment, to (1/12, 3/8)
    assert partial_auc(y, s, 0.2, ties="pro_rata") == pytest.approx(0.5 * (1 / 12) * (1 / 4 + 3 / 8))
    assert partial_auc(y, s, 0.5, ties="include") == pytest.approx(0.5 * (1 / 6) * (3 / 4) + 0.5 * (1 / 6) * (5 / 4))
    for ties in metrics_module.TIES_READINGS:
        assert partial_auc(y, s, 1.0, ties=ties) == pytest.approx(auc(y, s))
    perfect = 10.0 * y + np.arange(10)  # every positive above every negative
    assert partial_auc(y, perfect, 0.3) == 0.0  # the top 3 are positives: alpha_s(u0) = 0
    assert partial_auc(y, perfect, 0.5) == pytest.approx(1 / 6)  # 4 positives then 1 negative, along beta = 1
    assert partial_auc(y, -perfect, 0.5) == 0.0  # all negatives first: beta = 0 under them
    with pytest.raises(ValueError, match="u0"):
        partial_auc(y, s, 0.0)


def test_a_tied_top_swallows_the_top_set_only_when_ties_are_included():
    # a piecewise-constant perfect ranking: 40 positives all at 1, 60 negatives all at 0 (depecker2010 §8)
    y = np.array([1] * 40 + [-1] * 60)
    s = np.where(y == 1, 1.0, 0.0)
    for u0 in (0.2, 0.1, 0.05):
        assert truncated_auc(y, s, u0, ties="include") == 1.0  # every positive joins: the whole AUC
        assert truncated_auc(y, s, u0, ties="pro_rata") == pytest.approx(u0 / 0.4)  # the ceiling u0 / p
        assert truncated_auc(y, s, u0, ties="interpolate") == pytest.approx(u0 / 0.4)
        assert truncated_auc(y, s, u0, ties="exclude") == 0.0  # the straddling group is dropped: nothing left


def test_truncated_auc_default_reading_is_the_module_constant(monkeypatch):
    y = np.array([1, 1, -1, 1, -1, 1, -1, -1, -1, -1])
    s = np.array([0.9, 0.8, 0.8, 0.5, 0.5, 0.3, 0.2, 0.2, 0.1, 0.0])
    assert metrics_module.TRUNCATED_AUC_TIES == "fractional"
    assert METRICS["truncated_auc_20"](y, s) == pytest.approx(8.75 / 24)  # u0 n = 2 points: 0.9, half of 0.8's pair
    monkeypatch.setattr(metrics_module, "TRUNCATED_AUC_TIES", "include")
    assert truncated_auc(y, s, 0.2) == pytest.approx(11.5 / 24)
    assert METRICS["truncated_auc_20"](y, s) == pytest.approx(11.5 / 24)  # read at call time
    monkeypatch.setattr(metrics_module, "TRUNCATED_AUC_TIES", "pro_rata")
    assert METRICS["truncated_auc_20_include"](y, s) == pytest.approx(11.5 / 24)  # explicit names never move
    assert METRICS["partial_auc_20"](y, s) == pytest.approx(partial_auc(y, s, 0.2, ties="pro_rata"))
    monkeypatch.setattr(metrics_module, "TRUNCATED_AUC_TIES", "nope")
    with pytest.raises(ValueError, match="ties must be one of include, pro_rata, exclude"):
        truncated_auc(y, s, 0.2)
    with pytest.raises(ValueError, match="ties must be one of"):
        partial_auc(y, s, 0.2, ties="half")


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
    assert np.trapezoid(tpr, fpr) == pytest.approx(auc(y, s))  # the vertices joined by segments (Convention 2)
    # the tie (2 positives, 1 negative at 0.4) is one segment, not a staircase
    np.testing.assert_allclose(np.c_[fpr, tpr], [[0, 0], [0, 1 / 3], [1 / 2, 1], [1, 1]])


def test_registry():
    assert {"risk", "accuracy", "auc", "truncated_auc"} <= set(METRICS)
    for name, metric in METRICS.items():
        assert isinstance(metric, Metric) and metric.name == name and metric.kind in ("label", "score", "pvalue")
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


def test_registry_names_every_level_and_reading():
    y = np.array([1, 1, -1, 1, -1, 1, -1, -1, -1, -1])
    s = np.array([0.9, 0.8, 0.8, 0.5, 0.5, 0.3, 0.2, 0.2, 0.1, 0.0])
    for tag, u0 in (("20", 0.2), ("10", 0.1), ("05", 0.05)):
        for suffix, ties in (("include", "include"), ("prorata", "pro_rata"), ("exclude", "exclude")):
            metric = METRICS[f"truncated_auc_{tag}_{suffix}"]
            assert metric.kind == "score" and metric.greater_is_better
            assert metric(y, s) == pytest.approx(truncated_auc(y, s, u0, ties=ties))
        assert METRICS[f"truncated_auc_{tag}"](y, s) == pytest.approx(truncated_auc(y, s, u0))
        assert METRICS[f"partial_auc_{tag}"](y, s) == pytest.approx(partial_auc(y, s, u0))
        assert METRICS[f"partial_auc_{tag}"].greater_is_better
    assert METRICS["truncated_auc"](y, s) == pytest.approx(truncated_auc(y, s, 0.1))  # the stored names stay


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


# ---------------------------------------------------------------------------------------------------------------
# p-value metrics and directions
# ---------------------------------------------------------------------------------------------------------------
def test_reject_is_a_pvalue_metric():
    assert METRICS["reject"].kind == "pvalue" and METRICS["reject"].greater_is_better
    assert reject(0.01) == 1.0 and reject(0.05) == 0.0 and reject(0.5) == 0.0 and reject(np.float64(0.049)) == 1.0
    assert math.isnan(reject(math.nan))
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        reject(1.5)
    # the rejection rate over runs is the mean of the per-run values: power
    assert np.mean([METRICS["reject"](None, p) for p in (0.001, 0.2, 0.03, 0.7)]) == 0.5


def test_compute_metrics_with_a_p_value():
    y = np.array([-1, -1, 1, 1])
    out = compute_metrics(["auc", "reject"], y, scores=[0.1, 0.4, 0.35, 0.8], p_value=0.01)
    assert out == {"test_auc": 0.75, "test_reject": 1.0}
    assert compute_metrics(["reject"], None, p_value=0.2, prefix="") == {"reject": 0.0}
    # without a p-value the metric is skipped; the positional order of the old arguments is unchanged
    assert compute_metrics(["risk", "reject"], y, y, None, "train_") == {"train_risk": 0.0}


@pytest.mark.parametrize(("name", "expected"), [
    ("test_auc", True), ("train_risk", False), ("oob_risk", False), ("test_truncated_auc_05", True),
    ("test_truncated_auc_20_prorata", True), ("test_partial_auc_10", True),
    ("test_accuracy", True), ("auc", True), ("risk", False), ("reject", True), ("test_reject", True),
    ("instability", False), ("roc_envelope_width", False), ("n_train", None), ("test_", None),
    ("test_f1", None), ("max_depth", None),
])
def test_direction(name, expected):
    assert direction(name) is expected


# ---------------------------------------------------------------------------------------------------------------
# Cross-run measures
# ---------------------------------------------------------------------------------------------------------------
def _runs(y, *scores):
    return [{"y_test": np.asarray(y), "test_scores": np.asarray(s, dtype=float)} for s in scores]


def test_measure_registry():
    assert set(MEASURES) == {"instability", "roc_envelope_width"}
    for name, measure in MEASURES.items():
        assert isinstance(measure, Measure) and measure.name == name and not measure.greater_is_better
    assert get_measure("instability") is MEASURES["instability"]
    with pytest.raises(ConfigError, match="unknown measure 'spread'; valid measures: instability"):
        get_measure("spread")


def test_spearman_distance_by_hand():
    # ranks (1, 2, 3) vs (1, 3, 2): sum d^2 = 2, rho = 1 - 6 * 2 / (3 * 8) = 0.5, delta = 100 (1 - rho) = 50
    assert spearman_distance([1, 2, 3], [1, 3, 2]) == pytest.approx(50.0)
    # reversed: rho = -1, delta = 200 (the maximum)
    assert spearman_distance([1, 2, 3], [3, 2, 1]) == pytest.approx(200.0)
    # ties take midranks: (1.5, 1.5, 3) vs (1, 2, 3): sum d^2 = 0.5, rho = 1 - 3 / 24 = 0.875, delta = 12.5
    assert spearman_distance([0.1, 0.1, 0.5], [1, 2, 3]) == pytest.approx(12.5)
    # only the ranking counts: a monotone transform is at distance 0
    assert spearman_distance([0.3, -2.0, 5.0, 1.0], np.exp([0.3, -2.0, 5.0, 1.0])) == 0.0
    assert math.isnan(spearman_distance([1.0], [2.0]))


def test_instability_by_hand():
    y = [1, -1, 1]
    # pairs: (a, b) 50, (a, c) 200, (b, c): ranks (1, 3, 2) vs (3, 2, 1), sum d^2 = 6, rho = -0.5, delta 150
    assert instability(_runs(y, [1, 2, 3], [1, 3, 2], [3, 2, 1])) == pytest.approx((50 + 200 + 150) / 3)
    assert MEASURES["instability"](_runs(y, [1, 2, 3], [1, 3, 2], [3, 2, 1])) == pytest.approx(400 / 3)


def test_instability_extremes():
    rng = np.random.default_rng(0)
    y = np.where(rng.random(50) < 0.5, 1, -1)
    s = rng.standard_normal(50)
    assert instability(_runs(y, s, 2 * s + 1, s**3)) == 0.0  # identical rankings
    assert instability(_runs(y, s, -s)) == pytest.approx(200.0)  # reversed: the maximum
    assert 0 < instability(_runs(y, s, rng.standard_normal(50), rng.standard_normal(50))) < 200
    # a random pair of rankings has E[rho] = 0, so about 100
    many = _runs(y, *rng.standard_normal((40, 50)))
    assert instability(many) == pytest.approx(100.0, abs=5.0)
    assert math.isnan(instability(_runs(y, s)))


def test_instability_agrees_with_scipy_without_ties():
    from itertools import combinations

    from scipy.stats import spearmanr

    rng = np.random.default_rng(1)
    scores = rng.standard_normal((5, 30))
    expected = np.mean([100 * (1 - spearmanr(a, b).statistic) for a, b in combinations(scores, 2)])
    assert instability(_runs(np.ones(30), *scores)) == pytest.approx(expected)


def test_instability_needs_one_shared_test_set():
    with pytest.raises(ValueError, match="do not share a test set"):
        instability(_runs([1, -1, 1], [1, 2, 3]) + _runs([1, 1, -1], [1, 2, 3]))
    with pytest.raises(ValueError, match="do not share a test set"):
        instability(_runs([1, -1, 1], [1, 2, 3]) + _runs([1, -1], [1, 2]))
    with pytest.raises(ValueError, match="no stored y_test and test_scores"):
        instability([{"y_test": np.array([1, -1])}])


def test_roc_envelope_of_identical_curves_has_width_zero():
    y = np.array([1, -1, 1, -1, 1, -1, -1])
    s = np.array([0.9, 0.8, 0.7, 0.4, 0.4, 0.2, 0.1])
    runs = _runs(y, s, 3 * s - 1, s)  # monotone transforms: the same ROC curve
    grid, lo, mean, hi = roc_envelope(runs)
    assert grid.shape == (201,) and grid[0] == 0 and grid[-1] == 1
    np.testing.assert_array_equal(lo, hi)
    np.testing.assert_allclose(mean, lo)
    assert roc_envelope_width(runs) == 0.0 and MEASURES["roc_envelope_width"](runs) == 0.0


def test_roc_envelope_by_hand():
    y = [1, -1, 1, -1]
    # ROC of (4, 3, 2, 1): (0, 0), (0, .5), (.5, .5), (.5, 1), (1, 1); on a vertical segment the highest TPR
    _, lo, _, hi = roc_envelope(_runs(y, [4, 3, 2, 1]), grid=[0, 0.25, 0.5, 0.75, 1])
    np.testing.assert_allclose(lo, [0.5, 0.5, 1, 1, 1])
    # tied scores: the diagonal, linearly interpolated
    _, lo, _, _ = roc_envelope(_runs(y, [1, 1, 1, 1]), grid=[0, 0.25, 0.6, 1])
    np.testing.assert_allclose(lo, [0, 0.25, 0.6, 1])
    # a perfect and a reversed scorer: TPR 1 vs 0 everywhere but at FPR 1
    y = [1, 1, -1, -1]
    runs = _runs(y, [4, 3, 2, 1], [1, 2, 3, 4])
    g, lo, mean, hi = roc_envelope(runs, grid=[0, 0.5, 1])
    np.testing.assert_allclose(hi - lo, [1, 1, 0])
    np.testing.assert_allclose(mean, [0.5, 0.5, 1])
    assert roc_envelope_width(runs, grid=[0, 0.5, 1]) == pytest.approx(2 / 3)
    assert roc_envelope_width(runs) == pytest.approx(200 / 201)


def test_roc_envelope_errors():
    with pytest.raises(ValueError, match="no runs"):
        roc_envelope([])
    with pytest.raises(ValueError, match="single class"):
        roc_envelope(_runs([1, 1], [0.2, 0.3]))
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        roc_envelope(_runs([1, -1], [0.2, 0.3]), grid=[0, 2])


def test_truncated_auc_fractional_reading_keeps_exactly_u_n_points():
    from forestlab.metrics import truncated_auc

    # a perfect ranking: exactly u0 / p on a fold whatever its size (ceil(u0 n) would give 2 / 12 here)
    y = np.array([1] * 12 + [-1] * 11)
    s = np.arange(23, dtype=float)[::-1]
    assert truncated_auc(y, s, 0.05, ties="fractional") == pytest.approx(0.05 * 23 / 12)
    assert truncated_auc(y, s, 0.05, ties="pro_rata") == pytest.approx(2 / 12)
    # the mark u0 n = 2.5 inside a tied group of 4 (1 point above it): w = 1.5 / 4 of the group
    y = np.array([1, 1, -1, 1, -1, -1, -1, -1, -1, -1])
    s = np.array([9, 5, 5, 5, 5, 1, 1, 1, 1, 1], dtype=float)
    above = 1 * 7  # the top positive beats the 7 negatives
    tied = 2 * (5 + 0.5 * 2)  # each tied positive: 5 negatives below, 2 tied with it
    assert truncated_auc(y, s, 0.25, ties="fractional") == pytest.approx((above + 1.5 / 4 * tied) / (3 * 7))
