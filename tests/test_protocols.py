import hashlib

import numpy as np
import pytest

from forestlab import protocols
from forestlab.config import group_options, load_group_option, to_container
from forestlab.datasets import _synthetic
from forestlab.datasets._synthetic import GENERATORS, load_synthetic, register_generator, sample_synthetic
from forestlab.errors import ConfigError, DatasetError
from forestlab.protocols import (
    ResampleSplit,
    derive_seed,
    draw_resample,
    make_split,
    protocol_kinds,
    resolve_sizes,
)
from forestlab.spec import Protocol

HOLDOUT = {"kind": "holdout", "train_size": 0.5, "test_size": None, "stratify": False, "resplit": True}


def test_derive_seed_is_stable_and_sensitive():
    assert derive_seed("split", 0, "sonar", 1) == derive_seed("split", 0, "sonar", 1)
    assert derive_seed("split", 0, "sonar", 1) != derive_seed("split", 0, "sonar", 2)
    assert derive_seed("split", 0, "sonar", 1) != derive_seed("split", 0, "glass", 1)
    # a fixed value guards against accidental changes of the derivation (which would change every result)
    assert derive_seed("split", 0, "sonar", 1) == derive_seed(*["split", 0, "sonar", 1])
    assert 0 <= derive_seed("x") < 2**32


def test_holdout_sizes_fraction_and_counts():
    y = np.array([-1, 1] * 50)
    s = make_split(HOLDOUT, y, base_seed=0, dataset="d", repetition=0)
    assert len(s.train) == 50 and len(s.test) == 50
    assert not set(s.train) & set(s.test)
    s = make_split({**HOLDOUT, "train_size": 30, "test_size": 20}, y, base_seed=0, dataset="d", repetition=0)
    assert len(s.train) == 30 and len(s.test) == 20 and not set(s.train) & set(s.test)


def test_holdout_same_seed_same_split_and_resplit_false():
    y = np.arange(100) % 2
    a = make_split(HOLDOUT, y, base_seed=0, dataset="d", repetition=3)
    b = make_split(HOLDOUT, y, base_seed=0, dataset="d", repetition=3)
    c = make_split(HOLDOUT, y, base_seed=0, dataset="d", repetition=4)
    np.testing.assert_array_equal(a.train, b.train)
    assert not np.array_equal(a.train, c.train)
    fixed = {**HOLDOUT, "resplit": False}
    d = make_split(fixed, y, base_seed=0, dataset="d", repetition=3)
    e = make_split(fixed, y, base_seed=0, dataset="d", repetition=4)
    np.testing.assert_array_equal(d.train, e.train)


def test_stratified_holdout_keeps_proportions():
    y = np.array([1] * 30 + [-1] * 70)
    s = make_split({**HOLDOUT, "stratify": True, "train_size": 50, "test_size": 50}, y, base_seed=1,
                   dataset="d", repetition=0)
    assert (y[s.train] == 1).sum() == 15 and (y[s.test] == 1).sum() == 15


def test_holdout_too_large_is_a_clear_error():
    y = np.arange(10) % 2
    with pytest.raises(DatasetError, match="too few"):
        make_split({**HOLDOUT, "train_size": 8, "test_size": 5}, y, base_seed=0, dataset="d", repetition=0)


def test_kfold_partitions_and_is_stratified():
    y = np.array([1] * 40 + [-1] * 60)
    proto = {"kind": "kfold", "n_folds": 10, "stratify": True}
    tests = [make_split(proto, y, base_seed=0, dataset="d", repetition=0, fold=k).test for k in range(10)]
    allidx = np.sort(np.concatenate(tests))
    np.testing.assert_array_equal(allidx, np.arange(100))
    assert all((y[t] == 1).sum() == 4 for t in tests)


def test_resolve_sizes_from_study():
    ds = {"name": "sonar", "splits": {"zirakiza2013": {"train": 104, "test": 104}}}
    out = resolve_sizes({**HOLDOUT, "sizes_from": "zirakiza2013", "name": "holdout"}, ds)
    assert out["train_size"] == 104 and out["test_size"] == 104 and "sizes_from" not in out
    with pytest.raises(ConfigError, match="no split sizes"):
        resolve_sizes({**HOLDOUT, "sizes_from": "other"}, ds)


