"""The SVM LeafRank's share of depecker2010 Table A.1, before and after issue 24: every SVM-LeafRank configuration
of the experiment fitted on one training part of each of its 13 datasets, the code of :data:`REFERENCE` (before
issue 24's work on the SVM LeafRank, its branch's first commit 62acd88) against this checkout's, in alternating
processes.

``bench_svm_leafrank`` times two forests on one German-sized synthetic fold; this one times the learner on the
experiment's own data and mix: the six configurations that Table A.1 runs with the SVM LeafRank (``trk_svm``,
``trk_svm_linear``, ``bagg_svm``, ``bagg_svm_linear``, ``rf1_svm``, ``rf1_svm_linear``, as ``conf/algorithm``
configures them, B = 100 trees; the ``_cv`` and ``_opt`` columns reuse their fits), each fitted on the first
training part of a stratified 10-fold split (shuffled, seed 0) of each dataset and scoring its test part, BLAS
limited to one thread as in a worker. The reproduction runs each (configuration, dataset) ten times, once per fold,
so this is a tenth of that work, on the same sizes. A fingerprint of the test scores (sha1 over the datasets)
per configuration says whether the two versions give the same numbers.

The folds and the configurations' parameters are prepared once by this checkout (``--prepare DIR``: the datasets
from the mirror, ``FORESTLAB_DATA_MIRROR``), and each timed process reads them (``--workload DIR``) and fits with
whichever forestlab is first on its path, so both versions see the same arrays and parameters.

Measured on 2026-11-28 (2-core AMD EPYC with AVX-512, 3 rounds, at ace3b59: libsvm's solver compiled,
``forestlab/learners/_smo.py``, on each node's kernel matrix, ``forestlab/learners/_svm_gram.py``), seconds per round
before / after and the median of the pairs' ratios: trk_svm 0.79, 0.83, 0.83 / 0.30, 0.31, 0.35 (2.67x),
trk_svm_linear 0.78, 0.79, 0.80 / 0.34, 0.34, 0.35 (2.28x), bagg_svm 34.9, 35.8, 35.7 / 11.5, 11.7, 12.4 (3.02x),
bagg_svm_linear 49.7, 51.1, 50.4 / 20.7, 20.7, 21.0 (2.40x), rf1_svm 43.1, 44.6, 43.8 / 13.7, 14.1, 14.6 (3.14x),
rf1_svm_linear 37.5, 38.8, 38.9 / 11.3, 11.5, 11.8 (3.33x); all six 166.6, 171.8, 170.5 / 57.9, 58.6, 60.6 s
(**2.88x**), the same fingerprints in every process.

Earlier the same day, at 6bf412a (libsvm itself given the kernel matrix): all six 178.1, 177.3, 176.6 / 88.2, 84.6,
89.0 s (median 2.02x); the RBF configurations 2.2-2.4x, but trk_svm_linear 1.49x and bagg_svm_linear 1.63x: their time
was libsvm's solver itself (many iterations, each a pass over the node's points: 10 trees of bagg_svm_linear on
GaussMed20d, German and Australian are 808 nodes and 1.9 million iterations, median 663 a node), which the kernel
matrix does not shorten (libsvm 1.07 -> 0.98 s on those nodes, against 0.66 -> 0.37 s on bagg_svm's). The compiled
solver takes the same iterations in less time (its working-set selection, a branchy scalar loop with a division per
point in libsvm, is a vectorised pass): on 647 of bagg_svm_linear's nodes, kernel matrix and solver 0.85 -> 0.57 s.

Before that (2026-11-27, libsvm's own kernel, three rounds): all six 208.5, 214.7, 212.9 / 113.6, 121.9, 111.7 s
(median 1.84x), trk_svm 1.89x, trk_svm_linear 1.50x, bagg_svm 1.73x, bagg_svm_linear 1.58x, rf1_svm 1.95x,
rf1_svm_linear 2.25x; on German, GaussMed20d and Australian, 20 trees of bagg_svm spent 71% of their time in
libsvm's trainer and 16% in the RBF decision function routing the node's points.

The same bench against 21730db^ (bench_heavy_learners' reference, which already has the i24-leafrank branch) gave
1.04x: the forest's later gains (1071468, trees grown and scored without per-tree checks) are a few percent on
this data.

    python tests/benchmarks/bench_svm_workload.py [--rounds 2]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_heavy_learners import _reference_checkout, path_first  # tests/benchmarks/bench_heavy_learners.py
from pairs import alternating, median_ratio  # tests/benchmarks/pairs.py

REPO = Path(__file__).resolve().parents[2]
#: depecker2010_table_a1's configurations with the SVM LeafRank (conf/algorithm/<name>.yaml).
ALGORITHMS = ("trk_svm", "trk_svm_linear", "bagg_svm", "bagg_svm_linear", "rf1_svm", "rf1_svm_linear")
EXPERIMENT = "depecker2010_table_a1"
#: The code before issue 24's SVM LeafRank work (branch i24-leafrank, whose first commit 62acd88 calls libsvm's
#: trainer directly instead of through SVC); bench_heavy_learners' reference (21730db^) comes after that branch.
REFERENCE = "62acd88^"


def prepare(folder: Path) -> None:
    """Write each dataset's first training and test part (``<dataset>.npz``) and ``params.json`` (each
    configuration's estimator and parameters, as the resolved experiment gives them to its runs) into ``folder``."""
    from sklearn.model_selection import StratifiedKFold

    import forestlab.studies  # noqa: F401 - the studies' figure kinds, which the experiment's figures name
    from forestlab.config import load_experiment
    from forestlab.datasets import load_dataset

    experiment = load_experiment([f"experiment={EXPERIMENT}"])
    algorithms = {a.name: a for a in experiment.algorithms}
    missing = sorted(set(ALGORITHMS) - set(algorithms))
    if missing:
        raise SystemExit(f"{EXPERIMENT} no longer runs {missing}")
    mirror = os.environ.get("FORESTLAB_DATA_MIRROR") or str(REPO.parent / "shared" / "datasets")
    for dataset in experiment.datasets:
        data = load_dataset(dataset.cfg, data_dir=Path(tempfile.gettempdir()) / "forestlab_bench_data",
                            mirror=mirror, download=False)
        train, test = next(StratifiedKFold(n_splits=10, shuffle=True, random_state=0).split(data.X, data.y))
        np.savez(folder / f"{dataset.name}.npz", X_train=data.X[train], y_train=data.y[train], X_test=data.X[test])
    configs = {name: {"estimator": algorithms[name].estimator, "params": algorithms[name].params}
               for name in ALGORITHMS}
    (folder / "params.json").write_text(json.dumps({"datasets": [d.name for d in experiment.datasets],
                                                    "algorithms": configs}, indent=1))


