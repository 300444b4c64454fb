"""Scaling out (issue 24, target 5): the speed-up of a fixed subset of depecker2010_table_a1 with 1, 2, 4, 8 and 16
workers, through loky and through a dask cluster, and its figure.

    python tests/benchmarks/bench_scaleout.py --workers 1 2 4 8 16 --repeat 5 --stem scaleout_16cores --out bench
    python tests/benchmarks/bench_scaleout.py --workers 1 2 --smoke --out /tmp/scaleout    # a check of the bench
    make bench        # as part of every benchmark: this machine's cores, bench/scaleout_<cores>cores.*

The subset: the SVM-LeafRank forests of Table A.1 (``rf1_svm``: 100 ranking trees whose nodes split by an RBF SVM,
the learner that took 29% of the whole reproduction's compute with its siblings) on the ten UCI datasets of the
table, its 10 folds: 100 runs, each its own job (runs of one dataset and fold that grow the same trees share a
job; here each job holds one run). Every count of workers starts from an empty store.

What is timed: ``forestlab.runner.execute`` on the plan, from the first job handed out to the last record stored,
with the workers' start included for loky (joblib starts its pool inside the call) and a dask LocalCluster of
``w`` single-threaded worker processes already running (as a real cluster is), its workers cold (they import
forestlab with their first job). The LocalCluster is the one ``launcher=dask`` starts
(:func:`forestlab.launchers.local_cluster`: its workers' statistical profiler off, since run 6; runs 1-5 had it
on). One worker is the reference of both curves: the runs one after the other in this
process (``n_jobs=1``), no pool. Before any timing, one run compiles numba's functions into the on-disk cache, so
no count of workers pays the compilation. Every count must store the same metrics, bit for bit (checked).

The speed-up at w workers is T(1) / T(w); the efficiency is the speed-up over w. Beside them, the runs' own
seconds (each run's time inside its worker, summed, over the same sum with one worker) tell the machine's share of
a loss (a run slowed by cores that share clock, caches and memory) from the fan-out's (idle workers, overheads).
Results go to ``STEM.json`` and ``STEM.md`` in ``--out``, the figure to ``STEM.png``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

EXPERIMENT = "depecker2010_table_a1"
ALGORITHM = "rf1_svm"
DATASETS = ("vote_complete", "australian", "german", "japanese", "autompg", "ionosphere", "wdbc", "wbc",
            "heart_statlog", "hepatitis")


def _plan(overrides: list[str], datasets: tuple[str, ...] = DATASETS):
    """The runs of the subset: the experiment's plan (its own sizes, ``overrides`` added), kept to ALGORITHM on
    ``datasets``."""
    import forestlab.studies  # noqa: F401  (the studies' figure kinds, which the experiment's figures name)
    from forestlab.config import compose
    from forestlab.runner import plan

    specs = [s for s in plan(compose([f"experiment={EXPERIMENT}", *overrides]))
             if s.algorithm == ALGORITHM and s.dataset in datasets]
    if not specs:
        raise RuntimeError(f"no run of {ALGORITHM} on {datasets} in {EXPERIMENT}'s plan")
    return specs


def fan_out(spans: list[tuple[float, float]], workers: int, wall: float) -> dict:
    """Where a fan-out's wall time went, from each run's (end, own seconds) as this process saw it:
    ``utilization``, the runs' seconds over ``workers`` times the wall; ``drain_s``, from the last moment that many
    runs ran at once to the end (the last runs, with workers already idle: the plan's granularity), each run's
    start taken as the moment its record arrived here minus its own seconds. That estimate counts a worker as idle
    while its record travels and waits here, so it says nothing of the first hand-outs (on the workers' own clocks
    every one of 16 had its first job within 17 ms: tests/benchmarks/bench_scaleout_diag.py); run 5's files in
    bench/ still show it, as "ramp" (0.03-3.5 s)."""
    events = sorted([(end - own, 1) for end, own in spans] + [(end, -1) for end, own in spans])
    busy, full_until = 0, None
    for t, step in events:
        busy += step
        if step < 0 and busy == workers - 1:
            full_until = t
    busy_s = sum(own for _, own in spans)
    return {"utilization": round(busy_s / (workers * wall), 3),
            "drain_s": round(wall - full_until, 2) if full_until is not None else None}


def _timed(specs, backend: str, workers: int, scheduler: str | None) -> tuple[float, dict, float, dict]:
    """Wall seconds of one fan-out of ``specs`` into an empty store, the metrics stored per run key, the sum of
    the runs' own seconds (each run's ``timings.total``, measured inside the worker), and :func:`fan_out`'s
    account of the wall time."""
    from forestlab.runner import RunDone, execute
    from forestlab.store import Store

    spans: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory() as tmp, Store(tmp) as store:
        n_jobs = -1 if backend == "dask" else workers
        t0 = time.perf_counter()

        def seen(event) -> None:
            if isinstance(event, RunDone):
                spans.append((time.perf_counter() - t0, event.seconds))

        summary = execute(specs, store, n_jobs=n_jobs, backend=backend, scheduler=scheduler, on_event=seen)
        wall = time.perf_counter() - t0
        records = store.records()
        metrics = dict(zip(records["key"], records["metrics"], strict=True))
        busy = float(sum(t["total"] for t in records["timings"]))
    if summary.done != len(specs) or summary.failed:
        raise RuntimeError(f"{backend} with {workers} workers: {summary.done} of {len(specs)} runs done, "
                           f"{summary.failed} failed: {summary.errors}")
    return wall, metrics, busy, fan_out(spans, workers, wall)


def measure(workers: list[int], backends: list[str], log=print, smoke: bool = False, repeat: int = 1,
            on_row=None) -> dict:
    """The timings of every (backend, workers) pair, warm and (at the most workers) cold, the speed-ups against
    one worker, and whether every pair stored the same metrics as one worker (``smoke``: 20 runs of 5 trees, to
    check the bench itself). The warm count at the most workers is timed ``repeat`` times (the same machine gives
    results 10-15% apart a minute apart), and the counts go from the most workers down (the fewest take the
    longest), so that a bench stopped midway still has the counts that matter most. ``on_row(result)`` is called
    with the result so far after each row."""
    os.environ.setdefault("FORESTLAB_RESULTS_DIR", tempfile.mkdtemp(prefix="forestlab-scaleout-"))
    datasets = DATASETS[-2:] if smoke else DATASETS
    specs = _plan(["limits.max_estimators=5"] if smoke else [], datasets)
    warmup = _plan(["limits.max_estimators=2"], datasets)  # the same jobs with 2 trees: every worker busy briefly
    _timed(warmup[:1], "loky", 1, None)  # numba's on-disk cache and the data files' parse, once
    base, reference, base_busy, _ = _timed(specs, "loky", 1, None)
    log(f"1 worker (in process): {base:.1f} s for {len(specs)} runs")
    rows = [{"backend": "serial", "workers": 1, "start": "-", "wall_s": round(base, 2), "speedup": 1.0,
             "efficiency": 1.0, "run_seconds_over_serial": 1.0}]
    differ: list[str] = []
    most = max(workers)
    trees = "5 trees" if smoke else "the experiment's trees"
    result = {"experiment": EXPERIMENT, "subset": f"{ALGORITHM} on {', '.join(datasets)}, {trees}, every fold",
              "runs": len(specs), "cores": os.cpu_count(), "python": platform.python_version(),
              "machine": platform.node(), "repeat": repeat, "identical_metrics": True, "other_metrics": differ,
              "rows": rows}

    def timed(backend: str, w: int, start: str, scheduler: str | None) -> None:
        wall, metrics, busy, spent = _timed(specs, backend, w, scheduler)
        if metrics != reference:
            differ.append(f"{backend} {w} {start}")
        rows.append({"backend": backend, "workers": w, "start": start, "wall_s": round(wall, 2),
                     "speedup": round(base / wall, 2), "efficiency": round(base / wall / w, 3),
                     "run_seconds_over_serial": round(busy / base_busy, 3), **spent})
        result["identical_metrics"] = not differ
        log(f"{backend} {w} workers ({start}): {wall:.1f} s, speed-up {base / wall:.2f}, the runs' own seconds "
            f"{busy / base_busy:.2f}x one worker's, workers busy {spent['utilization']:.0%} of the wall "
            f"(drain {spent['drain_s']} s)"
            + ("" if metrics == reference else "; OTHER METRICS than one worker"))
        if on_row is not None:
            on_row(result)

    def count(backend: str, w: int) -> None:
        times = repeat if w == most else 1
        if backend == "dask":
            from forestlab.launchers import local_cluster

            # the cluster launcher=dask starts (its workers' profiler off), on loopback, no dashboard
            with local_cluster(w, host="127.0.0.1", dashboard_address=None) as cluster:
                if w == most:
                    timed("dask", w, "cold", cluster.scheduler_address)
                _timed(warmup, "dask", w, cluster.scheduler_address)
                for _ in range(times):
                    timed("dask", w, "warm", cluster.scheduler_address)
        else:
            if w == most:
                timed("loky", most, "cold", None)  # before any pool of this size exists: start and imports included
            _timed(warmup, "loky", w, None)
            for _ in range(times):
                timed("loky", w, "warm", None)

    for w in sorted((w for w in workers if w > 1), reverse=True):
        for backend in backends:
            count(backend, w)
    rows[1:] = sorted(rows[1:], key=lambda r: (r["backend"] != "loky", r["workers"], r["start"] == "warm"))
    return result


def medians(result: dict) -> dict[str, float]:
    """The median speed-up of the warm counts at the most workers, per backend."""
    import statistics

    most = max(r["workers"] for r in result["rows"])
    out = {}
    for backend in ("loky", "dask"):
        ups = [r["speedup"] for r in result["rows"]
               if r["backend"] == backend and r["workers"] == most and r["start"] == "warm"]
        if ups:
            out[backend] = round(statistics.median(ups), 2)
    return out


def write(result: dict, out: Path, stem: str = "scaleout") -> None:
    """``stem``.json, ``stem``.md and the figure ``stem``.png in ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [f"# Scale-out: {result['runs']} runs of {result['experiment']} ({result['subset']})", "",
             f"{result['cores']} cores, Python {result['python']}; every count from an empty store. Warm: the "
             "workers already started and their imports done (a dask cluster kept running between commands; a loky "
             "pool within one process); cold: their start and imports included (every `forestlab run` with loky). "
             "The same metrics as one worker, bit for bit: "
             + ("yes, every count" if result["identical_metrics"] else "NO: " + ", ".join(result["other_metrics"])),
             "", "The runs' own seconds: the sum over the runs of the time each took inside its worker, over the "
             "same sum with one worker (above 1: each run is slower when the cores are shared, a property of the "
             "machine: clock, caches, memory bandwidth). Busy: the runs' seconds over the workers times the wall "
             "(the fan-out's share of a loss: efficiency = busy / runs' own seconds); drain: from the last moment "
             "every worker ran a run to the end (each run's start estimated as its record's arrival minus its own "
             "seconds).",
             "", "| backend | workers | start | wall (s) | speed-up | efficiency | runs' own seconds | busy "
             "| drain (s) |",
             "|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['backend']} | {r['workers']} | {r['start']} | {r['wall_s']} | {r['speedup']} | "
              f"{r['efficiency']} | {r.get('run_seconds_over_serial', 'not measured')} | "
              f"{r.get('utilization', '-')} | {r.get('drain_s', '-')} |"
              for r in result["rows"]]
    most = max(r["workers"] for r in result["rows"])
    mid = medians(result)
    if result.get("repeat", 1) > 1 and mid:
        lines += ["", f"Warm at {most} workers, timed {result['repeat']} times one after the other: median speed-up "
                  + ", ".join(f"{b} {v}x" for b, v in mid.items()) + " (the figure shows the medians)."]
    (out / f"{stem}.md").write_text("\n".join(lines) + "\n")
    fig, ax = plt.subplots(figsize=(5.5, 4.0))
    ax.plot([1, most], [1, most], color="0.7", linestyle="--", label="linear")
    for backend, marker in (("loky", "o"), ("dask", "s")):
        pts = [(1, 1.0)] + [(r["workers"], r["speedup"]) for r in result["rows"]
                            if r["backend"] == backend and r["start"] == "warm" and r["workers"] != most]
        if backend in mid:
            pts.append((most, mid[backend]))
        pts.sort()
        color = {"loky": "C0", "dask": "C2"}[backend]
        if len(pts) > 1:
            ax.plot(*zip(*pts, strict=True), marker=marker, color=color, label=f"{backend} (warm workers)")
        cold = [(r["workers"], r["speedup"]) for r in result["rows"]
                if r["backend"] == backend and r["start"] == "cold"]
        if cold:
            ax.plot(*zip(*cold, strict=True), marker=marker, color=color, linestyle="none", fillstyle="none",
                    markersize=9, label=f"{backend}, cold start")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ticks = sorted({r["workers"] for r in result["rows"]})
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.set_yticks(ticks, [str(t) for t in ticks])
    ax.set_xlabel("workers")
    ax.set_ylabel("speed-up over one worker")
    ax.set_title(f"{result['runs']} runs of Table A.1 (rf1_svm), {result['cores']} cores", fontsize=10)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / f"{stem}.png", dpi=120)
    plt.close(fig)


