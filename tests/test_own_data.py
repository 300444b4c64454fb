"""The README's "Your own data" walk-through, as written: a study's comparison run on a user's CSV under a name of
its own (``experiment.name=mine``), read back by that name (tables, compare, status, export, report, and
``forestlab.read_results(...).to_frame()`` in Python), never touching the study's outputs.

The commands, the CSV-making script, the dataset config and the outputs shown are parsed from README.md: the slow
test runs every command through the real entry point and checks every output line the README shows (times and dates
elided there with "…"); the fast one runs the same commands in process on 10-tree forests (``limits.max_estimators=10``)
and checks what does not depend on the numbers. Also here: how later commands find a named experiment (the
definition recorded with its plan), and what the study's claims say on it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import shlex
import shutil
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from forestlab.cli import app
from tests.conftest import REPO, run_cli

runner = CliRunner()
FAST = ["limits.max_estimators=10"]  # the fast variant's forests: 10 trees (the README's run has the study's 100)


def _section() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index("## Your own data")
    end = text.index("\n## ", start + 3)
    return text[start:end]


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", _section(), flags=re.S)


def walkthrough() -> list[tuple[list[str], list[str]]]:
    """The console block: each ``$ command`` (split as a shell would) with the output lines shown under it."""
    (console,) = _blocks("console")
    steps: list[tuple[list[str], list[str]]] = []
    for line in console.splitlines():
        if line.startswith("$ "):
            steps.append((shlex.split(line[2:]), []))
        else:
            steps[-1][1].append(line)
    return steps


def repl() -> list[tuple[str, list[str]]]:
    """The Python block: each ``>>>`` statement with the output lines shown under it."""
    blocks = [b for b in _blocks("python") if b.startswith(">>> ")]
    assert len(blocks) == 1
    out: list[tuple[str, list[str]]] = []
    for line in blocks[0].splitlines():
        if line.startswith(">>> "):
            out.append((line[4:], []))
        else:
            out[-1][1].append(line)
    return out


@pytest.fixture
def walk_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder laid out as the README's reader has it: a copy of conf/ with the README's dataset config, the CSV
    its script makes, and results/ and data/ made there (the reader runs from the repository's folder)."""
    conf = tmp_path / "conf"
    shutil.copytree(REPO / "conf", conf)
    (yaml_block,) = _blocks("yaml")
    (conf / "dataset" / "mydata.yaml").write_text(yaml_block, encoding="utf-8")
    (script,) = [b for b in _blocks("python") if "make_mydata.py" in b]
    monkeypatch.chdir(tmp_path)
    exec(compile(script, "make_mydata.py", "exec"), {})  # noqa: S102 - the README's own script, as a reader runs it
    assert (tmp_path / "mydata.csv").is_file()
    monkeypatch.setenv("FORESTLAB_CONF_DIR", str(conf))
    for var in ("FORESTLAB_RESULTS_DIR", "FORESTLAB_DATA_DIR", "FORESTLAB_ROOT", "FORESTLAB_LOG_FILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    return tmp_path


def _text(page: str) -> str:
    import html

    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


def _shown(lines: list[str]) -> list[str]:
    """The README's output lines that must appear as they are (those with an elided part "…" cannot)."""
    return [line.rstrip() for line in lines if line.strip() and "…" not in line]


def _check_output(expected: list[str], actual: str, where: Path, command: list[str]) -> None:
    got = {line.rstrip() for line in actual.replace(f"{where.resolve()}/", "").splitlines()}
    missing = [line for line in _shown(expected) if line not in got]
    assert not missing, f"{shlex.join(command)}: README lines not in the output:\n" + "\n".join(missing) + \
        "\n--- output:\n" + actual


@pytest.mark.slow
def test_the_readme_walkthrough_prints_what_the_readme_shows(walk_dir):
    """Every command of the walk-through through the real entry point, every output line checked."""
    for command, expected in walkthrough():
        if command[0] == "cat":
            actual = (walk_dir / command[1]).read_text(encoding="utf-8")
        else:
            assert command[0] == "forestlab"
            done = run_cli(*command[1:], cwd=walk_dir, timeout=300)
            assert done.returncode == 0, done.stderr
            actual = done.stdout + done.stderr
        _check_output(expected, actual, walk_dir, command)
    namespace: dict[str, object] = {}
    for statement, expected in repl():
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            exec(compile(statement, "README", "exec"), namespace)  # noqa: S102 - the README's own statements
        _check_output(expected, buffer.getvalue(), walk_dir, [statement])
    site = walk_dir / "results" / "report"
    yours = _text((site / "yours.html").read_text(encoding="utf-8"))
    assert "Experiment mine" in yours and "Provenance of mine" in yours
    assert re.search(r"forestlab commits that ran them ([0-9a-f]{40}|unknown)\S* .*\(24 runs\)", yours)
    # its rerun command is its whole definition (the store is not needed to rerun it)
    assert ("forestlab run experiment=uci_binary 'experiment.datasets=[mydata]' experiment.name=mine seeds=3 "
            "launcher.n_jobs=1") in yours
    index = _text((site / "index.html").read_text(encoding="utf-8"))
    assert re.search(r"your experiments Your experiments: .* 1 of 1 .* 24 done, 0 failed", index)
    study = (site / "zirakiza2013.html").read_text(encoding="utf-8")
    assert 'id="mine"' not in study  # never counted in the study's page


def test_the_readme_walkthrough_runs_fast_on_small_forests(walk_dir):
    """The same commands in process, on 10-tree forests: each succeeds and says what does not depend on the numbers;
    the study's own outputs are never written."""
    outputs: dict[str, str] = {}
    for command, _ in walkthrough():
        if command[0] == "cat" or command[1] == "report":  # the report (seconds) is the slow test's
            continue
        # the run on small forests; the reading commands as written (the recorded definition holds the 10 trees)
        res = runner.invoke(app, command[1:] + (FAST if command[1] == "run" else []))
        assert res.exit_code == 0, f"{shlex.join(command)}: {res.output}"
        outputs[command[1]] = res.output
    assert "experiment mine: 24 done, 0 failed" in outputs["run"]  # 8 learners x 3 seeds
    table = (walk_dir / "results" / "tables" / "mine" / "table7_1.md").read_text(encoding="utf-8")
    assert "Experiment `mine`" in table and re.search(r"^\| mydata \|.* \| 24/24 \|$", table, flags=re.M)
    assert not (walk_dir / "results" / "tables" / "uci_binary").exists()  # the study's tables: untouched
    compare = outputs["compare"]
    assert "== mine (zirakiza2013) ==" in compare and "published vs reproduced" not in compare  # nothing published
    assert re.search(r"\[(HOLDS|DOES NOT HOLD|INCONCLUSIVE)\] full_trees_rf_best", compare)  # judged on mydata
    for claim in ("hyperparameters", "overall"):
        assert f"[NOT TESTED] {claim}" in compare
    assert compare.count("mine is an experiment of your own (experiment.name=), so this claim is not judged") == 2
    assert re.search(r"^mine +24 +24 +0 +0 +0$", outputs["status"], flags=re.M)
    frame = pd.read_csv(walk_dir / "mine.csv")
    assert len(frame) == 24 and set(frame["algorithm"]) == {"rf", "sorf", "mincq", "fo", "tnd", "cctnd", "ccpbb",
                                                        "cbound_joint"}
    assert {"dataset", "repetition", "fold", "seed", "test_risk", "param.n_estimators", "git_commit"} <= set(frame)
    assert (frame["param.n_estimators"] == 10).all() and (frame["experiment"] == "mine").all()
    if importlib.util.find_spec("pyarrow") is not None:  # the same frame as Parquet (mixed-type columns as text)
        res = runner.invoke(app, ["export", "mine", "--out", "mine.parquet"])
        assert res.exit_code == 0, res.output
        parquet = pd.read_parquet(walk_dir / "mine.parquet")
        assert list(parquet.columns) == list(frame.columns) and parquet["test_risk"].tolist() == pytest.approx(
            frame["test_risk"].tolist())
    _check_named(walk_dir)


def _check_named(walk_dir: Path) -> None:
    """How the reading commands found ``mine``: the definition its run recorded with its plan."""
    from forestlab.config import expand_named, load_experiment
    from forestlab.store import Store

    with Store(walk_dir / "results", readonly=True) as store:
        recorded = store.recorded_definition("mine")
        assert store.named_experiments() == ["mine"]
    assert recorded == ["experiment=uci_binary", "experiment.datasets=[mydata]", "experiment.name=mine", "seeds=3",
                        *FAST]  # all of the run's overrides but paths, launcher and debug
    # the name alone composes it again; an override given again wins over the recorded one
    assert expand_named(["experiment=mine", "debug=smoke"]) == [*recorded, "debug=smoke"]
    assert expand_named(["experiment=mine", "seeds=5"]) == [*(o for o in recorded if o != "seeds=3"), "seeds=5"]
    exp = load_experiment(["experiment=mine"])
    assert exp.name == "mine" and exp.study == "zirakiza2013" and [d.name for d in exp.datasets] == ["mydata"]
    # smoke runs of it are another configuration, asked for as for any experiment
    res = runner.invoke(app, ["tables", "mine", "debug=smoke"])
    assert res.exit_code == 0 and "no runs stored for this configuration of mine with debug=smoke" in res.output
    # an unknown name says where it looked; a registered name cannot be taken
    res = runner.invoke(app, ["tables", "theirs"])
    assert res.exit_code == 2 and "unknown experiment 'theirs'" in res.output
    assert "experiment.name=theirs" in res.output
    res = runner.invoke(app, ["run", "experiment=uci_binary", "experiment.name=uci_binary_stumps", "--dry-run"])
    assert res.exit_code == 2 and "is the name of the registered experiment" in res.output


def test_study_run_keys_are_shared_by_a_named_experiment_and_plan_ids_unchanged(walk_dir):
    """A named experiment on the study's own dataset plans the study's run keys (they are reused); the study's
    experiment keeps its plan id, whatever the named one records."""
    from forestlab.config import load_experiment
    from forestlab.runner import plan

    theirs = load_experiment(["experiment=uci_binary", "experiment.datasets=[sonar]", "seeds=2"])
    mine = load_experiment(["experiment=uci_binary", "experiment.datasets=[sonar]", "experiment.name=mine2",
                            "seeds=2"])
    assert [s.key for s in plan(theirs)] == [s.key for s in plan(mine)]
    assert theirs.plan_id != mine.plan_id  # a plan of its own, so the study's plan is never replaced


def test_a_dataset_without_split_sizes_gets_the_documented_default_and_a_typo_is_still_refused(walk_dir):
    from forestlab.config import load_experiment
    from forestlab.errors import ConfigError
    from forestlab.experiment import protocol_for

    exp = load_experiment(["experiment=uci_binary", "experiment.datasets=[mydata,sonar]", "experiment.name=m"])
    sizes = {d.name: protocol_for(exp, d) for d in exp.datasets}
    assert sizes["mydata"]["train_size"] == 0.5 and sizes["mydata"]["test_size"] is None
    assert (sizes["sonar"]["train_size"], sizes["sonar"]["test_size"]) == (104, 104)  # the study's, as before
    assert any("mydata has no split sizes for zirakiza2013" in n for n in exp.notes)
    exp = load_experiment(["experiment=uci_binary", "experiment.datasets=[mydata]", "experiment.name=m",
                           "protocol.train_size=0.7"])
    assert protocol_for(exp, exp.datasets[0])["train_size"] == 0.7
    with pytest.raises(ConfigError, match="has no split sizes for study 'nostudy'"):
        load_experiment(["experiment=uci_binary", "experiment.datasets=[sonar]", "protocol.sizes_from=nostudy"])


def test_a_single_run_of_several_algorithms_tables_them_all(walk_dir):
    args = ["dataset=mydata", "experiment.algorithms=[rf,sorf,mincq]", *FAST]
    res = runner.invoke(app, ["run", *args])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["tables", *args])
    assert res.exit_code == 0, res.output
    header = next(line for line in (walk_dir / "results" / "tables" / "single" / "summary.md").read_text(
        encoding="utf-8").splitlines() if line.startswith("| dataset"))
    for algorithm in ("rf", "sorf", "mincq"):
        assert f"| {algorithm} test_risk |" in header


def test_export_says_what_it_needs(walk_dir, monkeypatch):
    res = runner.invoke(app, ["export", "mine"])
    assert res.exit_code == 2 and "needs --out FILE.csv" in res.output
    res = runner.invoke(app, ["export", "mine", "--out", "runs.json"])
    assert res.exit_code == 2 and "must end in .csv or .parquet" in res.output
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pyarrow" else real(name, *a))
    res = runner.invoke(app, ["export", "mine", "--out", "runs.parquet"])
    assert res.exit_code == 2 and "writing Parquet needs pyarrow, which is not installed" in res.output
    assert not (walk_dir / "runs.parquet").exists()
