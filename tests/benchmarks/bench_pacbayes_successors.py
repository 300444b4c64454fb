"""PAC-Bayes successors benchmark: the out-of-bag statistics of 100 trees at MNIST's size, and each weighting's
optimisation on them (forestlab.learners._pacbayes_successors).

MNIST-size synthetic out-of-bag indicators: 100 trees x 56,000 training points (Wu et al. 2021's 80% of 70,000),
10 classes, each point out of a tree's bootstrap with probability (1 - 1/n)^n ~ 0.368, trees erring on ~3-15% of
the points with errors correlated through a per-point difficulty (as a forest's are: some points are hard for all
trees). On one core (BLAS limited to one thread). Per repeat:

- ``tandem``: ``oob_statistics`` (the per-tree losses, the pairwise tandem losses and the joint out-of-bag counts:
  three (100 x 56,000) @ (56,000 x 100) products of indicator arrays). Target: a few seconds.
- ``fo``, ``tnd``, ``cctnd``, ``ccpbb``, ``cbound_joint``: ``learn_weights`` on those statistics. Target: each
  well under a second.
- ``certificates``: the six certificates of one rho (what every run of rf, sorf, mincq and the five stores).

    python tests/benchmarks/bench_pacbayes_successors.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from threadpoolctl import threadpool_limits

from forestlab.learners._pacbayes_successors import SUCCESSOR_WEIGHTINGS, certificates, learn_weights, oob_statistics

N_TREES, N_TRAIN, N_CLASSES = 100, 56_000, 10
TANDEM_TARGET_S, OPTIMISE_TARGET_S = 5.0, 1.0


def mnist_sized_indicators(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Predictions (class indices), labels and out-of-bag masks of 100 synthetic trees on 56,000 points."""
    rng = np.random.default_rng(seed)
    y = rng.integers(N_CLASSES, size=N_TRAIN)
    difficulty = rng.beta(0.3, 3.0, size=N_TRAIN)  # most points easy, a few hard for every tree
    skill = rng.uniform(0.3, 1.5, size=N_TREES)
    wrong = rng.random((N_TREES, N_TRAIN)) < np.clip(skill[:, None] * difficulty[None, :], 0.0, 1.0)
    pred = np.where(wrong, (y[None, :] + rng.integers(1, N_CLASSES, size=(N_TREES, N_TRAIN))) % N_CLASSES,
                    y[None, :]).astype(np.uint8)
    oob = rng.random((N_TREES, N_TRAIN)) < (1.0 - 1.0 / N_TRAIN) ** N_TRAIN
    return pred, y, oob


def _timed(func) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = func()
    return time.perf_counter() - t0, out


def run(out: dict, repeats: int = 3) -> None:
    """Fill ``out["pacbayes_successors"]`` (median seconds and targets)."""
    pred, y, oob = mnist_sized_indicators()
    times: dict[str, list[float]] = {k: [] for k in ("tandem", *SUCCESSOR_WEIGHTINGS, "certificates")}
    info: dict[str, dict] = {}
    with threadpool_limits(limits=1, user_api="blas"):
        for rep in range(repeats + 1):  # the first round warms caches and is dropped
            seconds, stats = _timed(lambda: oob_statistics(pred, y, oob))
            row = {"tandem": seconds}
            for weighting in SUCCESSOR_WEIGHTINGS:
                row[weighting], (rho, info[weighting]) = _timed(lambda: learn_weights(weighting, stats))  # noqa: B023
            row["certificates"] = _timed(lambda: certificates(stats, rho))[0]  # noqa: B023
            if rep:
                for key, value in row.items():
                    times[key].append(value)
    med = {k: round(float(np.median(v)), 4) for k, v in times.items()}
    out["pacbayes_successors"] = {
        "data": f"synthetic out-of-bag indicators, {N_TREES} trees x {N_TRAIN} points, {N_CLASSES} classes "
                f"(n = {stats.n}, n2 = {stats.n2})",
        "tandem_matrix_s": med["tandem"],
        **{f"{w}_optimise_s": med[w] for w in SUCCESSOR_WEIGHTINGS},
        "certificates_s": med["certificates"],
        "iterations": ", ".join(f"{w} {int(info[w]['iterations'])}" for w in SUCCESSOR_WEIGHTINGS),
        "target": f"tandem <= {TANDEM_TARGET_S} s; each optimisation < {OPTIMISE_TARGET_S} s",
        "met": bool(med["tandem"] <= TANDEM_TARGET_S
                    and all(med[w] < OPTIMISE_TARGET_S for w in SUCCESSOR_WEIGHTINGS)),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    results: dict = {}
    run(results, repeats=args.repeats)
    print(json.dumps(results, indent=2))
