"""Compose and validate forestlab's configuration.

Hydra only composes: `compose(overrides)` runs Hydra's compose API on the `conf/` tree (no ``@hydra.main``, no
working-directory changes, no output folders) and returns a plain, resolved, validated ``DictConfig``. Every error a
user can make (an unknown group option, an unknown key, a malformed override, a value of the wrong type) becomes a
single-line :class:`~forestlab.errors.ConfigError` that lists the valid choices.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, ListConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from forestlab.errors import ConfigError

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_DIR = PACKAGE_DIR.parent

GROUPS = ("dataset", "algorithm", "protocol", "experiment", "launcher", "paths", "debug")
# Groups a user picks from on the command line (`forestlab list ...`).
LISTABLE = {"experiments": "experiment", "datasets": "dataset", "algorithms": "algorithm",
            "protocols": "protocol", "launchers": "launcher"}


def conf_dir() -> Path:
    """The config tree: ``$FORESTLAB_CONF_DIR`` or the ``conf/`` folder beside the package."""
    env = os.environ.get("FORESTLAB_CONF_DIR")
    path = Path(env) if env else PROJECT_DIR / "conf"
    if not (path / "config.yaml").is_file():
        raise ConfigError(f"no forestlab config tree at {path} (expected {path / 'config.yaml'}); "
                          "set FORESTLAB_CONF_DIR or run from a clone of the repository")
    return path


def experiments_dir() -> Path:
    """The folder of the studies' published tables (``experiments/<study>/published/*.csv``)."""
    env = os.environ.get("FORESTLAB_EXPERIMENTS_DIR")
    return Path(env) if env else PROJECT_DIR / "experiments"


def group_options(group: str) -> list[str]:
    """The option names of a config group (the YAML file stems), sorted."""
    folder = conf_dir() / group
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.yaml") if not p.stem.startswith("_"))


def load_group_option(group: str, name: str) -> DictConfig:
    """Load ``conf/<group>/<name>.yaml`` on its own (used for the lists of datasets and algorithms of an experiment)."""
    path = conf_dir() / group / f"{name}.yaml"
    if not path.is_file():
        raise ConfigError(f"unknown {group} '{name}'; valid {group} names: {', '.join(group_options(group))}")
    try:
        node = OmegaConf.load(path)
    except (OmegaConfBaseException, OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {_one_line(exc)}") from None
    if not isinstance(node, DictConfig):
        raise ConfigError(f"{path} must hold a mapping")
    return node


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    # OmegaConf appends "full_key: ...\nobject_type=..." blocks; keep the first line, which says what is wrong.
    first = text.splitlines()[0] if text else type(exc).__name__
    return re.sub(r"\s+", " ", first)


def _normalise_overrides(overrides: Sequence[str]) -> list[str]:
    """Make the common short forms work: choose the single-run experiment when a dataset or algorithm is named
    without an experiment, as `forestlab run dataset=sonar algorithm=rf` should run just that."""
    out = list(overrides)
    keys = {o.split("=", 1)[0].lstrip("+~") for o in out if "=" in o}
    if ({"dataset", "algorithm"} & keys) and "experiment" not in keys:
        out.append("experiment=single")
    return out


def _translate_hydra_error(exc: Exception, overrides: Sequence[str]) -> ConfigError:
    from hydra.errors import MissingConfigException, OverrideParseException

    text = str(exc)
    if isinstance(exc, OverrideParseException):
        return ConfigError(f"malformed override: {_one_line(exc)} "
                           "(expected KEY=VALUE, e.g. experiment=uci_binary seeds=10 launcher.n_jobs=2)")
    if isinstance(exc, MissingConfigException) or "Could not find" in text:
        match = re.search(r"Could not find '([^'/]+)/([^']+)'", text)
        if match:
            group, name = match.groups()
            return ConfigError(f"unknown {group} '{name}'; valid {group} names: "
                               f"{', '.join(group_options(group))}")
        match = re.search(r"Could not load '([^'/]+)/([^']+)'", text)
        if match:
            group, name = match.groups()
            return ConfigError(f"unknown {group} '{name}'; valid {group} names: "
                               f"{', '.join(group_options(group))}")
        return ConfigError(_one_line(exc))
    match = re.search(r"Could not override '([^']+)'", text)
    if match:
        key = match.group(1)
        parent, _, leaf = key.rpartition(".")
        return ConfigError(f"unknown config key '{key}'{_valid_keys_hint(parent, overrides)}; "
                           f"to add a new key write +{key}=VALUE")
    match = re.search(r"Key '([^']+)' is not in struct", text)
    if match:
        return ConfigError(f"unknown config key '{match.group(1)}'")
    return ConfigError(f"invalid configuration: {_one_line(exc)}")


def _valid_keys_hint(parent: str, overrides: Sequence[str]) -> str:
    try:
        base = _compose_raw([o for o in overrides if "=" in o and o.split("=", 1)[0] in GROUPS])
        node = OmegaConf.select(base, parent) if parent else base
    except Exception:  # noqa: BLE001 - only a hint
        return ""
    if isinstance(node, DictConfig):
        where = f"'{parent}'" if parent else "the top level"
        return f" (valid keys at {where}: {', '.join(str(k) for k in node.keys())})"
    return ""


def _compose_raw(overrides: Sequence[str]) -> DictConfig:
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(conf_dir()), version_base=None):
        return hydra_compose(config_name="config", overrides=list(overrides))


