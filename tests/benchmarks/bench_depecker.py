"""depecker2010 experiments: their wall times and the time per fit of each algorithm, read from the run store.

The experiments take minutes to hours, so `make bench` does not rerun them: it reads what the last
`forestlab run experiment=<name>` recorded in the store (each run's finishing time and its own timings). The wall
time is from the start of the earliest run (its finishing time minus its duration) to the finish of the latest, over
the runs of the latest plan of the experiment; it includes whatever else the machine was doing then (so it is an
upper bound of the experiment's own time). Runs that finished before the plan was last recorded were reused from
another experiment (Tables A.3/A.4 read Table A.1's TreeRank runs): they are counted apart and left out of the wall
time. Targets: depecker2010_table4_2 within 30 minutes and depecker2010_table_a1 within 2 hours (issue 12),
depecker2010_table6_1, level checks included, within 30 minutes (issue 13), on 2 cores.

    python tests/benchmarks/bench_depecker.py [--results results]

``FORESTLAB_BENCH_RESULTS`` (folders separated by ':') names other results folders to read first: a store where an
experiment was run in one go from empty, e.g. ``forestlab run experiment=depecker2010_table6_1
paths.results_dir=/tmp/t61`` for its time from scratch (the main store's runs may come from several invocations).
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np

EXPERIMENTS = {"depecker2010_table4_2": 30 * 60, "depecker2010_table_a1": 2 * 3600, "depecker2010_toys": None,
               "depecker2010_table_a3": None, "depecker2010_table6_1": 30 * 60}
ROOT = Path(__file__).resolve().parents[2]


def experiment_times(results_dir: Path, name: str) -> dict | None:
    """Runs, wall time and seconds per fit by algorithm of the latest plan of ``name`` (None without runs)."""
    from forestlab.store import Store

    with Store(results_dir, readonly=True) as store:
        plan = store.plan_for(name, smoke=False)  # the newest real plan
        if plan is None:
            return None
        records = store.records(plan.keys)
    done = records[records["status"] == "done"]
    if not len(done):
        return None
    total_all = np.array([t.get("total", 0.0) for t in done["timings"]], dtype=float)
    started = done["finished_at"].to_numpy(dtype=float) - total_all
    reused = started < plan.recorded_at - 1.0  # finished under an earlier plan (another experiment's runs)
    if reused.all():  # everything came from earlier plans: time them all
        reused[:] = False
    n_reused = int(reused.sum())
    # seconds per fit by algorithm over every run of the plan, reused ones included (the planned rows name the
    # algorithm as this experiment calls it)
    fit_all = np.array([t.get("fit_evaluate", 0.0) for t in done["timings"]], dtype=float)
    names = plan.runs.drop_duplicates("key").set_index("key")["algorithm"]
    algorithm = names.reindex(done["key"]).to_numpy()
    per_algorithm = {a: round(float(fit_all[algorithm == a].mean()), 3) for a in sorted(set(algorithm))}
    done = done[~reused]
    total = np.array([t.get("total", 0.0) for t in done["timings"]], dtype=float)
    finished = done["finished_at"].to_numpy(dtype=float)
    wall = float(finished.max() - (finished - total).min())
    return {"runs_done": int(len(done)) + n_reused, "runs_reused": n_reused,
            "runs_planned": int(len(plan.runs)), "wall_s": round(wall, 1),
            "wall_min": round(wall / 60, 1), "cpu_s_in_runs": round(float(total.sum()), 1),
            "fit_s_by_algorithm": per_algorithm}


def run(out: dict, results_dir: Path = ROOT / "results") -> None:
    """Fill ``out["depecker2010_experiments"]`` from the store in ``results_dir``."""
    section: dict = {}
    extra = [Path(p) for p in os.environ.get("FORESTLAB_BENCH_RESULTS", "").split(":") if p]
    for name, target in EXPERIMENTS.items():
        times, where = None, results_dir
        for where in [*extra, results_dir]:
            if (where / "runs.sqlite").is_file():
                times = experiment_times(where, name)
                if times is not None:
                    break
        if times is not None and where != results_dir:
            times["store"] = str(where)
        if times is None:
            section[name] = "no runs stored: run `forestlab run experiment=" + name + " launcher.n_jobs=2` first"
            continue
        if target is not None:
            times["target_s"] = target
            times["within_target"] = bool(times["wall_s"] <= target and times["runs_done"] == times["runs_planned"])
        section[name] = times
    out["depecker2010_experiments"] = section


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    args = parser.parse_args()
    results: dict = {}
    run(results, args.results)
    print(json.dumps(results, indent=2))
