"""Bad input on the command line: one line on stderr starting with ``forestlab: error:``, exit status 2, no
traceback, nothing written. Plus a property test that throws random override strings at ``forestlab run``.

In process (typer's CliRunner) for speed; test_cli.py checks the same contract through the real entry point."""

from __future__ import annotations

import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from forestlab.cli import app

runner = CliRunner()


def _assert_one_clear_error(res, message: str | None = None) -> None:
    assert res.exit_code == 2, (res.stdout, res.stderr)
    assert isinstance(res.exception, SystemExit), res.exception  # anything else would have been a traceback
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("forestlab: error: ")
    assert "Traceback" not in res.stderr
    if message is not None:
        assert message in lines[0], lines[0]


CASES = [
    # malformed overrides
    (["seeds=="], "malformed override"),
    (["seeds=[1,"], "malformed override"),
    (["=3"], "malformed override '=3': no KEY before '='"),
    (["seeds"], "malformed override"),
    (["experiment="], "experiment= needs an option name; valid experiment names: "),
    (["paths=5"], "a config group takes an option name; valid paths names: default"),
    # unknown names, listing the valid ones
    (["experiment=nope"], "unknown experiment 'nope'; valid experiment names: "),
    (["dataset=nope"], "unknown dataset 'nope'; valid dataset names: adult,"),
    (["algorithm=nope"], "unknown algorithm 'nope'; valid algorithm names: "),
    (["launcher=nope"], "unknown launcher 'nope'; valid launcher names: dask, loky"),
    (["debug=nope"], "unknown debug 'nope'; valid debug names: smoke"),
    (["nokey=3"], "unknown config key 'nokey'"),
    (["algorithm.params.foo=1"], "unknown config key 'algorithm.params.foo' (valid keys at 'algorithm.params': "),
    (["+algorithm.params.foo=1"], "algorithm 'rf': unknown parameter params.foo; valid parameters: "),
    (["experiment.datasets=[ringnorm,nope]"], "experiment.datasets: unknown dataset 'nope'"),
    (["metrics=[risk,nope]"], "unknown metric 'nope'; valid metrics: "),
    # wrong types
    (["seeds=abc"], "seeds must be an integer, got 'abc'"),
    (["launcher.n_jobs=two"], "launcher.n_jobs must be an integer, got 'two'"),
    (["algorithm.params.n_estimators=ten"], "algorithm 'rf': params.n_estimators must be an int in the range [1, inf)"),
    (["protocol.train_size=half"], "protocol.train_size must be an integer or a fraction, got 'half'"),
    (["algorithm.params.max_features=banana"], "algorithm 'rf': params.max_features must be an int in the range "
                                               "[1, inf), a float in the range (0.0, 1.0], a str among {"),
    (["algorithm.params.max_features=true"], "} or None, got True"),
    (["+experiment.params.max_features=banana"], "} or None, got 'banana'"),
    (["protocol.stratify=maybe"], "protocol.stratify must be true or false, got 'maybe'"),
    (["limits=5"], "limits must be a mapping"),
    (["experiment.tables=5"], "experiment.tables must be a list of mappings"),
    (["launcher=dask", "launcher.scheduler=nonsense"], "launcher.scheduler must be a dask scheduler address"),
    # out of range
    (["algorithm.params.max_features=0"], "algorithm 'rf': params.max_features must be an int in the range [1, inf)"),
    (["algorithm.params.max_features=1.5"], "} or None, got 1.5"),
    (["algorithm.params.n_estimators=-5"], "algorithm 'rf': params.n_estimators must be an int in the range [1, inf), "
                                           "got -5"),
    (["algorithm.params.min_samples_leaf=0"], "algorithm 'rf': params.min_samples_leaf must be an int in the range "
                                              "[1, inf) or a float in the range (0.0, 1.0), got 0"),
    (["algorithm=gboost", "algorithm.params.n_estimators=0"], "algorithm 'gboost': params.n_estimators must be an int"),
    (["seeds=0"], "seeds must be >= 1, got 0"),
    (["seed=-1"], "seed must be >= 0, got -1"),
    (["seed=99999999999999999999"], "seed must be <= 9223372036854775807"),
    (["launcher.n_jobs=0"], "launcher.n_jobs must be -1 (all cores) or a positive integer, got 0"),
    (["protocol.train_size=1.5"], "protocol.train_size as a fraction must be in (0, 1), got 1.5"),
    (["protocol=oob", "+algorithm.grid.n_estimators=[]"],
     "algorithm 'rf': grid.n_estimators must be a non-empty list of values"),
    (["+algorithm.grid.n_estimators=[5,7]"], "has a grid (n_estimators) but no model selection, so the grid would be "
     "ignored"),
    (["protocol=oob", "+algorithm.grid.n_estimators=[10,-2]"], "grid.n_estimators must be an int in the range "
                                                               "[1, inf), got -2"),
    (["algorithm.grid.n_estimators=[]"], "unknown config key 'algorithm.grid.n_estimators' (algorithm.grid has no "
                                         "keys)"),
    (["protocol.train_size=100000"], "dataset 'wdbc_sklearn' has 569 points, too few for 100000 training points"),
    (["dataset=sonar", "protocol.train_size=150", "protocol.test_size=100"],
     "dataset 'sonar' has 208 points, too few for 150 training and 100 test points"),
    (["protocol=kfold", "protocol.n_folds=1000"], "protocol.n_folds=1000 is more than the 569 points"),
    (["experiment=uci_binary", "protocol.sizes_from=nostudy"], "has no split sizes for study 'nostudy'"),
    # names that would become paths outside the results and data folders
    (["experiment.name=a/b"], "experiment.name must be a plain name"),
    (["experiment.name=.."], "experiment.name must be a plain name"),
    (["experiment.study=../x"], "experiment.study must be a plain name"),
    (["experiment.tables.0.name=../../x"], "experiment.tables[0].name must be a plain name"),
    (["experiment.figures.0.name=/tmp/x"], "experiment.figures[0].name must be a plain name"),
    (["dataset=sonar", "dataset.name=../x"], "dataset '../x': name must be a plain name"),
    (["dataset=sonar", "dataset.source.folder=../../etc"], "source.folder must be a relative path inside the data"),
    (["dataset=sonar", "dataset.source.files.0.name=/etc/passwd"], "source.files[0].name must be a relative path"),
    # the two-sample tests and the experiments' own seeds per dataset (depecker2010 Table 6.1)
    (["experiment=depecker2010_table6_1", "algorithm=mmd_boot", "algorithm.params.null_distribution=pearson"],
     "algorithm 'mmd_boot': params.null_distribution must be a str among"),
    (["experiment=depecker2010_table6_1", "algorithm=treerank_wilcoxon",
      "+algorithm.params.ranker_params={max_dept: 3}"],
     "params.ranker_params must be a mapping of TreeRank's parameters"),
    (["experiment=depecker2010_table6_1", "+experiment.dataset_seeds={gauss_shift_q10_d00: 5}"],
     "'gauss_shift_q10_d00' is not a dataset of the experiment"),
    (["experiment=depecker2010_table6_1", "+experiment.dataset_seeds={gauss_shift_q10_d000: many}"],
     "experiment.dataset_seeds.gauss_shift_q10_d000 must be an integer"),
    # the command line itself
    (["--nope"], "No such option: --nope"),
]


