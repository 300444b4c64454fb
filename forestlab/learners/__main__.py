"""``python -m forestlab.learners``: compile forestlab's numba kernels once, into numba's on-disk cache.

``make install`` runs it. Each kernel is compiled on its first call in a process and kept on disk (``cache=True``);
without this, a fresh installation's first runs pay the compilation in every worker process at once (each learner
family's kernels, about 55 s of one core on a slow 2-core machine, the tree builder's port about 20 s of it), and so
does each worker of a fresh clone's test suite. Here each family is fitted once on a tiny problem, through the
learners themselves, so the kernels are compiled for the arrays the runs pass them: the tree builder's port
(:func:`forestlab.learners._cart.warm_up`), TreeRank's (a ranking tree, its routing; the SVM LeafRank's kernel
matrix and solver), RankSVM's pairwise counts and
line search, the forest kernel's shared-leaf counts and the PAC-Bayes successors' tandem matrices. A kernel only a
rarer path calls is compiled where it is first called, as before.
"""

from __future__ import annotations

import time
import warnings

import numpy as np


def warm_up() -> list[tuple[str, float]]:
    """Fit each learner family that calls compiled kernels once on a tiny problem; returns (what, seconds)."""
    from forestlab.learners import _cart, get_learner

    rng = np.random.RandomState(0)
    X = rng.normal(size=(60, 5))
    y = np.where(rng.rand(60) < 0.5, 1, -1)
    timings = []
    t0 = time.perf_counter()
    _cart.warm_up()
    timings.append(("tree builder port", time.perf_counter() - t0))
    for name, params in (("treerank", {}), ("treerank", {"leafrank": "svm", "max_depth": 2}), ("ranksvm", {}),
                         ("forest_svm", {"n_estimators": 3}), ("cctnd", {"n_estimators": 3})):
        t0 = time.perf_counter()
        est = get_learner(name)(**params, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a tiny problem: convergence notes are expected and beside the point
            est.fit(X, y)
            (est.decision_function if hasattr(est, "decision_function") else est.predict)(X)
        timings.append((name, time.perf_counter() - t0))
    return timings


if __name__ == "__main__":
    for what, seconds in warm_up():
        print(f"compiled {what}'s kernels ({seconds:.1f} s)")