def workload(folder: Path) -> dict[str, dict[str, object]]:
    """Each configuration's seconds (fit and test scores, summed over the datasets) and its fingerprint, with the
    forestlab first on this process's path."""
    from threadpoolctl import threadpool_limits

    from forestlab.learners._ranking_forest import RankingForest
    from forestlab.learners._treerank import TreeRank

    spec = json.loads((folder / "params.json").read_text())
    data = {name: np.load(folder / f"{name}.npz") for name in spec["datasets"]}
    out = {}
    with threadpool_limits(1):
        # what a worker pays once, before its first fit, outside the timing (both versions alike): the lazy imports
        # and the load of numba's cached code (this code's kernel matrix: about 0.6 s here)
        X = np.random.default_rng(0).normal(size=(60, 3))
        for kernel in ("rbf", "linear"):
            TreeRank(leafrank="svm", svm_kernel=kernel, max_depth=2).fit(X, np.where(X[:, 0] > 0, 1, -1))
        for name, config in spec["algorithms"].items():
            cls = RankingForest if config["estimator"] == "ranking_forest" else TreeRank
            seconds, digest = 0.0, hashlib.sha1()
            for arrays in data.values():
                t0 = time.perf_counter()
                model = cls(**config["params"], random_state=0).fit(arrays["X_train"], arrays["y_train"])
                scores = model.decision_function(arrays["X_test"])
                seconds += time.perf_counter() - t0
                digest.update(np.ascontiguousarray(scores, dtype=np.float64).tobytes())
            out[name] = {"s": round(seconds, 3), "scores_sha1": digest.hexdigest()[:16]}
    return out


