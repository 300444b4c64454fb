"""SVM-LeafRank forests (depecker2010 Table A.1): the time of one run-sized fit of rf1_svm and bagg_svm_linear.

Each is the forest its conf/algorithm file configures (100 TreeRank trees with the SVM LeafRank: rf1_svm draws
floor(q/4) variables per master node, RBF kernel; bagg_svm_linear keeps every variable, linear kernel), fitted on a
training fold the size of German credit's (900 x 24, GaussEasy-like: p = 1/2, N(mu+, I) vs N(mu-, 10**0.1 I)) and
scoring a 100-point test fold, BLAS limited to one thread as in the runner's workers. The seconds are the median of
``--repeats`` runs. A fingerprint of the scores (sha1 of the test scores' bytes) says whether two versions of the
code give the same numbers.

To compare two versions of forestlab, run this file under each (``PYTHONPATH=<checkout>``) in the same session,
alternating (``--only <algorithm>`` times one run), and take the ratio of the medians. Issue 24 (the SVM LeafRank
calling libsvm's trainer directly instead of through ``SVC``), 5 runs each, alternating, on the 2-core shared
machine: rf1_svm 4.21 s before, 1.94 s after (2.2x); bagg_svm_linear 6.11 s before, 3.85 s after (1.6x), the same
fingerprints (606dbc6fef2a4ed5, 687f7c4d1d82abff). With the forest growing and scoring its trees without
TreeRank's per-tree input checks (1071468): rf1_svm 1.83 s (2.3x the first), bagg_svm_linear 3.50 s (1.75x), the
same fingerprints. What is left of the linear forest is mostly libsvm's own solver (its many SMO iterations on a
linear kernel: tens of thousands on a 600-point node; given the linear kernel precomputed, libsvm took 0.26 s
instead of 0.30 s on the 221 nodes of 10 trees, plus 0.03 s to compute it, and not the same numbers bit for bit),
which a faster solver of the same problem could only cut by giving other numbers. Checked again on 2026-11-27 on
9,603 real node problems of both linear forests (13 datasets, one fold, 20 trees): scikit-learn's dense libsvm
computes the linear kernel with OpenBLAS's ``ddot`` (scipy's cython_blas), so a kernel precomputed by calling that
same ``ddot`` per pair gives libsvm's models bit for bit (9,603 of 9,603: support, dual coefficients, intercept and
iteration counts; a plain sequential sum matched only below 16 variables, ``X @ X.T`` in 210). But 74% of libsvm's
time is its SMO iterations (13.3 million), not the kernel: libsvm alone took 14.5 s on the kernel and 10.7 s given it
for free (at most 1.36x), and with the kernel's cost 13.7 s against 15.1 s (1.10x; whole runs 1.14-1.18x, one pair
0.98x). Not adopted: an n x n matrix per node and a compiled BLAS callback for a tenth of the time.

    python tests/benchmarks/bench_svm_leafrank.py [--repeats 3] [--trees 100]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time

import numpy as np
from threadpoolctl import threadpool_limits

ALGORITHMS = ("rf1_svm", "bagg_svm_linear")
N_TRAIN, N_TEST, N_FEATURES = 900, 100, 24


def gauss_easy(n: int, q: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """GaussEasy-like data: p = 1/2, N(mu+, I) vs N(mu-, 10**0.1 I), |mu+ - mu-| = 1 spread over the axes."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1, -1)
    shift = np.full(q, 0.5 / np.sqrt(q))
    X = np.where(y[:, None] == 1, rng.normal(size=(n, q)) + shift,
                 rng.normal(size=(n, q)) * np.sqrt(10 ** 0.1) - shift)
    return X, y


def forest_params(algorithm: str) -> dict:
    """The RankingForest parameters of ``conf/algorithm/<algorithm>.yaml``."""
    from forestlab.config import compose

    return dict(compose([f"algorithm={algorithm}"]).algorithm["params"])


def time_run(algorithm: str, trees: int, seed: int = 0) -> tuple[float, str]:
    """Seconds of one fit and test scoring of the configured forest, and the fingerprint of its test scores."""
    from forestlab.learners._ranking_forest import RankingForest

    X, y = gauss_easy(N_TRAIN, N_FEATURES, seed=seed)
    X_test, _ = gauss_easy(N_TEST, N_FEATURES, seed=seed + 1)
    params = forest_params(algorithm) | {"n_estimators": trees}
    with threadpool_limits(1):
        t0 = time.perf_counter()
        scores = RankingForest(**params, random_state=seed).fit(X, y).decision_function(X_test)
        seconds = time.perf_counter() - t0
    return seconds, hashlib.sha1(np.ascontiguousarray(scores).tobytes()).hexdigest()[:16]


def run(out: dict, repeats: int = 3, trees: int = 100) -> None:
    """Fill ``out["svm_leafrank_run_s"]`` with the median seconds of each algorithm's run and its fingerprint."""
    section = {}
    for algorithm in ALGORITHMS:
        runs = [time_run(algorithm, trees) for _ in range(repeats)]
        section[f"{algorithm}_s"] = round(float(np.median([s for s, _ in runs])), 3)
        section[f"{algorithm}_scores_sha1"] = runs[0][1]
    section["setting"] = f"{trees} trees, {N_TRAIN} x {N_FEATURES} training, {N_TEST} test points, 1 BLAS thread"
    out["svm_leafrank_run_s"] = section


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--only", choices=ALGORITHMS, help="time this algorithm only (one run, for paired timing)")
    args = parser.parse_args()
    if args.only:
        seconds, fingerprint = time_run(args.only, args.trees)
        print(json.dumps({args.only: round(seconds, 3), "scores_sha1": fingerprint}))
    else:
        results: dict = {}
        run(results, repeats=args.repeats, trees=args.trees)
        print(json.dumps(results, indent=2))
