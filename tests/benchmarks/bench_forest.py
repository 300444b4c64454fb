"""Forest benchmark: fit time of BreimanForestClassifier relative to a plain scikit-learn RandomForestClassifier.

Both fit 100 trees with the same integer max_features, bootstrap and n_jobs=1 on synthetic problems shaped like the
studies' largest (no data files needed). The ratio is median(ours) / median(sklearn) over interleaved repeats; it
prices the hard-vote and out-of-bag bookkeeping done in ``fit`` (one pass of the trees over the training set, the
in-bag indices). Target: ratio <= 1.1.

    python tests/benchmarks/bench_forest.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier

from forestlab.learners import BreimanForestClassifier, resolve_max_features

#: name -> (n_samples, n_features, n_informative)
PROBLEMS: dict[str, tuple[int, int, int]] = {
    "adult_1809x14": (1809, 14, 8),
    "mnist_pair_500x784": (500, 784, 40),
    "spambase_4601x57": (4601, 57, 20),
}
N_ESTIMATORS = 100
TARGET = 1.1


def _time_fit(est, X: np.ndarray, y: np.ndarray) -> float:
    t0 = time.perf_counter()
    est.fit(X, y)
    return time.perf_counter() - t0


def bench_problem(n_samples: int, n_features: int, n_informative: int, repeats: int = 7) -> dict[str, float]:
    """Median fit times (s) of both forests on one synthetic problem, and their ratio."""
    X, y = make_classification(n_samples=n_samples, n_features=n_features, n_informative=n_informative,
                               n_redundant=0, flip_y=0.05, random_state=0)
    y = 2 * y - 1
    max_features = resolve_max_features("breiman_log2", n_features)
    ours, theirs = [], []
    for rep in range(repeats + 1):  # the first round warms caches and is dropped
        a = BreimanForestClassifier(n_estimators=N_ESTIMATORS, max_features=max_features, bootstrap=True,
                                    random_state=rep, n_jobs=1)
        b = RandomForestClassifier(n_estimators=N_ESTIMATORS, max_features=max_features, bootstrap=True,
                                   random_state=rep, n_jobs=1)
        pair = (_time_fit(a, X, y), _time_fit(b, X, y)) if rep % 2 else tuple(reversed((_time_fit(b, X, y),
                                                                                         _time_fit(a, X, y))))
        if rep:
            ours.append(pair[0])
            theirs.append(pair[1])
    t_ours, t_theirs = float(np.median(ours)), float(np.median(theirs))
    return {"breiman_fit_s": round(t_ours, 4), "sklearn_fit_s": round(t_theirs, 4),
            "ratio": round(t_ours / t_theirs, 3)}


def run(out: dict, repeats: int = 7) -> None:
    """Fill ``out["forest_fit"]`` with {problem: ratio} and ``out["forest_fit_detail"]`` with the timings."""
    detail = {name: bench_problem(*shape, repeats=repeats) for name, shape in PROBLEMS.items()}
    out["forest_fit"] = {name: d["ratio"] for name, d in detail.items()} | {"target": f"<= {TARGET}"}
    out["forest_fit_detail"] = {f"{name}": f"{d['breiman_fit_s']}s vs {d['sklearn_fit_s']}s"
                                for name, d in detail.items()}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    results: dict = {}
    run(results, repeats=args.repeats)
    print(json.dumps(results, indent=2))
