"""The report's kept sections (forestlab.report.kept) and the faster readers behind the report (issue 24, target 4).

A kept section is read back only when nothing it was built from changed: a report after a change to the store (a
metric rewritten, a run added), to a published table or to a drawn figure is the report built from nothing. The
derived run index of a bootstrap resample and the per-run values of the runs pages are what the slower code built.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from forestlab.cli import app
from forestlab.report import kept
from forestlab.report import site as site_module
from forestlab.report.model import read_layout
from forestlab.report.site_tables import runs_frame
from forestlab.results import ExperimentResults, RunIndex
from forestlab.store import Store
from tests.equivalence_goldens import normalise

runner = CliRunner()
SMALL = ["seeds=2", "limits.max_estimators=5"]


def _tree(root: Path) -> dict[str, str]:
    """Every text file of a site, normalised (the build's time and duration vary); images by their presence."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            rel = p.relative_to(root).as_posix()
            out[rel] = normalise(p.read_text(encoding="utf-8")) if p.suffix in (".html", ".csv", ".tex") else ""
    return out


def _build(into: Path) -> dict[str, str]:
    index = site_module.build_site(SMALL)
    shutil.rmtree(into, ignore_errors=True)
    shutil.copytree(index.parent, into)
    return _tree(into)


@pytest.fixture
def store(workdir: Path) -> Path:
    """quickstart's runs (2 seeds, 5 trees) in the workdir's results folder."""
    res = runner.invoke(app, ["run", "experiment=quickstart", *SMALL, "--quiet"])
    assert res.exit_code == 0, res.output
    return workdir / "results"


@pytest.mark.slow  # six report builds (40 s on a slow 2-core machine); the key's inputs: the tests below
def test_a_kept_section_is_read_back_and_a_changed_store_is_read_again(store: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    cold = _build(tmp_path / "cold")
    assert (store / kept.KEPT).is_dir() and any((store / kept.KEPT).iterdir())
    built: list[str] = []
    original = site_module._built_part

    def counted(exp, name, *args, **kwargs):
        built.append(name)
        return original(exp, name, *args, **kwargs)

    monkeypatch.setattr(site_module, "_built_part", counted)
    warm = _build(tmp_path / "warm")
    assert "quickstart" not in built  # read back
    assert warm == cold  # the same site, its runs pages, downloads and diagrams included

    # a damaged entry, or one missing its files, is built again (and kept again)
    for entry in (store / kept.KEPT).iterdir():
        (entry / "section.json").write_text("{not json", encoding="utf-8")
    assert _build(tmp_path / "damaged") == cold and built.count("quickstart") == 1
    for entry in (store / kept.KEPT).iterdir():
        shutil.rmtree(entry / "files")
    assert _build(tmp_path / "no-files") == cold and built.count("quickstart") == 2

    # a run's metric rewritten in the store: the section is built again, and is the one built from nothing
    with Store(store) as s:
        records = s.records()
        done = records[records["status"] == "done"].iloc[0]
        s.update_metrics(done["key"], {**done["metrics"], "test_risk": 0.999})
    changed = _build(tmp_path / "changed")
    assert built.count("quickstart") == 3
    assert changed != cold
    shutil.rmtree(store / "cache")
    assert _build(tmp_path / "fresh") == changed


def test_the_key_follows_the_store_the_figures_and_the_published_tables(store: Path, tmp_path: Path) -> None:
    figures, experiments = tmp_path / "figures", tmp_path / "experiments"
    figures.mkdir()
    experiments.mkdir()

    def key() -> str:
        return kept.section_key("quickstart", SMALL, inputs="x", store=kept.store_state(store),
                                experiments=kept.tree_signature(experiments), figures=figures)

    first = key()
    assert key() == first  # reading changes nothing
    (figures / "fig.png").write_bytes(b"png")
    assert key() != first
    second = key()
    (experiments / "table.csv").write_text("dataset,value\n")
    assert key() != second
    third = key()
    with Store(store) as s:
        s.put_dataset_info("probe", {"n_features": 3})
    assert key() != third
    assert kept.section_key("quickstart", [*SMALL, "seeds=3"], inputs="x", store=[], experiments=[],
                            figures=figures) != kept.section_key("quickstart", SMALL, inputs="x", store=[],
                                                                 experiments=[], figures=figures)


def test_a_resample_derives_the_index_the_frame_would_give() -> None:
    rng = np.random.default_rng(0)
    for trial in range(60):
        n = int(rng.integers(0, 40))
        runs = pd.DataFrame({"dataset": rng.choice(["d1", "d2", "d3"], n), "algorithm": rng.choice(["a", "b"], n),
                             "repetition": rng.integers(0, 5, n),
                             "fold": rng.choice([None, 0, 1], n) if trial % 2 else [None] * n,
                             "m": rng.normal(size=n)})
        res = ExperimentResults.from_frame(runs)
        reps = sorted(set(res.runs["repetition"])) or [0]
        draw = [int(r) for r in rng.choice([*reps, 99], size=int(rng.integers(0, 6)))]  # 99: a repetition not run
        for sample in (res._with_repetitions(draw), res._with_repetitions(draw)._with_repetitions([0, 0, 1])):
            expected, derived = RunIndex.of(sample.runs), sample.index
            assert derived.keys == expected.keys and derived.splits == expected.splits
            assert derived.by_repetition.keys() == expected.by_repetition.keys()
            assert all(np.array_equal(derived.by_repetition[k], v) for k, v in expected.by_repetition.items())
            assert derived.rows.keys() == expected.rows.keys()
            for k, v in expected.rows.items():
                assert derived.rows[k].dtype == v.dtype and np.array_equal(derived.rows[k], v)


def _runs_frame_by_series(res: ExperimentResults, layout, dataset: str) -> pd.DataFrame:
    """The runs pages' frame as it was built before (one Series per cell, then concat)."""
    frames = []
    for c in layout.columns:
        if c.kind == "measure":
            continue
        if c.kind == "metric":
            v = res.values(c.algorithm, c.quantity, dataset)
            s = pd.Series(v["value"].to_numpy(), index=pd.MultiIndex.from_arrays(
                [v["repetition"].to_numpy(), v["fold"].fillna(-1).astype(int).to_numpy()]), name=c.header)
        else:
            values = res.cell_values(c.spec, dataset)
            splits = res.split_values(c.algorithm, c.quantity, dataset)[0]
            if len(values) != len(splits):
                continue
            s = pd.Series(values, index=pd.MultiIndex.from_tuples(splits), name=c.header)
        frames.append(s[~s.index.duplicated()])
    if not frames:
        return pd.DataFrame()
    df = pd.concat(frames, axis=1).sort_index()
    df.index.names = ["repetition", "fold"]
    return df


def test_runs_frame_is_the_frame_of_the_series() -> None:
    rng = np.random.default_rng(1)
    rows = []
    for d in ("d1", "d2"):
        for rep in range(4):
            for fold in (0, 1):
                for a in ("a", "b"):
                    if rng.random() < 0.2:
                        continue  # a run not done
                    rows.append({"dataset": d, "algorithm": a, "repetition": rep, "fold": fold,
                                 "m": rng.normal(), "k": rng.normal() if a == "a" else np.nan})
    rows.append(dict(rows[0], m=123.0))  # a split run twice: its first value is kept
    res = ExperimentResults.from_frame(pd.DataFrame(rows).sample(frac=1.0, random_state=2))
    layout = read_layout({"name": "t", "cells": [{"algorithm": "a", "metric": "m"}, {"algorithm": "b", "metric": "m"},
                                                 {"algorithm": "a", "metric": "k"}, {"algorithm": "b", "metric": "k"}]})
    for dataset in ("d1", "d2", "nothing"):
        got, expected = runs_frame(res, layout, dataset), _runs_frame_by_series(res, layout, dataset)
        if expected.empty:
            assert got.empty
            continue
        pd.testing.assert_frame_equal(got, expected)


def test_instability_keeps_midranks_by_content() -> None:
    """The midranks kept across a claim's resamples are rankdata's along the stack's rows, bit for bit, and follow
    the scores' content: scores changed in place are ranked again."""
    from scipy.spatial.distance import pdist
    from scipy.stats import rankdata

    from forestlab import metrics

    rng = np.random.default_rng(3)
    y = np.r_[np.ones(40), -np.ones(40)]
    for trial in range(30):
        scores = np.round(rng.normal(size=(int(rng.integers(2, 6)), y.size)), trial % 3)  # ties too
        runs = [{"y_test": y, "test_scores": s} for s in scores]
        ranks = rankdata(scores, method="average", axis=1)
        m = ranks.shape[1]
        expected = float(np.mean(600.0 * pdist(ranks, metric="sqeuclidean") / (m * (m * m - 1.0))))
        assert metrics.instability(runs) == expected
        assert metrics.instability(runs) == expected  # read back
    scores = rng.normal(size=(3, y.size))
    runs = [{"y_test": y, "test_scores": s} for s in scores]
    before = metrics.instability(runs)
    scores[0] = -scores[0]  # the same array object, another content
    assert metrics.instability(runs) != before
    assert metrics.instability(runs) == metrics.instability([{"y_test": y, "test_scores": s.copy()} for s in scores])


def test_records_of_some_columns_are_those_of_all(store: Path) -> None:
    with Store(store, readonly=True) as s:
        every = s.records()
        some = s.records(every["key"].tolist()[:3], columns=("status", "metrics", "packages"))
        with pytest.raises(ValueError, match="no such run column"):
            s.records(columns=("metric",))
    assert list(some.columns) == ["key", "status", "metrics", "packages"]
    expected = every[every["key"].isin(some["key"])][list(some.columns)]
    pd.testing.assert_frame_equal(some.set_index("key").sort_index(), expected.set_index("key").sort_index())
