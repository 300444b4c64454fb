"""Command-line latency (issue 20, part 8): how long a user waits for the commands that do little work, timed as
whole processes, for today's checkout and for a reference checkout in the same run (paired: A B A B ...).

    FORESTLAB_BENCH_REF=<commit>     the reference (default: 56b2a6b, main before the typed spec and results model)
    FORESTLAB_BENCH_STORE=<dir>      a results folder holding uci_binary's 540 runs (default: built once, by running
                                     the experiment, into ~/.cache/forestlab-bench/uci_binary; about 20 minutes)

The reference is exported with ``git archive`` into a temporary folder and imported first through PYTHONPATH, with
the same interpreter and packages. Both checkouts read a copy of the same store; `compare` and `tables` are timed
after one untimed call (their verdicts cached), as the issue's target says. Targets on a quiet 2-core machine: an
error or `forestlab list` <= 0.5 s, `compare` / `tables` of uci_binary <= 1 s, `status` over every experiment <= 1 s.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
REFERENCE = os.environ.get("FORESTLAB_BENCH_REF", "56b2a6b")
ROUNDS = int(os.environ.get("FORESTLAB_BENCH_ROUNDS", "5"))

#: (label, arguments, target in seconds or None, whether it needs an untimed call first, expected exit status)
COMMANDS = [
    ("error: run experiment=nonexistent", ["run", "experiment=nonexistent"], 0.5, False, 2),
    ("list experiments", ["list", "experiments"], 0.5, False, 0),
    ("run uci_binary --dry-run", ["run", "experiment=uci_binary", "--dry-run"], None, False, 0),
    ("compare uci_binary (540 runs)", ["compare", "uci_binary"], 1.0, True, 0),
    ("tables uci_binary (540 runs)", ["tables", "uci_binary"], 1.0, True, 0),
    ("status (every experiment)", ["status"], 1.0, False, 0),
]


def _store() -> Path:
    given = os.environ.get("FORESTLAB_BENCH_STORE")
    if given:
        return Path(given)
    cache = Path.home() / ".cache" / "forestlab-bench" / "uci_binary"
    if not (cache / "runs.sqlite").is_file():
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "forestlab", "run", "experiment=uci_binary", "--quiet"], cwd=REPO,
                       env={**os.environ, "FORESTLAB_RESULTS_DIR": str(cache)}, check=True)
    return cache


def _reference_checkout(where: Path) -> Path:
    archive = subprocess.run(["git", "archive", REFERENCE], cwd=REPO, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive, check=True)
    return where


def _time(args: list[str], root: Path, results: Path, expected: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(root), "FORESTLAB_RESULTS_DIR": str(results), "MPLBACKEND": "Agg"}
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "forestlab", *args], cwd=root, env=env, capture_output=True,
                          text=True)
    elapsed = time.perf_counter() - t0
    if done.returncode != expected:  # a command that fails fast is not a fast command
        raise RuntimeError(f"forestlab {' '.join(args)} in {root} exited {done.returncode}, expected {expected}: "
                           f"{done.stderr.strip()[-500:]}")
    return elapsed


def run(out: dict) -> None:
    store = _store()
    section: dict = {"reference": REFERENCE, "store": str(store), "rounds": ROUNDS}
    with tempfile.TemporaryDirectory() as tmp:
        ref_root = Path(tmp) / "ref"
        ref_root.mkdir()
        _reference_checkout(ref_root)
        roots = {"before": ref_root, "after": REPO}
        stores = {}
        for side in roots:  # each side reads its own copy: a side's caches never serve the other
            stores[side] = Path(tmp) / f"store_{side}"
            shutil.copytree(store, stores[side])
        for label, args, target, warm, expected in COMMANDS:
            if warm:
                for side, root in roots.items():
                    _time(args, root, stores[side], expected)
            times: dict[str, list[float]] = {"before": [], "after": []}
            for _ in range(ROUNDS):
                for side, root in roots.items():
                    times[side].append(_time(args, root, stores[side], expected))
            before, after = statistics.median(times["before"]), statistics.median(times["after"])
            line = f"before {before:.2f} s, after {after:.2f} s (median of {ROUNDS}), {before / after:.1f}x"
            if target is not None:
                line += f"; target <= {target} s: {'met' if after <= target else 'NOT met'}"
            section[label] = line
    out["cli_latency"] = section