def _fingerprint(split) -> str:
    blob = np.asarray(split.train, np.int64).tobytes() + b"|" + np.asarray(split.test, np.int64).tobytes()
    return hashlib.sha256(blob).hexdigest()[:16]


@pytest.mark.parametrize(("proto", "fold", "expected"), [
    ({"kind": "holdout", "train_size": 0.5, "test_size": None, "stratify": False, "resplit": True}, None,
     ("39346b10118a51f1", "4330e41ce5b4954f")),
    ({"kind": "holdout", "train_size": 0.7, "test_size": None, "stratify": True, "resplit": True}, None,
     ("953800be89db7441", "52919e6ce6a0813d")),
    ({"kind": "holdout", "train_size": 40, "test_size": 30, "stratify": False, "resplit": False}, None,
     ("ce32548d302b21c4", "ce32548d302b21c4")),
    ({"kind": "kfold", "n_folds": 10, "stratify": True}, 3, ("a3d8262ab22cd95d", "323c18f860f101e3")),
    ({"kind": "kfold", "n_folds": 5, "stratify": False}, 4, ("09e38cbaca5f9e86", "8f0c9a3c4994d632")),
])
def test_existing_splits_never_change(proto, fold, expected):
    # Golden fingerprints of make_split as the published studies' numbers were computed (recorded before the
    # resample protocol was added): holdout and kfold must keep returning exactly these indices.
    y = np.where(np.arange(97) % 3 == 0, 1, -1)
    got = tuple(_fingerprint(make_split(proto, y, base_seed=7, dataset="sonar", repetition=rep, fold=fold))
                for rep in (0, 2))
    assert got == expected


@pytest.mark.parametrize("n_folds", [3, 5, 10])
@pytest.mark.parametrize("n_pos", [13, 23, 50])
def test_stratified_kfold_keeps_each_folds_positive_rate(n_folds, n_pos):
    y = np.array([1] * n_pos + [-1] * (101 - n_pos))
    rng = np.random.default_rng(n_pos)
    y = y[rng.permutation(len(y))]
    rate = np.mean(y == 1)
    proto = {"kind": "kfold", "n_folds": n_folds, "stratify": True}
    for rep in range(3):
        for k in range(n_folds):
            test = make_split(proto, y, base_seed=0, dataset="d", repetition=rep, fold=k).test
            assert abs(np.mean(y[test] == 1) - rate) <= 1 / len(test)


# ---------------------------------------------------------------------------------------------------------------
# Protocol.from_config: the protocol's rules, declared in forestlab.spec
# ---------------------------------------------------------------------------------------------------------------
RESAMPLE = {"kind": "resample", "train_size": 200, "test_size": 100}


def test_protocol_kinds():
    assert protocol_kinds() == ("holdout", "kfold", "resample")


def test_every_shipped_protocol_config_is_valid():
    for name in group_options("protocol"):  # composed with their bases (conf/protocol/_*.yaml), as a run uses them
        Protocol.from_config(to_container(load_group_option("protocol", name)))


@pytest.mark.parametrize("proto", [
    HOLDOUT,
    {**HOLDOUT, "train_size": None, "sizes_from": "zirakiza2013"},
    {"kind": "kfold", "n_folds": 10, "stratify": True, "selection": "oob"},
    RESAMPLE,
    {**RESAMPLE, "test_size": 0, "stratify": False},
    {**RESAMPLE, "selection": {"kind": "cv", "metric": "auc", "folds": 3}},
    {**HOLDOUT, "selection": {"kind": "test", "metric": "risk"}},
])
def test_check_protocol_accepts(proto):
    Protocol.from_config(proto)


