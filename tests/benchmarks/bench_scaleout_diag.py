"""Where 16 workers lose time on the scale-out subset (issue 24, target 5): a diagnosis beside bench_scaleout.py.

    python tests/benchmarks/bench_scaleout_diag.py 16 --out bench --stem scaleout_16cores_run6_diag   # 16 cores
    python tests/benchmarks/bench_scaleout_diag.py --render bench/scaleout_16cores_run6_diag.json     # its table

On the subset of bench_scaleout.py (100 rf1_svm runs of Table A.1), all with warm workers:

- the runner's fan-out with loky (``forestlab.runner.execute`` into an empty store), twice;
- the same jobs through joblib alone, each job timed on its worker's clock: how long a worker waits between two
  jobs (the hand-out), how long a job takes beyond its runs (unpickling, packing the arrays), and how unevenly the
  runs fall on the workers;
- loky workers niced by 5 (their niceness raised from here once the pool runs; run 6 set it through a knob of
  forestlab.launchers since removed): whether the process that hands out the jobs and stores the records waits
  for a core behind 16 busy workers;
- a dask LocalCluster as dask starts it, and with its workers' statistical profiler off (a thread in each worker
  that samples every thread's stack every 10 ms).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def timed_job(payloads):
    """A job as the runner's workers run it, with its start and end on the worker's clock."""
    from forestlab.runner import execute_group_packed

    t = time.time()
    recs = execute_group_packed(payloads)
    return os.getpid(), t, time.time(), sum(r["timings"].get("total", 0.0) for r in recs)


def measure(workers: int, serial: bool, log) -> None:
    os.environ.setdefault("FORESTLAB_RESULTS_DIR", tempfile.mkdtemp(prefix="forestlab-diag-"))
    import bench_scaleout as b

    from forestlab import launchers

    specs = b._plan([])
    warm = b._plan(["limits.max_estimators=2"])
    b._timed(warm[:1], "loky", 1, None)
    if serial:
        base, _, base_busy, _ = b._timed(specs, "loky", 1, None)
        log(what="serial", wall=round(base, 2), own=round(base_busy, 2))

    def runner(label: str) -> None:
        wall, _, busy, spent = b._timed(specs, "loky", workers, None)
        log(what=label, workers=workers, wall=round(wall, 2), own=round(busy, 2), **spent)

    b._timed(warm, "loky", workers, None)
    runner("runner loky warm")
    runner("runner loky warm (again)")

    from joblib import Parallel, delayed, parallel_config

    from forestlab.runner import _worker_payload, group_specs

    with parallel_config(**launchers.joblib_config("loky", workers)):
        list(Parallel(return_as="generator_unordered")(
            delayed(timed_job)([_worker_payload(s) for s in g]) for g in group_specs(warm)))
        t0 = time.time()
        got = list(Parallel(return_as="generator_unordered")(
            delayed(timed_job)([_worker_payload(s) for s in g]) for g in group_specs(specs)))
        wall = time.time() - t0
    by = defaultdict(list)
    for pid, s, e, own in got:
        by[pid].append((s, e, own))
    waits, extra, first, last = [], [], [], []
    for runs in by.values():
        runs.sort()
        first.append(runs[0][0] - t0)
        last.append(runs[-1][1] - t0)
        waits += [runs[i + 1][0] - runs[i][1] for i in range(len(runs) - 1)]
        extra += [e - s - own for s, e, own in runs]
    log(what="joblib alone, worker clocks", workers=workers, wall=round(wall, 2),
        own=round(sum(g[3] for g in got), 2), pids=len(by), first_start_max=round(max(first), 3),
        last_end_min=round(min(last), 3), wait_mean_ms=round(1000 * sum(waits) / len(waits), 1),
        wait_max_ms=round(1000 * max(waits), 1), in_job_beyond_run_mean_ms=round(1000 * sum(extra) / len(extra), 1),
        runs_per_worker=sorted(len(v) for v in by.values()))

    import psutil

    for child in psutil.Process().children(recursive=True):  # the warm pool's workers (and loky's helper)
        child.nice(child.nice() + 5)
    runner("runner loky warm, workers nice 5")
    runner("runner loky warm, workers nice 5 (again)")
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.AccessDenied):  # lowering it back may need privileges; the pool ends next
            child.nice(child.nice() - 5)

    import dask
    from distributed import LocalCluster

    for label, cfg in (("dask warm", {}), ("dask warm, worker profiler off", launchers.DASK_WORKER_CONFIG)):
        with dask.config.set(cfg), LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                                host="127.0.0.1", dashboard_address=None) as cluster:
            b._timed(warm, "dask", workers, cluster.scheduler_address)
            wall, _, busy, spent = b._timed(specs, "dask", workers, cluster.scheduler_address)
            log(what=label, workers=workers, wall=round(wall, 2), own=round(busy, 2), **spent)


def render(rows: list[dict]) -> str:
    serial = next((r for r in rows if r["what"] == "serial"), None)
    lines = ["| what | workers | wall (s) | speed-up | runs' own seconds | busy | notes |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        speedup = round(serial["wall"] / r["wall"], 2) if serial else "-"
        own = round(r["own"] / serial["own"], 3) if serial else r["own"]
        busy = r.get("utilization") or round(r["own"] / (r["workers"] * r["wall"]), 3) if "workers" in r else "-"
        notes = ", ".join(f"{k} {v}" for k, v in r.items()
                          if k not in {"what", "workers", "wall", "own", "utilization", "ramp_s", "drain_s"})
        lines.append(f"| {r['what']} | {r.get('workers', 1)} | {r['wall']} | {speedup} | {own} | {busy} | {notes} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workers", type=int, nargs="?", default=16)
    parser.add_argument("--no-serial", action="store_true", help="skip the one-worker reference")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "/tmp/forestlab-diag")))
    parser.add_argument("--stem", default="scaleout_diag")
    parser.add_argument("--render", type=Path, help="print the table of a JSON this script wrote, and stop")
    args = parser.parse_args()
    if args.render:
        print(render(json.loads(args.render.read_text())), end="")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []

    def log(**row) -> None:
        rows.append(row)
        print(json.dumps(row), flush=True)
        (args.out / f"{args.stem}.json").write_text(json.dumps(rows, indent=1) + "\n")

    measure(args.workers, not args.no_serial, log)
    (args.out / f"{args.stem}.md").write_text(render(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