def _process(folder: Path, python_path: Path) -> dict[str, dict[str, object]]:
    done = subprocess.run([sys.executable, __file__, "--workload", str(folder)], env=path_first(python_path),
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def run(out: dict, rounds: int = 2) -> None:
    """Fill ``out["svm_leafrank_table_a1"]``: per configuration and in total, this code's seconds and the median of
    the pairs' ratios against :data:`REFERENCE`, and whether the fingerprints agree. Datasets found nowhere (no
    mirror) leave the section "not_measured" with the loader's message; any other error is raised."""
    from forestlab.errors import DatasetError

    with tempfile.TemporaryDirectory(prefix="forestlab-svm-workload-") as tmp:
        folder, reference = Path(tmp) / "data", Path(tmp) / "reference"
        folder.mkdir()
        reference.mkdir()
        try:
            prepare(folder)
        except DatasetError as exc:  # datasets found nowhere (no mirror): the section says so instead of timing
            out["svm_leafrank_table_a1"] = {"not_measured": f"{type(exc).__name__}: {exc}"}
            return
        if not _reference_checkout(reference, REFERENCE):
            out["svm_leafrank_table_a1"] = {"not_measured": f"{REFERENCE} is not in this checkout's history"}
            return
        _process(folder, REPO)  # numba's cache of this code's kernels, and the data in the page cache
        befores: list[dict] = []
        afters: list[dict] = []

        def timed(python_path: Path, into: list[dict]) -> float:
            into.append(_process(folder, python_path))
            return sum_s(into[-1])

        pairs = alternating(lambda: timed(reference, befores), lambda: timed(REPO, afters), rounds)
    section: dict[str, object] = {}
    for name in ALGORITHMS:
        b = [r[name]["s"] for r in befores]
        a = [r[name]["s"] for r in afters]
        section[name] = {"before_s": b, "after_s": a,
                         "speedup_median_of_pairs": median_ratio([x / y for x, y in zip(b, a, strict=True)], 2),
                         "same_scores": all(r[name]["scores_sha1"] == afters[0][name]["scores_sha1"]
                                            for r in befores + afters),
                         "scores_sha1": afters[0][name]["scores_sha1"]}
    section["all_six"] = {"before_s": pairs["before_s"], "after_s": pairs["after_s"],
                          "speedup_median_of_pairs": median_ratio(pairs["ratios"], 2)}
    section["setting"] = (f"{EXPERIMENT}'s SVM-LeafRank configurations, fold 1 of 10 of each of its datasets, "
                          f"B = 100, 1 BLAS thread; before = {REFERENCE}")
    section["target"] = "speedup >= 2 with the same numbers (issue 24, target 2)"
    out["svm_leafrank_table_a1"] = section


def sum_s(result: dict[str, dict[str, object]]) -> float:
    return round(sum(float(r["s"]) for r in result.values()), 3)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--prepare", type=Path, metavar="DIR", help="only write the folds and parameters into DIR")
    parser.add_argument("--workload", type=Path, metavar="DIR", help="only time the prepared DIR with this path's "
                        "forestlab (prints JSON)")
    args = parser.parse_args()
    if args.prepare:
        args.prepare.mkdir(parents=True, exist_ok=True)
        prepare(args.prepare)
    elif args.workload:
        print(json.dumps(workload(args.workload)))
    else:
        results: dict = {}
        run(results, args.rounds)
        print(json.dumps(results, indent=2))
