"""The numba port of scikit-learn's tree builder (forestlab.learners._cart) grows scikit-learn's trees bit for bit:
every field of ``Tree.__getstate__`` (the nodes' children, features, thresholds, impurities, sample counts and
weights, ``missing_go_to_left``; the values; ``max_depth``, ``node_count``) equal, same dtypes, to what
``DepthFirstTreeBuilder`` + ``BestSplitter`` build from the same splitter seed.

The small problems are drawn to hit the hard cases (ties and duplicated rows, features constant in the data or
becoming constant in nodes, values less than FEATURE_THRESHOLD apart, -0.0 beside 0.0, two to four classes,
max_features from 1 to all, min_samples_leaf / min_samples_split above their minimum, max_depth, a positive
min_impurity_decrease, Gini and entropy, bootstrap counts, other integer weights with zeros, no weights), each tree
grown both ways (partitioning presorted lists, sorting in each node); then Spambase-sized forests.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from sklearn.tree import _classes as tree_classes

from forestlab.learners import _cart
from forestlab.learners._cart import CartGrower

pytestmark = pytest.mark.skipif(not _cart.supported() or platform.machine().lower() not in ("x86_64", "amd64"),
                                reason="the port is verified against scikit-learn 1.9 on x86-64 only")

INT32_MAX = int(np.iinfo(np.int32).max)
#: The two ways of finding a feature's sorted values in a node (CartGrower.sorting)
MODES = {"sort": True, "presorted": False}


def sklearn_tree(X, y, n_classes, weight, seed, *, criterion="gini", max_features, min_samples_leaf=1,
                 min_samples_split=2, max_depth=INT32_MAX, min_impurity_decrease=0.0):
    """What DecisionTreeClassifier._fit builds: the splitter seeded by RandomState(seed)."""
    n_classes_arr = np.array([n_classes], dtype=np.intp)
    splitter = tree_classes.DENSE_SPLITTERS["best"](tree_classes.CRITERIA_CLF[criterion](1, n_classes_arr),
                                                    max_features, min_samples_leaf, 0.0,
                                                    np.random.RandomState(seed), None)
    tree = tree_classes.Tree(X.shape[1], n_classes_arr, 1)
    tree_classes.DepthFirstTreeBuilder(splitter, max(min_samples_split, 2 * min_samples_leaf), min_samples_leaf, 0.0,
                                       max_depth, min_impurity_decrease).build(
        tree, X, np.ascontiguousarray(y, dtype=np.float64).reshape(-1, 1), weight, None)
    return tree


def assert_same_tree(got, ref, context=""):
    a, b = got.__getstate__(), ref.__getstate__()
    assert a.keys() == b.keys()
    for key in b:
        va, vb = np.asarray(a[key]), np.asarray(b[key])
        assert va.dtype == vb.dtype and va.shape == vb.shape, (key, context)
        assert np.array_equal(va, vb), (key, context)


def random_problem(rng: np.random.RandomState, kind: str) -> tuple[np.ndarray, np.ndarray, int]:
    n = int(rng.randint(2, 121))
    d = int(rng.randint(1, 10))
    n_classes = int(rng.choice([2, 2, 3, 4]))
    if kind == "ties":
        X = rng.randint(0, 4, size=(n, d)).astype(np.float32)
    elif kind == "close":  # neighbours less than FEATURE_THRESHOLD apart, and some just above it
        X = (1.0 + rng.randint(0, 6, size=(n, d)) * rng.choice([3e-8, 6e-8, 1.2e-7], size=d)).astype(np.float32)
    elif kind == "sparse":  # mostly zeros (-0.0 among them), a constant feature, duplicated rows
        X = np.where(rng.rand(n, d) < 0.7, 0.0, rng.randint(1, 5, size=(n, d)) * 0.5).astype(np.float32)
        X[rng.rand(n, d) < 0.2] = np.float32(-0.0)
        X[:, rng.randint(d)] = 2.5
        dup = rng.randint(n, size=n // 3)
        X[rng.randint(n, size=n // 3)] = X[dup]
    else:  # continuous, with a few tied columns
        X = rng.normal(size=(n, d)).astype(np.float32)
        tied = rng.rand(d) < 0.3
        X[:, tied] = np.round(X[:, tied])
        X[rng.rand(n) < 0.2] *= 0  # zeros, -0.0 where negative
    y = rng.randint(0, n_classes, size=n)
    y[:n_classes] = np.arange(min(n, n_classes))
    return np.ascontiguousarray(X), y, n_classes


def random_settings(rng: np.random.RandomState, d: int) -> dict:
    min_samples_leaf = int(rng.choice([1, 1, 2, 3, 5]))
    return {
        "criterion": str(rng.choice(["gini", "gini", "entropy"])),
        "max_features": int(rng.randint(1, d + 1)),
        "min_samples_leaf": min_samples_leaf,
        "min_samples_split": max(int(rng.choice([2, 2, 5, 10])), 2 * min_samples_leaf),
        "max_depth": int(rng.choice([INT32_MAX, INT32_MAX, 1, 3, 6])),
        "min_impurity_decrease": float(rng.choice([0.0, 0.0, 0.005, 0.02])),
    }


def test_random_small_problems_grow_scikit_learns_trees():
    rng = np.random.RandomState(20261127)
    n_trees = 0
    for problem in range(96):
        kind = ("ties", "close", "sparse", "continuous")[problem % 4]
        X, y, n_classes = random_problem(rng, kind)
        n = len(y)
        settings = random_settings(rng, X.shape[1])
        grower = CartGrower(X, y, n_classes, **settings)
        for weighting in ("none", "bootstrap", "integers"):
            seed = int(rng.randint(INT32_MAX))
            weight = None
            if weighting == "bootstrap":
                weight = np.bincount(np.random.RandomState(seed).randint(0, n, n), minlength=n).astype(np.float64)
            elif weighting == "integers":
                weight = rng.randint(0, 4, size=n).astype(np.float64)
                weight[rng.randint(n)] = 1.0
            sorting_many_classes = _cart.sorts(settings["max_features"], X.shape[1]) and n_classes > 2
            assert CartGrower.covers(X, y, n_classes, criterion=settings["criterion"],
                                     max_features=settings["max_features"], sample_weight=weight) \
                is not sorting_many_classes  # left to scikit-learn for speed: the port still grows its trees
            ref = sklearn_tree(X, y, n_classes, weight, seed, **settings)
            for mode, sorting in MODES.items():
                grower.sorting = sorting
                got = grower.grow(weight, np.random.RandomState(seed))
                assert_same_tree(got, ref, (problem, kind, weighting, mode, settings))
                n_trees += 1
    assert n_trees == 96 * 3 * 2


@pytest.mark.parametrize("mode", list(MODES))
def test_feature_threshold_is_a_float32_sum(mode):
    """1 + 1e-7 rounds up to the next float32 after 1 (1 + 2**-23): scikit-learn finds [1, 1 + 2**-23] constant (no
    split), and does not split between them in a wider node either; in double it would."""
    step = np.float32(1.0) + np.float32(2.0 ** -23)
    X = np.array([[1.0, 0.0], [step, 0.0], [1.0, 1.0], [step, 1.0], [3.0, 0.0], [3.0, 1.0]], dtype=np.float32)
    y = np.array([0, 1, 0, 1, 1, 0])
    for rows in (slice(0, 2), slice(None)):
        grower = CartGrower(X[rows, :1], y[rows], 2, criterion="gini", max_features=1, min_samples_leaf=1,
                            min_samples_split=2, max_depth=INT32_MAX)
        grower.sorting = MODES[mode]
        ref = sklearn_tree(X[rows, :1], y[rows], 2, None, 3, max_features=1)
        assert_same_tree(grower.grow(None, np.random.RandomState(3)), ref)
    assert sklearn_tree(X[:2, :1], y[:2], 2, None, 3, max_features=1).node_count == 1


def test_many_trees_in_one_call_are_each_trees_tree():
    """grow_many reuses its buffers from tree to tree: each tree is still the one grown alone."""
    rng = np.random.RandomState(5)
    X = np.where(rng.rand(300, 12) < 0.6, 0.0, rng.normal(size=(300, 12))).astype(np.float32)
    y = (X[:, 0] + rng.normal(size=300) > 0).astype(np.int64)
    for max_features in (2, 12):
        grower = CartGrower(X, y, 2, criterion="gini", max_features=max_features, min_samples_leaf=1,
                            min_samples_split=2, max_depth=INT32_MAX)
        seeds = rng.randint(INT32_MAX, size=12)
        weights = np.array([np.bincount(np.random.RandomState(s).randint(0, 300, 300), minlength=300)
                            for s in seeds], dtype=np.float64)
        splitter_seeds = [CartGrower.splitter_seed(np.random.RandomState(s)) for s in seeds]
        for tree, weight, seed in zip(grower.grow_many(weights, splitter_seeds), weights, seeds, strict=True):
            assert_same_tree(tree, sklearn_tree(X, y, 2, weight, seed, max_features=max_features))


def test_wide_data_gathers_ranks_by_feature_then_by_row():
    """Sorting, a node of more than 2**18 values gathers its ranks feature by feature, a smaller one row by row."""
    rng = np.random.RandomState(7)
    X = (np.where(rng.rand(1200, 250) < 0.7, 0, rng.randint(1, 40, size=(1200, 250))) / 4).astype(np.float32)
    y = (X[:, :5].sum(axis=1) + rng.normal(size=1200) > 6).astype(np.int64)
    assert X.size > _cart._ROW_GATHER
    grower = CartGrower(X, y, 2, criterion="gini", max_features=15, min_samples_leaf=1, min_samples_split=2,
                        max_depth=INT32_MAX)
    assert grower.sorting
    for seed in (3, 4):
        assert_same_tree(grower.grow(None, np.random.RandomState(seed)), sklearn_tree(X, y, 2, None, seed,
                                                                                      max_features=15))


def spambase_or_synthetic() -> tuple[np.ndarray, np.ndarray, str]:
    """Spambase (4601 x 57) from the data mirror, else synthetic data of its shape with as many ties."""
    mirror = os.environ.get("FORESTLAB_DATA_MIRROR") or str(Path(__file__).resolve().parents[2] / "shared"
                                                             / "datasets")
    try:
        import tempfile

        from forestlab.config import load_group_option, to_container
        from forestlab.datasets import load_dataset

        cfg = to_container(load_group_option("dataset", "spambase"))
        ds = load_dataset(cfg, data_dir=Path(tempfile.gettempdir()) / "forestlab_test_cart", mirror=mirror,
                          download=False)
        return np.asarray(ds.X, dtype=np.float32), np.unique(ds.y, return_inverse=True)[1], "spambase"
    except Exception:  # noqa: BLE001 - no mirror: synthetic data of the same shape
        rng = np.random.RandomState(0)
        X = rng.exponential(size=(4601, 57)) * (rng.rand(4601, 57) < 0.25)
        X = np.round(X, 2).astype(np.float32)  # ~78% zeros, few distinct values per feature: many ties
        y = (X[:, :10].sum(axis=1) + rng.normal(size=4601) > 2.0).astype(np.int64)
        return X, y, "synthetic"


@pytest.mark.parametrize(("settings", "n_trees"), [
    ({"max_features": 57}, 3),  # bagging (courses_spambase)
    ({"max_features": 7}, 4),  # sqrt (rf_course)
    ({"max_features": 20, "criterion": "entropy", "min_samples_leaf": 2}, 2),
])
def test_spambase_sized_forests(settings, n_trees):
    X, y, _ = spambase_or_synthetic()
    n = len(y)
    settings = {"criterion": "gini", "min_samples_leaf": 1, "max_depth": INT32_MAX} | settings
    settings["min_samples_split"] = 2 * settings["min_samples_leaf"]
    grower = CartGrower(X, y, 2, **settings)
    seeds = np.random.RandomState(settings["max_features"]).randint(INT32_MAX, size=n_trees)
    weights = np.array([np.bincount(np.random.RandomState(s).randint(0, n, n), minlength=n) for s in seeds],
                       dtype=np.float64)
    trees = grower.grow_many(weights, [CartGrower.splitter_seed(np.random.RandomState(s)) for s in seeds])
    for tree, weight, seed in zip(trees, weights, seeds, strict=True):
        assert_same_tree(tree, sklearn_tree(X, y, 2, weight, seed, **settings))
    assert_same_tree(grower.grow(None, np.random.RandomState(1)), sklearn_tree(X, y, 2, None, 1, **settings))


def test_covers_only_what_the_port_reproduces():
    X = np.random.RandomState(0).normal(size=(20, 3)).astype(np.float32)
    y = np.arange(20) % 2

    def covers(X=X, y=y, n_classes=2, criterion="gini", max_features=3, **kwargs):
        return CartGrower.covers(X, y, n_classes, criterion=criterion, max_features=max_features, **kwargs)

    assert covers() and covers(criterion="log_loss", sample_weight=np.full(20, 2.0))
    bad_x = X.copy()
    bad_x[3, 1] = np.nan
    assert not covers(X=bad_x)
    bad_x[3, 1] = np.inf
    assert not covers(X=bad_x)
    assert not covers(X=X.astype(np.float64))
    assert not covers(criterion="squared_error")
    assert not covers(y=y + 1)  # codes not in 0..K-1
    assert not covers(sample_weight=np.full(20, 0.5))
    assert not covers(sample_weight=-np.ones(20))
    X30 = np.random.RandomState(0).normal(size=(20, 30)).astype(np.float32)
    assert covers(X=X30, max_features=5) and covers(X=X30, y=np.arange(20) % 3, n_classes=3, max_features=30)
    assert not covers(X=X30, y=np.arange(20) % 3, n_classes=3, max_features=5)  # sorting, more than two classes
    big = np.zeros((30_000, 784), dtype=np.float32)  # more than MAX_BYTES of arrays (as full MNIST)
    assert _cart.MAX_BYTES < 12 * big.size and not covers(X=big, y=np.arange(30_000) % 2, max_features=28)
    for version in ("1.8.2", "1.10.0", "2.0"):
        with mock.patch("sklearn.__version__", version):
            assert not _cart.supported() and not covers()
    with mock.patch("sklearn.__version__", "1.9.3"):
        assert _cart.supported()
    grower = CartGrower(X, y, 2, criterion="gini", max_features=3, min_samples_leaf=1, min_samples_split=2,
                        max_depth=INT32_MAX)
    for weights in (np.full((1, 20), 0.5), -np.ones((1, 20)), np.zeros((1, 20)), np.ones((1, 19)), np.ones(20)):
        with pytest.raises(ValueError, match="integer counts"):
            grower.grow_many(weights, [1])


def test_grow_forest_without_the_port_grows_the_same_forest():
    """grow_forest falls back to scikit-learn's builder where the port does not apply: same trees either way."""
    from sklearn.ensemble import RandomForestClassifier

    from forestlab.learners._forest import grow_forest

    rng = np.random.RandomState(1)
    X = np.round(rng.normal(size=(150, 8)), 1).astype(np.float32)
    y = (X[:, 0] - X[:, 1] + rng.normal(size=150) > 0).astype(np.int64)
    classes, codes = np.unique(y, return_inverse=True)
    ported = RandomForestClassifier(n_estimators=6, max_features=3, random_state=2)
    grow_forest(ported, X, classes, codes)
    plain = RandomForestClassifier(n_estimators=6, max_features=3, random_state=2)
    with mock.patch.object(CartGrower, "covers", return_value=False):
        grow_forest(plain, X, classes, codes)
    for a, b in zip(ported.estimators_, plain.estimators_, strict=True):
        assert_same_tree(a.tree_, b.tree_)


