"""The fast command line (issue 20, part 8): what it skips or keeps must give what composing gives, and a kept
experiment must never outlive a change of what it was composed from."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from forestlab import config
from forestlab.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("group", ["dataset", "algorithm", "protocol", "launcher", "paths"])
def test_merged_group_options_are_what_hydra_composes(group: str) -> None:
    """An option whose ``defaults:`` name bases of its group, merged without Hydra: the same content, in the same
    key order, as Hydra's compose of it."""
    merged = {name: config._merged_group_option(config.conf_dir(), group, name)
              for name in config.group_options(group)}
    plain = [name for name, option in merged.items() if option is not config._NOT_PLAIN]
    # one Hydra composition holds them all (each option in a package of its own); the first also alone
    composed = config._compose_group_options(config.conf_dir(), group, plain)
    if plain:
        alone = config._compose_group_options(config.conf_dir(), group, plain[:1])[plain[0]]
        assert json.dumps(composed[plain[0]]) == json.dumps(alone)
    for name in plain:
        assert json.dumps(OmegaConf.to_container(merged[name], resolve=False)) == json.dumps(composed[name]), name
    checked = len(plain)
    assert checked or group != "algorithm"  # the algorithms have bases: the merge is what serves them


def test_list_descriptions_without_composing_are_the_composed_ones() -> None:
    for kind, group in config.LISTABLE.items():
        for name in config.list_options(kind):
            plain = (config.experiment_setting(name, "description", "") if kind == "experiments"
                     else config._plain_description(group, name))
            if plain is config._NOT_PLAIN:
                continue
            node = config.load_group_option(group, name)
            expected = (node.get("experiment") or {}).get("description", "") if kind == "experiments" \
                else node.get("description", "") or ""
            assert str(plain or "") == str(expected), (kind, name)


def test_unknown_option_refused_before_hydra_as_hydra_says_it() -> None:
    for overrides in (["experiment=nonexistent"], ["experiment=quickstart", "protocol=nope"], ["dataset=nope"]):
        with pytest.raises(ConfigError) as early:
            config.load_experiment(overrides)
        with pytest.raises(ConfigError) as hydra:
            config._compose_unchecked(overrides)
        if overrides == ["experiment=nonexistent"]:  # and where else it looked: experiments named experiment.name=
            assert str(early.value).startswith(f"{hydra.value}; nor was an experiment named so")
            continue
        assert str(early.value) == str(hydra.value)


def _conf_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    conf = tmp_path / "conf"
    shutil.copytree(REPO / "conf", conf)
    monkeypatch.setenv("FORESTLAB_CONF_DIR", str(conf))
    monkeypatch.setenv("FORESTLAB_CACHE_DIR", str(tmp_path / "cache"))
    return conf


