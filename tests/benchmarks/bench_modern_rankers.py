"""Today's rankers (xgb_rank, lgbm_rank, hgb_rank, rf_rank; ours, not in depecker2010): the time per fit on a fold
of the size of depecker2010 Table A.3's largest.

The largest training parts of Table A.3 are those of the 2000-point Gaussian datasets under 10-fold
cross-validation: 1800 points. The problem is bench_ranksvm's standardised synthetic 1800 x 34 (34 variables as
Ionosphere, the widest of the small UCI sets; 10 informative, 10% of labels flipped). Timed, for each ranker with
its configuration (``conf/algorithm/<name>.yaml``):

- ``<name>_fit_s``: one fit with the configuration's parameters (median of ``repeats``), early stopping included;
- ``<name>_tuned_fit_s``: the fit a run makes, its tuning included (the boosters' grid chosen by inner 5-fold
  cross-validation on the AUC, each round count scored from one fit per inner fold and other parameters, then the
  refit on the 1800 points; the forest's by its out-of-bag AUC), once;
- ``<name>_n_fits`` (the fits the tuning made), ``<name>_chosen`` and ``<name>_test_auc`` (on 600 further points of
  the same problem).

Every library runs on one thread, as in a runner worker.

    python tests/benchmarks/bench_modern_rankers.py [--repeats 3] [--only xgb_rank,rf_rank]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from sklearn.datasets import make_classification
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import StandardScaler

from forestlab.config import compose, to_container
from forestlab.learners import get_learner
from forestlab.learners._cache import FitCache
from forestlab.selection import select_and_fit

N_TRAIN, N_TEST, N_FEATURES = 1800, 600, 34
RANKERS = ("xgb_rank", "lgbm_rank", "hgb_rank", "rf_rank")


def problem() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """bench_ranksvm's 1800 x 34 training part (standardised), and 600 test points of the same law."""
    X, y = make_classification(n_samples=N_TRAIN + N_TEST, n_features=N_FEATURES, n_informative=10, flip_y=0.1,
                               random_state=0)
    scaler = StandardScaler().fit(X[:N_TRAIN])
    X = scaler.transform(X)
    y = 2 * y - 1
    return X[:N_TRAIN], y[:N_TRAIN], X[N_TRAIN:], y[N_TRAIN:]


def time_ranker(name: str, data: tuple[np.ndarray, ...], repeats: int) -> dict:
    """The timings of ``name`` (see the module docstring)."""
    X, y, X_test, y_test = data
    alg = to_container(compose(["experiment=single", f"algorithm={name}"]).algorithm)
    cls = get_learner(alg["estimator"])
    seconds = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        cls(**alg["params"], random_state=0).fit(X, y)
        seconds.append(time.perf_counter() - t0)
    grid = alg.get("grid") or {}
    cache = FitCache()  # counts the fits the search makes (each grid point's, or one per staged group)
    t0 = time.perf_counter()
    est, chosen, _ = select_and_fit(cls, alg["params"], grid, alg["selection"], X, y, random_state=0, cache=cache,
                                    task="ranker")
    tuned = time.perf_counter() - t0
    n_fits = cache.misses
    return {f"{name}_fit_s": round(float(np.median(seconds)), 3), f"{name}_tuned_fit_s": round(tuned, 2),
            f"{name}_n_fits": n_fits, f"{name}_chosen": json.dumps(chosen, sort_keys=True),
            f"{name}_test_auc": round(float(roc_auc_score(y_test, est.decision_function(X_test))), 4)}


def run(out: dict, repeats: int = 3, only: tuple[str, ...] = RANKERS) -> None:
    """Fill ``out["modern_rankers"]`` with the seconds per fit of each ranker on the 1800 x 34 problem."""
    data = problem()
    section: dict = {"problem": f"synthetic {N_TRAIN} x {N_FEATURES} (10 informative, 10% flipped)"}
    for name in only:
        section.update(time_ranker(name, data, repeats))
    out["modern_rankers"] = section


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default=",".join(RANKERS))
    args = parser.parse_args()
    results: dict = {}
    run(results, repeats=args.repeats, only=tuple(s.strip() for s in args.only.split(",")))
    print(json.dumps(results, indent=2))
