"""TreeRank benchmark: the fit time of one ranking tree, relative to one scikit-learn DecisionTreeClassifier.

On GaussEasy20d (2000 x 20: p = 1/2, positives N(mu+, I), negatives N(mu-, sigma^2 I), log10 sigma^2 = 0.1,
|mu+ - mu-| = 1 spread over all coordinates), one TreeRank tree with the CART LeafRank and the defaults (master depth
<= 10, nodes of >= 50 points split; LeafRank CART depth <= 10, min split 50) against one
``DecisionTreeClassifier(min_samples_split=50).fit`` on the same data, timed in the same run, interleaved; the ratio
is median(TreeRank) / median(DecisionTreeClassifier). Target (issue 12): ratio <= 4, aim 2. (For scale: the R package
takes 0.3-0.5 s per tree.)

Also the time per tree of each LeafRank: axis on the same data; SVM (RBF and linear kernels; BLAS threads as set,
and limited to one as in a forest's worker processes) and dyadic on 1800 points (the largest training folds of the
SVM tables); a CART tree with RF1 (5 of 20 variables per master node); a CART tree on a bootstrap sample given as
duplicated rows and as integer sample weights (the same tree). The compiled kernels are loaded (or compiled) before
timing.

    python tests/benchmarks/bench_treerank.py [--repeats 15]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from functools import partial

import numpy as np
from sklearn.tree import DecisionTreeClassifier
from threadpoolctl import threadpool_limits

from forestlab.learners._treerank import TreeRank

N_SAMPLES, N_FEATURES, N_SVM = 2000, 20, 1800
TARGET = 4.0


def gauss_easy(n: int, q: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """GaussEasy20d: p = 1/2, N(mu+, I) vs N(mu-, 10**0.1 I), |mu+ - mu-| = 1 spread as 1/(2 sqrt q) per axis."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1, -1)
    shift = np.full(q, 0.5 / np.sqrt(q))
    X = np.where(y[:, None] == 1, rng.normal(size=(n, q)) + shift,
                 rng.normal(size=(n, q)) * np.sqrt(10 ** 0.1) - shift)
    return X, y


def _seconds(fit: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fit()
    return time.perf_counter() - t0


def _median_time(fit: Callable[[int], object], repeats: int) -> float:
    return float(np.median([_seconds(lambda rep=rep: fit(rep)) for rep in range(repeats)]))


def bench_ratio(repeats: int) -> dict[str, float]:
    """Median fit times of a default CART TreeRank tree and of a scikit-learn tree, interleaved, and their ratio."""
    X, y = gauss_easy(N_SAMPLES, N_FEATURES, seed=0)
    ours, theirs = [], []
    for rep in range(repeats + 1):  # the first round warms caches (and the compiled kernels) and is dropped
        ranker = TreeRank(random_state=rep)
        tree = DecisionTreeClassifier(min_samples_split=50, random_state=rep)
        if rep % 2:
            pair = (_seconds(partial(ranker.fit, X, y)), _seconds(partial(tree.fit, X, y)))
        else:
            pair = tuple(reversed((_seconds(partial(tree.fit, X, y)), _seconds(partial(ranker.fit, X, y)))))
        if rep:
            ours.append(pair[0])
            theirs.append(pair[1])
    t_ours, t_theirs = float(np.median(ours)), float(np.median(theirs))
    return {"treerank_s": t_ours, "sklearn_s": t_theirs, "ratio": t_ours / t_theirs,
            "n_leaves": float(TreeRank(random_state=0).fit(X, y).n_leaves_)}


def bench_leafranks(repeats: int) -> dict[str, float]:
    """Median seconds per tree of each LeafRank (and of a bootstrap tree, rows duplicated vs weighted)."""
    X, y = gauss_easy(N_SAMPLES, N_FEATURES, seed=0)
    X_svm, y_svm = X[:N_SVM], y[:N_SVM]
    idx = np.random.default_rng(1).integers(0, N_SAMPLES, N_SAMPLES)
    counts = np.bincount(idx, minlength=N_SAMPLES).astype(float)
    few = max(3, repeats // 5)
    return {
        "cart": _median_time(lambda rep: TreeRank(random_state=rep).fit(X, y), repeats),
        "cart_rf1_5_of_20": _median_time(lambda rep: TreeRank(max_features=5, random_state=rep).fit(X, y), repeats),
        "cart_bootstrap_rows": _median_time(lambda rep: TreeRank(random_state=rep).fit(X[idx], y[idx]), repeats),
        "cart_bootstrap_weights": _median_time(lambda rep: TreeRank(random_state=rep).fit(X, y, sample_weight=counts),
                                               repeats),
        "axis": _median_time(lambda rep: TreeRank(leafrank="axis").fit(X, y), repeats),
        "dyadic_1800": _median_time(lambda rep: TreeRank(leafrank="dyadic").fit(X_svm, y_svm), few),
    } | {f"svm_{kernel}_1800{suffix}": _svm_time(X_svm, y_svm, kernel, threads, few)
         for kernel in ("rbf", "linear") for suffix, threads in (("", None), ("_1thread", 1))}


def _svm_time(X: np.ndarray, y: np.ndarray, kernel: str, threads: int | None, repeats: int) -> float:
    """Seconds per SVM tree; ``threads=1`` limits BLAS to one thread, as in a forest's worker processes."""
    with threadpool_limits(threads):
        return _median_time(lambda rep: TreeRank(leafrank="svm", svm_kernel=kernel).fit(X, y), repeats)


def run(out: dict, repeats: int = 15) -> None:
    """Fill ``out["treerank_fit"]`` with the ratio to scikit-learn's tree and ``out["treerank_tree_s"]`` with the
    seconds per tree of each LeafRank."""
    X, y = gauss_easy(200, 3, seed=0)
    TreeRank().fit(X, y).decision_function(X)  # load or compile the kernels outside the timings
    ratio = bench_ratio(repeats)
    out["treerank_fit"] = {"gauss_easy_2000x20_ratio": round(ratio["ratio"], 3),
                           "treerank_s": round(ratio["treerank_s"], 4), "sklearn_tree_s": round(ratio["sklearn_s"], 4),
                           "n_leaves": int(ratio["n_leaves"]), "target": f"<= {TARGET} (aim 2)"}
    out["treerank_tree_s"] = {name: round(seconds, 4) for name, seconds in bench_leafranks(repeats).items()}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    results: dict = {}
    run(results, repeats=args.repeats)
    print(json.dumps(results, indent=2))
