"""Forest-kernel benchmark: pisetta2010's SVM on Spambase-sized data (4601 points, 57 features, 300 trees, 70/30).

Times, on one core (n_jobs=1): growing the 300-tree forest; the training Gram matrix K = Phi Phi^T (3221 x 3221)
and the test kernel (1380 x 3221) through sparse one-hot leaf matrices; one SVC fit on the precomputed kernel; and a
whole ``ForestKernelSVC.fit`` (inner forest + 4 SVMs for C, final forest + SVM). Uses the real Spambase when the
dataset mirror is available (``FORESTLAB_DATA_MIRROR`` or ../shared/datasets), else a synthetic problem of the same
shape. Target: kernels + one SVM fit < 10 s.

    python tests/benchmarks/bench_kernel.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import make_classification
from sklearn.svm import SVC

from forestlab.learners import BreimanForestClassifier, ForestKernelSVC
from forestlab.learners._kernel import leaf_indicators, leaf_kernel

N_TREES = 300
TARGET_S = 10.0
REPO = Path(__file__).resolve().parents[2]


def spambase_split(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, str]:
    """A 70/30 split of Spambase (the mirror's file) or of a synthetic 4601 x 57 problem; the source's name last."""
    mirror = os.environ.get("FORESTLAB_DATA_MIRROR") or str(REPO.parent / "shared" / "datasets")
    try:
        from forestlab.config import load_group_option, to_container
        from forestlab.datasets import load_dataset

        cfg = to_container(load_group_option("dataset", "spambase"))
        ds = load_dataset(cfg, data_dir=Path(tempfile.gettempdir()) / "forestlab_bench_data", mirror=mirror,
                          download=False)
        X, y, source = ds.X, ds.y, "spambase"
    except Exception:  # noqa: BLE001 - fall back to synthetic data of the same shape
        X, y = make_classification(n_samples=4601, n_features=57, n_informative=20, flip_y=0.05, random_state=0)
        y, source = 2 * y - 1, "synthetic 4601x57"
    perm = np.random.default_rng(seed).permutation(len(y))
    n_train = int(round(0.7 * len(y)))
    tr, te = perm[:n_train], perm[n_train:]
    return X[tr], y[tr], X[te], y[te], source


def _median_time(func, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        func()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def bench_kernel_and_svm(repeats: int = 3) -> dict[str, float | str]:
    """Median seconds of each step of one forest-kernel SVM with a fixed C on Spambase."""
    X, y, Xt, yt, source = spambase_split()
    t0 = time.perf_counter()
    forest = BreimanForestClassifier(n_estimators=N_TREES, max_features="round_sqrt", random_state=0).fit(X, y)
    t_forest = time.perf_counter() - t0
    phi, phi_t = leaf_indicators(forest, X), leaf_indicators(forest, Xt)
    t_phi = _median_time(lambda: (leaf_indicators(forest, X), leaf_indicators(forest, Xt)), repeats)
    t_train = _median_time(lambda: leaf_kernel(phi), repeats)
    t_test = _median_time(lambda: leaf_kernel(phi_t, phi), repeats)
    K, Kt = leaf_kernel(phi), leaf_kernel(phi_t, phi)
    t_svm = _median_time(lambda: SVC(C=1.0, kernel="precomputed").fit(K, y), repeats)
    svc = SVC(C=1.0, kernel="precomputed").fit(K, y)
    total = t_phi + t_train + t_test + t_svm
    return {"data": source, "n_train": int(len(y)), "n_test": int(len(yt)), "forest_fit_s": round(t_forest, 3),
            "leaf_indicators_s": round(t_phi, 3), "train_kernel_s": round(t_train, 3),
            "test_kernel_s": round(t_test, 3), "svm_fit_one_C_s": round(t_svm, 3),
            "kernels_plus_svm_s": round(total, 3), "target_s": TARGET_S, "meets_target": bool(total < TARGET_S),
            "svm_test_accuracy": round(float(np.mean(svc.predict(Kt) == yt)), 4),
            "vote_test_accuracy": round(float(np.mean(forest.predict(Xt) == yt)), 4)}


def bench_forest_svm_fit() -> dict[str, float]:
    """Seconds of one whole ForestKernelSVC.fit on Spambase's 70% (C chosen on an inner split, two forests) and of
    predicting the 30%: the cost of one Table 1 run beyond the vote's forest."""
    X, y, Xt, _, _ = spambase_split()
    t0 = time.perf_counter()
    est = ForestKernelSVC(n_estimators=N_TREES, random_state=0).fit(X, y)
    t_fit = time.perf_counter() - t0
    t0 = time.perf_counter()
    est.predict(Xt)
    return {"fit_s": round(t_fit, 3), "predict_s": round(time.perf_counter() - t0, 3), "chosen_C": est.C_}


def run(out: dict, repeats: int = 3) -> None:
    """Fill ``out["forest_kernel"]`` (step timings, target) and ``out["forest_svm_fit"]``."""
    out["forest_kernel"] = bench_kernel_and_svm(repeats=repeats)
    out["forest_svm_fit"] = bench_forest_svm_fit()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    results: dict = {}
    run(results, repeats=args.repeats)
    print(json.dumps(results, indent=2))