def test_kept_experiment_is_the_composed_one_and_follows_changes(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    conf = _conf_copy(tmp_path, monkeypatch)
    composed = config.load_experiment(["experiment=quickstart"])
    assert config.experiment_facts(["experiment=quickstart"]) == config.ExperimentFacts.of(composed)
    assert list((tmp_path / "cache").rglob("*.json"))  # kept, as JSON (never a pickle: nothing read back runs code)
    assert config.experiment_facts(["experiment=quickstart"]) == config.ExperimentFacts.of(composed)  # kept

    # the config changes: what was kept is not served
    path = conf / "experiment" / "quickstart.yaml"
    path.write_text(path.read_text().replace("\nseeds: 3", "\nseeds: 4"))
    changed = config.load_experiment(["experiment=quickstart"])
    assert changed.seeds == 4 and changed.plan_id != composed.plan_id
    assert config.experiment_facts(["experiment=quickstart"]).plan_id == changed.plan_id
    assert config.experiment_facts(["experiment=quickstart"]).n_runs == changed.n_runs

    # so does the environment a config reads (oc.env paths)
    monkeypatch.setenv("FORESTLAB_RESULTS_DIR", str(tmp_path / "elsewhere"))
    assert config.experiment_facts(["experiment=quickstart"]).paths.results_dir == str(tmp_path / "elsewhere")


def test_an_error_is_never_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _conf_copy(tmp_path, monkeypatch)
    for _ in range(2):
        with pytest.raises(ConfigError, match="seeds"):
            config.experiment_facts(["experiment=quickstart", "seeds=0"])
    assert not list((tmp_path / "cache").rglob("*.json"))


def test_a_damaged_entry_is_composed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _conf_copy(tmp_path, monkeypatch)
    composed = config.experiment_facts(["experiment=quickstart"])
    for entry in (tmp_path / "cache").rglob("*.json"):
        entry.write_bytes(b"not json")
    assert config.experiment_facts(["experiment=quickstart"]) == composed


def test_unwritable_cache_folder_still_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _conf_copy(tmp_path, monkeypatch)
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("FORESTLAB_CACHE_DIR", str(blocker / "cache"))  # under a file: cannot be created
    assert config.experiment_facts(["experiment=quickstart"]).name == "quickstart"
    assert os.path.isfile(blocker)


def test_memoised_p_values_are_scipys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The t-test's and Wilcoxon's p-values, computed without scipy.stats and then served from the memo, are the
    numbers scipy.stats gives, bit for bit."""
    import numpy as np
    from scipy import stats as st

    from forestlab import stats

    monkeypatch.setenv("FORESTLAB_CACHE_DIR", str(tmp_path / "cache"))
    rng = np.random.default_rng(0)
    for n in (3, 12, 40):
        d = rng.normal(0.01, 0.05, n)
        expected_t = float(st.ttest_1samp(d, 0.0).pvalue)
        expected_w = float(st.wilcoxon(d, zero_method="zsplit").pvalue)
        for _ in range(2):  # computed, then served from the memo
            t = stats.paired_t_test(d, np.zeros(n))
            assert t.p == pytest.approx(expected_t, rel=1e-12, abs=0)
            assert t.p == float(2 * st.t.sf(abs(t.t), df=n - 1))
            assert stats.wilcoxon_pvalue(d) == expected_w
    assert list((tmp_path / "cache").rglob("*.json"))


#: Experiments of every shape the kept JSON must carry (published tables and pairs, claims, figures of the studies'
#: own kinds, inner-CV grids, k-fold and repeated protocols, two-sample tests, curves): `make test` keeps these;
#: the slow test keeps every registered one
SHAPES = ("quickstart", "uci_binary", "depecker2010_table_a1", "depecker2010_table6_1", "pisetta2010_table1",
          "courses_spambase", "zirakiza2013_fig4_1")


def _experiments(names: Sequence[str]) -> list[list[str]]:
    runs = [["dataset=sonar", "algorithm=rf"]]  # the single run
    for name in names:
        runs += [[f"experiment={name}"], [f"experiment={name}", "debug=smoke"]]
    return runs


def test_kept_experiments_of_every_shape_decode_to_the_composed_ones(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    _check_kept_experiments(_experiments(SHAPES), tmp_path, monkeypatch)


@pytest.mark.slow
def test_every_kept_experiment_decodes_to_the_composed_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _check_kept_experiments(_experiments(config.list_options("experiments")), tmp_path, monkeypatch)


def _check_kept_experiments(every: list[list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each experiment (full and shrunk) and a single run, kept as JSON and read back: the same objects, field for
    field and type for type (tuples, dicts' key order, the fields left out of ==), the same plan id and the same
    composed config."""
    from forestlab._jsonable import encode
    from forestlab.report.provenance import config_hash

    monkeypatch.setenv("FORESTLAB_CACHE_DIR", str(tmp_path / "cache"))
    classes = config._experiment_classes()
    for overrides in every:
        assert not config._kept_path(overrides, ".experiment.json").is_file(), overrides
        composed = config.cached_experiment(overrides)  # none kept: composed (load_experiment's), and kept
        if config._reads_data_file(composed):
            continue
        assert config._kept_path(overrides, ".experiment.json").is_file(), overrides
        decoded = config.cached_experiment(overrides)  # read back
        assert decoded is not composed
        assert decoded == composed, overrides
        assert decoded.plan_id == composed.plan_id, overrides
        assert encode(decoded, classes, skip=frozenset({"cfg"})) == encode(composed, classes, skip=frozenset({"cfg"}))
        assert OmegaConf.to_yaml(decoded.cfg) == OmegaConf.to_yaml(composed.cfg), overrides
        assert config_hash(decoded) == config_hash(composed) != "unknown"
        assert decoded.n_runs == composed.n_runs and decoded.summary() == composed.summary()


def test_kept_experiment_follows_config_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    conf = _conf_copy(tmp_path, monkeypatch)
    first = config.cached_experiment(["experiment=quickstart"])
    assert config.cached_experiment(["experiment=quickstart"]) == first  # kept
    path = conf / "experiment" / "quickstart.yaml"
    path.write_text(path.read_text().replace("\nseeds: 3", "\nseeds: 4"))
    changed = config.cached_experiment(["experiment=quickstart"])
    assert changed.seeds == 4 and changed.plan_id != first.plan_id
    assert changed == config.load_experiment(["experiment=quickstart"])


def test_kept_experiment_error_never_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _conf_copy(tmp_path, monkeypatch)
    for _ in range(2):
        with pytest.raises(ConfigError, match="seeds"):
            config.cached_experiment(["experiment=quickstart", "seeds=0"])
    assert not list((tmp_path / "cache").rglob("*.json"))


@pytest.mark.parametrize("damage", [b"not json", b"{}", b'{"experiment": {"C": "Foreign", "F": {}}, "cfg": null}',
                                    b'{"experiment": {"C": "Experiment", "F": {"name": 1}}, "cfg": null}'])
def test_kept_experiment_damaged_entry_composed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      damage: bytes) -> None:
    _conf_copy(tmp_path, monkeypatch)
    composed = config.cached_experiment(["experiment=quickstart"])
    entries = list((tmp_path / "cache").rglob("*.experiment.json"))
    assert entries
    for entry in entries:
        entry.write_bytes(damage)
    again = config.cached_experiment(["experiment=quickstart"])
    assert again == composed and again.plan_id == composed.plan_id
    assert config.cached_experiment(["experiment=quickstart"]) == composed  # kept again, whole


