import pytest
from omegaconf import OmegaConf

from forestlab.config import compose, group_options, list_options
from forestlab.errors import ConfigError
from forestlab.runner import plan


@pytest.mark.parametrize("experiment", list_options("experiments"))
def test_every_experiment_composes_and_plans(experiment):
    cfg = compose([f"experiment={experiment}"])
    assert cfg.experiment.name == experiment
    specs = plan(cfg)
    assert len(specs) == len(cfg.experiment.datasets) * len(cfg.experiment.algorithms) * cfg.seeds
    assert len({s.key for s in specs}) == len(specs)


@pytest.mark.parametrize("experiment", list_options("experiments"))
def test_smoke_shrinks_every_experiment(experiment):
    cfg = compose([f"experiment={experiment}", "debug=smoke"])
    specs = plan(cfg)
    assert len(specs) <= 2 * len(cfg.experiment.algorithms)
    assert all(s.identity["learner"]["params"].get("n_estimators", 0) <= 10 for s in specs)


def test_every_dataset_and_algorithm_config_is_selectable():
    for name in group_options("dataset"):
        cfg = compose([f"dataset={name}"])
        assert cfg.dataset.name == name and cfg.experiment.name == "single"
    for name in group_options("algorithm"):
        assert compose([f"algorithm={name}"]).algorithm.name == name


def test_defaults_are_quickstart_offline():
    cfg = compose([])
    assert cfg.experiment.name == "quickstart"
    sources = {compose([f"dataset={d}"]).dataset.source.kind for d in cfg.experiment.datasets}
    assert sources <= {"sklearn", "synthetic"}


def test_overrides_apply_to_the_named_algorithm():
    cfg = compose(["experiment=uci_binary", "algorithm.params.n_estimators=7", "seeds=2"])
    specs = plan(cfg)
    trees = {s.algorithm: s.identity["learner"]["params"]["n_estimators"] for s in specs}
    assert trees == {"rf": 7, "sorf": 100, "mincq": 100}  # `algorithm.` is the selected algorithm (rf)
    assert len({s.repetition for s in specs}) == 2
    # every algorithm of the experiment that has the parameter
    specs = plan(compose(["experiment=uci_binary", "+experiment.params.n_estimators=7", "seeds=2"]))
    assert {s.identity["learner"]["params"]["n_estimators"] for s in specs} == {7}


def test_keys_ignore_experiment_name_and_change_with_params():
    a = {s.key for s in plan(compose(["experiment=zirakiza2013_fig4_1"]))}
    b = {s.key for s in plan(compose(["experiment=zirakiza2013_fig4_2"]))}
    assert a == b  # the two figures share their runs
    c = {s.key for s in plan(compose(["experiment=zirakiza2013_fig4_1", "algorithm.params.regime=stumps"]))}
    assert not a & c


def test_single_run_mode():
    cfg = compose(["dataset=sonar", "algorithm=rf", "protocol=holdout", "seed=3"])
    assert list(cfg.experiment.datasets) == ["sonar"] and cfg.seed == 3
    assert len(plan(cfg)) == 1


@pytest.mark.parametrize("overrides, message", [
    (["experiment=nope"], "unknown experiment 'nope'; valid experiment names: .*quickstart"),
    (["dataset=nope"], "unknown dataset 'nope'; valid dataset names: .*sonar"),
    (["algorithm=nope"], "unknown algorithm 'nope'; valid algorithm names: .*rf"),
    (["protocol=nope"], "unknown protocol 'nope'; valid protocol names: .*kfold"),
    (["nokey=1"], "unknown config key 'nokey'.*valid keys at the top level: .*seeds"),
    (["algorithm.params.nokey=1"], "unknown config key 'algorithm.params.nokey'"),
    (["seeds=="], "malformed override"),
    (["seeds=abc"], "seeds must be an integer"),
    (["seeds=0"], "seeds must be >= 1"),
    (["launcher.n_jobs=0"], "launcher.n_jobs must be -1"),
    (["protocol.train_size=1.5"], "train_size as a fraction must be in"),
    (["metrics=[nope]"], "unknown metric 'nope'"),
])
def test_bad_input_is_one_clear_error(overrides, message):
    with pytest.raises(ConfigError, match=message) as info:
        compose(overrides)
    assert "\n" not in str(info.value)


def test_composed_config_is_plain_and_resolved():
    cfg = compose(["experiment=uci_binary"])
    text = OmegaConf.to_yaml(cfg)
    assert "${" not in text
