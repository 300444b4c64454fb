"""The whole of pisetta2010 Table 1 (12 datasets x 20 splits x 4 learners = 960 runs: the forest's vote, the
forest-kernel SVM with C chosen on an inner split, and the two extensions) timed as one `forestlab run` command with
n_jobs=2 in a fresh results folder. Target: 30 minutes on 2 cores. Needs the datasets (FORESTLAB_DATA_MIRROR or the
cache). About 13 minutes.
"""

from __future__ import annotations

import os

from bench_runner import _cli_wall


def run(out: dict) -> None:
    wall = _cli_wall(["experiment=pisetta2010_table1"], 2)
    out["pisetta2010_table1"] = {"runs": 960, "n_jobs": 2, "wall_s": round(wall, 1), "wall_min": round(wall / 60, 2),
                                 "cores": os.cpu_count(), "target_min": 30, "meets_target": wall < 30 * 60}
