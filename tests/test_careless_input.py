"""The second round of careless input: nothing stale, clipped or unbounded, and no command silent.

Each class is exercised through ``python -m forestlab`` in a subprocess (the real exit status, the one line on
stderr, the store before and after); the cheaper variants of a class run in process (typer's CliRunner).

1. Work stays bounded in every mode: a plan beyond ``limits.max_runs`` is refused by its computed size, ``--dry-run``
   and the reading commands included; never more workers than jobs.
2. No result is silently stale: a user's file edited after its runs were stored gets runs of its own; a damaged
   processed cache is rebuilt, and ``datasets verify`` checks it.
4. Every problem with a file is one line at load time (a folder, binary bytes, no feature, constant features, an
   unreadable file), before any run.
7. Commands never do nothing in silence: tables, figures and compare say why they write nothing; a single run prints
   its test metrics.
8. ``forestlab --version`` and ``forestlab list`` without an argument work as the docs say.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from forestlab.cli import app
from forestlab.launchers import joblib_config
from forestlab.runner import worker_count
from tests.conftest import REPO, run_cli

runner = CliRunner()

TABLE = "a,b,c,label\n" + "".join(f"{i},{(i * 7) % 5},{(i * 3) % 4},{'yes' if i % 2 else 'no'}\n"
                                  for i in range(1, 25))


def _one_error(stderr: str, fragment: str) -> None:
    errors = [line for line in stderr.splitlines() if line.startswith("forestlab: error:")]
    assert len(errors) == 1, stderr
    assert fragment in errors[0], errors[0]
    assert "Traceback" not in stderr


def _keys(db: Path) -> dict[str, str]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return dict(con.execute("SELECT key, status FROM runs"))
    finally:
        con.close()


@pytest.fixture
def user_conf(tmp_path: Path, shared_data_dir: Path) -> dict[str, object]:
    """A private conf/ with a dataset ``mine`` read from a CSV file in ``tmp_path``, and the environment to use it."""
    conf = tmp_path / "conf"
    shutil.copytree(REPO / "conf", conf)
    data = tmp_path / "mine.csv"
    data.write_text(TABLE)
    (conf / "dataset" / "mine.yaml").write_text(
        f"name: mine\ntask: binary\ndescription: mine\nstudies: []\nsource: {{kind: file, path: {data}}}\n"
        "target: {column: label, positive: 'yes'}\n")
    env = {"FORESTLAB_CONF_DIR": str(conf), "FORESTLAB_RESULTS_DIR": str(tmp_path / "results"),
           "FORESTLAB_DATA_DIR": str(tmp_path / "data")}
    return {"conf": conf, "file": data, "env": env, "results": tmp_path / "results"}


def _invoke(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], *args: str):
    """``forestlab ARGS`` in this process (typer's CliRunner), with ``env`` set: the cheap variant of a case whose
    representative runs in a subprocess."""
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return runner.invoke(app, list(args))


def _set_path(user_conf: dict[str, object], path: str) -> None:
    cfg = Path(user_conf["conf"]) / "dataset" / "mine.yaml"
    lines = [f"source: {{kind: file, path: {path}, format: csv}}" if line.startswith("source:") else line
             for line in cfg.read_text().splitlines()]
    cfg.write_text("\n".join(lines) + "\n")


# ---------------------------------------------------------------------------------------------------------------
# 1. Bounded in every mode
# ---------------------------------------------------------------------------------------------------------------
def test_a_huge_plan_is_refused_by_its_size_in_every_mode(tmp_path, monkeypatch):
    env = {"FORESTLAB_RESULTS_DIR": str(tmp_path / "results")}
    res = run_cli("run", "experiment=uci_binary", "seeds=100000000", "--dry-run", env=env, timeout=60)
    assert res.returncode == 2, res.stderr  # planned, the same plan took minutes and 23 GiB
    _one_error(res.stderr, "more than limits.max_runs=20000")
    assert "limits.max_runs=14400000000" in res.stderr  # says how to pass it (18 datasets x 8 algorithms)
    monkeypatch.setenv("FORESTLAB_RESULTS_DIR", str(tmp_path / "results"))
    for args in (["status", "uci_binary", "seeds=100000000"], ["tables", "uci_binary", "seeds=100000000"]):
        out = runner.invoke(app, args)
        assert out.exit_code == 2, (args, out.output)
        assert "more than limits.max_runs=20000" in out.output
    assert not (tmp_path / "results" / "runs.sqlite").exists()


@pytest.mark.parametrize("command", [["compare", "quickstart"], ["figures", "quickstart"]])
def test_reading_commands_refuse_a_plan_beyond_the_bound_that_never_ran(workdir, command):
    res = runner.invoke(app, [*command, "seeds=30000"])
    assert res.exit_code == 2
    assert "more than limits.max_runs" in res.output


def test_a_plan_within_the_bound_after_raising_it_is_only_counted(workdir):
    res = runner.invoke(app, ["run", "experiment=quickstart", "seeds=5000", "limits.max_runs=40000", "--dry-run"])
    assert res.exit_code == 0, res.output
    assert "30000 runs" in res.output


def test_never_more_workers_than_jobs():
    assert worker_count(64, 2) == 2
    assert worker_count(2, 180) == 2
    assert worker_count(-1, 1) == 1
    assert worker_count(64, 2, backend="dask") == 64  # a cluster's workers already run


def test_loky_workers_get_one_blas_thread_however_many_cores():
    """loky's default gives each worker cores // n_jobs BLAS/OpenMP threads: 8 for each of 2 workers on 16 cores,
    and a thread count can change a sum's order, so the numbers would change with n_jobs and the machine."""
    from joblib import Parallel, delayed, parallel_config

    config = joblib_config("loky", 2)
    assert config["inner_max_num_threads"] == 1  # this machine's 2 cores would give 1 anyway: say it outright
    with parallel_config(**config):
        threads = Parallel()(delayed(_most_threads)() for _ in range(4))
    assert threads == [1] * 4


def _most_threads() -> int:
    """The most threads of any BLAS/OpenMP pool loaded in this process (numpy's BLAS at least)."""
    import numpy  # noqa: F401
    from threadpoolctl import threadpool_info

    return max(info["num_threads"] for info in threadpool_info())


def test_more_workers_than_cores_is_said_and_not_started(tmp_path, shared_data_dir, monkeypatch):
    env = {"FORESTLAB_RESULTS_DIR": str(tmp_path / "results"), "FORESTLAB_DATA_DIR": str(shared_data_dir)}
    res = _invoke(monkeypatch, env, "run", "experiment=quickstart", "seeds=1", "limits.max_datasets=1",
                  "limits.max_estimators=5", "launcher.n_jobs=64")
    assert res.exit_code == 0, res.output
    assert "note: launcher.n_jobs=64 asks for more workers than the" in res.stderr
    assert "note: 1 jobs to run: starting 1 workers, not launcher.n_jobs=64" in res.stderr


# ---------------------------------------------------------------------------------------------------------------
# 2. Nothing stale
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("through", ["this process", pytest.param("subprocesses", marks=pytest.mark.slow)])
def test_an_edited_user_file_never_gets_its_old_results(user_conf, through, monkeypatch):
    env = user_conf["env"]
    args = ("dataset=mine", "algorithm=rf", "algorithm.params.n_estimators=5")

    def cli(*a: str) -> tuple[int, str, str]:
        if through == "subprocesses":
            res = run_cli(*a, env=env)
            return res.returncode, res.stdout, res.stderr
        out = _invoke(monkeypatch, env, *a)  # one process throughout: what it parsed before the edit must not serve
        return out.exit_code, out.stdout, out.stderr

    code, _, err = cli("run", *args)
    assert code == 0, err
    db = Path(user_conf["results"]) / "runs.sqlite"
    before = _keys(db)
    assert list(before.values()) == ["done"]
    Path(user_conf["file"]).write_text(TABLE.replace("1,2,3,yes", "1,4,3,yes"))  # one cell edited
    code, out, err = cli("run", *args)
    assert code == 0, err
    assert "1 done, 0 failed, 0 already done" in err + out
    after = _keys(db)
    assert set(before) < set(after) and len(after) == 2  # a new key; the old run kept (stale), never reused
    # the reports read the runs of the content the file has now
    code, out, err = cli("status", *args)
    assert code == 0, err
    assert "single" in out


def test_a_file_changed_after_planning_fails_its_run_saying_so(tmp_path):
    from forestlab.datasets import clear_cache, load_dataset
    from forestlab.datasets._file import file_fingerprint
    from forestlab.errors import DatasetError

    path = tmp_path / "mine.csv"
    path.write_text(TABLE)
    cfg = {"name": "mine", "task": "binary", "source": {"kind": "file", "path": str(path)},
           "target": {"column": "label", "positive": "yes"}}
    digest = file_fingerprint(cfg, tmp_path)
    planned = {**cfg, "source": {**cfg["source"], "content_sha256": digest}}
    assert load_dataset(planned, data_dir=tmp_path).n_samples == 24
    clear_cache()
    path.write_text(TABLE + "99,1,1,yes\n")
    with pytest.raises(DatasetError, match="changed after its runs were planned"):
        load_dataset(planned, data_dir=tmp_path)
    assert file_fingerprint(cfg, tmp_path) != digest
    clear_cache()


@pytest.mark.parametrize("damage", ["truncate", pytest.param("flip", marks=pytest.mark.slow)])
def test_a_damaged_processed_cache_is_rebuilt_and_verify_checks_it(tmp_path, mirror, damage, monkeypatch):
    """A truncated archive, or a flipped bit inside X (caught by the archive's CRC-32 when read): the runs that read
    it succeed (it is parsed again and rewritten), and ``datasets verify`` reports and rebuilds it."""
    env = {"FORESTLAB_RESULTS_DIR": str(tmp_path / "results"), "FORESTLAB_DATA_DIR": str(tmp_path / "data"),
           "FORESTLAB_DATA_MIRROR": str(mirror)}
    base = ["run", "dataset=sonar", "algorithm=rf", "algorithm.params.n_estimators=5", "protocol=holdout"]
    cli = (lambda *a: run_cli(*a, env=env)) if damage == "flip" else None  # one case through a subprocess
    assert (cli(*base).returncode if cli else _invoke(monkeypatch, env, *base).exit_code) == 0
    (npz,) = (tmp_path / "data" / "processed").glob("sonar-*.npz")
    blob = bytearray(npz.read_bytes())
    if damage == "truncate":
        damaged = bytes(blob[: len(blob) // 2])
    else:
        blob[3000] ^= 0xFF
        damaged = bytes(blob)
    npz.write_bytes(damaged)
    if cli:
        res = cli(*base, "seeds=3")  # two new runs read the damaged file
        code, out = res.returncode, res.stderr + res.stdout
    else:
        from forestlab.datasets import clear_cache

        clear_cache()
        res = _invoke(monkeypatch, env, *base, "seeds=3")
        code, out = res.exit_code, res.output
    assert code == 0, out
    assert "Traceback" not in out
    assert "2 done, 0 failed, 1 already done" in out
    npz.write_bytes(damaged)
    verify = run_cli("datasets", "verify", "sonar", env=env) if cli else None
    text = verify.stdout if verify else _invoke(monkeypatch, env, "datasets", "verify", "sonar").stdout
    assert "processed arrays damaged" in text and "rebuilt" in text
    again = _invoke(monkeypatch, env, "datasets", "verify", "sonar")
    assert again.exit_code == 0 and "processed" not in again.stdout


# ---------------------------------------------------------------------------------------------------------------
# 4. Every problem with a file is one line, before any run
# ---------------------------------------------------------------------------------------------------------------
def _refused_before_any_run(user_conf, fragment: str, monkeypatch: pytest.MonkeyPatch | None = None) -> None:
    """``forestlab run dataset=mine``: exit 2, one error line naming the dataset, and no run stored (in a
    subprocess, or in this process when given ``monkeypatch``)."""
    if monkeypatch is None:
        res = run_cli("run", "dataset=mine", "algorithm=rf", env=user_conf["env"])
        code, stderr = res.returncode, res.stderr
    else:
        out = _invoke(monkeypatch, user_conf["env"], "run", "dataset=mine", "algorithm=rf")
        code, stderr = out.exit_code, out.stderr
    assert code == 2, stderr
    _one_error(stderr, fragment)
    assert "mine" in stderr
    db = Path(user_conf["results"]) / "runs.sqlite"
    assert not db.exists() or not _keys(db)  # no failed run stored


def test_a_folder_given_as_the_file(user_conf, tmp_path):
    _set_path(user_conf, str(tmp_path))
    _refused_before_any_run(user_conf, "is a folder")


def test_binary_bytes_given_as_csv(user_conf, monkeypatch):
    Path(user_conf["file"]).write_bytes(bytes(range(256)) * 20)
    _refused_before_any_run(user_conf, "is not a text file", monkeypatch)


def test_a_file_with_only_the_target(user_conf, monkeypatch):
    Path(user_conf["file"]).write_text("label\n" + "yes\nno\n" * 6)
    _refused_before_any_run(user_conf, "no feature column", monkeypatch)


def test_a_file_whose_features_are_all_constant(user_conf, monkeypatch):
    Path(user_conf["file"]).write_text("a,b,label\n" + "1,2,yes\n1,2,no\n" * 6)
    _refused_before_any_run(user_conf, "holds one value on all 12 rows", monkeypatch)


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs /proc/self/mem (a file no read succeeds on)")
def test_an_unreadable_file(user_conf, monkeypatch):
    _set_path(user_conf, "/proc/self/mem")  # readable by permission, even as root, but every read fails (EIO)
    _refused_before_any_run(user_conf, "cannot read /proc/self/mem", monkeypatch)


def test_a_results_path_that_is_a_file(user_conf, tmp_path, monkeypatch):
    (tmp_path / "afile").write_text("")
    res = _invoke(monkeypatch, user_conf["env"], "run", "dataset=mine", "algorithm=rf",
                  f"paths.results_dir={tmp_path / 'afile'}")
    assert res.exit_code == 2
    _one_error(res.stderr, "is a file")


# ---------------------------------------------------------------------------------------------------------------
# 7. Never silent
# ---------------------------------------------------------------------------------------------------------------
def test_commands_say_why_they_write_nothing(tmp_path, shared_data_dir, mirror, monkeypatch):
    env = {"FORESTLAB_RESULTS_DIR": str(tmp_path / "results"), "FORESTLAB_DATA_DIR": str(shared_data_dir),
           "FORESTLAB_DATA_MIRROR": str(mirror)}
    single = ["dataset=wdbc_sklearn", "algorithm=rf", "algorithm.params.n_estimators=5", "protocol=holdout"]
    none_yet = _invoke(monkeypatch, env, "tables", *single)
    assert none_yet.exit_code == 0
    assert "no runs stored for this configuration of single: run `forestlab run dataset=wdbc_sklearn" in \
        none_yet.stderr
    ran = run_cli("run", *single, env=env)
    assert ran.returncode == 0, ran.stderr
    line = ran.stdout.strip().splitlines()[0]  # a single run prints its test metrics
    assert line.startswith("rf on wdbc_sklearn rep 0: ") and "test_risk" in line and "test_auc" in line
    compare = _invoke(monkeypatch, env, "compare", *single)
    assert compare.exit_code == 0
    assert "no published table and no claim to compare with" in compare.stderr
    quick = ["experiment=uci_binary", "debug=smoke", "limits.max_datasets=1"]  # uci_binary has no figures
    assert _invoke(monkeypatch, env, "run", *quick, "--quiet").exit_code == 0
    figures = _invoke(monkeypatch, env, "figures", *quick)
    assert figures.exit_code == 0
    assert "has no figures" in figures.stderr


def test_a_quiet_single_run_keeps_stdout_empty(workdir):
    res = runner.invoke(app, ["run", "dataset=wdbc_sklearn", "algorithm=rf", "algorithm.params.n_estimators=5",
                              "protocol=holdout", "--quiet"])
    assert res.exit_code == 0, res.output
    assert "test_risk" in res.stderr and res.stdout == ""


def test_no_experiment_has_runs_is_said_once(workdir):
    """An empty store: one experiment is composed (where the store is), not every one (16 s on a slow machine)."""
    res = runner.invoke(app, ["tables"])
    assert res.exit_code == 0
    assert "no runs stored for any of the" in res.stderr


# ---------------------------------------------------------------------------------------------------------------
# 8. What the docs say
# ---------------------------------------------------------------------------------------------------------------
def test_version_and_list_without_a_kind():
    from forestlab import __version__

    res = run_cli("--version")
    assert res.returncode == 0 and res.stdout.strip() == __version__
    listed = runner.invoke(app, ["list"])
    assert listed.exit_code == 0
    for kind in ("experiments:", "datasets:", "algorithms:", "protocols:", "launchers:"):
        assert kind in listed.stdout
    assert "  uci_binary " in listed.stdout


def test_the_config_file_names_a_real_command():
    text = (REPO / "conf" / "config.yaml").read_text()
    assert "forestlab cfg" not in text and "`forestlab config`" in text


def test_datasets_verify_takes_a_data_dir_override(tmp_path):
    res = run_cli("datasets", "verify", "wdbc_sklearn", f"paths.data_dir={tmp_path / 'elsewhere'}")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("ok ")
    bad = runner.invoke(app, ["datasets", "verify", "wdbc_sklearn", "paths.data_dri=x"])
    assert bad.exit_code == 2


@pytest.mark.parametrize("overrides, message", [
    (["dataset=ringnorm", "algorithm=rf", "dataset.source.n_samples=10000000000"], "limits.max_generated_values"),
    (["dataset=ringnorm", "algorithm=rf", "protocol=oob", "+algorithm.grid.n_estimators=[10,100000]"],
     "grows 100000 trees per forest"),
])
def test_other_unbounded_sizes_are_refused_before_anything_is_allocated(workdir, overrides, message):
    for extra in ([], ["--dry-run"]):
        res = runner.invoke(app, ["run", *overrides, *extra])
        assert res.exit_code == 2, res.output  # was a MemoryError traceback, or the machine's memory exhausted
        assert message in res.stderr and "--yes" in res.stderr


# ---------------------------------------------------------------------------------------------------------------
# 3. Nothing the user asked for is changed without a word: refused before any run, against the data's real size
# ---------------------------------------------------------------------------------------------------------------
def test_a_parameter_the_data_cannot_take_is_refused_before_any_run(tmp_path, mirror):
    env = {"FORESTLAB_RESULTS_DIR": str(tmp_path / "results"), "FORESTLAB_DATA_DIR": str(tmp_path / "data"),
           "FORESTLAB_DATA_MIRROR": str(mirror)}
    res = run_cli("run", "dataset=sonar", "algorithm=rf", "algorithm.params.max_features=1000", env=env)
    assert res.returncode == 2, res.stderr  # was: run as 60 features, with max_features=1000 in the store
    _one_error(res.stderr, "dataset 'sonar' (208 rows, 104 in a training part, 60 features) cannot take algorithm "
                           "'rf': max_features=1000 exceeds the 60 features of the data")
    db = tmp_path / "results" / "runs.sqlite"
    assert not db.exists() or not _keys(db)


@pytest.mark.parametrize("overrides, message", [
    (["protocol.train_size=100"], "has 24 points, too few for 100 training points"),
    (["protocol=kfold", "protocol.n_folds=20"], "a class of 12 points, fewer than the folds"),
    (["algorithm.params.max_features=9"], "max_features=9 exceeds the 3 features of the data"),
])
def test_what_a_users_file_cannot_take_is_refused_by_its_real_size(user_conf, monkeypatch, overrides, message):
    """A file has no documented shape: its split sizes, folds and parameters are checked once it is loaded, before
    any run (each was N stored failed runs, or a clipped value)."""
    res = _invoke(monkeypatch, user_conf["env"], "run", "dataset=mine", "algorithm=rf", *overrides)
    assert res.exit_code == 2, res.output
    _one_error(res.stderr, message)
    db = Path(user_conf["results"]) / "runs.sqlite"
    assert not db.exists() or not _keys(db)


def test_a_run_stored_before_the_refusal_is_not_served(user_conf, monkeypatch):
    """A run stored by a version that clipped the value (its key says max_features=9) is not reused as done."""
    env = user_conf["env"]
    assert _invoke(monkeypatch, env, "run", "dataset=mine", "algorithm=rf", "algorithm.params.max_features=2",
                   "algorithm.params.n_estimators=5").exit_code == 0
    db = Path(user_conf["results"]) / "runs.sqlite"
    con = sqlite3.connect(db)
    con.execute("UPDATE runs SET spec = replace(spec, '\"max_features\":2', '\"max_features\":9')")
    (key,) = con.execute("SELECT key FROM runs").fetchone()
    con.commit()
    con.close()
    from forestlab.config import load_experiment
    from forestlab.runner import plan

    exp = load_experiment(["dataset=mine", "algorithm=rf", "algorithm.params.max_features=9",
                           "algorithm.params.n_estimators=5"])
    (spec,) = plan(exp)
    con = sqlite3.connect(db)
    con.execute("UPDATE runs SET key = ? WHERE key = ?", (spec.key, key))  # as if stored under that key
    con.commit()
    con.close()
    res = _invoke(monkeypatch, env, "run", "dataset=mine", "algorithm=rf", "algorithm.params.max_features=9",
                  "algorithm.params.n_estimators=5")
    assert res.exit_code == 2, res.output
    assert "max_features=9 exceeds the 3 features" in res.stderr
    assert "test_risk" not in res.stdout  # its stored metrics are not printed as a result


def test_smoke_runs_two_folds_of_a_kfold_partition_and_says_so(workdir):
    """debug=smoke caps a k-fold experiment at its first two folds (limits.max_folds): the same runs as in the full
    plan, in a plan of its own, said in a note."""
    from forestlab.config import load_experiment
    from forestlab.runner import plan

    full = load_experiment(["experiment=depecker2010_table_a1", "limits.max_datasets=1"])
    capped = load_experiment(["experiment=depecker2010_table_a1", "limits.max_datasets=1", "limits.max_folds=2"])
    assert capped.n_runs * 5 == full.n_runs and capped.plan_id != full.plan_id
    assert {s.key for s in plan(capped)} == {s.key for s in plan(full) if s.fold in (0, 1)}
    res = runner.invoke(app, ["run", "experiment=depecker2010_table_a1", "debug=smoke", "--dry-run"])
    assert res.exit_code == 0, res.output
    assert "x 2 folds" in res.stdout
    assert "note: limits.max_folds=2 runs the first 2 folds of each 10-fold partition" in res.stderr
