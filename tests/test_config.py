import pytest
from omegaconf import OmegaConf

from forestlab.config import compose, group_options, list_options, load_group_option
from forestlab.errors import ConfigError
from forestlab.runner import plan


@pytest.mark.parametrize("experiment", list_options("experiments"))
def test_every_experiment_composes_and_plans(experiment):
    cfg = compose([f"experiment={experiment}"])
    assert cfg.experiment.name == experiment
    specs = plan(cfg)
    folds = cfg.protocol.n_folds if cfg.protocol.kind == "kfold" else 1
    own = cfg.experiment.get("dataset_seeds") or {}  # datasets with their own number of seeds
    seeds = sum(int(own.get(d, cfg.seeds)) for d in cfg.experiment.datasets)
    assert len(specs) == seeds * len(cfg.experiment.algorithms) * folds
    assert len({s.key for s in specs}) == len(specs)


@pytest.mark.parametrize("experiment", list_options("experiments"))
def test_smoke_shrinks_every_experiment(experiment):
    cfg = compose([f"experiment={experiment}", "debug=smoke"])
    specs = plan(cfg)
    folds = cfg.protocol.n_folds if cfg.protocol.kind == "kfold" else 1
    assert len(specs) <= 2 * len(cfg.experiment.algorithms) * folds
    assert all(s.identity["learner"]["params"].get("n_estimators", 0) <= 10 for s in specs)


@pytest.mark.parametrize("group", ["dataset", "algorithm", "protocol"])
def test_options_are_selectable_and_load_alone_as_when_selected(group):
    """Every fourth option of each group, in name order (every option in the slow test below): each composes when
    selected and loads alone as selected (Hydra's compose of each option took 25 s of `make test`)."""
    _check_options(group, group_options(group)[::4])


@pytest.mark.slow
@pytest.mark.parametrize("group", ["dataset", "algorithm", "protocol"])
def test_every_option_is_selectable_and_loads_alone_as_when_selected(group):
    _check_options(group, group_options(group))


def _check_options(group: str, names: list[str]) -> None:
    """An experiment's other datasets and algorithms (load_group_option) are exactly what Hydra composes when the
    option is the selected one, their `defaults:` bases (conf/<group>/_*.yaml) merged and no `defaults` key left."""
    for name in names:
        extra = ["dataset=ringnorm"] if group == "protocol" else []  # 7400 points: room for every protocol's sizes
        cfg = compose([f"{group}={name}", "experiment=single", *extra])
        assert cfg[group].name == name and cfg.experiment.name == "single"
        selected = OmegaConf.to_container(cfg[group], resolve=True)
        alone = OmegaConf.to_container(load_group_option(group, name), resolve=True)
        assert alone == selected, name
        assert "defaults" not in alone, name


def test_group_options_compose_their_bases(tmp_path, monkeypatch):
    """A base `_name.yaml` is merged under the option that names it, is not listed, and an edit to it is seen at once;
    a broken base or option is one line naming its file, and compose() works before and after."""
    import shutil

    from forestlab.config import PROJECT_DIR

    conf = tmp_path / "conf"
    shutil.copytree(PROJECT_DIR / "conf", conf)
    monkeypatch.setenv("FORESTLAB_CONF_DIR", str(conf))
    algorithms = conf / "algorithm"
    (algorithms / "_mine_base.yaml").write_text("estimator: rf\nseed_tag: mine\nparams: {n_estimators: 5, "
                                               "criterion: gini}\ngrid: {}\n")
    (algorithms / "mine.yaml").write_text("defaults: [_mine_base, _self_]\nname: mine\nparams: {n_estimators: 7}\n")
    assert "mine" in group_options("algorithm") and not [n for n in group_options("algorithm") if n[0] == "_"]
    assert compose(["algorithm=mine"]).algorithm.params.n_estimators == 7
    mine = load_group_option("algorithm", "mine")
    assert OmegaConf.to_container(mine) == {"estimator": "rf", "seed_tag": "mine", "grid": {}, "name": "mine",
                                            "params": {"n_estimators": 7, "criterion": "gini"}}
    mine.params.n_estimators = 9  # callers get copies
    assert load_group_option("algorithm", "mine").params.n_estimators == 7
    assert load_group_option("algorithm", "sorf").params.weighting == "sorf"  # the rest of the group
    (algorithms / "_mine_base.yaml").write_text("estimator: rf\nseed_tag: mine\nparams: {criterion: entropy}\n")
    assert load_group_option("algorithm", "mine").params.criterion == "entropy"
    (algorithms / "_mine_base.yaml").write_text("estimator: rf\nparams: {criterion: [gini\n")
    with pytest.raises(ConfigError, match=r"cannot read .*_mine_base\.yaml: .*\(line \d+, column \d+\)") as info:
        load_group_option("algorithm", "mine")
    assert "\n" not in str(info.value)
    assert load_group_option("algorithm", "rf").params.weighting == "uniform"  # a broken file stops only its own
    (algorithms / "mine.yaml").write_text("defaults: [_nope, _self_]\nname: mine\n")
    with pytest.raises(ConfigError, match=r"mine\.yaml: .*_nope") as info:
        load_group_option("algorithm", "mine")
    assert "\n" not in str(info.value)
    with pytest.raises(ConfigError, match="unknown algorithm 'nope'; valid algorithm names: .*sorf"):
        load_group_option("algorithm", "nope")
    assert compose(["experiment=uci_binary"]).algorithm.name == "rf"


def test_defaults_are_quickstart_offline():
    cfg = compose([])
    assert cfg.experiment.name == "quickstart"
    sources = {compose([f"dataset={d}"]).dataset.source.kind for d in cfg.experiment.datasets}
    assert sources <= {"sklearn", "synthetic"}


def test_overrides_apply_to_the_named_algorithm():
    cfg = compose(["experiment=uci_binary", "algorithm.params.n_estimators=7", "seeds=2"])
    specs = plan(cfg)
    trees = {s.algorithm: s.identity["learner"]["params"]["n_estimators"] for s in specs}
    # `algorithm.` is the selected algorithm (rf); the others, the PAC-Bayes successors included, keep theirs
    assert trees == {"rf": 7} | dict.fromkeys(("sorf", "mincq", "fo", "tnd", "cctnd", "ccpbb", "cbound_joint"), 100)
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
