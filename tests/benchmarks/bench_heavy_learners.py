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
the same numbers (pinned digests of test_inner_cv_numbers), 0.77 -> 0.52 s here (0.80 s at ca435bd^, whose RankSVM is
that of 21730db^, before issue 24's work, run alternately with this code: 1.56x). Then the whole bisection was compiled
(``line_minimum``: the slope's products are BLAS's ddot through numba's np.dot, the routine numpy's @ calls, so the
same steps bit for bit; tests/test_ranksvm.py compares it with the Python loop) and the cut QP calls LAPACK's
dpotrf / dpotrs directly instead of through cho_factor / cho_solve's checks (the same calls): on 2026-11-27's
slower machine, five rounds alternating ca435bd^ / this code / 40fb45b (median of 7 each): 1.46 / 0.67 / 0.83 s,
1.34 / 0.64 / 0.87, 1.37 / 0.93 / 1.13, 1.88 / 0.85 / 0.91, 2.02 / 0.67 / 0.84; the median of the pairs' ratios
2.20x against ca435bd^ (40fb45b: 1.76x); the same pinned digests. What is left is the eigendecompositions of the
kernels, the oracle's sorts and the cut QP's Python steps. `make bench`'s own pairs against 21730db^ (3
rounds, the same machine an hour later): 2.9x; its noise is that wide.

Median of ``--repeats`` runs with BLAS limited to one thread, as in a worker process. ``--case NAME`` runs one case
alone and prints its median (to time a whole process, e.g. this code against another checkout's on PYTHONPATH).
``make bench`` also times each case against the code before issue 24 (:data:`REFERENCE`, forestlab's package as
``git archive`` gives it, in a temporary folder) in alternating processes, ``--rounds`` pairs, and reports the
median of the pairs' ratios (a machine whose speed drifts between minutes moves each pair's two runs alike); without
git or that commit, the section says so and gives this code's times alone.

    python tests/benchmarks/bench_heavy_learners.py [--repeats 3] [--case pruned_test_q10] [--paired] [--rounds 3]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from pairs import alternating, median_ratio  # tests/benchmarks/pairs.py
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


#: The code before issue 24's work on these learners (its first commit, 21730db, sped up the pruned test).
REFERENCE = "21730db^"
REPO = Path(__file__).resolve().parents[2]


def has_commit(commit: str) -> bool:
    """Whether this checkout's history holds ``commit`` (a shallow clone may not)."""
    try:
        return subprocess.run(["git", "rev-parse", "--verify", "--quiet", commit + "^{commit}"], cwd=REPO,
                              capture_output=True).returncode == 0
    except OSError:
        return False


def _reference_checkout(into: Path, commit: str | None = None) -> bool:
    """forestlab's package at ``commit`` (default :data:`REFERENCE`) under ``into`` (``git archive``); False where
    git or the commit is not at hand (a copy without history)."""
    try:
        blob = subprocess.run(["git", "archive", "--format=tar", commit or REFERENCE, "forestlab"], cwd=REPO,
                              capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return False
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        tar.extractall(into, filter="data")
    return True


def path_first(python_path: Path) -> dict[str, str]:
    """This process's environment with ``python_path`` first on PYTHONPATH: a child started from a script (whose
    own folder, not the working directory, leads ``sys.path``) then imports that checkout's forestlab, ahead of
    the installed one."""
    return {**os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(python_path), os.environ.get("PYTHONPATH")]))}


def _process_seconds(case: str, repeats: int, python_path: Path) -> float:
    """This file's ``--case`` in a fresh process with ``python_path``'s forestlab first on the path."""
    out = subprocess.run([sys.executable, __file__, "--case", case, "--repeats", str(repeats)],
                         env=path_first(python_path), capture_output=True, text=True, check=True).stdout
    return float(out.split(":")[1].split()[0])


def paired(case: str, reference: Path, rounds: int, repeats: int) -> dict[str, object]:
    """``rounds`` pairs of processes, the reference's then this code's, and the median of the pairs' ratios."""
    pairs = alternating(lambda: _process_seconds(case, repeats, reference),
                        lambda: _process_seconds(case, repeats, REPO), rounds)
    return {"before_s": pairs["before_s"], "after_s": pairs["after_s"],
            "speedup_median_of_pairs": median_ratio(pairs["ratios"], 2)}


def run(out: dict, repeats: int = 3, rounds: int = 3, against_reference: bool = True) -> None:
    """Fill ``out["heavy_learners"]`` with the median seconds of each case and, where the reference code can be
    had (and ``against_reference``), each case paired against it."""
    section: dict[str, object] = {f"{case}_s": round(_seconds(case, repeats), 3) for case in CASES}
    if not against_reference:
        out["heavy_learners"] = section
        return
    with tempfile.TemporaryDirectory(prefix="forestlab-reference-") as tmp:
        if not _reference_checkout(Path(tmp)):
            section["paired"] = f"not measured: {REFERENCE} is not in this checkout's history"
        else:
            for case in CASES:
                section[f"{case}_vs_{REFERENCE}"] = paired(case, Path(tmp), rounds, repeats)
    section["target"] = "speedup >= 2 with the same numbers (issue 24, target 2)"
    out["heavy_learners"] = section


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--case", choices=sorted(CASES))
    parser.add_argument("--rounds", type=int, default=3, help="pairs against the reference (with --paired)")
    parser.add_argument("--paired", action="store_true", help="also time each case against " + REFERENCE)
    args = parser.parse_args()
    if args.case:
        print(f"{args.case}: {_seconds(args.case, args.repeats):.3f} s (median of {args.repeats}, after a warm-up)")
    else:
        results: dict = {}
        run(results, args.repeats, args.rounds, against_reference=args.paired)
        print(json.dumps(results, indent=2))
