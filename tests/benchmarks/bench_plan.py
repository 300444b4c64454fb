"""Planning cost: resolving an experiment and expanding it into runs, for a plan far larger than any study's (the
quickstart experiment with 10,000 seeds: 60,000 runs). The whole `forestlab run --dry-run` command is timed too
(start-up, imports, the store's status query)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run(out: dict) -> None:
    from forestlab.config import load_experiment
    from forestlab.runner import plan

    overrides = ["experiment=quickstart", "seeds=10000"]
    best_resolve = best_plan = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        exp = load_experiment(overrides)
        t1 = time.perf_counter()
        specs = plan(exp)
        t2 = time.perf_counter()
        best_resolve, best_plan = min(best_resolve, t1 - t0), min(best_plan, t2 - t1)
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "FORESTLAB_RESULTS_DIR": tmp}
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "forestlab", "run", *overrides, "--dry-run"], cwd=REPO, env=env,
                       check=True, capture_output=True)
        dry = time.perf_counter() - t0
    out["planning"] = {
        "runs planned": len(specs),
        "resolve + validate, best of 3 (s)": round(best_resolve, 3),
        "plan 60,000 runs, best of 3 (s)": round(best_plan, 3),
        "whole `forestlab run experiment=quickstart seeds=10000 --dry-run` (s)": round(dry, 2),
    }
