"""Runs know their task: a toy ranker (no ``predict``) and a toy two-sample test, run through the CLI, give an AUC
table with the right win/tie/loss (higher AUC is better) and a power table; and a metric added to an experiment
is computed from the stored outputs, refitting nothing."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli

TOY_LEARNERS = '''
"""Test-only learners of the two other tasks: rankers that only score, and a two-sample test."""
import numpy as np
from sklearn.base import BaseEstimator

from forestlab.learners import register
from forestlab.learners._base import TestResult


class MeanDiffRanker(BaseEstimator):
    """Scores by the projection on the difference of the class means (a good ranker on twonorm)."""

    def __init__(self, random_state=None):
        self.random_state = random_state

    def fit(self, X, y):
        X, y = np.asarray(X, float), np.asarray(y)
        self.w_ = X[y == 1].mean(axis=0) - X[y != 1].mean(axis=0)
        return self

    def decision_function(self, X):
        return np.asarray(X, float) @ self.w_


class NoiseRanker(BaseEstimator):
    """Random scores (AUC about 1/2)."""

    def __init__(self, random_state=None):
        self.random_state = random_state

    def fit(self, X, y):
        self.n_features_in_ = np.asarray(X).shape[1]
        return self

    def decision_function(self, X):
        return np.random.default_rng(self.random_state).random(np.asarray(X).shape[0])


class MeanShiftTest(BaseEstimator):
    """Permutation test of equal means (statistic: distance between the sample means)."""

    def __init__(self, n_permutations=99, random_state=None):
        self.n_permutations = n_permutations
        self.random_state = random_state

    def test(self, A, B):
        rng = np.random.default_rng(self.random_state)
        Z = np.vstack([A, B])
        stat = float(np.linalg.norm(A.mean(axis=0) - B.mean(axis=0)))
        count = 0
        for _ in range(self.n_permutations):
            idx = rng.permutation(len(Z))
            a, b = Z[idx[: len(A)]], Z[idx[len(A):]]
            count += np.linalg.norm(a.mean(axis=0) - b.mean(axis=0)) >= stat
        return TestResult(statistic=stat, p_value=(count + 1) / (self.n_permutations + 1))


register("toy_mean_ranker", MeanDiffRanker, task="ranker")
register("toy_noise_ranker", NoiseRanker, task="ranker")
register("toy_mean_test", MeanShiftTest, task="two_sample_test")
'''

CONF = {
    "dataset/twonorm_small.yaml": "name: twonorm_small\ntask: binary\nshape: [300, 20]\n"
                                  "source: {kind: synthetic, generator: twonorm, n_samples: 300, n_features: 20, "
                                  "random_state: 1}\n",
    "dataset/ringnorm_small.yaml": "name: ringnorm_small\ntask: binary\nshape: [300, 20]\n"
                                   "source: {kind: synthetic, generator: ringnorm, n_samples: 300, n_features: 20, "
                                   "random_state: 1}\n",
    "algorithm/toy_mean.yaml": "name: toy_mean\nestimator: toy_mean_ranker\nparams: {}\ngrid: {}\n",
    "algorithm/toy_noise.yaml": "name: toy_noise\nestimator: toy_noise_ranker\nparams: {}\ngrid: {}\n",
    "algorithm/toy_test.yaml": "name: toy_test\nestimator: toy_mean_test\nparams: {n_permutations: 49}\ngrid: {}\n",
    "experiment/toy_ranking.yaml": """# @package _global_
defaults:
  - override /protocol: kfold
  - override /algorithm: toy_mean
protocol: {n_folds: 3}
experiment:
  name: toy_ranking
  study: null
  description: a ranker against random scores
  datasets: [twonorm_small, ringnorm_small]
  algorithms: [toy_mean, toy_noise]
  tables:
    - name: auc
      cells: [{algorithm: toy_mean, metric: test_auc}, {algorithm: toy_noise, metric: test_auc}]
      pairs: [[toy_mean, toy_noise]]
      pair_metric: test_auc
  figures: []
  claims: []
seeds: 2
metrics: [auc]
""",
    "experiment/toy_power.yaml": """# @package _global_
defaults:
  - override /protocol: resample
  - override /algorithm: toy_test
