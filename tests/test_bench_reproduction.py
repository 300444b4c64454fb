"""The whole-reproduction benchmark (issue 24, target 1): its commands, the studies' experiments, its sums."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "benchmarks"))
import bench_reproduction as bench  # noqa: E402


def test_commands_are_make_tables_figures_report() -> None:
    cmds = bench.commands(["a", "b"], 2)
    run = ["run", "experiment=a,b", "launcher.n_jobs=2", "--quiet"]
    assert cmds == [run, ["tables", "a,b"], ["compare", "a,b"], run, ["figures", "a,b"], ["report"]]
    makefile = (Path(__file__).parents[1] / "Makefile").read_text()  # what make tables / make figures run
    for command in ("forestlab run experiment=$$list launcher.n_jobs=$(JOBS) --quiet", "forestlab tables $$list",
                    "forestlab compare $$list", "forestlab figures $$list"):
        assert command in makefile


def test_study_experiments_leave_out_only_ours() -> None:
    from forestlab.config import group_options

    every = set(group_options("experiment"))
    studies = bench.experiments("studies")
    ours = every - set(studies)
    assert len(studies) == 19 and set(studies) <= every
    assert ours and all(n.startswith("wu2021_") or "_modern_" in n or n == "single" for n in ours), ours
    with pytest.raises(SystemExit, match="unknown experiment"):
        bench.experiments("uci_binary,uci_binnary")


def _log(tmp_path: Path, commands: list[str], end: int) -> Path:
    """A command log as bench_reproduction writes it: ``start``, one ``START END rc=0 COMMAND`` line each, ``end``."""
    log = tmp_path / "log"
    log.write_text("start 100 abc123\n" + "".join(f"{c}\n" for c in commands) + f"end {end}\n")
    return log


def test_summarise_subtracts_pauses(tmp_path: Path) -> None:
    run = "run experiment=e1 launcher.n_jobs=2 --quiet"  # the older targets: a command per experiment
    log = _log(tmp_path, [f"100 130 rc=0 .venv/bin/forestlab {run}", "130 132 rc=0 tables e1",
                          "130 135 rc=0 compare e1", f"135 136 rc=0 {run}", "136 140 rc=0 figures e1",
                          "140 150 rc=0 report"], 150)
    pauses = tmp_path / "pauses"
    pauses.write_text("pause 110\nresume 120\n")  # 10 s inside the first run
    out = bench.summarise(log, pauses)
    assert out["seconds_by_experiment"] == {"e1": 20 + 2 + 5 + 1 + 4, "(report)": 10}
    assert out["runs_s"] == 20 and out["paused_s_excluded"] == 10 and out["total_s"] == 42
    assert out["complete"] and out["met"] and out["commit"] == "abc123"
    log.write_text(log.read_text().replace("rc=0 figures", "rc=1 figures"))
    with pytest.raises(SystemExit, match="failed"):
        bench.summarise(log)


def test_summarise_one_pool_and_run_spans(tmp_path: Path) -> None:
    import json
    import sqlite3

    run = "forestlab run experiment=e1,e2 launcher.n_jobs=2 --quiet"
    log = _log(tmp_path, [f"100 160 rc=0 {run}", "160 164 rc=0 tables e1,e2", "164 166 rc=0 compare e1,e2",
                          f"166 167 rc=0 {run}", "167 171 rc=0 figures e1,e2", "171 181 rc=0 report"], 181)
    db = tmp_path / "runs.sqlite"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE runs (experiment TEXT, timings TEXT, finished_at REAL)")
    for exp, total, end in [("e1", 10.0, 110.0), ("e1", 20.0, 125.0), ("e2", 30.0, 160.0)]:
        con.execute("INSERT INTO runs VALUES (?, ?, ?)", (exp, json.dumps({"total": total}), end))
    con.commit()
    con.close()
    out = bench.summarise(log, store=db)
    every = "(every experiment, one command)"
    assert out["seconds_by_experiment"] == {every: 71, "(report)": 10}
    assert out["runs_s"] == 60 and out["total_s"] == 81 and out["tables_compare_figures_report_s"] == 21
    assert out["seconds_by_command"] == {"runs": 60, "tables": 4, "compare": 2, "rerun": 1, "figures": 4,
                                         "report": 10}
    assert out["experiments"] == 2
    assert out["runs_by_experiment"] == {"e1": {"span_s": 25.0, "cpu_s": 30.0, "runs": 2},
                                         "e2": {"span_s": 30.0, "cpu_s": 30.0, "runs": 1}}


def test_keep_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    """--keep makes the results folder there; a folder with anything in it would not be an empty store."""
    (tmp_path / "runs.sqlite").write_bytes(b"")
    with pytest.raises(SystemExit, match="not empty"):
        bench.run({}, "quickstart", 1, keep=tmp_path)