@pytest.mark.slow  # compiles every kernel from nothing, in a fresh numba cache: about a minute on a slow machine
def test_install_warm_up_compiles_what_each_family_uses(tmp_path):
    """``python -m forestlab.learners`` (make install: the port's ``_cart.warm_up``, then each family that calls
    compiled kernels) leaves numba's cache such that a new process growing forests in both modes with both criteria,
    and fitting ranking trees and forests (the SVM LeafRank's too), RankSVM, the forest-kernel SVM and a PAC-Bayes
    successor on other data and sizes, compiles nothing more: their cache files are the same before and after."""
    import subprocess
    import sys

    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    subprocess.run([sys.executable, "-m", "forestlab.learners"], env=env, check=True, timeout=600,
                   capture_output=True)
    kernels = ("_cart", "_treerank_kernels", "_svm_gram", "_smo", "_ranksvm_kernels", "_kernel_counts",
               "_pacbayes_kernels")

    def cached() -> dict[str, list[str]]:
        files = sorted(p.name for p in tmp_path.rglob("*") if p.is_file())
        return {k: [n for n in files if n.startswith(f"{k}.")] for k in kernels}

    before = cached()
    assert all(before.values()), before
    fit = ("import numpy as np\nfrom forestlab.learners import get_learner\n"
           "from forestlab.learners._forest import BreimanForestClassifier\n"
           "X = np.random.RandomState(0).normal(size=(80, 5))\ny = (X[:, 0] > 0).astype(int)\n"
           "for mf, crit in ((5, 'gini'), (1, 'gini'), (5, 'entropy'), (1, 'entropy')):\n"
           "    BreimanForestClassifier(n_estimators=3, max_features=mf, criterion=crit, random_state=0).fit(X, y)\n"
           "rng = np.random.RandomState(1)\nX = rng.normal(size=(120, 8))\ny = np.where(X[:, 0] > 0, 1, -1)\n"
           "for name, params in (('treerank', {'max_depth': 4}), ('ranking_forest', {'n_estimators': 3}),\n"
           "        ('ranking_forest', {'n_estimators': 3, 'leafrank': 'svm', 'svm_kernel': 'linear'}),\n"
           "        ('ranksvm', {}), ('forest_svm', {'n_estimators': 5}), ('cctnd', {'n_estimators': 4})):\n"
           "    est = get_learner(name)(**params, random_state=0).fit(X, y)\n"
           "    (est.decision_function if hasattr(est, 'decision_function') else est.predict)(X)\n")
    subprocess.run([sys.executable, "-c", fit], env=env, check=True, timeout=600, capture_output=True)
    assert cached() == before