def run(out: dict) -> None:
    """`make bench` on this machine: 1 and 2 workers (more than the cores would time the machine, not the code)."""
    cores = os.cpu_count() or 1
    workers = [w for w in (1, 2, 4, 8, 16) if w <= cores]
    result = measure(workers, ["loky", "dask"], log=lambda line: print(line, file=sys.stderr))
    stem = f"scaleout_{cores}cores"  # beside, not over, the figures measured on larger machines
    write(result, Path(__file__).resolve().parents[2] / "bench", stem)
    out["scaleout"] = {f"{r['backend']}_{r['workers']}_{r['start']}": f"{r['wall_s']} s, {r['speedup']}x"
                       for r in result["rows"]}
    out["scaleout"]["identical_metrics"] = result["identical_metrics"]
    out["scaleout"]["figure"] = f"bench/{stem}.png"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument("--backends", nargs="+", default=["loky", "dask"], choices=["loky", "dask"])
    parser.add_argument("--out", type=Path, default=Path("bench"))
    parser.add_argument("--stem", default="scaleout", help="the files' name: STEM.json, STEM.md, STEM.png")
    parser.add_argument("--smoke", action="store_true", help="20 runs of 5 trees: a check of the bench itself")
    parser.add_argument("--repeat", type=int, default=1, help="how many times to time the warm count at the most "
                        "workers (the files give each and the median)")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, not {args.repeat}")
    result = measure(sorted(set(args.workers) | {1}), args.backends, log=lambda line: print(line, flush=True),
                     smoke=args.smoke, repeat=args.repeat,
                     on_row=lambda so_far: write(so_far, args.out, args.stem))  # a bench stopped midway keeps its rows
    write(result, args.out, args.stem)
    print((args.out / f"{args.stem}.md").read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
