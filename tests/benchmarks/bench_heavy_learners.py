"""Heavy learners of depecker2010 (issue: "the heaviest learners at least twice as fast, with the same numbers"):
the time of one pruned S-WMW_TR test (Table 6.1) and of one inner-CV selection of RankSVM / RankRLS (Table A.3).

- ``pruned_test_q10`` / ``pruned_test_q30``: one ``TreeRankWilcoxonTest(scorer="pruned_treerank")`` (as
  ``conf/algorithm/treerank_wilcoxon_pruned.yaml``) on a Table 6.1 sample: 2000 points, 1000 of each Gaussian, the
  mean of the first shifted by 0.1 in every variable (q = 10, 30); the learning half is pruned by 10-fold CV;
- ``ranksvm_cv`` / ``rankrls_cv``: ``select_and_fit`` as ``conf/algorithm/ranksvm_cv.yaml`` /
  ``rankrls_cv.yaml`` (5 inner folds, AUC; kernel rbf/linear, and λ = 2^-10..2^10 for RankRLS) on a training part
  of the size of Australian's or Japanese's 10-fold ones (620 points, 14 variables, synthetic).

What the profiles showed (cProfile, before the change): the pruned test spent ~75% of its time in
``roc_auc_score`` (153 calls: every pruning level of every fold tree, mostly input validation), 7% growing the 11
trees; rankrls_cv spent ~40% in ``roc_auc_score`` (the inner folds' AUCs and each fit's training AUC), ~20% in
recomputing the validation fold's RBF kernel for each of the 21 λ, the rest in the 6 eigendecompositions (one per
inner fold and one on the whole part: nothing to share); ranksvm_cv spends ~50% in its cutting-plane solver's line
search and ~15% in its 6 kernel eigendecompositions, and repeats no work across its two grid points.
``forestlab.metrics.auc`` now reads roc_auc_score's value bit for bit from the class counts per score level, the
pruned fold trees are scored from their terminal nodes' held-out counts, and RankRLS shares the validation kernel
between the λ of a decomposition: the numbers are identical (tests/test_pruning_speed.py,
tests/test_inner_cv_numbers.py). ranksvm_cv's line search (about 17,600 evaluations of the slope per selection,
each two sorts and two binary searches in a dozen numpy calls) now counts the violated pairs in compiled code that
keeps the points in score order from one bisection step to the next (learners/_ranksvm_kernels): the same counts,
the same numbers (pinned digests of test_inner_cv_numbers), 0.77 -> 0.52 s here (0.80 s at ca435bd^, before
issue 24's work, run alternately with this code: 1.56x). Then the whole bisection was compiled
(``line_minimum``: the slope's products are BLAS's ddot through numba's np.dot, the routine numpy's @ calls, so the
same steps bit for bit; tests/test_ranksvm.py compares it with the Python loop) and the cut QP calls LAPACK's
dpotrf / dpotrs directly instead of through cho_factor / cho_solve's checks (the same calls): on 2026-11-27's
slower machine, five rounds alternating ca435bd^ / this code / 40fb45b (median of 7 each): 1.46 / 0.67 / 0.83 s,
1.34 / 0.64 / 0.87, 1.37 / 0.93 / 1.13, 1.88 / 0.85 / 0.91, 2.02 / 0.67 / 0.84; the median of the pairs' ratios
2.20x against ca435bd^ (40fb45b: 1.76x); the same pinned digests. What is left is the eigendecompositions of the
kernels, the oracle's sorts and the cut QP's Python steps.

Median of ``--repeats`` runs with BLAS limited to one thread, as in a worker process. ``--case NAME`` runs one case
alone and prints its median (to time a whole process, e.g. this code against another checkout's on PYTHONPATH).

    python tests/benchmarks/bench_heavy_learners.py [--repeats 3] [--case pruned_test_q10]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import numpy as np
from threadpoolctl import threadpool_limits


def pruned_test(q: int) -> Callable[[], object]:
    from forestlab.learners._two_sample import TreeRankWilcoxonTest

    rng = np.random.default_rng(q)
    X_a = rng.normal(size=(1000, q)) + 0.1
    X_b = rng.normal(size=(1000, q))
    return lambda: TreeRankWilcoxonTest(scorer="pruned_treerank", train_fraction=0.5, random_state=0).test(X_a, X_b)


def inner_cv(which: str, n: int = 620, q: int = 14) -> Callable[[], object]:
    from forestlab.learners._cache import FitCache
    from forestlab.learners._rankrls import RankRLS
    from forestlab.learners._ranksvm import RankSVM
    from forestlab.selection import select_and_fit

    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, q))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(size=n) > 0.5, 1, -1)
    if which == "rankrls":
        cls, params = RankRLS, {"kernel": "rbf", "gamma": "scale", "alpha": 1.0}
        grid = {"kernel": ["rbf", "linear"], "alpha": [2.0 ** k for k in range(-10, 11)]}
    else:
        cls, params = RankSVM, {"kernel": "rbf", "C": 1.0, "gamma": "scale"}
        grid = {"kernel": ["rbf", "linear"]}
    return lambda: select_and_fit(cls, params, grid, {"kind": "cv", "metric": "auc", "folds": 5}, X, y,
                                  random_state=0, cache=FitCache(), task="ranker")


CASES: dict[str, Callable[[], Callable[[], object]]] = {
    "pruned_test_q10": lambda: pruned_test(10),
    "pruned_test_q30": lambda: pruned_test(30),
    "ranksvm_cv": lambda: inner_cv("ranksvm"),
    "rankrls_cv": lambda: inner_cv("rankrls"),
}


def _seconds(case: str, repeats: int) -> float:
    call = CASES[case]()
    times = []
    with threadpool_limits(1):
        call()  # warm-up (compiled kernels, imports)
        for _ in range(repeats):
            t0 = time.perf_counter()
            call()
            times.append(time.perf_counter() - t0)
    return float(np.median(times))


def run(out: dict, repeats: int = 3) -> None:
    """Fill ``out["heavy_learners"]`` with the median seconds of each case."""
    out["heavy_learners"] = {f"{case}_s": round(_seconds(case, repeats), 3) for case in CASES}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--case", choices=sorted(CASES))
    args = parser.parse_args()
    if args.case:
        print(f"{args.case}: {_seconds(args.case, args.repeats):.3f} s (median of {args.repeats}, after a warm-up)")
    else:
        results: dict = {}
        run(results, args.repeats)
        print(json.dumps(results, indent=2))
