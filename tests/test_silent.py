"""Nothing silently ignored, nothing silently changed.

Every class of input that would otherwise run as if it had not been given (an override that lands nowhere, an odd
output folder, a parameter that cannot work) is refused: exit status 2, exactly one line on stderr starting with
``forestlab: error:`` that says what to write instead, and the store untouched: a results folder holding finished
runs before the bad command holds the same runs, with the same finish times, afterwards (and nothing new).

The store is filled once for the module (a tiny quickstart, through the real entry point). The cases run in process
(typer's CliRunner: a subprocess costs about 3 s of imports and Hydra setup each); a few representative ones, one per
class, also run through ``python -m forestlab`` in a subprocess, for the real exit status and stderr.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from forestlab.cli import app
from tests.conftest import REPO, run_cli

runner = CliRunner()


def _snapshot(db: Path) -> dict[str, object]:
    """What must not change: every stored run (key, status, finish time) and every recorded plan."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        runs = {k: (s, t) for k, s, t in con.execute("SELECT key, status, finished_at FROM runs")}
        plans = {p: t for p, t in con.execute("SELECT plan_id, recorded_at FROM plans")}
    finally:
        con.close()
    return {"runs": runs, "plans": plans}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, shared_data_dir: Path) -> dict[str, object]:
    """A results folder with finished runs (quickstart: 2 datasets x 3 algorithms x 1 seed, 5 trees), its
    environment, and a snapshot of what it holds."""
    results = tmp_path_factory.mktemp("silent") / "results"
    env = {"FORESTLAB_RESULTS_DIR": str(results), "FORESTLAB_DATA_DIR": str(shared_data_dir)}
    res = run_cli("run", "experiment=quickstart", "seeds=1", "limits.max_estimators=5", "--quiet", env=env)
    assert res.returncode == 0, res.stderr
    db = results / "runs.sqlite"
    snap = _snapshot(db)
    assert sorted(s for s, _ in snap["runs"].values()) == ["done"] * 6
    return {"env": env, "db": db, "snapshot": snap}


