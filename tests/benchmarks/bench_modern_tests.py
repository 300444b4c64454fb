"""Benchmark of the tests and forest kernels of today (ours: beyond depecker2010 and pisetta2010): seconds per fit.

- Two-sample tests, with the parameters of their configs (conf/algorithm/{c2st,c2st_wilcoxon,mmd_agg}.yaml) beside
  the thesis's (mmd_boot, treerank_wilcoxon), on one sample of depecker2010 Table 6.1's size: 2000 points in
  q = 30 dimensions, each positive with probability ½, N(±0.05 v, I) with v the unit diagonal (gauss_shift_q30_d010);
  a test compares the positives to the negatives.
- The forest-kernel SVM (conf/algorithm/forest_svm{,_kerf,_rfgap}.yaml: 300 trees, C in {1, 10, 100, 10000} on an
  inner 70/30 split) on pisetta2010 Table 1's largest dataset, Spambase (a 70/30 split; synthetic data of the same
  shape without the dataset mirror): a whole ``fit`` (inner forest and 4 SVMs, final forest and SVM), then the
  prediction of the test part.

One BLAS thread and ``n_jobs=1``: the time of one run on one core, as the runner's workers see it.

    python tests/benchmarks/bench_modern_tests.py [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from forestlab.config import compose, to_container
from forestlab.learners import get_learner

TESTS = ("c2st", "c2st_wilcoxon", "mmd_agg", "mmd_boot", "treerank_wilcoxon")
SVMS = ("forest_svm", "forest_svm_kerf", "forest_svm_rfgap")


def _configured(name: str) -> tuple[type, dict[str, Any]]:
    alg = to_container(compose(["experiment=single", f"algorithm={name}"]).algorithm)
    return get_learner(alg["estimator"]), dict(alg.get("params") or {})


def table6_1_sample(seed: int = 0, n: int = 2000, q: int = 30, delta: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    """The positives and negatives of one Table 6.1-sized sample (the shift spread over every coordinate)."""
    rng = np.random.default_rng(seed)
    positive = rng.random(n) < 0.5
    X = rng.normal(size=(n, q)) + np.where(positive, 0.5, -0.5)[:, None] * delta / np.sqrt(q)
    return X[positive], X[~positive]


def bench_tests(repeats: int = 2) -> dict[str, Any]:
    """Median seconds of one ``test`` of each configured two-sample test on a Table 6.1-sized sample."""
    X_a, X_b = table6_1_sample()
    out: dict[str, Any] = {"sample": f"{len(X_a)} + {len(X_b)} points, q = {X_a.shape[1]}"}
    for name in TESTS:
        cls, params = _configured(name)
        times, p = [], None
        for rep in range(repeats):
            test = cls(**params, random_state=rep)
            t0 = time.perf_counter()
            p = test.test(X_a, X_b).p_value
            times.append(time.perf_counter() - t0)
        out[f"{name}_s_per_test"] = round(float(np.median(times)), 3)
        out[f"{name}_p_value"] = round(float(p), 4)
    return out


def bench_svms(repeats: int = 1) -> dict[str, Any]:
    """Seconds of one whole fit (and of the test part's prediction) of each configured forest-kernel SVM."""
    from bench_kernel import spambase_split

    X, y, Xt, yt, source = spambase_split()
    out: dict[str, Any] = {"data": source, "n_train": int(len(y)), "n_test": int(len(yt))}
    for name in SVMS:
        cls, params = _configured(name)
        fit_times, predict_times = [], []
        for _ in range(repeats):
            svm = cls(**params, random_state=0, n_jobs=1)
            t0 = time.perf_counter()
            svm.fit(X, y)
            fit_times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            accuracy = float(np.mean(svm.predict(Xt) == yt))
            predict_times.append(time.perf_counter() - t0)
        out[f"{name}_s_per_fit"] = round(float(np.median(fit_times)), 3)
        out[f"{name}_s_predict"] = round(float(np.median(predict_times)), 3)
        out[f"{name}_test_accuracy"] = round(accuracy, 4)
        out[f"{name}_C"] = svm.C_
    return out


def run(out: dict, repeats: int = 2) -> None:
    """Fill ``out["modern_tests"]`` and ``out["modern_kernels"]`` (the entry point of tests/benchmarks/run.py)."""
    with threadpool_limits(1):
        out["modern_tests"] = bench_tests(repeats)
        out["modern_kernels"] = bench_svms(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    results: dict = {}
    run(results, args.repeats)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