def test_reading_every_experiment_composes_only_those_the_store_has(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    shared_data_dir: Path) -> None:
    """`forestlab tables` (figures, compare) over every experiment reads the store once for the experiments it has
    plans for; the others, which have no runs to read, are not composed (the first registered one is: it says
    where the store is). What is written is what reading each one writes."""
    from typer.testing import CliRunner

    from forestlab import cli

    monkeypatch.setenv("FORESTLAB_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("FORESTLAB_DATA_DIR", str(shared_data_dir))
    monkeypatch.setenv("FORESTLAB_CACHE_DIR", str(tmp_path / "cache"))
    runner = CliRunner()
    small = ["seeds=1", "limits.max_estimators=5"]
    ran = runner.invoke(cli.app, ["run", "experiment=quickstart", *small, "launcher.n_jobs=1", "--quiet"])
    assert ran.exit_code == 0, ran.output
    composed: list[str] = []
    real = config.cached_experiment

    def counting(overrides: Sequence[str], *args, **kwargs):
        composed.append(next(o.split("=", 1)[1] for o in overrides if o.startswith("experiment=")))
        return real(overrides, *args, **kwargs)

    monkeypatch.setattr(config, "cached_experiment", counting)
    every = runner.invoke(cli.app, ["tables", *small])
    assert every.exit_code == 0, every.output
    registered = config.list_options("experiments")
    assert composed == [registered[0], "quickstart"]
    alone = runner.invoke(cli.app, ["tables", "quickstart", *small])
    assert every.stdout == alone.stdout and "quickstart" in every.stdout

    # an experiment that may record its plans elsewhere (its file sets paths, or names it otherwise) is composed;
    # none of the registered ones does
    assert not any(cli._may_plan_elsewhere(name) for name in registered)
    composed.clear()
    monkeypatch.setattr(cli, "_may_plan_elsewhere", lambda name: name == registered[-1])
    assert runner.invoke(cli.app, ["tables", *small]).exit_code == 0
    assert composed == [registered[0], "quickstart", registered[-1]]