@pytest.mark.parametrize(("proto", "message"), [
    ({"kind": "bootstrap"}, "protocol.kind must be one of holdout, kfold, resample, got 'bootstrap'"),
    ({}, "protocol.kind must be one of"),
    ({**HOLDOUT, "train_size": None}, "protocol.train_size must be set"),
    ({**HOLDOUT, "train_size": 1.5}, r"fraction must be in \(0, 1\)"),
    ({**HOLDOUT, "test_size": 0}, "protocol.test_size must be >= 1"),
    ({**HOLDOUT, "stratify": "yes"}, "protocol.stratify must be true or false"),
    ({"kind": "kfold", "n_folds": 1}, "protocol.n_folds must be >= 2"),
    ({"kind": "kfold"}, "protocol.n_folds must be an integer"),
    ({**RESAMPLE, "train_size": 0.5}, "protocol.train_size must be an integer >= 2 for kind resample"),
    ({**RESAMPLE, "train_size": 1}, "protocol.train_size must be >= 2"),
    ({**RESAMPLE, "test_size": -1}, "protocol.test_size must be >= 0"),
    ({**RESAMPLE, "test_size": True}, "protocol.test_size must be an integer"),
    ({"kind": "resample", "train_size": 100}, "protocol.test_size must be an integer"),
    ({**RESAMPLE, "stratify": True}, "stratify must be false for kind resample"),
    ({**RESAMPLE, "test_size": 0, "selection": {"kind": "test", "metric": "auc"}}, "needs a test set"),
    ({**HOLDOUT, "selection": "grid"}, "selection kind must be one of none, oob, cv, test"),
    ({**HOLDOUT, "selection": "cv"}, "selection kind cv needs a metric"),
    ({**HOLDOUT, "selection": {"kind": "cv", "metric": "f1"}}, "'f1' cannot select a model"),
    ({**HOLDOUT, "selection": {"kind": "cv", "metric": "reject"}}, "'reject' cannot select a model"),
    ({**HOLDOUT, "selection": {"kind": "cv", "metric": "auc", "folds": 1}}, "selection.folds must be"),
    ({**HOLDOUT, "selection": {"kind": "oob", "metric": "auc"}}, "kind oob compares out-of-bag errors"),
    ({**HOLDOUT, "selection": {"kind": "cv", "metric": "auc", "fold": 3}}, "selection.fold is not a selection"),
])
def test_check_protocol_rejects_with_one_line(proto, message):
    with pytest.raises(ConfigError, match=message) as info:
        Protocol.from_config(proto)
    assert "\n" not in str(info.value)


# ---------------------------------------------------------------------------------------------------------------
# The resample protocol and the synthetic generators behind it
# ---------------------------------------------------------------------------------------------------------------
def _synth_cfg(generator="twonorm", **source):
    return {"name": generator, "task": "binary", "shape": [7400, 20],
            "source": {"kind": "synthetic", "generator": generator, "n_samples": 7400, "n_features": 20,
                       "random_state": 0, **source}}


@pytest.mark.parametrize("generator", ["ringnorm", "twonorm"])
def test_sample_synthetic_equals_load_synthetic(generator):
    cfg = _synth_cfg(generator, n_samples=300, random_state=5, n_features=6)
    cfg["shape"] = [300, 6]
    ds, _ = load_synthetic(cfg, name=generator, data_dir=".", mirror=None, download=False)
    X, y = sample_synthetic(cfg, 300, 5)
    np.testing.assert_array_equal(X, ds.X)
    np.testing.assert_array_equal(y, ds.y)
    assert X.dtype == np.float64 and y.dtype == np.int64 and set(np.unique(y)) == {-1, 1}
    # and load_synthetic still gives what the generator functions give (the datasets' arrays did not change)
    X2, y2 = getattr(_synthetic, generator)(300, 6, 5)
    np.testing.assert_array_equal(X2, ds.X)
    np.testing.assert_array_equal(y2, ds.y)


def test_generator_registry():
    assert {"ringnorm", "twonorm"} <= set(GENERATORS)
    try:
        @register_generator("shifted")
        def shifted(n_samples, n_features, rng_or_seed, delta=1.0):
            rng = np.random.default_rng(rng_or_seed)
            y = np.where(rng.random(n_samples) < 0.5, 1, -1)
            return rng.standard_normal((n_samples, n_features)) + delta * (y[:, None] > 0), y

        assert GENERATORS["shifted"] is shifted
        cfg = _synth_cfg("shifted", delta=3.0, n_features=2)
        X, y = sample_synthetic(cfg, 2000, 1)
        assert X.shape == (2000, 2) and X[y == 1].mean() - X[y == -1].mean() == pytest.approx(3.0, abs=0.15)
        with pytest.raises(ValueError, match="already registered"):
            register_generator("shifted", lambda n, d, r: None)
        with pytest.raises(DatasetError, match=r"`source.sigma` is not a parameter of the shifted generator"):
            sample_synthetic(_synth_cfg("shifted", sigma=2.0), 10, 0)
    finally:
        GENERATORS.pop("shifted", None)  # the registry is module state: leave it as found


