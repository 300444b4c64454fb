"""PAC-Bayes weighting benchmark: what SORF and MinCq add to the forest, on Adult as in zirakiza2013 (Table A.1).

Adult (1809 training and 10000 test points drawn at random from the 48,842-row pool, 14 integer-coded attributes;
the mirror's file via ``FORESTLAB_DATA_MIRROR`` or ../shared/datasets, else a synthetic problem of that shape),
100 trees, on one core (``n_jobs=1`` and BLAS limited to one thread, so the figures do not depend on what else runs
on the machine). Per regime and repeat:

- ``forest``: ``BreimanForestClassifier.fit`` (the trees, their training predictions, the out-of-bag bookkeeping);
- ``uniform``, ``sorf``, ``mincq``: ``PACBayesForestClassifier.fit`` with the forest already in a shared
  ``FitCache`` (as in the runner, where RF, SORF and MinCq on a split share one fit): validation, cache lookup,
  prediction matrices, both grids of 20 QPs (warm-started OSQP), out-of-bag selection and diagnostics;
- ratio = (uniform + sorf + mincq) / forest, the median over repeats. Target: ratio <= 0.30 for fully grown trees.

Memory: the tracemalloc peak of each weighting fit (cache warm), relative to the size of the trees' training
prediction matrix (n_trees x n_train, 8 bytes per entry, as ``tree_prediction_indices`` returns it). tracemalloc
sees NumPy's and Python's allocations, not OSQP's C workspace (a few hundred kB for 100 variables).

    python tests/benchmarks/bench_pacbayes.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
from sklearn.datasets import make_classification
from threadpoolctl import threadpool_limits

from forestlab.learners import BreimanForestClassifier, PACBayesForestClassifier
from forestlab.learners._cache import FitCache
from forestlab.learners._pacbayes import mixed_seeds

N_TREES = 100
N_TRAIN, N_TEST = 1809, 10000
TARGET = 0.30
WEIGHTINGS = ("uniform", "sorf", "mincq")
REPO = Path(__file__).resolve().parents[2]


def adult_split(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, str]:
    """1809 training and 10000 test points of Adult (or of a synthetic 11809 x 14 problem); the source's name last."""
    mirror = os.environ.get("FORESTLAB_DATA_MIRROR") or str(REPO.parent / "shared" / "datasets")
    try:
        from omegaconf import OmegaConf

        from forestlab.datasets import load_dataset

        cfg = OmegaConf.to_container(OmegaConf.load(REPO / "conf" / "dataset" / "adult.yaml"), resolve=True)
        ds = load_dataset(cfg, data_dir=Path(tempfile.gettempdir()) / "forestlab_bench_data", mirror=mirror,
                          download=False)
        X, y, source = ds.X, ds.y, "adult"
    except Exception:  # noqa: BLE001 - fall back to synthetic data of the same shape
        X, y = make_classification(n_samples=N_TRAIN + N_TEST, n_features=14, n_informative=8, flip_y=0.1,
                                   random_state=0)
        y, source = 2 * y - 1, "synthetic 11809x14"
    perm = np.random.default_rng(seed).permutation(len(y))
    tr, te = perm[:N_TRAIN], perm[N_TRAIN:N_TRAIN + N_TEST]
    return X[tr], y[tr], X[te], y[te], source


def _timed(func) -> tuple[float, object]:
    """(seconds, result) of one call."""
    t0 = time.perf_counter()
    out = func()
    return time.perf_counter() - t0, out


