"""The SVM LeafRank workload bench (tests/benchmarks/bench_svm_workload.py) times what Table A.1 runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent / "benchmarks"))
import bench_svm_workload as bench  # noqa: E402
from bench_heavy_learners import has_commit  # noqa: E402

from forestlab.config import compose  # noqa: E402


@pytest.mark.skipif(not has_commit(bench.REFERENCE),
                    reason=f"{bench.REFERENCE} is not in this clone's history (shallow?)")
def test_the_reference_is_the_svm_leafrank_before_issue_24(tmp_path: Path) -> None:
    assert bench._reference_checkout(tmp_path, bench.REFERENCE)
    treerank = (tmp_path / "forestlab" / "learners" / "_treerank.py").read_text(encoding="utf-8")
    assert "SVC(kernel=kernel" in treerank and "_fit_libsvm" not in treerank  # each node's SVM through SVC


def test_prepared_folds_and_parameters_are_table_a1s(mirror: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORESTLAB_DATA_MIRROR", str(mirror))
    bench.prepare(tmp_path)
    spec = json.loads((tmp_path / "params.json").read_text())
    cfg = compose([f"experiment={bench.EXPERIMENT}"])
    assert spec["datasets"] == list(cfg.experiment.datasets)
    for name in bench.ALGORITHMS:  # what the configuration's file says, and the experiment's B = 100 for forests
        config = spec["algorithms"][name]
        params = config["params"]
        assert params["leafrank"] == "svm"
        assert params["svm_kernel"] == ("linear" if name.endswith("_linear") else "rbf")
        if name.startswith("trk_"):
            assert config["estimator"] == "treerank" and "n_estimators" not in params
        else:
            assert config["estimator"] == "ranking_forest" and params["n_estimators"] == 100
            assert params["max_features"] == (0.25 if name.startswith("rf1_") else None)
    german = np.load(tmp_path / "german.npz")
    assert german["X_train"].shape == (900, 20) and german["X_test"].shape == (100, 20)


def test_the_workload_fits_every_configuration_with_the_same_numbers_twice(mirror: Path, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORESTLAB_DATA_MIRROR", str(mirror))
    bench.prepare(tmp_path)
    spec = json.loads((tmp_path / "params.json").read_text())
    spec["datasets"] = ["hepatitis", "vote_complete"]  # small: 100 and 208 training points
    for config in spec["algorithms"].values():
        config["params"]["n_estimators" if config["estimator"] == "ranking_forest" else "max_depth"] = 2
    (tmp_path / "params.json").write_text(json.dumps(spec))
    first, second = bench.workload(tmp_path), bench.workload(tmp_path)
    assert sorted(first) == sorted(bench.ALGORITHMS)
    assert {k: v["scores_sha1"] for k, v in first.items()} == {k: v["scores_sha1"] for k, v in second.items()}
    assert len({v["scores_sha1"] for v in first.values()}) == len(bench.ALGORITHMS)  # six different models


def test_a_missing_dataset_leaves_the_section_unmeasured_and_other_errors_are_raised(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from forestlab.errors import DatasetError

    def missing(folder: Path) -> None:
        raise DatasetError("dataset 'german': not found")

    monkeypatch.setattr(bench, "prepare", missing)
    out: dict = {}
    bench.run(out, rounds=1)
    assert out == {"svm_leafrank_table_a1": {"not_measured": "DatasetError: dataset 'german': not found"}}

    def broken(folder: Path) -> None:
        raise KeyError("algorithms")

    monkeypatch.setattr(bench, "prepare", broken)
    with pytest.raises(KeyError):
        bench.run({}, rounds=1)
