"""wu2021_rfc's length (issue 22 part 4: "the Wu et al. experiment runs in <= 30 minutes on 2 cores"): one full-size
repeat of each of its five datasets (100 trees, 80% of the data for training, the six weightings of one forest)
through the real runner on one core, and the full experiment's wall time extrapolated to its 10 repeats on 2 cores.

Runs with n_jobs=1 in a fresh temporary results folder (the data from FORESTLAB_DATA_MIRROR or the cache). The
extrapolation: the experiment's jobs are (dataset, repeat) groups of six runs sharing one forest; on 2 workers the
10 x 5 jobs take about max(the longest job, half their total). Timing of a loaded shared machine reads long.

    python tests/benchmarks/bench_wu2021.py [--datasets adult_data,satimage]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

from forestlab.config import load_experiment
from forestlab.runner import execute, plan
from forestlab.store import Store

EXPERIMENT = "wu2021_rfc"
DATASETS = ("adult_data", "mushroom", "letters", "satimage", "mnist")
REPEATS, CORES, TARGET_S = 10, 2, 1800.0


def one_repeat(dataset: str) -> dict[str, float]:
    """Seconds of one full-size repeat of ``dataset`` (its six runs, one forest), whole and per weighting."""
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["FORESTLAB_RESULTS_DIR"] = tmp
        exp = load_experiment([f"experiment={EXPERIMENT}", f"experiment.datasets=[{dataset}]", "seeds=1",
                               "launcher.n_jobs=1"])
        specs = plan(exp)
        with Store(tmp) as store:
            t0 = time.perf_counter()
            summary = execute(specs, store, n_jobs=1, backend="loky")
            wall = time.perf_counter() - t0
            records = store.records()
        assert summary.failed == 0 and summary.done == len(specs), summary
    per = {a: round(float(t["total"]), 2) for a, t in zip(records["algorithm"], records["timings"], strict=True)}
    return {"wall_s": round(wall, 2), **{f"{a}_s": v for a, v in per.items()}}


def run(out: dict, datasets: tuple[str, ...] = DATASETS) -> None:
    """Fill ``out["wu2021_run"]``: one repeat per dataset, and the extrapolated full experiment on 2 cores."""
    per = {d: one_repeat(d) for d in datasets}
    jobs = [per[d]["wall_s"] for d in datasets for _ in range(REPEATS)]
    estimate = max(max(jobs), sum(jobs) / CORES)
    complete = tuple(datasets) == DATASETS
    out["wu2021_run"] = {
        "data": f"one full-size repeat of {', '.join(datasets)} (100 trees, 6 weightings of one forest), n_jobs=1",
        **{f"{d}_repeat_s": v["wall_s"] for d, v in per.items()},
        "runs_s": "; ".join(f"{d}: " + ", ".join(f"{k[:-2]} {s}" for k, s in v.items()
                                                                  if k != "wall_s") for d, v in per.items()),
        "one_repeat_all_s": round(sum(v["wall_s"] for v in per.values()), 1),
        "full_experiment_2_cores_estimate_s": round(estimate, 0),
        "target": f"full experiment ({REPEATS} repeats) <= {TARGET_S:.0f} s on {CORES} cores",
        "met": bool(estimate <= TARGET_S) if complete else "not judged: only some datasets timed",
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default=",".join(DATASETS))
    args = parser.parse_args()
    results: dict = {}
    run(results, tuple(d.strip() for d in args.datasets.split(",")))
    print(json.dumps(results, indent=2))
