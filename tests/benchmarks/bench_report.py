"""The report side's latency (issue 24, target 4): `forestlab tables` + `forestlab compare` of every experiment, and
`forestlab report`, on a full store, cold and warm, for today's checkout and a reference checkout in the same run.

    FORESTLAB_BENCH_REPORT_STORE=<dir>   the store (default /work/runs/main, the full store of the project's runs, when
                                         it exists; otherwise the benchmark is skipped, saying so). Only read: each
                                         side works on its own copy.
    FORESTLAB_BENCH_REPORT_REF=<commit>  the reference (default: 81f453d, main before the report's kept sections)
    FORESTLAB_BENCH_ROUNDS=<n>           rounds (default 2: a full store takes minutes a round)

Cold: the store's cache folder (the claims' verdicts, the report's kept sections: ``<results>/cache``) and the
command line's cache (``FORESTLAB_CACHE_DIR``: composed experiments, p-values) emptied before the command, the OS
file cache as it is. Warm: the same command again, nothing changed in the store. `tables` + `compare` is one figure
(tables first, then compare: compare's cold run finds the experiments tables composed, as `make tables` runs them).
Each figure is timed as whole processes: wall seconds, and CPU seconds (user + system of the children, which a busy
machine inflates less). Rounds alternate the sides (A B A B ...). Targets on 2 cores: tables + compare <= 120 s cold,
<= 20 s warm; report <= 30 s cold, <= 5 s warm.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
REFERENCE = os.environ.get("FORESTLAB_BENCH_REPORT_REF", "81f453d")
ROUNDS = int(os.environ.get("FORESTLAB_BENCH_ROUNDS", "2"))
DEFAULT_STORE = Path("/work/runs/main")

#: label -> (commands, whether cold, target in seconds)
FIGURES = {
    "tables + compare, cold": ([["tables"], ["compare"]], True, 120.0),
    "tables + compare, warm": ([["tables"], ["compare"]], False, 20.0),
    "report, cold": ([["report"]], True, 30.0),
    "report, warm": ([["report"]], False, 5.0),
}


def _store() -> Path | None:
    given = os.environ.get("FORESTLAB_BENCH_REPORT_STORE")
    store = Path(given) if given else DEFAULT_STORE
    return store if (store / "runs.sqlite").is_file() else None


def _reference_checkout(where: Path) -> Path:
    archive = subprocess.run(["git", "archive", REFERENCE], cwd=REPO, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive, check=True)
    return where


def _children_cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def _time(commands: list[list[str]], root: Path, results: Path, cache: Path, cold: bool) -> tuple[float, float]:
    """Wall and CPU seconds of ``commands`` run one after the other (after emptying the caches when ``cold``)."""
    if cold:
        shutil.rmtree(results / "cache", ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(root), "FORESTLAB_RESULTS_DIR": str(results),
           "FORESTLAB_CACHE_DIR": str(cache), "MPLBACKEND": "Agg"}
    cpu0, t0 = _children_cpu(), time.perf_counter()
    for args in commands:
        done = subprocess.run([sys.executable, "-m", "forestlab", *args], cwd=root, env=env, capture_output=True,
                              text=True)
        if done.returncode != 0:
            raise RuntimeError(f"forestlab {' '.join(args)} in {root} exited {done.returncode}: "
                               f"{done.stderr.strip()[-500:]}")
    return time.perf_counter() - t0, _children_cpu() - cpu0


def run(out: dict) -> None:
    store = _store()
    if store is None:
        out["report_latency"] = {"skipped": f"no store: set FORESTLAB_BENCH_REPORT_STORE to a results folder with "
                                            f"runs.sqlite ({DEFAULT_STORE} does not hold one)"}
        print(out["report_latency"]["skipped"], file=sys.stderr)
        return
    section: dict = {"reference": REFERENCE, "store": str(store), "rounds": ROUNDS,
                     "how": "median wall / CPU (user+sys) seconds of whole processes; cold: <results>/cache and "
                            "FORESTLAB_CACHE_DIR emptied first; warm: the same commands again"}
    with tempfile.TemporaryDirectory() as tmp:
        ref_root = Path(tmp) / "ref"
        ref_root.mkdir()
        _reference_checkout(ref_root)
        roots = {"before": ref_root, "after": REPO}
        stores, caches = {}, {}
        for side in roots:  # each side reads its own copy, with its own caches: a side's caches never serve the other
            stores[side] = Path(tmp) / f"store_{side}"
            shutil.copytree(store, stores[side], ignore=shutil.ignore_patterns("cache", "report", "tables",
                                                                               "figures", "logs", "*.lock"))
            caches[side] = Path(tmp) / f"cache_{side}"
        times: dict[str, dict[str, list[tuple[float, float]]]] = {f: {"before": [], "after": []} for f in FIGURES}
        for _ in range(ROUNDS):
            for side, root in roots.items():
                for label, (commands, cold, _target) in FIGURES.items():  # each warm figure right after its cold
                    times[label][side].append(_time(commands, root, stores[side], caches[side], cold))
        for label, (_commands, _cold, target) in FIGURES.items():
            wall = {s: statistics.median(w for w, _ in times[label][s]) for s in roots}
            cpu = {s: statistics.median(c for _, c in times[label][s]) for s in roots}
            speedup = cpu["before"] / cpu["after"]
            section[label] = (f"before {wall['before']:.1f} s wall / {cpu['before']:.1f} s CPU, after "
                              f"{wall['after']:.1f} s wall / {cpu['after']:.1f} s CPU ({speedup:.1f}x CPU); "
                              f"target <= {target:g} s: {'met' if wall['after'] <= target else 'NOT met'} (wall)"
                              f"{'' if cpu['after'] <= target else ', NOT met in CPU either'}")
    out["report_latency"] = section