@pytest.mark.parametrize("overrides, message", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_bad_input_is_one_clear_line_and_exit_2(workdir, overrides, message):
    res = runner.invoke(app, ["run", *overrides])
    _assert_one_clear_error(res, message)
    assert not (workdir / "results" / "runs.sqlite").exists()  # nothing was started


@pytest.mark.parametrize("args, message", [
    (["nope"], "No such command 'nope'"),
    (["list", "nope"], "cannot list 'nope'"),
    (["status", "nope"], "unknown experiment 'nope'"),
    (["tables", "quickstart", "seeds=abc"], "seeds must be an integer"),
])
def test_other_commands_follow_the_same_contract(workdir, args, message):
    _assert_one_clear_error(runner.invoke(app, args), message)


def test_a_broken_yaml_file_is_one_clear_line(workdir, tmp_path, monkeypatch):
    """A user's own config file with a YAML syntax error: the file and the position, on one line."""
    import shutil

    from tests.conftest import REPO

    conf = tmp_path / "conf"
    shutil.copytree(REPO / "conf", conf)
    (conf / "dataset" / "mine.yaml").write_text("name: mine\ndescription: a: b\n")
    monkeypatch.setenv("FORESTLAB_CONF_DIR", str(conf))
    res = runner.invoke(app, ["run", "dataset=mine"])
    _assert_one_clear_error(res, "mine.yaml: mapping values are not allowed here (line 2, column 15)")
    res = runner.invoke(app, ["run", "experiment.datasets=[ringnorm,mine]"])  # read on its own, not by Hydra
    _assert_one_clear_error(res, "mine.yaml: mapping values are not allowed here (line 2, column 15)")


def test_a_valid_override_is_accepted(workdir):
    """The contract is not 'everything fails': the same machinery accepts good input."""
    res = runner.invoke(app, ["run", "--dry-run", "dataset=sonar", "protocol.train_size=150", "protocol.test_size=58",
                              "algorithm.params.n_estimators=7", "protocol=oob",
                              "+algorithm.grid.n_estimators=[5,7]"])
    assert res.exit_code == 0, res.stderr
    assert res.stdout.startswith("experiment single: 1 runs")


# ---------------------------------------------------------------------------------------------------------------
KEYS = ["seeds", "seed", "experiment", "dataset", "algorithm", "protocol", "launcher", "debug", "metrics",
        "launcher.n_jobs", "launcher.backend", "launcher.scheduler", "algorithm.params.n_estimators",
        "algorithm.params.max_depth", "algorithm.params.max_features", "algorithm.params.bootstrap",
        "algorithm.params.criterion", "algorithm.params.min_samples_leaf", "algorithm.grid.n_estimators",
        "algorithm.estimator", "algorithm.seed_tag", "protocol.train_size", "protocol.test_size", "protocol.kind",
        "protocol.n_folds", "protocol.stratify", "protocol.resplit", "protocol.selection", "protocol.sizes_from",
        "limits", "limits.max_datasets", "limits.max_estimators", "experiment.name", "experiment.study",
        "experiment.datasets", "experiment.algorithms", "experiment.tables", "experiment.params", "dataset.name",
        "dataset.shape", "dataset.source.folder", "paths.download", "paths.log_max_bytes", "paths.log_file",
        "nokey", "hydra.job.name"]
NAMES = ["quickstart", "uci_binary", "single", "sonar", "ringnorm", "wdbc_sklearn", "rf", "holdout", "kfold", "oob",
         "dask", "loky", "smoke", "zirakiza2013", "null", "true", "false", "[]", "{}", "[rf]", "[ringnorm,sonar]",
         "[1,2]", "{a: 1}", "${seed}", "${nope}", "${oc.env:HOME}", "'a b'", "../x", "a/b", "-1", "0", "1e9", "nan",
         "inf", "0.5", "1.0", "2", "3", "100000", "tcp://127.0.0.1:1", "[[]]", "''", '"', "'", "\\", "=", ",", "~"]
# command-line arguments cannot hold NUL; everything else printable may come
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=16)
VALUES = st.one_of(st.sampled_from(NAMES), st.integers(-3, 30).map(str), st.floats().map(repr), TEXT)
OVERRIDE = st.one_of(
    st.builds(lambda p, k, v: f"{p}{k}={v}", st.sampled_from(["", "", "", "+", "++", "~"]), st.sampled_from(KEYS),
              VALUES),
    st.builds(lambda k: f"~{k}", st.sampled_from(KEYS)),
    TEXT,
    st.text(alphabet=string.printable.replace("\x00", ""), max_size=24),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(overrides=st.lists(OVERRIDE, min_size=1, max_size=3))
def test_random_overrides_give_a_valid_plan_or_one_clear_error(workdir, overrides):
    res = runner.invoke(app, ["run", "--dry-run", "--", *overrides])
    assert res.exit_code in (0, 2), (overrides, res.exit_code, res.stderr, res.exception)
    if res.exit_code == 0:
        assert res.exception is None and res.stdout.startswith("experiment "), (overrides, res.stdout)
    else:
        _assert_one_clear_error(res)