def test_sample_synthetic_errors():
    with pytest.raises(DatasetError, match="must be one of"):
        sample_synthetic(_synth_cfg("nope"), 10, 0)
    with pytest.raises(DatasetError, match="is not generated"):
        sample_synthetic({"name": "sonar", "task": "binary", "source": {"kind": "uci"}}, 10, 0)
    X, y = sample_synthetic(_synth_cfg(), 0, 0)
    assert X.shape == (0, 20) and y.shape == (0,)


def test_resample_draws_fresh_training_sets_against_one_test_set():
    cfg = _synth_cfg("ringnorm", n_features=5)
    draws = [draw_resample(RESAMPLE, cfg, base_seed=3, dataset="ringnorm", repetition=r) for r in range(3)]
    for d in draws:
        assert isinstance(d, ResampleSplit)
        assert d.X_train.shape == (200, 5) and d.y_train.shape == (200,) and d.X_test.shape == (100, 5)
        assert d.X_train.dtype == np.float64 and d.y_train.dtype == np.int64
        np.testing.assert_array_equal(d.X_test, draws[0].X_test)
        np.testing.assert_array_equal(d.y_test, draws[0].y_test)
    assert not np.array_equal(draws[0].X_train, draws[1].X_train)
    # the documented seeds
    X, y = sample_synthetic(cfg, 200, derive_seed("resample-train", 3, "ringnorm", 1))
    np.testing.assert_array_equal(draws[1].X_train, X)
    np.testing.assert_array_equal(draws[1].y_train, y)
    X, y = sample_synthetic(cfg, 100, derive_seed("resample-test", 3, "ringnorm"))
    np.testing.assert_array_equal(draws[0].X_test, X)
    # same arguments, same data; another base seed, another test set
    again = draw_resample(RESAMPLE, cfg, base_seed=3, dataset="ringnorm", repetition=1)
    np.testing.assert_array_equal(again.X_train, draws[1].X_train)
    other = draw_resample(RESAMPLE, cfg, base_seed=4, dataset="ringnorm", repetition=0)
    assert not np.array_equal(other.X_test, draws[0].X_test)


def test_resample_without_resplit_keeps_one_training_set():
    cfg = _synth_cfg("ringnorm", n_features=5)
    fixed = {**RESAMPLE, "resplit": False}
    draws = [draw_resample(fixed, cfg, base_seed=3, dataset="ringnorm", repetition=r) for r in range(3)]
    first = draw_resample(RESAMPLE, cfg, base_seed=3, dataset="ringnorm", repetition=0)
    for d in draws:
        np.testing.assert_array_equal(d.X_train, first.X_train)
        np.testing.assert_array_equal(d.X_test, first.X_test)


def test_resample_without_test_set():
    d = draw_resample({**RESAMPLE, "test_size": 0}, _synth_cfg(), base_seed=0, dataset="twonorm", repetition=0)
    assert d.X_train.shape == (200, 20) and d.X_test.shape == (0, 20) and d.y_test.shape == (0,)


def test_resample_train_and_test_seeds_never_coincide(monkeypatch):
    real = protocols.derive_seed
    calls = []

    def colliding(*parts):
        calls.append(parts)
        if parts[0] in ("resample-train", "resample-test") and len(parts) <= 4:
            return 12345  # the training seed of repetition 0 hashes to the test seed
        return real(*parts)

    monkeypatch.setattr(protocols, "derive_seed", colliding)
    d = draw_resample(RESAMPLE, _synth_cfg(), base_seed=0, dataset="twonorm", repetition=0)
    assert ("resample-train", 0, "twonorm", 0, 1) in calls
    assert not np.array_equal(d.X_train[:100], d.X_test)


def test_resample_needs_a_synthetic_dataset():
    sonar = {"name": "sonar", "task": "binary", "source": {"kind": "uci"}}
    with pytest.raises(ConfigError, match=r"protocol kind resample.*dataset 'sonar' is not synthetic"):
        draw_resample(RESAMPLE, sonar, base_seed=0, dataset="sonar", repetition=0)
    with pytest.raises(ConfigError, match="use draw_resample"):
        make_split(RESAMPLE, np.array([1, -1] * 10), base_seed=0, dataset="d", repetition=0)
    with pytest.raises(ConfigError, match="train_size must be an integer"):
        draw_resample({**RESAMPLE, "train_size": 0.5}, _synth_cfg(), base_seed=0, dataset="twonorm", repetition=0)