@pytest.fixture
def in_store(store, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    """The module's store, as this process's results folder (for the in-process cases)."""
    for key, value in store["env"].items():
        monkeypatch.setenv(key, value)
    return store


def _assert_refused(code: int, stderr: str, message: str, absent: str | None = None) -> None:
    assert code == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("forestlab: error: "), lines[0]
    assert "Traceback" not in stderr
    assert message in lines[0], lines[0]
    if absent is not None:
        assert absent not in lines[0], lines[0]


def _assert_store_unchanged(store) -> None:
    assert _snapshot(store["db"]) == store["snapshot"]


# (command and overrides, a fragment of the one error line, a fragment the line must not hold or None)
RUN = ["run"]
CASES = [
    # --- an override that lands nowhere: a key nobody reads, a choice the experiment does not use
    (RUN + ["experiment=quickstart", "+experiment.params.n_estimatorz=300"],
     "experiment.params.n_estimatorz is a parameter of none of the experiment's algorithms (rf, sorf, mincq), so it "
     "would change nothing; did you mean 'n_estimators'?", None),
    (RUN + ["experiment=quickstart", "+experiment.params.random_state=3"],
     "experiment.params.random_state is a parameter of none of the experiment's algorithms", None),
    (RUN + ["+algorithm.param.n_estimators=300"], "did you mean 'params'?", None),
    (RUN + ["datasets=[]"], "unknown config key 'datasets'", "+datasets"),
    (RUN + ["algorithm=[rf,sorf]"],
     "algorithm= takes one option name, got the list [rf,sorf]; to run several, write "
     "'experiment.algorithms=[rf,sorf]'", None),
    (RUN + ["dataset=[sonar,ringnorm]"], "to run several, write 'experiment.datasets=[sonar,ringnorm]'", None),
    (RUN + ["experiment=quickstart", "dataset=sonar"],
     "dataset=sonar beside experiment=quickstart: that experiment runs the datasets wdbc_sklearn, ringnorm, so the "
     "choice would change nothing; to run sonar instead write 'experiment.datasets=[sonar]'", None),
    (RUN + ["experiment=quickstart", "algorithm=gboost", "algorithm.params.n_estimators=5"],
     "algorithm=gboost beside experiment=quickstart: that experiment runs the algorithms rf, sorf, mincq", None),
    (RUN + ["experiment=quickstart", "limits.max_datasets=1", "dataset=ringnorm"],  # dropped by the limit
     "dataset=ringnorm beside experiment=quickstart: that experiment runs the datasets wdbc_sklearn,", None),
    (RUN + ["experiment=quickstart", "experiment.datasets=[ringnorm,ringnorm]"],
     "experiment datasets list ['ringnorm', 'ringnorm'] names 'ringnorm' twice", None),
    (RUN + ["experiment=quickstart", "experiment.algorithms=[rf,rf]"],
     "experiment algorithms list ['rf', 'rf'] names 'rf' twice", None),
    (RUN + ["metrics=[risk,risk]"], "experiment metrics list ['risk', 'risk'] names 'risk' twice", None),
    (RUN + ["+seedz=3"], "unknown config key 'seedz' (nothing reads it); did you mean 'seed'?", None),
    (RUN + ["+protocol.trainsize=0.3"],
     "unknown key 'trainsize' in protocol (nothing reads it); did you mean 'train_size'?", None),
    (RUN + ["protocol=kfold", "protocol.train_size=0.3"], "unknown config key 'protocol.train_size'", None),
    (RUN + ["+launcher.njobs=2"], "unknown key 'njobs' in launcher (nothing reads it); did you mean 'n_jobs'?",
     None),
    (RUN + ["+paths.result_dir=x"],
     "unknown key 'result_dir' in paths (nothing reads it); did you mean 'results_dir'?", None),
    (RUN + ["+experiment.tabels=[]"],
     "unknown key 'tabels' in experiment (nothing reads it); did you mean 'tables'?", None),
    (RUN + ["+limits.foo=1"], "unknown key 'foo' in limits (nothing reads it)", None),
    (RUN + ["dataset=sonar", "+dataset.foo=1"], "unknown key 'foo' in dataset 'sonar' (nothing reads it)", None),
    (RUN + ["experiment=quickstart", "+dataset.foo=1"], "unknown key 'foo' in dataset 'wdbc_sklearn'", None),
    # the reports compose the same configuration, with the same checks
    (["tables", "quickstart", "+launcher.njobs=2"], "unknown key 'njobs' in launcher", None),
    (["status", "quickstart", "+seedz=3"], "unknown config key 'seedz'", None),
    (["compare", "quickstart", "datasets=[]"], "unknown config key 'datasets'", "+datasets"),
    (["figures", "quickstart", "+paths.result_dir=x"], "unknown key 'result_dir' in paths", None),
    # --- an odd output folder: empty (the current folder), the filesystem root, the repository itself
    (RUN + ["paths.results_dir="], "paths.results_dir must name a folder, got ''", None),
    (RUN + ["paths.results_dir=/"], "paths.results_dir='/' is the filesystem root", None),
    (RUN + ["paths.results_dir=."], "paths.results_dir='.' is the repository's own folder", None),
    (RUN + ["paths.reports_dir="], "paths.reports_dir must name a folder, got ''", None),
    (RUN + ["paths.reports_dir=/"], "paths.reports_dir='/' is the filesystem root", None),
    (RUN + ["paths.data_dir=."], "paths.data_dir='.' is the repository's own folder", None),
    (RUN + ["paths.log_file=/"], "paths.log_file='/' is a folder, not a file", None),
    # --- a parameter that cannot work
    (RUN + ["dataset=sonar", "algorithm=rf", "algorithm.params.criterion=bogus"],
     "algorithm 'rf': params.criterion must be a str among", None),
    (RUN + ["dataset=sonar", "algorithm=bagging", "algorithm.params.max_depth=100000000000"],
     "algorithm 'bagging': max_depth=100000000000 is too large for this platform (at most 2147483647)", None),
    (RUN + ["dataset=sonar", "protocol=oob", "+algorithm.grid.max_depth=[5,100000000000]"],
     "algorithm 'rf': grid.max_depth=100000000000 is too large for this platform", None),
    (RUN + ["experiment=uci_multiclass", "experiment.algorithms=[rf,mincq]"],
     "algorithm 'mincq' is binary only, but dataset 'image' is multiclass", None),
    (RUN + ["dataset=image", "algorithm=mincq"], "algorithm 'mincq' is binary only", None),
    (RUN + ["+algorithm.params.random_state=3"], "random_state is set by forestlab from the seeds; use seed=N", None),
    (RUN + ["seeds=5000"], "experiment quickstart plans 30000 runs, more than limits.max_runs=20000: pass --yes", None),
    (RUN + ["dataset=sonar", "algorithm.params.n_estimators=10000"],
     "algorithm 'rf' grows 10000 trees per forest, more than limits.max_trees=5000: pass --yes", None),
    (RUN + ["dataset=sonar", "protocol=resample"],
     "protocol kind resample draws fresh training sets from a generator, but dataset 'sonar' is not generated", None),
    (RUN + ["experiment=uci_binary", "dataset.target=foo"],
     "dataset.target changes dataset 'wdbc_sklearn', which experiment uci_binary does not run", None),
    (RUN + ["dataset=sonar", "+algorithm.grid.n_estimators=[5,7]"],
     "algorithm 'rf' has a grid (n_estimators) but no model selection, so the grid would be ignored", None),
    (RUN + ["dataset=sonar", "launcher.scheduler=tcp://127.0.0.1:8786"],
     "is a dask scheduler, but the launcher is loky: add launcher=dask", None),
    (RUN + ["experiment=quickstart", "algorithm.params.n_estimators=7", "+experiment.params.n_estimators=300"],
     "algorithm.params.n_estimators and experiment.params.n_estimators are both given", None),
    (RUN + ["+seeds=3"], "'seeds' exists already: write seeds=VALUE (without +)", None),
    (RUN + ["paths.results_dir=conf/results"], "is inside the repository's conf/ folder", None),
    (RUN + ["dataset=sonar", "--log-file", "/tmp"], "paths.log_file='/tmp' is a folder, not a file", None),
    # --- a report naming what the experiment does not have (was a column of '—')
    (["tables", "quickstart", "seeds=1", "limits.max_estimators=5", "experiment.tables.0.cells.0.metric=nope"],
     "table 'test_risk', cell 1: no run of rf stored 'nope'; stored values:", None),
    (["compare", "quickstart", "seeds=1", "limits.max_estimators=5", "experiment.tables.0.pairs=[[nope,rf]]"],
     "algorithm 'nope' is not one of the experiment's (rf, sorf, mincq)", None),
    (["figures", "quickstart", "seeds=1", "limits.max_estimators=5", "experiment.figures.0.algorithm=gboost"],
     "figure 'error_curves': algorithm 'gboost' is not one of the experiment's", None),
]
# One per class, through the real entry point as well (the first in `make test`, every one in `make test-full`;
# each is also a case of CASES, refused in this process).
SUBPROCESS = [
    ["run", "experiment=quickstart", "+experiment.params.n_estimatorz=300"],
    ["run", "experiment=quickstart", "dataset=sonar"],
    ["run", "paths.results_dir=."],
    ["run", "experiment=uci_multiclass", "experiment.algorithms=[rf,mincq]"],
]
_BY_ARGS = {tuple(args): (message, absent) for args, message, absent in CASES}


@pytest.mark.parametrize("args, message, absent", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_refused_in_one_line_and_the_store_is_untouched(in_store, monkeypatch, args, message, absent):
    monkeypatch.chdir(REPO)  # `paths.results_dir=.` is the repository only when run from it
    res = runner.invoke(app, args)
    assert isinstance(res.exception, SystemExit), res.exception  # anything else would have been a traceback
    _assert_refused(res.exit_code, res.stderr, message, absent)
    _assert_store_unchanged(in_store)


@pytest.mark.parametrize("args", [SUBPROCESS[0], *(pytest.param(a, marks=pytest.mark.slow) for a in SUBPROCESS[1:])],
                         ids=[" ".join(a) for a in SUBPROCESS])
def test_refused_through_the_real_entry_point(store, args):
    res = run_cli(*args, env=store["env"], cwd=REPO)
    _assert_refused(res.returncode, res.stderr, *_BY_ARGS[tuple(args)])
    _assert_store_unchanged(store)


def test_datasets_points_to_experiment_datasets(in_store):
    """`datasets=[...]` is not a key: the message points to experiment.datasets, never to `+datasets=`."""
    res = runner.invoke(app, ["run", "datasets=[sonar]"])
    _assert_refused(res.exit_code, res.stderr, "did you mean 'experiment.datasets'?", "+datasets")


# ---------------------------------------------------------------------------------------------------------------
# What stays accepted: a dataset or algorithm named without an experiment is a single run; named beside an
# experiment that lists it, it says which of the experiment's datasets `dataset.*` overrides change.
def test_a_single_run_without_an_experiment(in_store):
    res = runner.invoke(app, ["run", "--dry-run", "dataset=sonar", "algorithm=rf"])
    assert res.exit_code == 0, res.stderr
    assert res.stdout.startswith("experiment single: 1 runs (1 datasets x 1 algorithms x 1 seeds)"), res.stdout
    _assert_store_unchanged(in_store)


def test_a_dataset_the_experiment_lists_is_accepted(in_store):
    res = runner.invoke(app, ["run", "--dry-run", "experiment=uci_binary", "dataset=sonar",
                              "algorithm.params.n_estimators=7"])
    assert res.exit_code == 0, res.stderr
    assert res.stdout.startswith("experiment uci_binary: 1440 runs (18 datasets x 8 algorithms x 10 seeds)"), \
        res.stdout
    _assert_store_unchanged(in_store)
