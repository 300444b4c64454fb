"""Course learners benchmark: one run-sized fit of each of the heaviest course learners.

- ``rf_estimates``: ErrorEstimatesForest with its run parameters (200 trees, 10-fold CV, 20 bootstrap forests) on
  300 training points (the courses_error_estimates runs; 20 features as ringnorm), timed with its helper forests
  grown the lean way (``_lean_forest_vote``) and, interleaved, the way before it (a BreimanForestClassifier fitted
  per helper, then ``predict``); both must give the same estimates, bit for bit, or the benchmark fails.
- ``bagging``, ``rf_course``, ``gboost``: the courses_spambase learners (1000 trees) fitted on 3065 Spambase
  points (the data mirror's file; else synthetic data of its shape), their curves on the other 1536. Their time
  is scikit-learn's tree builder (bagging, 1000 trees: 24.9 of 26.3 s inside its compiled builder in a profile of
  issue 24; the rest, its per-tree Python overhead, is what grow_forest removed); the curves by number of trees
  come from one pass (cumulative votes, ``staged_predict``).

    python tests/benchmarks/bench_courses.py [--repeats 3] [--spambase-repeats 1]
    python tests/benchmarks/bench_courses.py --compare 3   # grow_forest with / without the port (_cart), pairs
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any
from unittest import mock

import numpy as np
from bench_kernel import spambase_split
from sklearn.datasets import make_classification

from forestlab.learners import BreimanForestClassifier, _courses
from forestlab.learners._courses import ErrorEstimatesForest, GradientBoostingCurves
from forestlab.learners._forest import forest_like


def _reference_vote(params: Any, X: np.ndarray, codes: np.ndarray, n_classes: int, seed: int,
                    X_eval: np.ndarray) -> np.ndarray:
    """The helper forests as they were grown before ``_lean_forest_vote``: a whole BreimanForestClassifier."""
    return forest_like(params, random_state=seed).fit(X, codes).predict(X_eval)


def _timed(fn: Any) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def bench_estimates(repeats: int = 3) -> dict[str, float]:
    """Median fit times (s) of ErrorEstimatesForest with lean and with whole helper forests, and their ratio."""
    X, y = make_classification(n_samples=300, n_features=20, n_informative=8, n_redundant=0, flip_y=0.05,
                               random_state=0)
    lean, whole = [], []
    for rep in range(repeats):
        def fit_lean(rep: int = rep) -> dict[str, float]:
            return ErrorEstimatesForest(random_state=rep).fit(X, y).diagnostics_

        def fit_whole(rep: int = rep) -> dict[str, float]:
            with mock.patch.object(_courses, "_lean_forest_vote", _reference_vote):
                return ErrorEstimatesForest(random_state=rep).fit(X, y).diagnostics_

        order = (fit_lean, fit_whole) if rep % 2 == 0 else (fit_whole, fit_lean)
        results = {fn: _timed(fn) for fn in order}
        if results[fit_lean][1] != results[fit_whole][1]:
            raise AssertionError(f"lean and whole helper forests disagree: {results[fit_lean][1]} "
                                 f"!= {results[fit_whole][1]}")
        lean.append(results[fit_lean][0])
        whole.append(results[fit_whole][0])
    t_lean, t_whole = float(np.median(lean)), float(np.median(whole))
    return {"lean_fit_s": round(t_lean, 3), "whole_fit_s": round(t_whole, 3), "ratio": round(t_lean / t_whole, 3)}


def bench_spambase(repeats: int = 1) -> dict[str, Any]:
    """Median fit + curves time (s) of each courses_spambase learner (1000 trees) on Spambase-sized data."""
    parts = spambase_split(0)  # Spambase from the data mirror, else synthetic data of its shape
    X, y = np.vstack([parts[0], parts[2]]), np.concatenate([parts[1], parts[3]])  # a random order of its points
    X_tr, y_tr, X_te, y_te = X[:3065], y[:3065], X[3065:], y[3065:]
    learners = {
        "bagging": lambda: BreimanForestClassifier(n_estimators=1000, max_features="all", random_state=0),
        "rf_course": lambda: BreimanForestClassifier(n_estimators=1000, max_features="sqrt", random_state=0),
        "gboost": lambda: GradientBoostingCurves(n_estimators=1000, random_state=0),
    }
    out: dict[str, Any] = {"spambase_data": parts[4]}
    for name, make in learners.items():
        times = [_timed(lambda make=make: make().fit(X_tr, y_tr).error_curves(X_te, y_te))[0] for _ in range(repeats)]
        out[f"{name}_fit_curves_s"] = round(float(np.median(times)), 2)
    return out


def bench_compare(rounds: int = 3) -> dict[str, Any]:
    """grow_forest's trees grown by the port of scikit-learn's builder (forestlab.learners._cart) against scikit-learn's
    own builder (the port switched off), in ``rounds`` alternating pairs: fit + curves of ``bagging`` and
    ``rf_course`` on Spambase-sized data (1000 trees, as ``bench_spambase``) and of a 300-tree forest on 150 x 10,
    and the ``rf_estimates`` fit of ``bench_estimates``. Both must give the same numbers, bit for bit, or the
    benchmark fails. Medians (s) and the median of the pairs'
    ratios (scikit-learn's / the port's: above 1, the port is faster)."""
    from contextlib import nullcontext

    from pairs import alternating, median_ratio  # tests/benchmarks/pairs.py

    from forestlab.learners._cart import CartGrower

    parts = spambase_split(0)
    X, y = np.vstack([parts[0], parts[2]]), np.concatenate([parts[1], parts[3]])
    X_small, y_small = make_classification(n_samples=300, n_features=10, n_informative=5, random_state=0)
    X_est, y_est = make_classification(n_samples=300, n_features=20, n_informative=8, n_redundant=0, flip_y=0.05,
                                       random_state=0)

    def curves(params: dict[str, Any], X_tr: np.ndarray, y_tr: np.ndarray, X_te: np.ndarray,
               y_te: np.ndarray) -> Any:
        return lambda: BreimanForestClassifier(**params, random_state=0).fit(X_tr, y_tr).error_curves(X_te, y_te)

    cases = {
        "bagging": curves({"n_estimators": 1000, "max_features": "all"}, X[:3065], y[:3065], X[3065:], y[3065:]),
        "rf_course": curves({"n_estimators": 1000, "max_features": "sqrt"}, X[:3065], y[:3065], X[3065:],
                            y[3065:]),
        "small_150x10": curves({"n_estimators": 300, "max_features": "sqrt"}, X_small[:150], y_small[:150],
                               X_small[150:], y_small[150:]),
        # its 31 helper forests through _lean_forest_vote, which uses the port too
        "rf_estimates": lambda: ErrorEstimatesForest(random_state=0).fit(X_est, y_est).diagnostics_,
    }
    BreimanForestClassifier(n_estimators=2).fit(X_small, y_small)  # numba's import and compiled code, once
    out: dict[str, Any] = {"spambase_data": parts[4]}
    for name, case in cases.items():
        results: dict[bool, Any] = {}

        def timed(port: bool, case: Any = case, results: dict[bool, Any] = results) -> float:
            with nullcontext() if port else mock.patch.object(CartGrower, "covers", return_value=False):
                seconds, results[port] = _timed(case)
            return seconds

        pairs = alternating(lambda: timed(False), lambda: timed(True), rounds)
        same = (results[True] == results[False] if name == "rf_estimates" else
                results[True].keys() == results[False].keys()
                and all(np.array_equal(results[True][k], results[False][k], equal_nan=True) for k in results[True]))
        if not same:
            raise AssertionError(f"{name}: the port's forests and scikit-learn's give other numbers")
        out[name] = {"sklearn_s": round(float(np.median(pairs["before_s"])), 3),
                     "port_s": round(float(np.median(pairs["after_s"])), 3),
                     "sklearn_over_port": median_ratio(pairs["ratios"], 2), "pairs": rounds}
    return out


def run(out: dict, repeats: int = 3, spambase_repeats: int = 1, compare_rounds: int = 1) -> None:
    """Fill ``out["courses"]`` with the timings, and the port of scikit-learn's tree builder against scikit-learn's
    own (``compare_rounds`` alternating pairs; 0: not timed)."""
    est = bench_estimates(repeats)
    out["courses"] = {"rf_estimates_lean_over_whole": est["ratio"],
                      "rf_estimates_fit": f"{est['lean_fit_s']}s vs {est['whole_fit_s']}s (whole helper forests)",
                      **bench_spambase(spambase_repeats)}
    if compare_rounds:
        out["courses"]["tree_builder_port"] = bench_compare(compare_rounds)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--spambase-repeats", type=int, default=1)
    parser.add_argument("--compare", type=int, metavar="ROUNDS", default=0,
                        help="only time grow_forest with and without the port of scikit-learn's builder, in ROUNDS "
                             "alternating pairs")
    args = parser.parse_args()
    results: dict = {}
    if args.compare:
        results["port_compare"] = bench_compare(args.compare)
    else:
        run(results, repeats=args.repeats, spambase_repeats=args.spambase_repeats)
    print(json.dumps(results, indent=2))