def compose(overrides: Sequence[str] = ()) -> DictConfig:
    """Compose ``conf/config.yaml`` with Hydra overrides and return the resolved, validated config.

    Parameters
    ----------
    overrides : sequence of str
        Hydra override strings, e.g. ``["experiment=uci_binary", "seeds=10", "launcher.n_jobs=2"]``.
    """
    from hydra.errors import HydraException

    overrides = _normalise_overrides([str(o) for o in overrides])
    try:
        cfg = _compose_raw(overrides)
        OmegaConf.resolve(cfg)
    except HydraException as exc:
        raise _translate_hydra_error(exc, overrides) from None
    except OmegaConfBaseException as exc:
        raise _translate_hydra_error(exc, overrides) from None
    except (ValueError, TypeError, KeyError) as exc:  # e.g. a YAML error in a user-written file
        raise ConfigError(f"invalid configuration: {_one_line(exc)}") from None
    validate(cfg)
    return cfg


def _require_int(value: Any, name: str, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{name} must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ConfigError(f"{name} must be >= {minimum}, got {value}")
    return value


def _as_name_list(value: Any, name: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, (list, ListConfig)) or not value:
        raise ConfigError(f"{name} must be a non-empty list of names, got {value!r}")
    return [str(v) for v in value]


def validate(cfg: DictConfig) -> None:
    """Check the types and ranges of the values the runner relies on; raise ConfigError on the first problem."""
    from forestlab.learners import REGISTRY

    _require_int(cfg.get("seed"), "seed", 0)
    _require_int(cfg.get("seeds"), "seeds", 1)
    launcher = cfg.get("launcher")
    if launcher is None:
        raise ConfigError("launcher is missing")
    n_jobs = _require_int(launcher.get("n_jobs"), "launcher.n_jobs")
    if n_jobs == 0 or n_jobs < -1:
        raise ConfigError(f"launcher.n_jobs must be -1 (all cores) or a positive integer, got {n_jobs}")
    if launcher.get("backend") not in ("loky", "threading", "sequential", "dask"):
        raise ConfigError(f"launcher.backend must be one of loky, threading, sequential, dask; "
                          f"got {launcher.get('backend')!r}")
    exp = cfg.get("experiment")
    if not isinstance(exp, DictConfig):
        raise ConfigError("experiment is missing; valid experiments: " + ", ".join(group_options("experiment")))
    for name in _as_name_list(exp.get("datasets"), "experiment.datasets"):
        if name != cfg.dataset.get("name") and name not in group_options("dataset"):
            raise ConfigError(f"experiment.datasets: unknown dataset '{name}'; valid datasets: "
                              f"{', '.join(group_options('dataset'))}")
    for name in _as_name_list(exp.get("algorithms"), "experiment.algorithms"):
        if name != cfg.algorithm.get("name") and name not in group_options("algorithm"):
            raise ConfigError(f"experiment.algorithms: unknown algorithm '{name}'; valid algorithms: "
                              f"{', '.join(group_options('algorithm'))}")
    est = cfg.algorithm.get("estimator")
    if est not in REGISTRY:
        raise ConfigError(f"algorithm.estimator: unknown estimator '{est}'; valid estimators: "
                          f"{', '.join(sorted(REGISTRY))}")
    proto = cfg.protocol
    if proto.get("kind") not in ("holdout", "kfold"):
        raise ConfigError(f"protocol.kind must be holdout or kfold, got {proto.get('kind')!r}")
    if proto.kind == "kfold":
        _require_int(proto.get("n_folds"), "protocol.n_folds", 2)
    else:
        for key in ("train_size", "test_size"):
            _check_size(proto.get(key), f"protocol.{key}", allow_none=(key == "test_size"))
    if proto.get("selection", "none") not in ("none", "oob"):
        raise ConfigError(f"protocol.selection must be none or oob, got {proto.get('selection')!r}")
    limits = cfg.get("limits") or {}
    for key in ("max_datasets", "max_estimators"):
        if limits.get(key) is not None:
            _require_int(limits.get(key), f"limits.{key}", 1)
    from forestlab.metrics import METRICS

    for metric in _as_name_list(cfg.get("metrics"), "metrics"):
        if metric not in METRICS:
            raise ConfigError(f"unknown metric '{metric}'; valid metrics: {', '.join(sorted(METRICS))}")


def _check_size(value: Any, name: str, allow_none: bool) -> None:
    if value is None:
        if allow_none:
            return
        raise ConfigError(f"{name} must be set (an integer number of points or a fraction in (0, 1))")
    if isinstance(value, bool):
        raise ConfigError(f"{name} must be an integer or a fraction, got {value!r}")
    if isinstance(value, int):
        if value < 1:
            raise ConfigError(f"{name} must be >= 1, got {value}")
        return
    if isinstance(value, float):
        if not 0.0 < value < 1.0:
            raise ConfigError(f"{name} as a fraction must be in (0, 1), got {value}")
        return
    raise ConfigError(f"{name} must be an integer or a fraction, got {value!r}")


def to_container(node: Any) -> Any:
    """A plain Python value (dict/list/scalar) for a config node."""
    if isinstance(node, (DictConfig, ListConfig)):
        return OmegaConf.to_container(node, resolve=True)
    return node


def resolve_path(value: str | os.PathLike[str]) -> Path:
    return Path(os.path.expanduser(str(value))).resolve()


def list_options(kind: str) -> list[str]:
    """Option names for `forestlab list KIND` (experiments, datasets, algorithms, protocols, launchers)."""
    if kind not in LISTABLE:
        raise ConfigError(f"cannot list '{kind}'; choose one of: {', '.join(LISTABLE)}")
    names = group_options(LISTABLE[kind])
    return [n for n in names if not (kind == "experiments" and n == "single")]


def describe(kind: str, name: str) -> str:
    """A one-line description of a config option, for listings."""
    node = load_group_option(LISTABLE[kind], name)
    if kind == "experiments":
        exp = node.get("experiment") or {}
        return str(exp.get("description", ""))
    return str(node.get("description", "") or "")


def iter_experiments() -> Iterable[str]:
    return list_options("experiments")
