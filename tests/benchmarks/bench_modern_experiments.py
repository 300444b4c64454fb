"""Benchmark of the experiments beyond the studies (issue 23 part 5): how long each one's new runs take on 2 cores.

For each experiment (depecker2010_modern_rankers, _modern_rankers_gauss, _modern_tests, pisetta2010_modern_kernels)
the plan is counted (its runs, those it shares with the reproduction it reuses, the new ones) and a slice of its new
runs is executed in this process exactly as a worker runs them: the specs of one job (a split and a ``seed_tag``:
``group_specs``) one after the other with one fit cache (``execute_group``'s loop: data, split, tuning, fit,
evaluation), so what the learners of a job share (c2st and c2st_wilcoxon's forest) is counted once, in the first run
of the job; the first fold or repetition of each new algorithm on a few datasets chosen to span the sizes. A dataset
not in the slice takes the seconds per run of the timed dataset closest in number of points. The estimate for 2
cores is the sum over the new runs / 2 (the runner keeps both workers busy: thousands of independent runs). CPU
seconds (``time.process_time``) are reported beside wall seconds because the machine may be shared; the estimate
uses CPU seconds (one BLAS thread, n_jobs=1 inside each run).

python tests/benchmarks/bench_modern_experiments.py [--only depecker2010_modern_tests,...]
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from threadpoolctl import threadpool_limits

import forestlab.studies  # noqa: F401  (registers the studies' figure kinds)
from forestlab.config import load_experiment
from forestlab.learners import shared_tree_predictions
from forestlab.learners._cache import FitCache
from forestlab.runner import _worker_payload, execute_spec, group_specs, plan

#: experiment -> (the reproduction it reuses, its new algorithms, the datasets of the slice, repetitions timed)
SLICES: dict[str, tuple[str, tuple[str, ...], tuple[str, ...], int]] = {
    "depecker2010_modern_rankers": ("depecker2010_table_a3", ("xgb_rank", "lgbm_rank", "hgb_rank", "rf_rank"),
                                    ("hepatitis", "german", "gauss_easy20d"), 1),
    "depecker2010_modern_rankers_gauss": ("depecker2010_table4_2", ("xgb_rank", "lgbm_rank", "hgb_rank", "rf_rank"),
                                          ("gauss_hard20d",), 1),
    "depecker2010_modern_tests": ("depecker2010_table6_1", ("c2st", "c2st_wilcoxon", "mmd_agg"),
                                  ("gauss_shift_q10_d010", "gauss_shift_q30_d010"), 2),
    "pisetta2010_modern_kernels": ("pisetta2010_table1", ("forest_svm_kerf", "forest_svm_rfgap"),
                                   ("sonar", "pima", "german", "spambase", "chess"), 1),
}
CORES = 2


def _size(spec: Any) -> int:
    shape = (spec.payload.get("dataset_cfg") or {}).get("shape") or [0]
    return int(shape[0]) if shape and shape[0] else 2000


def estimate(name: str) -> dict[str, Any]:
    """The plan's counts, the slice's seconds per run and the estimated wall minutes of the new runs on 2 cores."""
    other, algorithms, datasets, reps = SLICES[name]
    mine = plan(load_experiment([f"experiment={name}"]))
    theirs = {s.key for s in plan(load_experiment([f"experiment={other}"]))}
    new = [s for s in mine if s.key not in theirs]
    timed: dict[tuple[str, str], list[float]] = {}
    wall = 0.0
    chosen = [s for s in new if s.algorithm in algorithms and s.dataset in datasets and s.repetition < reps
              and (s.fold or 0) == 0]
    for job in group_specs(chosen):
        cache = FitCache()
        with shared_tree_predictions(), threadpool_limits(1):
            for spec in job:
                t, c = time.perf_counter(), time.process_time()
                record = execute_spec(_worker_payload(spec), cache)
                if record.get("status") != "done":
                    raise RuntimeError(f"{name}: {spec.algorithm} on {spec.dataset} failed: {record.get('error')}")
                wall += time.perf_counter() - t
                timed.setdefault((spec.algorithm, spec.dataset), []).append(time.process_time() - c)
    per_run = {k: sum(v) / len(v) for k, v in timed.items()}
    sizes = {s.dataset: _size(s) for s in mine}
    total = 0.0
    for spec in new:
        candidates = [d for (a, d) in per_run if a == spec.algorithm]
        nearest = min(candidates, key=lambda d: abs(sizes[d] - sizes[spec.dataset]))
        total += per_run[(spec.algorithm, nearest)]
    return {"runs": len(mine), "reused": len(mine) - len(new), "new": len(new),
            "slice_runs": sum(len(v) for v in timed.values()), "slice_wall_s": round(wall, 1),
            "cpu_s_per_run": {f"{a} on {d}": round(s, 2) for (a, d), s in sorted(per_run.items())},
            "estimated_minutes_on_2_cores": round(total / CORES / 60, 1)}


def run(results: dict) -> None:
    """Entry point of tests/benchmarks/run.py: one section per experiment."""
    for name in SLICES:
        results[f"modern_experiment {name}"] = estimate(name)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", default=",".join(SLICES))
    args = parser.parse_args()
    print(json.dumps({n: estimate(n) for n in args.only.split(",")}, indent=2))
