"""The whole reproduction (issue 24, target 1): `make tables figures report` from an empty store, timed per command.

It runs the commands the three make targets run, in their order, as separate processes in a fresh results folder
(``FORESTLAB_RESULTS_DIR``, and an empty ``FORESTLAB_CACHE_DIR``), with L = E1,E2,... the experiments:

    forestlab run experiment=L launcher.n_jobs=J --quiet        (every experiment's runs, one pool of workers)
    forestlab tables L; forestlab compare L
    forestlab run experiment=L launcher.n_jobs=J --quiet        (all done: nothing to run)
    forestlab figures L
    forestlab report

and writes one line per command to a log (``start end rc=N command``, epoch seconds), from which the section
``full_reproduction`` is summed: the seconds of each command and in total, and, read from the store
(``--store``), each experiment's share of the runs: the span from its first run's start to its last run's end
(the pool takes the jobs in plan order; experiments whose runs share a dataset, split and seed tag, as uci_binary
and uci_binary_stumps, go side by side and their spans overlap) and the CPU seconds of its runs. A log of the
earlier make targets (one command per experiment) is summed per experiment as before. The experiments are the
studies' 19 reproductions by default (``make study-experiments``: every registered one but those beyond the
studies, the PAC-Bayes successors' wu2021_rfc and issue 23's modern_*), the experiments of ``make reproduce``;
``--experiments all`` takes every registered one, as a bare ``make tables figures report``.

``--pauses FILE``: a log of ``pause <epoch>`` / ``resume <epoch>`` lines (the whole run stopped with SIGSTOP while
other work used the cores); the paused seconds inside each command are subtracted and reported.

It takes about three quarters of an hour on 2 cores, so ``make bench`` leaves it out; ``make bench-reproduction``
runs it (``tests/benchmarks/run.py --only reproduction``). ``--summarise LOG`` only sums an existing log (a log of
these commands run some other way, e.g. by the make targets under a shell that timed them), and ``--into bench``
writes that sum into bench/results.json and results.md.

    python tests/benchmarks/bench_reproduction.py [--experiments studies|all|E1,E2] [--n-jobs 2] [--log FILE]
                                                  [--keep DIR]
    python tests/benchmarks/bench_reproduction.py --summarise LOG [--pauses FILE] [--store DB] [--into bench]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def experiments(which: str) -> list[str]:
    """The experiments to run, in `forestlab list experiments` order (the order the make targets use); "studies"
    is `make study-experiments`'s list (what `make reproduce` runs)."""
    if which == "studies":
        return subprocess.run(["make", "-s", "study-experiments", f"BIN={Path(sys.executable).parent}"], cwd=ROOT,
                              check=True, capture_output=True, text=True).stdout.split()
    listed = subprocess.run([sys.executable, "-m", "forestlab", "list", "experiments"], check=True,
                            capture_output=True, text=True).stdout.split("\n")
    names = [line.split()[0] for line in listed if line.strip()]
    if which == "all":
        return names
    chosen = which.split(",")
    unknown = sorted(set(chosen) - set(names))
    if unknown:
        raise SystemExit(f"unknown experiment(s): {', '.join(unknown)}")
    return chosen


def commands(names: list[str], n_jobs: int) -> list[list[str]]:
    """The commands of `make tables figures report`, in order."""
    listed = ",".join(names)
    run = ["run", f"experiment={listed}", f"launcher.n_jobs={n_jobs}", "--quiet"]
    return [run, ["tables", listed], ["compare", listed], run, ["figures", listed], ["report"]]


def reproduce(names: list[str], n_jobs: int, log: Path, results: Path) -> None:
    """Run the commands into an empty results folder, one log line per command; stop at the first failure."""
    env = {**os.environ, "FORESTLAB_RESULTS_DIR": str(results), "FORESTLAB_CACHE_DIR": str(results / "flcache"),
           "MPLBACKEND": "Agg"}
    with log.open("a") as out:
        out.write(f"start {time.time():.3f} {_commit()}\n")
        for cmd in commands(names, n_jobs):
            start = time.time()
            done = subprocess.run([sys.executable, "-m", "forestlab", *cmd], env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
            out.write(f"{start:.3f} {time.time():.3f} rc={done.returncode} {' '.join(cmd)}\n")
            out.flush()
            if done.returncode:
                raise SystemExit(f"`forestlab {' '.join(cmd)}` failed:\n{done.stderr[-2000:]}")
        out.write(f"end {time.time():.3f}\n")


def _commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def _pauses(path: Path | None) -> list[tuple[float, float]]:
    """(pause, resume) intervals from a pause log."""
    if path is None or not path.is_file():
        return []
    spans, begun = [], None
    for line in path.read_text().split("\n"):
        word, _, value = line.partition(" ")
        if word == "pause":
            begun = float(value)
        elif word == "resume" and begun is not None:
            spans.append((begun, float(value)))
            begun = None
    return spans


def run_spans(store: Path) -> dict[str, dict[str, float]]:
    """Each experiment's runs in the store ``store`` (a results folder's runs.sqlite): the wall seconds from its
    first run's start (end less its stored time) to its last run's end, and the CPU seconds of its runs."""
    import sqlite3

    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT experiment, MIN(finished_at - json_extract(timings, '$.total')), "
                           "MAX(finished_at), SUM(json_extract(timings, '$.total')), COUNT(*) FROM runs "
                           "GROUP BY experiment ORDER BY MIN(finished_at)").fetchall()
    finally:
        con.close()
    return {name: {"span_s": round(end - start, 1), "cpu_s": round(cpu, 1), "runs": n}
            for name, start, end, cpu, n in rows if name is not None and start is not None}