protocol: {train_size: 60, test_size: 0}
experiment:
  name: toy_power
  study: null
  description: the rejection rate of a two-sample test
  datasets: [twonorm_small]
  algorithms: [toy_test]
  tables:
    - name: power
      cells: [{algorithm: toy_test, metric: reject, label: power}, {algorithm: toy_test, metric: p_value}]
  figures: []
  claims: []
seeds: 6
metrics: [reject]
""",
}


@pytest.fixture
def toy_env(tmp_path: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A copy of conf/ with the toy datasets, algorithms and experiments, and the toy learners registered in every
    forestlab process (a sitecustomize on PYTHONPATH)."""
    conf = tmp_path / "conf-toy"
    shutil.copytree(REPO / "conf", conf)
    for rel, text in CONF.items():
        (conf / rel).write_text(text)
    site = tmp_path / "site-toy"
    site.mkdir()
    (site / "toy_learners.py").write_text(TOY_LEARNERS)
    (site / "sitecustomize.py").write_text("import toy_learners  # noqa: F401\n")
    return {"FORESTLAB_CONF_DIR": str(conf), "FORESTLAB_RESULTS_DIR": os.environ["FORESTLAB_RESULTS_DIR"],
            "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}


def _ok(proc) -> str:
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.slow
def test_ranker_runs_without_predict_and_wins_on_auc(toy_env, workdir):
    _ok(run_cli("run", "experiment=toy_ranking", "--quiet", env=toy_env))
    table = Path(toy_env["FORESTLAB_RESULTS_DIR"]) / "tables" / "toy_ranking"
    _ok(run_cli("tables", "toy_ranking", env=toy_env))
    md = (table / "auc.md").read_text()
    assert "toy_mean test_auc" in md and "12/12" in md
    text = _ok(run_cli("compare", "toy_ranking", env=toy_env))
    # AUC: higher is better, so the real ranker wins on both datasets, significantly
    assert "toy_mean vs toy_noise (test_auc, higher is better), 2 datasets: 2 W / 0 T / 0 L" in text
    con = sqlite3.connect(Path(toy_env["FORESTLAB_RESULTS_DIR"]) / "runs.sqlite")
    metrics = [json.loads(m) for (m,) in con.execute("SELECT metrics FROM runs WHERE algorithm = 'toy_mean'")]
    twonorm = [json.loads(m) for (m,) in con.execute(
        "SELECT metrics FROM runs WHERE algorithm = 'toy_mean' AND dataset = 'twonorm_small'")]
    assert len(twonorm) == 6 and all(m["test_auc"] > 0.9 for m in twonorm)
    assert not any("test_risk" in m for m in metrics)  # no label metric: a ranker never predicts


@pytest.mark.slow
def test_two_sample_test_gives_a_power_table(toy_env, workdir):
    _ok(run_cli("run", "experiment=toy_power", "--quiet", env=toy_env))
    _ok(run_cli("tables", "toy_power", env=toy_env))
    md = (Path(toy_env["FORESTLAB_RESULTS_DIR"]) / "tables" / "toy_power" / "power.md").read_text()
    # twonorm's two classes differ in mean: the test rejects on every one of the 6 fresh samples
    assert "| twonorm_small | 1.000 ± 0.000 |" in md


@pytest.mark.slow
def test_adding_a_metric_refits_nothing(workdir):
    env = {"FORESTLAB_RESULTS_DIR": os.environ["FORESTLAB_RESULTS_DIR"]}
    _ok(run_cli("run", "experiment=quickstart", "seeds=1", "--quiet", env=env))
    db = Path(env["FORESTLAB_RESULTS_DIR"]) / "runs.sqlite"
    con = sqlite3.connect(db)
    before = dict(con.execute("SELECT key, finished_at FROM runs"))
    assert not any("test_truncated_auc_05" in json.loads(m) for (m,) in con.execute("SELECT metrics FROM runs"))
    con.close()
    out = run_cli("run", "experiment=quickstart", "seeds=1", "metrics=[risk,accuracy,auc,truncated_auc_05]",
                  "--quiet", env=env)
    assert out.returncode == 0, out.stderr
    assert "6 already done" in out.stderr and "0 done" in out.stderr
    con = sqlite3.connect(db)
    after = dict(con.execute("SELECT key, finished_at FROM runs"))
    assert after == before  # same runs, none refitted
    metrics = [json.loads(m) for (m,) in con.execute("SELECT metrics FROM runs")]
    assert all("test_truncated_auc_05" in m and "train_truncated_auc_05" in m for m in metrics)