def forests_for(regime: str, seed: int) -> list[BreimanForestClassifier]:
    """The forests ``PACBayesForestClassifier(regime=regime, random_state=seed, n_jobs=1)`` grows (same parameters,
    hence the same FitCache keys)."""
    if regime == "mixed":
        seed_full, seed_stumps = mixed_seeds(seed)
        specs = [(N_TREES // 2, None, seed_full), (N_TREES - N_TREES // 2, 1, seed_stumps)]
    else:
        specs = [(N_TREES, None if regime == "full" else 1, seed)]
    return [BreimanForestClassifier(n_estimators=n, max_depth=depth, random_state=s, n_jobs=1)
            for n, depth, s in specs]


def bench_regime(X: np.ndarray, y: np.ndarray, regime: str, repeats: int) -> dict[str, float]:
    """Median times (s) of the forest(s) and of each weighting (forest cached), and the ratio, for one regime."""
    times: dict[str, list[float]] = {k: [] for k in ("forest", *WEIGHTINGS)}
    ratios, qp_iters = [], {"sorf": [], "mincq": []}
    for rep in range(repeats + 1):  # the first round warms caches and is dropped
        cache = FitCache()
        forests = forests_for(regime, rep)
        row = {"forest": _timed(lambda: [cache.fit(f, X, y) for f in forests])[0]}  # noqa: B023
        for weighting in WEIGHTINGS:
            est = PACBayesForestClassifier(weighting=weighting, regime=regime, n_estimators=N_TREES, random_state=rep,
                                           n_jobs=1)
            row[weighting] = _timed(lambda: est.fit(X, y, fit_cache=cache))[0]  # noqa: B023
            if weighting in qp_iters:
                qp_iters[weighting].append(sum(r["iterations"] for r in est.solver_))
        assert cache.misses == len(forests), "the weightings did not reuse the cached forest"
        if rep:
            for key, value in row.items():
                times[key].append(value)
            ratios.append(sum(row[w] for w in WEIGHTINGS) / row["forest"])
    med = {k: float(np.median(v)) for k, v in times.items()}
    return {**{f"{k}_s": round(v, 4) for k, v in med.items()}, "ratio": round(float(np.median(ratios)), 3),
            "sorf_admm_iterations_per_grid": int(np.median(qp_iters["sorf"])),
            "mincq_admm_iterations_per_grid": int(np.median(qp_iters["mincq"]))}


def bench_memory(X: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """tracemalloc peak of each weighting fit (fully grown trees, forest cached) / size of the prediction matrix."""
    cache = FitCache()
    cache.fit(BreimanForestClassifier(n_estimators=N_TREES, random_state=0, n_jobs=1), X, y)
    pred_bytes = N_TREES * len(y) * 8
    out: dict[str, float] = {"prediction_matrix_MB": round(pred_bytes / 2**20, 3)}
    for weighting in WEIGHTINGS:
        est = PACBayesForestClassifier(weighting=weighting, n_estimators=N_TREES, random_state=0, n_jobs=1)
        tracemalloc.start()
        est.fit(X, y, fit_cache=cache)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        out[f"{weighting}_peak_MB"] = round(peak / 2**20, 3)
        out[f"{weighting}_peak_over_matrix"] = round(peak / pred_bytes, 2)
    return out


def run(out: dict, repeats: int = 5) -> None:
    """Fill ``out["pacbayes_weighting"]`` (ratios and target), ``out["pacbayes_weighting_detail"]`` (timings) and
    ``out["pacbayes_memory"]`` (tracemalloc peaks)."""
    X, y, _, _, source = adult_split()
    with threadpool_limits(limits=1, user_api="blas"):
        detail = {regime: bench_regime(X, y, regime, repeats) for regime in ("full", "stumps", "mixed")}
        memory = bench_memory(X, y)
    out["pacbayes_weighting"] = {f"{source}_{regime}": d["ratio"] for regime, d in detail.items()} | {
        "target": f"<= {TARGET} (full)"}
    out["pacbayes_weighting_detail"] = {
        f"{source}_{regime}": (f"forest {d['forest_s']}s; uniform {d['uniform_s']}s, sorf {d['sorf_s']}s, "
                               f"mincq {d['mincq_s']}s; ADMM iterations per grid: sorf "
                               f"{d['sorf_admm_iterations_per_grid']}, mincq {d['mincq_admm_iterations_per_grid']}")
        for regime, d in detail.items()}
    out["pacbayes_memory"] = memory


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    results: dict = {}
    run(results, repeats=args.repeats)
    print(json.dumps(results, indent=2))