def summarise(log: Path, pauses: Path | None = None, store: Path | None = None) -> dict:
    """The section: seconds per experiment and command kind, less the paused seconds, and the total; with
    ``store``, each experiment's run span and CPU seconds (:func:`run_spans`)."""
    spans = _pauses(pauses)
    per: dict[str, dict[str, float]] = {}
    by_command: dict[str, float] = {}
    listed: set[str] = set()
    paused_total = 0.0
    commit, ended = None, False
    for line in log.read_text().split("\n"):
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "start":
            commit = parts[2] if len(parts) > 2 else None
            continue
        ended = ended or parts[0] == "end"
        if not re.match(r"^[0-9.]+$", parts[0]) or len(parts) < 4:
            continue
        start, end, rc = float(parts[0]), float(parts[1]), parts[2]
        cmd = [p for p in parts[3:] if not p.startswith(("launcher.", "--"))]
        cmd = [p for p in cmd if not p.endswith("forestlab")]  # a shell log names the program
        if rc != "rc=0":
            raise SystemExit(f"a command failed in {log}: {line}")
        paused = sum(max(0.0, min(end, b) - max(start, a)) for a, b in spans)
        paused_total += paused
        kind = cmd[0]
        name = cmd[1].removeprefix("experiment=") if len(cmd) > 1 else "(report)"
        if "," in name:  # every experiment in one command (the runs: in one pool)
            listed = set(name.split(","))
            name = "(every experiment, one command)"
        slot = per.setdefault(name, {})
        key = "runs" if kind == "run" and "runs" not in slot else ("rerun" if kind == "run" else kind)
        slot[key] = slot.get(key, 0.0) + (end - start - paused)
        by_command[key] = by_command.get(key, 0.0) + (end - start - paused)
    experiments_s = {name: round(sum(v.values()), 1) for name, v in per.items()}
    total = sum(experiments_s.values())
    spans = run_spans(store) if store is not None and store.is_file() else None
    return {
        "commit": commit,
        "experiments": len(listed) or len([n for n in per if not n.startswith("(")]),
        "seconds_by_command": {k: round(v, 1) for k, v in by_command.items()},
        "seconds_by_experiment": experiments_s,
        "runs_s": round(sum(v.get("runs", 0.0) for v in per.values()), 1),
        "tables_compare_figures_report_s": round(sum(t for v in per.values() for k, t in v.items() if k != "runs"),
                                                 1),
        "total_s": round(total, 1),
        "total_min": round(total / 60, 1),
        "paused_s_excluded": round(paused_total, 1),
        "cores": os.cpu_count(),
        "target": "<= 45 min on 2 cores (issue 24)",
        "complete": ended,  # the log ends with the report (else a run still going, or stopped)
        "met": total <= 45 * 60 if ended else None,
        **({"runs_by_experiment": spans} if spans is not None else {}),
    }


def run(out: dict, which: str = "studies", n_jobs: int = 2, log: Path | None = None,
        pauses: Path | None = None, keep: Path | None = None) -> None:
    """Fill ``out["full_reproduction"]`` from a fresh run of the commands (about 45 min on 2 cores); with ``keep``
    (an empty or new folder), the results folder (store, tables, figures, report) is made there and kept."""
    if keep is not None and keep.exists() and any(keep.iterdir()):
        raise SystemExit(f"--keep {keep}: not empty (the reproduction starts from an empty store)")
    with tempfile.TemporaryDirectory() as tmp:
        log = log or Path(tmp) / "reproduction.log"
        results = keep if keep is not None else Path(tmp) / "results"
        reproduce(experiments(which), n_jobs, log, results)
        out["full_reproduction"] = summarise(log, pauses, results / "runs.sqlite")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--experiments", default="studies", help="studies (default), all, or E1,E2,...")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--log", type=Path, help="append the per-command log here (kept)")
    parser.add_argument("--pauses", type=Path, help="a pause/resume log whose paused seconds are subtracted")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="make the results folder (store, tables, figures, report) in DIR and keep it")
    parser.add_argument("--summarise", type=Path, metavar="LOG", help="only sum an existing log")
    parser.add_argument("--store", type=Path, metavar="DB",
                        help="with --summarise: the run store (runs.sqlite) whose experiments' run spans to add")
    parser.add_argument("--into", type=Path, metavar="DIR",
                        help="with --summarise: write the section into DIR/results.json and results.md")
    args = parser.parse_args()
    if args.summarise:
        section = summarise(args.summarise, args.pauses, args.store)
        print(json.dumps(section, indent=2))
        if args.into:
            from run import write

            previous = args.into / "results.json"
            results = json.loads(previous.read_text()) if previous.is_file() else {"when": time.strftime("%F %T")}
            results["full_reproduction"] = section
            write(results, args.into)
    else:
        results: dict = {}
        run(results, args.experiments, args.n_jobs, args.log, args.pauses, args.keep)
        print(json.dumps(results, indent=2))
