"""Compose and validate forestlab's configuration.

Hydra only composes: `compose(overrides)` runs Hydra's compose API on the `conf/` tree (no ``@hydra.main``, no
working-directory changes, no output folders) and returns a plain, resolved, validated ``DictConfig``. Every error a
user can make (an unknown group option, an unknown key, a malformed override, a value of the wrong type) becomes a
single-line :class:`~forestlab.errors.ConfigError` that lists the valid choices.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import os
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, ListConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from forestlab._cache import cache_dir, keep
from forestlab._jsonable import Unencodable, dataclass_closure, decode, encode
from forestlab._values import as_list, is_int
from forestlab.errors import ConfigError, one_line
from forestlab.experiment import AlgorithmSpec, DatasetSpec, Experiment
from forestlab.spec import (
    Launcher,
    Limits,
    Paths,
    Protocol,
    Reports,
    Selection,
    Shrunk,
    build_reports,
    check_section,
    check_sections,
    closest,
    declared_keys,
    section_keys,
)

# The checks import learners, metrics, protocols, selection and datasets inside their functions: those load numpy and
# scikit-learn, which composing a config (`forestlab list`, `describe`) never needs.

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
    """``conf/<group>/<name>.yaml`` as Hydra composes it on its own (used for the lists of datasets and algorithms of an
    experiment): an option's ``defaults:`` list (a base ``_<name>.yaml`` of the same group) applies exactly as when the
    option is the selected one. Returns a fresh copy; no ``defaults`` key is left.

    An option without a ``defaults:`` list is what Hydra composes it to, its file's content, and is read as such (one
    plain parse, which is also Hydra's first step: composing every option would cost Hydra's merges for nothing). An
    option whose package is ``_global_`` (experiments, ``debug``) only makes sense composed with the root config, whose
    choices its ``defaults:`` override: it is read as its file, as written.
    """
    path = conf_dir() / group / f"{name}.yaml"
    if not path.is_file():
        raise ConfigError(f"unknown {group} '{name}'; valid {group} names: {', '.join(group_options(group))}")
    stat = path.stat()
    version = (str(path), stat.st_mtime_ns, stat.st_size)
    package, _ = _file_header(*version)
    if package in (None, "_group_", "_global_"):
        node = _load_yaml(*version)
        if package == "_global_" or "defaults" not in node:
            return copy.deepcopy(node)
        merged = _merged_group_option(conf_dir(), group, name)
        if merged is not _NOT_PLAIN:
            return merged
    return copy.deepcopy(_composed_group_option(conf_dir(), group, name))


def _merged_group_option(root: Path, group: str, name: str, depth: int = 0) -> Any:
    """Option ``name`` of ``group`` whose ``defaults:`` list names only bases of the same group, merged as Hydra merges
    them (each entry in order, the file's own content at ``_self_``, last unless placed) without Hydra's setup
    (~0.5 s a process): a fresh DictConfig. ``_NOT_PLAIN`` for anything else (another group, a package, an
    override, a file that does not parse as a mapping): the caller composes with Hydra, which also says what is
    wrong."""
    path = root / group / f"{name}.yaml"
    if depth > 16 or not path.is_file():
        return _NOT_PLAIN
    stat = path.stat()
    version = (str(path), stat.st_mtime_ns, stat.st_size)
    if _file_header(*version)[0] not in (None, "_group_"):
        return _NOT_PLAIN
    try:
        node = _load_yaml(*version)
    except ConfigError:
        return _NOT_PLAIN
    defaults = node.get("defaults", []) if "defaults" in node else []
    if not isinstance(defaults, ListConfig | list) or not all(
            isinstance(d, str) and re.fullmatch(r"[\w.-]+", d) for d in defaults):
        return _NOT_PLAIN
    entries = list(defaults) if "_self_" in defaults else [*defaults, "_self_"]
    if len(set(entries)) != len(entries):
        return _NOT_PLAIN
    own = OmegaConf.create({k: v for k, v in node.items_ex(resolve=False) if k != "defaults"})
    parts = []
    for entry in entries:
        if entry == "_self_":
            parts.append(own)
            continue
        base = _merged_group_option(root, group, entry, depth + 1)
        if base is _NOT_PLAIN:
            return _NOT_PLAIN
        parts.append(base)
    try:
        merged = OmegaConf.merge(*parts) if len(parts) > 1 else parts[0]
    except (OmegaConfBaseException, ValueError, TypeError) as exc:  # noqa: F841 - Hydra says it better
        return _NOT_PLAIN
    return OmegaConf.create(OmegaConf.to_container(merged, resolve=False))


@functools.lru_cache(maxsize=512)
def _load_yaml(path: str, mtime_ns: int, size: int) -> DictConfig:
    """One parse per file version (plan and validate read each dataset and algorithm file; callers get copies)."""
    import yaml

    try:
        node = OmegaConf.load(path)
    except (OmegaConfBaseException, OSError, ValueError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read {path}: {_yaml_message(exc)}") from None
    if not isinstance(node, DictConfig):
        raise ConfigError(f"{path} must hold a mapping")
    return node


@functools.lru_cache(maxsize=1024)
def _file_header(path: str, mtime_ns: int, size: int) -> tuple[str | None, bool]:
    """A config file's ``# @package`` (read as Hydra reads its header: the leading ``# @KEY VALUE`` lines), and whether
    a line starts with ``defaults:`` (only a hint, for batching: the parsed file decides)."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {one_line(exc)}") from None
    package = None
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        match = re.match(r"^#\s*@(\S+)\s+(\S+)\s*$", line)
        if not match:
            break
        if match.group(1) == "package":
            package = match.group(2)
    return package, re.search(r"^defaults\s*:", text, re.MULTILINE) is not None


# Hydra-composed group options, per (conf folder, group): the folder's signature (the relative path, mtime and size of
# every YAML file under it, bases included), the options composed so far as plain containers (each made a DictConfig
# when first asked for), and whether the batch was composed: at the first option asked for, every option of the group
# with a `defaults:` list, in one compose, since Hydra's own setup (~50 ms a compose) would otherwise be paid for each.
_COMPOSED: dict[tuple[str, str], tuple[tuple[tuple[str, int, int], ...], dict[str, Any], list[bool]]] = {}
_COMPOSE_LOCK = threading.Lock()  # GlobalHydra is one per process
_COMPOSED_TREES = 8  # config trees kept (tests compose many copies of conf/)


def _composed_group_option(root: Path, group: str, name: str) -> DictConfig:
    """Option ``name`` of ``group`` of the config tree ``root`` as Hydra composes it, from the cache of its group
    folder (callers copy it)."""
    folder = root / group
    signature = tuple(sorted((str(p.relative_to(folder)), st.st_mtime_ns, st.st_size)
                             for p in folder.rglob("*.yaml") for st in (p.stat(),)))
    key = (str(root), group)
    with _COMPOSE_LOCK:
        cached = _COMPOSED.get(key)
        if cached is None or cached[0] != signature:
            _COMPOSED.pop(key, None)
            while len(_COMPOSED) >= _COMPOSED_TREES * len(GROUPS):
                del _COMPOSED[next(iter(_COMPOSED))]  # the oldest
            cached = _COMPOSED[key] = (signature, {}, [False])
        options, batched = cached[1], cached[2]
        if name not in options and not batched[0]:
            batched[0] = True
            batch = {name} if re.fullmatch(r"[\w.-]+", name) else set()
            for path in folder.glob("*.yaml"):
                stat = path.stat()
                package, has_defaults = _file_header(str(path), stat.st_mtime_ns, stat.st_size)
                if (has_defaults and package in (None, "_group_") and not path.stem.startswith("_")
                        and re.fullmatch(r"[\w.-]+", path.stem)):
                    batch.add(path.stem)
            if len(batch) > 1:
                try:
                    options.update(_compose_group_options(root, group, sorted(batch)))
                except ConfigError:  # a bad file among them: compose each option alone, so the others still load
                    pass
        if name not in options:
            options.update(_compose_group_options(root, group, [name]))
        if not isinstance(options[name], DictConfig):
            # detached: no parent, no struct flag, as OmegaConf.load gives (interpolations kept unresolved)
            options[name] = OmegaConf.create(options[name])
        return options[name]


def _compose_group_options(root: Path, group: str, names: Sequence[str]) -> dict[str, Any]:
    """Compose options of one group with Hydra, without the root config: ``+group=name`` puts the option (its
    ``defaults:`` bases merged, in their order) at ``cfg[group]``. Several options at once each go to a package of
    their own (``+group@_option_I=name``): the same content, for one Hydra setup. Returns plain containers."""
    import yaml
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException

    if not names:
        return {}
    folder = root / group
    packages = [group] if len(names) == 1 else [f"_option_{i}" for i in range(len(names))]
    overrides = [f"+{group}={names[0]}"] if len(names) == 1 else [
        f"+{group}@{package}={name}" for package, name in zip(packages, names, strict=True)]
    where = folder / f"{names[0]}.yaml" if len(names) == 1 else folder
    try:
        GlobalHydra.instance().clear()
        with initialize_config_dir(config_dir=str(root), version_base=None):
            cfg = hydra_compose(config_name=None, overrides=overrides)
        out = {}
        for package, name in zip(packages, names, strict=True):
            node = OmegaConf.select(cfg, package)
            if node is not None and not isinstance(node, DictConfig):
                raise ConfigError(f"{folder / f'{name}.yaml'} must hold a mapping")
            out[name] = OmegaConf.to_container(node, resolve=False) if node is not None else {}
        return out
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        file = mark.name if mark is not None and getattr(mark, "name", None) else where
        raise ConfigError(f"cannot read {file}: {_yaml_message(exc)}") from None
    except (HydraException, OmegaConfBaseException, OSError, ValueError, TypeError, KeyError) as exc:
        raise ConfigError(f"cannot compose {where}: {one_line(exc)}") from None


def _yaml_message(exc: BaseException) -> str:
    """A YAML error on one line, with its position (PyYAML puts 'in "file", line L, column C' on a second line)."""
    text = str(exc).strip()
    where = re.search(r"line (\d+), column (\d+)", text)
    return f"{one_line(exc)}" + (f" (line {where.group(1)}, column {where.group(2)})" if where else "")


def _normalise_overrides(overrides: Sequence[str]) -> list[str]:
    """Make the common short forms work: choose the single-run experiment when a dataset or algorithm is named
    without an experiment, as `forestlab run dataset=sonar algorithm=rf` should run just that."""
    out = list(overrides)
    keys = {o.split("=", 1)[0].lstrip("+~") for o in out if "=" in o}
    if ({"dataset", "algorithm"} & keys) and "experiment" not in keys:
        name = choices_experiment()
        if name is not None:
            out.append(f"experiment={name}")
    return out


#: Override keys (their first part) that say where and how runs execute, or how shrunk they are, not which runs an
#: experiment has: a named experiment's recorded definition (:func:`definition`) leaves them out, and the commands
#: that read it are given them again, as for any experiment (``debug=smoke``, ``paths.results_dir=...``).
NOT_DEFINING = ("paths", "launcher", "debug", "hydra")


def override_key(override: str) -> str:
    """The key an override sets (``experiment.datasets`` of ``+experiment.datasets=[a]``)."""
    return override.split("=", 1)[0].lstrip("+~")


def chosen_experiment(overrides: Sequence[str]) -> str | None:
    """The experiment ``experiment=NAME`` chooses among ``overrides`` (the last one given), or None."""
    chosen = [o.split("=", 1)[1] for o in overrides if "=" in o and override_key(o) == "experiment"]
    return chosen[-1] if chosen else None


def definition(overrides: Sequence[str]) -> list[str]:
    """The overrides of ``forestlab run`` that define its experiment (which runs it has): all but
    :data:`NOT_DEFINING`. Recorded with the plan of an experiment named by ``experiment.name=NAME`` (one that is not
    in ``conf/experiment/``), so that ``forestlab tables NAME`` composes it again (:func:`expand_named`)."""
    return [str(o) for o in overrides if "=" in o and override_key(o).split(".")[0] not in NOT_DEFINING]


def is_registered(name: str) -> bool:
    """Whether ``name`` is an experiment of ``conf/experiment/`` (else it was named with ``experiment.name=``)."""
    return name in group_options("experiment")


def results_dir_for(overrides: Sequence[str]) -> Path:
    """The results folder the ``paths`` overrides (and the environment) give, without composing an experiment: read
    from ``conf/paths/default.yaml`` alone (milliseconds) when nothing else can set it (no ``paths`` override, no
    ``conf/local/default.yaml``), else composed with those overrides."""
    given = [o for o in overrides if "=" in o and override_key(o).split(".")[0] == "paths"]
    if not given and not (conf_dir() / "local" / "default.yaml").is_file():
        paths = load_group_option("paths", "default")
        return resolve_path(OmegaConf.create({"paths": paths}).paths.results_dir)
    cfg = _compose_unchecked(given)
    return resolve_path(cfg.paths.results_dir)


def expand_named(overrides: Sequence[str]) -> list[str]:
    """``overrides`` with ``experiment=NAME`` of an experiment named by ``experiment.name=NAME`` (not in
    ``conf/experiment/``) replaced by the definition ``forestlab run`` recorded for it in the store
    (:meth:`forestlab.store.Store.recorded_definition`, its newest): ``experiment=BASE`` and the other overrides
    that made it (``experiment.datasets=[mydata]``, ``seeds=3`` ...). An override given here wins over a recorded
    one of the same key. Unchanged when the experiment is a registered one (or none is chosen)."""
    overrides = [str(o) for o in overrides]
    name = chosen_experiment(overrides)
    if name is None or is_registered(name) or not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        return overrides
    from forestlab.store import Store  # local: the store loads numpy and pandas, composing a config does not

    results_dir = results_dir_for(overrides)
    with Store(results_dir, readonly=True) as store:
        recorded = store.recorded_definition(name)
    if recorded is None:
        registered = ", ".join(group_options("experiment"))
        raise ConfigError(f"unknown experiment '{name}'; valid experiment names: {registered}; nor was an experiment "
                          f"named so (`forestlab run experiment=BASE experiment.name={name} ...`, see the README's "
                          f"'Your own data') run into {results_dir}")
    given = {override_key(o) for o in overrides if override_key(o) != "experiment"}
    return ([o for o in recorded if override_key(o) not in given]
            + [o for o in overrides if "=" not in o or override_key(o) != "experiment"])


def experiment_setting(name: str, key: str, default: Any = None) -> Any:
    """``experiment.<key>`` as ``conf/experiment/<name>.yaml`` writes it (``default`` when it does not, or when there
    is no such experiment): how the command line treats an experiment, read without composing it."""
    path = conf_dir() / "experiment" / f"{name}.yaml"
    if not path.is_file():
        return default
    stat = path.stat()
    version = (str(path), stat.st_mtime_ns, stat.st_size)
    if _file_header(*version)[0] == "_global_":  # read as written (load_group_option's rule): a plain YAML parse
        plain = _plain_yaml(*version)
        exp = plain.get("experiment") if isinstance(plain, dict) else None
        value = exp.get(key, default) if isinstance(exp, dict) else default if exp is None else _NOT_PLAIN
        if not (value is _NOT_PLAIN or isinstance(value, str) and "${" in value):
            return value
    exp = load_group_option("experiment", name).get("experiment") or {}  # an interpolation, or an unusual file
    return exp.get(key, default)


@functools.lru_cache(maxsize=8)
def _shrunk_kind(conf: str) -> Shrunk | None:
    for name in group_options("debug"):
        section = load_group_option("debug", name).get("shrunk")
        if section is not None and load_group_option("debug", name).get("smoke"):
            return Shrunk.of(_plain(section), f"shrunk (conf/debug/{name}.yaml)")
    return None


def shrunk_kind(experiment: Experiment | None = None) -> Shrunk | None:
    """The kind of shrunk run of ``experiment`` when it is one, else the kind a stored shrunk plan is named by (the
    store marks a plan shrunk or not): the first debug option (sorted) that sets ``smoke: true`` and a ``shrunk``
    section. None when no debug option declares one."""
    if experiment is not None and experiment.shrunk is not None:
        return experiment.shrunk
    return _shrunk_kind(str(conf_dir()))


_NOT_PLAIN = object()


@functools.lru_cache(maxsize=512)
def _plain_yaml(path: str, mtime_ns: int, size: int) -> Any:
    """A config file's plain YAML content (libyaml when present), for the command line's settings of every experiment
    (``list``, ``status``): OmegaConf's parse of the 20 experiment files costs ~1 s. ``_NOT_PLAIN`` when it cannot be
    read: the caller then takes OmegaConf's path, which says why."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(Path(path).read_text(encoding="utf-8"), Loader=loader)  # noqa: S506 - a safe loader
    except (OSError, ValueError, yaml.YAMLError):
        return _NOT_PLAIN


def choices_experiment() -> str | None:
    """The experiment whose datasets and algorithms are the command line's choices (``experiment.from_choices``):
    the one chosen when ``dataset=`` or ``algorithm=`` is given without ``experiment=``."""
    return next((n for n in group_options("experiment") if experiment_setting(n, "from_choices", False)), None)


def _translate_hydra_error(exc: Exception, overrides: Sequence[str]) -> ConfigError:
    from hydra.errors import MissingConfigException, OverrideParseException

    text = str(exc)
    if isinstance(exc, OverrideParseException):
        return ConfigError(f"malformed override: {one_line(exc)} "
                           "(expected KEY=VALUE, e.g. experiment=uci_binary seeds=10 launcher.n_jobs=2)")
    if "Config group override must be a string or a list" in text:
        for override in overrides:
            key, _, value = override.partition("=")
            key = key.lstrip("+~")
            if not key:
                return ConfigError(f"malformed override '{override}': no KEY before '='")
            if key in GROUPS:
                return ConfigError(f"{key}={value}: a config group takes an option name; valid {key} names: "
                                   f"{', '.join(group_options(key))}")
        return ConfigError(f"invalid configuration: {one_line(exc)}")
    match = re.search(r"Could not find '([^'/]+)/'", text)
    if match:
        group = match.group(1)
        return ConfigError(f"{group}= needs an option name; valid {group} names: {', '.join(group_options(group))}")
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
        return ConfigError(one_line(exc))
    match = re.search(r"Could not override '([^']+)'", text)
    if match:
        key = match.group(1)
        parent, _, leaf = key.rpartition(".")
        if parent in _FREE_SECTIONS:  # parameter names are the user's: adding one is meaningful (and checked)
            return ConfigError(f"unknown config key '{key}'{_valid_keys_hint(parent, overrides)}; to add a "
                               f"parameter write +{key}=VALUE")
        node = _node_at(parent, overrides)
        # the keys forestlab.spec declares there (a section, a table, a cell, a figure of its kind)
        declared = declared_keys(parent, node.get("kind") if isinstance(node, DictConfig) else None)
        elsewhere = [f"{sec}.{leaf}" for sec, keys in section_keys().items() if sec and leaf in keys]
        if leaf in declared and parent != "protocol":  # read, absent here: adding it is right
            return ConfigError(f"config key '{key}' is not set in this configuration; to add it write +{key}=VALUE")
        hint = (f"; did you mean '{elsewhere[0]}'?" if elsewhere and not parent else closest(leaf, declared))
        return ConfigError(f"unknown config key '{key}'{_valid_keys_hint(parent, overrides, node)}{hint}")
    match = re.search(r"Could not append to config. An item is already at '([^']+)'", text)
    if match:
        key = match.group(1)
        return ConfigError(f"+{key}=... adds a key, but '{key}' exists already: write {key}=VALUE (without +)")
    match = re.search(r"Key '([^']+)' is not in struct", text)
    if match:
        return ConfigError(f"unknown config key '{match.group(1)}'")
    return ConfigError(f"invalid configuration: {one_line(exc)}")


def _node_at(parent: str, overrides: Sequence[str]) -> Any:
    """The config node at ``parent`` as the group choices of ``overrides`` compose it (None when it cannot be
    composed: only for hints)."""
    try:
        base = _compose_raw([o for o in overrides if "=" in o and o.split("=", 1)[0] in GROUPS])
        return OmegaConf.select(base, parent) if parent else base
    except Exception:  # noqa: BLE001 - only a hint
        return None


def _valid_keys_hint(parent: str, overrides: Sequence[str], node: Any = _node_at) -> str:
    node = _node_at(parent, overrides) if node is _node_at else node
    if isinstance(node, DictConfig):
        where = f"'{parent}'" if parent else "the top level"
        if not node:
            return f" ({parent or 'the config'} has no keys)"
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
    return load_experiment(overrides).cfg


def load_experiment(overrides: Sequence[str] = ()) -> Experiment:
    """Compose the config for ``overrides``, validate it and resolve it once into the typed
    :class:`~forestlab.experiment.Experiment` that planning, the dry run and the reports all read (its ``cfg`` is
    the composed config)."""
    overrides = expand_named(overrides)
    check_group_lists(overrides)
    check_chosen_dataset_file(overrides)
    check_group_choices(overrides)
    cfg = _compose_unchecked(overrides)
    experiment = validate(cfg)
    check_overrides(cfg, experiment, overrides)
    renamed = any(override_key(o) == "experiment.name" for o in overrides if "=" in o)
    if renamed and is_registered(experiment.name) and experiment.name != (chosen_experiment(overrides) or ""):
        raise ConfigError(f"experiment.name={experiment.name} is the name of the registered experiment "
                          f"conf/experiment/{experiment.name}.yaml: its runs and tables would mix with it; choose a "
                          "name of your own")
    base = chosen_experiment(overrides)
    described = any(override_key(o) == "experiment.description" for o in overrides if "=" in o)
    if renamed and base and not is_registered(experiment.name) and not described:
        # what it is, said where its base's description would claim the base's datasets
        datasets = ", ".join(d.name for d in experiment.datasets)
        experiment = dataclasses.replace(experiment, description=(
            f"your experiment: {base}'s algorithms and protocol on {datasets} ({base}: {experiment.description})"))
    return experiment


@dataclasses.dataclass(frozen=True)
class ExperimentFacts:
    """What `forestlab status` reads of a composed experiment (the attributes of
    :class:`~forestlab.experiment.Experiment` it uses, under their names), kept between processes by
    :func:`experiment_facts` so that status over every experiment composes none of them when nothing changed."""

    name: str
    plan_id: str
    n_runs: int
    smoke: bool
    from_choices: bool
    other_choices_stale: bool
    results_dir: str
    max_runs: int | None
    shrunk_section: dict[str, Any] | None = None  # the Shrunk of a shrunk run, as its section

    @classmethod
    def of(cls, exp: Experiment) -> ExperimentFacts:
        shrunk = dataclasses.asdict(exp.shrunk) if exp.shrunk is not None else None
        return cls(exp.name, exp.plan_id, exp.n_runs, bool(exp.smoke), exp.from_choices, exp.other_choices_stale,
                   str(exp.paths.results_dir), exp.limits.max_runs, shrunk)

    @property
    def paths(self) -> Paths:
        return Paths(results_dir=self.results_dir)

    @property
    def limits(self) -> Limits:
        return Limits(max_runs=self.max_runs)

    @property
    def shrunk(self) -> Shrunk | None:
        return None if self.shrunk_section is None else Shrunk(**self.shrunk_section)


def _tree_signature(folder: Path, pattern: str) -> list[tuple[str, int, int]]:
    return sorted((str(p), st.st_mtime_ns, st.st_size) for p in folder.rglob(pattern) for st in (p.stat(),))


def inputs_signature() -> str:
    """Everything a composed experiment can depend on besides its overrides, as a hash: every file of the config
    tree and of forestlab's code (path, mtime, size), the FORESTLAB_* environment (``oc.env`` paths), the working
    directory (relative paths), the import path (PYTHONPATH: a sitecustomize may register learners) and the installed
    packages' versions (scikit-learn's parameter checks, Hydra)."""
    import hashlib
    import json
    import sys

    packages = sorted(name for folder in sys.path if folder.endswith("site-packages") and os.path.isdir(folder)
                      for name in os.listdir(folder) if name.endswith(".dist-info"))  # names carry versions
    state = {"conf": _tree_signature(conf_dir(), "*"), "code": _tree_signature(PACKAGE_DIR, "*.py"),
             "env": sorted((k, v) for k, v in os.environ.items() if k.startswith("FORESTLAB_")),
             "cwd": os.getcwd(), "python": sys.version, "path": sys.path, "packages": packages}
    return hashlib.sha256(json.dumps(state).encode()).hexdigest()


def _facts_dir() -> Path:
    """Where :func:`experiment_facts` keeps its entries (JSON: nothing read back can run code)."""
    return cache_dir() / "experiment-facts"


def _kept_path(overrides: Sequence[str], suffix: str, inputs: str | None = None) -> Path:
    """The cache entry of the experiment composed from ``overrides`` as things stand (``inputs``: what
    :func:`inputs_signature` returns, computed once by a caller that asks for many experiments)."""
    import hashlib
    import json

    key = hashlib.sha256(json.dumps([inputs or inputs_signature(), list(overrides)]).encode()).hexdigest()
    return _facts_dir() / f"{key[:40]}{suffix}"


def _reads_data_file(exp: Experiment) -> bool:
    """Whether a dataset's content is part of the plan id (``source.kind: file``): such an experiment is composed
    every time, since its file may change without anything in the config changing."""
    return any(isinstance(d.cfg.get("source"), dict) and d.cfg["source"].get("kind") == "file" for d in exp.datasets)


def experiment_facts(overrides: Sequence[str], inputs: str | None = None) -> ExperimentFacts:
    """:class:`ExperimentFacts` of ``load_experiment(overrides)``, from an entry kept by an earlier call when none of
    its inputs (:func:`inputs_signature`, the overrides) changed since, else composed (and kept). An experiment
    reading a data file whose content is in its plan id (``source.kind: file``) is composed every time; an error is
    never kept (composing says it again)."""
    import json

    overrides = expand_named(overrides)  # a named experiment: its recorded definition is part of the key
    path = _kept_path(overrides, ".json", inputs)
    try:
        return ExperimentFacts(**json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        pass  # none kept (or a damaged entry): compose
    exp = load_experiment(overrides)
    facts = ExperimentFacts.of(exp)
    if not _reads_data_file(exp):
        keep(path, json.dumps(dataclasses.asdict(facts)).encode())
    return facts


def _experiment_classes() -> dict[str, type]:
    """The dataclasses a kept :class:`Experiment` may hold (those its fields' type hints reach): decoding builds
    these and nothing else."""
    return dataclass_closure(Experiment)


def _encode_experiment(exp: Experiment) -> bytes:
    """``exp`` as JSON: its fields exactly (:mod:`forestlab._jsonable`), and its composed config as plain data (a
    DictConfig of strings, numbers, lists and mappings: resolved, so nothing is lost) with its flags."""
    import json


    classes = _experiment_classes()
    cfg = None
    if exp.cfg is not None:
        cfg = {"plain": encode(OmegaConf.to_container(exp.cfg, resolve=True), classes),
               "struct": OmegaConf.is_struct(exp.cfg), "readonly": OmegaConf.is_readonly(exp.cfg)}
    return json.dumps({"experiment": encode(exp, classes, skip=frozenset({"cfg"})), "cfg": cfg}).encode()


def _decode_experiment(blob: bytes) -> Experiment:
    """What :func:`_encode_experiment` wrote, rebuilt (ValueError/TypeError/... for anything it cannot have)."""
    import json


    classes = _experiment_classes()
    data = json.loads(blob)
    exp = decode(data["experiment"], classes)
    if type(exp) is not Experiment:
        raise ValueError("not a kept experiment")
    kept = data["cfg"]
    if kept is not None:
        cfg = OmegaConf.create(decode(kept["plain"], classes))
        OmegaConf.set_struct(cfg, kept["struct"])
        OmegaConf.set_readonly(cfg, kept["readonly"])
        exp = dataclasses.replace(exp, cfg=cfg)
    return exp


def cached_experiment(overrides: Sequence[str], inputs: str | None = None) -> Experiment:
    """``load_experiment(overrides)`` for the commands that only read (tables, figures, compare): the experiment
    kept, as JSON, by an earlier call when none of its inputs (:func:`inputs_signature`, the overrides) changed
    since, rebuilt field by field into the same objects (no pickle: nothing read back runs code); else composed and
    validated, and kept. An experiment reading a data file whose content is in its plan id (``source.kind: file``)
    is composed every time; an error is never kept (composing says it again); a damaged entry is composed again."""
    overrides = expand_named(overrides)  # a named experiment: its recorded definition is part of the key
    path = _kept_path(overrides, ".experiment.json", inputs)
    try:
        blob = path.read_bytes()
    except OSError:
        blob = None  # none kept
    if blob is not None:
        try:
            return _decode_experiment(blob)
        except Exception:  # noqa: BLE001 - a damaged or foreign entry, whatever it holds: compose again
            pass
    exp = load_experiment(overrides)
    if not _reads_data_file(exp):

        try:
            keep(path, _encode_experiment(exp))
        except (Unencodable, ValueError, TypeError):
            pass  # something the encoding cannot keep exactly: composed every time
    return exp


def is_kept(overrides: Sequence[str]) -> bool:
    """Whether :func:`cached_experiment` finds ``overrides``' experiment kept (it then composes nothing)."""
    return _kept_path(expand_named(overrides), ".experiment.json").is_file()


@dataclasses.dataclass(frozen=True)
class RunOutline:
    """What ``forestlab run`` can know of an experiment before validating it (:func:`run_outline`): enough to start
    its workers while the validation imports scikit-learn."""

    name: str
    backend: str
    n_jobs: int
    results_dir: Path
    #: datasets x algorithms x seeds, the fewest runs the plan can have (folds only add to it)
    min_runs: int


def run_outline(overrides: Sequence[str]) -> RunOutline | None:
    """The :class:`RunOutline` of ``overrides``' experiment, read from its composed config without validating it
    (about 0.3 s of Hydra, no scikit-learn, handed to the composition that follows: none is made twice); None where
    it cannot be read plainly (the validation that follows says what is wrong)."""
    try:
        overrides = expand_named(overrides)
        check_group_lists(overrides)  # load_experiment's checks before composing: what they refuse is not composed
        check_chosen_dataset_file(overrides)
        check_group_choices(overrides)
        cfg = _compose_unchecked(overrides, hand_off=True)
        exp, launcher = cfg.experiment, cfg.launcher
        datasets, algorithms = (_as_name_list(exp.get(k), k) for k in ("datasets", "algorithms"))
        cap = cfg.limits.get("max_datasets")
        own_seeds = exp.get("dataset_seeds") or {}
        seeds = sum(int(own_seeds.get(name, cfg.seeds)) for name in datasets[:cap])
        return RunOutline(name=str(exp.name), backend=str(launcher.backend), n_jobs=int(launcher.n_jobs),
                          results_dir=resolve_path(cfg.paths.results_dir), min_runs=seeds * len(algorithms))
    except Exception:  # noqa: BLE001 - anything: validation says it properly
        return None


#: What :func:`run_outline`'s composition gave (the config, or the ConfigError), with its overrides: the next
#: composition of the same overrides takes it (once) instead of composing again.
_handed_off: tuple[tuple[str, ...], DictConfig | ConfigError] | None = None


def _compose_unchecked(overrides: Sequence[str], *, hand_off: bool = False) -> DictConfig:
    """The composed and resolved config of ``overrides``, Hydra's errors translated; ``hand_off``: also keep what it
    gives (the config or the error) for the next call with the same overrides, which then gives it rather than
    composing again."""
    global _handed_off
    overrides = _normalise_overrides([str(o) for o in overrides])
    handed, _handed_off = _handed_off, None
    if handed is not None and handed[0] == tuple(overrides):
        if isinstance(handed[1], ConfigError):
            raise handed[1]
        return handed[1]
    try:
        cfg = _compose_translated(overrides)
    except ConfigError as exc:
        if hand_off:
            _handed_off = (tuple(overrides), exc)
        raise
    if hand_off:
        _handed_off = (tuple(overrides), cfg)
    return cfg


def _compose_translated(overrides: list[str]) -> DictConfig:
    import yaml
    from hydra.errors import HydraException

    try:
        cfg = _compose_raw(overrides)
        OmegaConf.resolve(cfg)
    except HydraException as exc:
        raise _translate_hydra_error(exc, overrides) from None
    except OmegaConfBaseException as exc:
        raise _translate_hydra_error(exc, overrides) from None
    except (ValueError, TypeError, KeyError) as exc:
        raise _translate_hydra_error(exc, overrides) from None
    except yaml.YAMLError as exc:  # a YAML error in a config file (a user-written one, say)
        mark = getattr(exc, "problem_mark", None)
        where = f" in {mark.name}" if mark is not None and getattr(mark, "name", None) else ""
        raise ConfigError(f"cannot read a config file{where}: {_yaml_message(exc)}") from None
    return cfg


def _require_int(value: Any, name: str, minimum: int | None = None) -> int:
    if not is_int(value):
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


# Names that become file or folder names (experiments, studies, tables, figures, datasets): no separators, no "..".
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


def _require_name(value: Any, what: str) -> str:
    """A name used in a file or folder name: letters, digits, ``_ . + -``; no ``/`` and no ``..``."""
    if not isinstance(value, str) or not _SAFE_NAME.match(value) or ".." in value:
        raise ConfigError(f"{what} must be a plain name (letters, digits, _ . + -; no '/' or '..'), got {value!r}")
    return value


def _require_relative(value: Any, name: str) -> None:
    """A path inside the data folder: relative, without ``..``."""
    text = str(value)
    if not text or Path(text).is_absolute() or ".." in Path(text).parts:
        raise ConfigError(f"{name} must be a relative path inside the data folder (no leading '/', no '..'), "
                          f"got {value!r}")


def validate(cfg: DictConfig) -> Experiment:
    """Check the types and ranges of the values the runner relies on; raise ConfigError on the first problem.

    Besides the types and ranges of the top-level values, every dataset and algorithm of the experiment is checked
    as :func:`forestlab.runner.plan` will use it: the learner's parameters and grid (names, types, ranges), the
    split sizes against the dataset's size, and every name that becomes part of a file path (experiment, study,
    tables, figures, datasets, data files), so that nothing is written outside the results and data folders.
    """
    try:
        return _validate(cfg)
    except ConfigError:
        raise
    except (AttributeError, TypeError, KeyError, ValueError) as exc:  # a value of a shape no check foresaw
        raise ConfigError(f"invalid configuration: {one_line(exc)}") from None


def _validate(cfg: DictConfig) -> Experiment:
    from forestlab.learners import REGISTRY

    # the top level and the sections launcher, paths, limits, experiment, protocol: keys and values, as declared
    check_sections(to_container(cfg))
    exp = cfg.experiment
    datasets = _as_name_list(exp.get("datasets"), "experiment.datasets")
    for name in datasets:
        if name != cfg.dataset.get("name") and name not in group_options("dataset"):
            raise ConfigError(f"experiment.datasets: unknown dataset '{name}'; valid datasets: "
                              f"{', '.join(group_options('dataset'))}")
    own_seeds = exp.get("dataset_seeds")
    if own_seeds is not None:
        if not isinstance(own_seeds, DictConfig):
            raise ConfigError(f"experiment.dataset_seeds must map dataset names to their number of seeds, got "
                              f"{to_container(own_seeds)!r}")
        for name, value in own_seeds.items():
            if str(name) not in datasets:
                raise ConfigError(f"experiment.dataset_seeds: '{name}' is not a dataset of the experiment "
                                  f"({', '.join(datasets)}){closest(str(name), datasets)}")
            _require_int(value, f"experiment.dataset_seeds.{name}", 1)
    algorithms = _as_name_list(exp.get("algorithms"), "experiment.algorithms")
    for name in algorithms:
        if name != cfg.algorithm.get("name") and name not in group_options("algorithm"):
            raise ConfigError(f"experiment.algorithms: unknown algorithm '{name}'; valid algorithms: "
                              f"{', '.join(group_options('algorithm'))}")
    est = cfg.algorithm.get("estimator")
    if est not in REGISTRY:
        raise ConfigError(f"algorithm.estimator: unknown estimator '{est}'; valid estimators: "
                          f"{', '.join(sorted(REGISTRY))}")
    Protocol.from_config(to_container(cfg.protocol))  # its kind's rules, before the datasets' sizes are checked
    from forestlab.metrics import METRICS

    for metric in _as_name_list(cfg.get("metrics"), "metrics"):
        if metric not in METRICS:
            raise ConfigError(f"unknown metric '{metric}'; valid metrics: {', '.join(sorted(METRICS))}")

    # What plan() will use, resolved once: the datasets kept by limits.max_datasets and every algorithm, with the
    # user's overrides on the selected ones and the experiment-wide parameters applied.
    check_paths(cfg.paths)
    experiment = resolve(cfg, with_reports=False)
    check_keys(cfg, experiment)
    check_tasks(experiment)
    for alg in experiment.algorithms:
        if alg.grid and alg.selection.kind == "none":
            raise ConfigError(f"algorithm '{alg.name}' has a grid ({', '.join(alg.grid)}) but no model selection, so "
                              "the grid would be ignored: choose one (protocol=oob, protocol.selection=..., or "
                              f"algorithm.selection) or drop the grid")
    from forestlab.datasets._load import check_name_matches_file

    for ds in experiment.datasets:
        path = conf_dir() / "dataset" / f"{ds.name}.yaml"
        if path.is_file():  # a config whose name: is not its file's name would run under another dataset's key
            check_name_matches_file(ds.cfg, path)
        _check_dataset(ds.name, ds.cfg, experiment.protocol)
    for alg in experiment.algorithms:
        _check_algorithm(alg.name, {**alg.cfg, "params": alg.params}, {})
    # what the reports draw, last: a wrong choice of datasets or algorithms is named as such first
    # its tables as resolve() made them (a single run of several algorithms: every algorithm's cells)
    reports = build_reports(experiment.spec, [a.name for a in experiment.algorithms],
                            as_list(cfg.experiment.get("datasets")), known_algorithms=group_options("algorithm"),
                            known_datasets=group_options("dataset"))
    return dataclasses.replace(experiment, reports=reports, cfg=cfg)


def _check_dataset(name: str, ds_cfg: dict[str, Any], protocol: Protocol) -> None:
    """Names that become paths, and the split sizes against the dataset's documented size."""

    _require_name(ds_cfg.get("name", name), f"dataset '{name}': name")
    source_kind = (ds_cfg.get("source") or {}).get("kind") if isinstance(ds_cfg.get("source"), dict) else None
    if protocol.kind == "resample" and source_kind != "synthetic":
        raise ConfigError(f"protocol kind resample draws fresh training sets from a generator, but dataset '{name}' "
                          f"is not generated (source.kind {source_kind}); use a synthetic dataset or another protocol")
    source = ds_cfg.get("source") or {}
    if isinstance(source, dict):
        if source.get("folder") is not None:
            _require_relative(source.get("folder"), f"dataset '{name}': source.folder")
        for i, entry in enumerate(source.get("files") or []):
            if isinstance(entry, dict) and entry.get("name") is not None:
                _require_relative(entry.get("name"), f"dataset '{name}': source.files[{i}].name")
    shape = ds_cfg.get("shape")
    if not (isinstance(shape, list) and shape and is_int(shape[0])):
        return
    from forestlab.protocols import check_sizes

    check_sizes(protocol.as_dict(), ds_cfg, name, n=shape[0])


def _check_algorithm(name: str, alg_cfg: dict[str, Any], shared: dict[str, Any]) -> None:
    """The learner exists, and its parameters and grid values are ones it accepts."""
    import inspect

    from forestlab.learners import REGISTRY

    est_name = alg_cfg.get("estimator", name)
    if est_name not in REGISTRY:
        raise ConfigError(f"algorithm '{name}': unknown estimator '{est_name}'; valid estimators: "
                          f"{', '.join(sorted(REGISTRY))}")
    cls = REGISTRY[est_name].cls
    params = alg_cfg.get("params") or {}
    grid = alg_cfg.get("grid") or {}
    if not isinstance(params, dict):
        raise ConfigError(f"algorithm '{name}': params must be a mapping of parameter names to values, got {params!r}")
    if not isinstance(grid, dict):
        raise ConfigError(f"algorithm '{name}': grid must be a mapping of parameter names to lists of values, "
                          f"got {grid!r}")
    params = {**params, **{k: v for k, v in shared.items() if k in params}}
    accepted = [p for p in inspect.signature(cls.__init__).parameters if p not in ("self", "random_state")]
    for key in [*params, *grid]:
        if key == "random_state":
            raise ConfigError(f"algorithm '{name}': random_state is set by forestlab from the seeds; use seed=N")
        if key not in accepted:
            where = "params" if key in params else "grid"
            raise ConfigError(f"algorithm '{name}': unknown parameter {where}.{key}; valid parameters: "
                              f"{', '.join(accepted)}")
    for key, value in params.items():
        _check_param(name, cls, f"params.{key}", key, value)
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise ConfigError(f"algorithm '{name}': grid.{key} must be a non-empty list of values, got {values!r}")
        for value in values:
            _check_param(name, cls, f"grid.{key}", key, value)


def _param_constraints(cls: type) -> dict[str, Any]:
    """The valid values of a learner's parameters, as the learner declares them in ``_parameter_constraints``
    (scikit-learn's format); none for a learner that declares none (its parameters are then checked by name only)."""
    return dict(getattr(cls, "_parameter_constraints", None) or {})


def _check_param(alg: str, cls: type, where: str, key: str, value: Any) -> None:
    from sklearn.utils._param_validation import InvalidParameterError, validate_parameter_constraints

    constraints = _param_constraints(cls)
    if key not in constraints:
        return
    try:
        validate_parameter_constraints({key: constraints[key]}, {key: value}, caller_name=alg)
    except InvalidParameterError as exc:
        match = re.match(r"The '[^']+' parameter of .+? must be (.+)\. Got (.+) instead\.$", str(exc).strip())
        detail = f"must be {match.group(1)}, got {match.group(2)}" if match else one_line(exc)
        raise ConfigError(f"algorithm '{alg}': {where} {detail}") from None


def to_container(node: Any) -> Any:
    """A plain Python value (dict/list/scalar) for a config node."""
    if isinstance(node, (DictConfig, ListConfig)):
        return OmegaConf.to_container(node, resolve=True)
    return node


# ---------------------------------------------------------------------------------------------------------------
# The composed config -> the one typed Experiment that planning, the dry run and the reports read.
# ---------------------------------------------------------------------------------------------------------------

def _plain(node: Any) -> Any:
    return to_container(node)


def _node(cfg: DictConfig, group: str, name: str) -> dict[str, Any]:
    """The config of a dataset or algorithm named in the experiment: the composed group entry (with the user's
    overrides) when it is the one selected, else its group file, composed through Hydra."""
    selected = cfg.get(group)
    if isinstance(selected, DictConfig) and selected.get("name") == name:
        return _plain(selected)
    return _plain(load_group_option(group, name))


def _with_fingerprint(ds_cfg: dict[str, Any], cfg: DictConfig) -> dict[str, Any]:
    """A user's file (``source.kind: file``) without ``source.sha256`` is the same dataset only while its content
    is: its SHA-256 joins the config as ``source.content_sha256`` (and so every run key and the plan id), and the
    loader checks it. With ``sha256:`` in the config, that value is the identity and is checked instead."""
    from forestlab.datasets._file import file_fingerprint  # local: the datasets load numpy and pandas
    source = ds_cfg.get("source")
    if not isinstance(source, dict) or source.get("kind") != "file" or source.get("sha256"):
        return ds_cfg
    digest = file_fingerprint(ds_cfg, os.path.expanduser(str(cfg.paths.data_dir)))
    return ds_cfg if digest is None else {**ds_cfg, "source": {**source, "content_sha256": digest}}


def resolve(cfg: DictConfig, *, with_reports: bool = True) -> Experiment:
    """The :class:`Experiment` of a composed config (call after the top-level checks of
    :func:`validate`, which also checks the resolved experiment); its tables, figures, choices and claims are
    built and checked by :func:`forestlab.spec.build_reports` (last, in :func:`validate`, when not
    ``with_reports``)."""
    exp = cfg.experiment
    limits = Limits.from_config(_plain(cfg.get("limits")))
    dataset_names = listed = as_list(exp.get("datasets"))
    notes: list[str] = []
    if limits.max_datasets and len(dataset_names) > limits.max_datasets:
        notes.append(f"limits.max_datasets={limits.max_datasets} keeps {len(dataset_names)} datasets' first "
                     f"{limits.max_datasets}: {', '.join(dataset_names[: limits.max_datasets])}")
        dataset_names = dataset_names[: limits.max_datasets]
    shared = dict(_plain(exp.get("params")) or {})
    protocol = Protocol.from_config(_plain(cfg.protocol))
    if protocol.kind == "kfold" and limits.max_folds and protocol.folds > limits.max_folds:
        notes.append(f"limits.max_folds={limits.max_folds} runs the first {limits.max_folds} folds of each "
                     f"{protocol.n_folds}-fold partition (the same runs as theirs in the full plan)")
    own_seeds = {str(k): int(v) for k, v in (_plain(exp.get("dataset_seeds")) or {}).items()}
    smoke = bool(cfg.get("smoke", False))
    # a shrunk run's kind: its own `shrunk` section (debug=smoke's), else the first a debug option declares
    if cfg.get("shrunk") is not None and not smoke:
        raise ConfigError("shrunk: describes a kind of shrunk run and applies only with smoke: true (set by "
                          "debug=smoke); remove it or set smoke=true")
    shrunk = (Shrunk.of(_plain(cfg.shrunk)) if cfg.get("shrunk") is not None else shrunk_kind()) if smoke else None
    if smoke and shrunk is None:
        raise ConfigError("smoke: true marks shrunk runs, and no `shrunk` section says what they are called "
                          "(conf/debug/smoke.yaml declares one): add debug=smoke")
    if own_seeds and shrunk is not None and not shrunk.dataset_seeds:
        notes.append(f"{shrunk.option} runs {int(cfg.seeds)} seed(s) of every dataset: experiment.dataset_seeds "
                     f"({', '.join(f'{k}: {v}' for k, v in own_seeds.items())}) is not applied")
        own_seeds = {}
    datasets = tuple(DatasetSpec(name, _with_fingerprint(_node(cfg, "dataset", name), cfg), own_seeds.get(name))
                     for name in dataset_names)
    if protocol.kind == "holdout" and protocol.sizes_from:
        unsized = [d.name for d in datasets if "splits" not in d.cfg]
        if unsized:  # said, never silent: the study's split sizes cannot apply to data it never had
            from forestlab.protocols import DEFAULT_TRAIN_SIZE  # local: protocols loads scikit-learn

            train = protocol.train_size if protocol.train_size is not None else DEFAULT_TRAIN_SIZE
            notes.append(f"{', '.join(unsized)} {'has' if len(unsized) == 1 else 'have'} no split sizes for "
                         f"{protocol.sizes_from} (no `splits:` in {'its' if len(unsized) == 1 else 'their'} config): "
                         f"split with protocol.train_size={train}, "
                         + ("the rest for testing" if protocol.test_size is None else
                            f"protocol.test_size={protocol.test_size}")
                         + " (give protocol.train_size=... to choose)")
    algorithms = []
    for name in as_list(exp.get("algorithms")):
        alg = _node(cfg, "algorithm", name)
        params = dict(alg.get("params") or {})
        # experiment-wide parameter values (a tree regime, say) apply to every algorithm that has the parameter
        params.update({k: v for k, v in shared.items() if k in params})
        if limits.max_estimators and isinstance(params.get("n_estimators"), int) \
                and params["n_estimators"] > limits.max_estimators:
            notes.append(f"limits.max_estimators={limits.max_estimators} caps n_estimators of {name} "
                         f"({params['n_estimators']} -> {limits.max_estimators})")
            params["n_estimators"] = int(limits.max_estimators)
        grid = {k: list(v) if isinstance(v, (list, tuple)) else v for k, v in (alg.get("grid") or {}).items()}
        # model selection: the algorithm's own, else the protocol's (forestlab.spec.Selection)
        selection = (Selection.from_config(alg["selection"]) if alg.get("selection") is not None
                     else protocol.selection)
        algorithms.append(AlgorithmSpec(name=name, estimator=str(alg.get("estimator", name)),
                                        seed_tag=str(alg.get("seed_tag", name)), params=params, grid=grid,
                                        selection=selection, cfg=alg))
    for kind, names in (("datasets", [d.name for d in datasets]), ("algorithms", [a.name for a in algorithms]),
                        ("metrics", as_list(cfg.get("metrics")))):
        seen = [n for i, n in enumerate(names) if n in names[:i]]
        if seen:
            raise ConfigError(f"experiment {kind} list {names} names {seen[0]!r} twice: each is run once; "
                              "remove the duplicate")
    spec = dict(_plain(exp))
    if spec.get("from_choices") and len(algorithms) > 1:
        spec["tables"] = _every_algorithm(spec.get("tables") or [], str(cfg.algorithm.get("name")),
                                          [a.name for a in algorithms])
    # the tables, figures, choices and claims, every key checked against the algorithms and the listed datasets
    reports = build_reports(spec, [a.name for a in algorithms], listed) if with_reports else Reports()
    return Experiment(
        name=str(exp.name), study=exp.get("study"), description=str(exp.get("description") or ""),
        datasets=datasets, algorithms=tuple(algorithms), protocol=protocol, seed=int(cfg.seed),
        seeds=int(cfg.seeds), metrics=tuple(as_list(cfg.get("metrics"))), spec=spec,
        paths=Paths.from_config(_plain(cfg.paths)), launcher=Launcher.from_config(_plain(cfg.launcher)),
        limits=limits, smoke=smoke, shrunk=shrunk, notes=tuple(notes), reports=reports,
        from_choices=bool(spec.get("from_choices", False)), prints_runs=bool(spec.get("prints_runs", False)),
        other_choices_stale=bool(spec.get("other_choices_stale", True)))


def _every_algorithm(tables: list[Any], chosen: str, algorithms: list[str]) -> list[Any]:
    """The tables of an experiment of the command line's choices (``experiment.from_choices``: the single run) when
    it lists several algorithms (``experiment.algorithms=[rf,sorf,mincq]``): each cell written for the chosen
    algorithm (``${algorithm.name}``) is repeated for every listed one, in their order, so one table holds them
    all."""
    out = []
    for table in tables:
        if not isinstance(table, dict) or not isinstance(table.get("cells"), list):
            out.append(table)
            continue
        cells = []
        for algorithm in algorithms:
            cells += [{**c, "algorithm": algorithm} for c in table["cells"]
                      if isinstance(c, dict) and c.get("algorithm") == chosen]
        cells += [c for c in table["cells"] if not (isinstance(c, dict) and c.get("algorithm") == chosen)]
        out.append({**table, "cells": cells})
    return out


def resolve_path(value: str | os.PathLike[str]) -> Path:
    return Path(os.path.expanduser(str(value))).resolve()


def list_options(kind: str) -> list[str]:
    """Option names for `forestlab list KIND` (experiments, datasets, algorithms, protocols, launchers)."""
    if kind not in LISTABLE:
        raise ConfigError(f"cannot list '{kind}'; choose one of: {', '.join(LISTABLE)}")
    names = group_options(LISTABLE[kind])
    return [n for n in names if not (kind == "experiments" and not experiment_setting(n, "listed", True))]


def describe(kind: str, name: str) -> str:
    """A one-line description of a config option, for listings."""
    if kind == "experiments":
        return str(experiment_setting(name, "description", ""))
    plain = _plain_description(LISTABLE[kind], name)
    if plain is not _NOT_PLAIN:
        return str(plain or "")
    node = load_group_option(LISTABLE[kind], name)
    return str(node.get("description", "") or "")


def _plain_description(group: str, name: str, depth: int = 0) -> Any:
    """An option's ``description`` as Hydra would compose it, from plain parses of the option and of the same-group
    bases its ``defaults:`` list names, merged in Hydra's order (``_self_`` last unless placed): `forestlab list`
    without ~1 s of Hydra setup. ``_NOT_PLAIN`` for anything less simple (another group, a package, an
    interpolation, a file that does not parse): the caller composes."""
    path = conf_dir() / group / f"{name}.yaml"
    if depth > 8 or not path.is_file():
        return _NOT_PLAIN
    stat = path.stat()
    version = (str(path), stat.st_mtime_ns, stat.st_size)
    plain = _plain_yaml(*version)
    if not isinstance(plain, dict) or _file_header(*version)[0] not in (None, "_group_"):
        return _NOT_PLAIN
    defaults = plain.get("defaults", [])
    if not isinstance(defaults, list) or not all(isinstance(d, str) and re.fullmatch(r"[\w.-]+", d) for d in defaults
                                                  if d != "_self_"):
        return _NOT_PLAIN
    value = None
    for entry in defaults if "_self_" in defaults else [*defaults, "_self_"]:
        if entry == "_self_":
            own = plain.get("description")
            if isinstance(own, str) and "${" in own or own is not None and not isinstance(own, str):
                return _NOT_PLAIN
            value = own if "description" in plain else value
        else:
            base = _plain_description(group, entry, depth + 1)
            if base is _NOT_PLAIN:
                return _NOT_PLAIN
            value = base if base is not None else value
    return value


# ---------------------------------------------------------------------------------------------------------------
# Nothing the user said is silently ignored: every key lands somewhere that reads it, or is refused.
# ---------------------------------------------------------------------------------------------------------------
# The keys each section may have, and the rules of their values, are declared in forestlab.spec (SECTIONS).
# Sections whose keys are the user's own (parameter names), checked against what reads them elsewhere.
_FREE_SECTIONS = ("experiment.params", "algorithm.params", "algorithm.grid")
_MAX_INT = 2**31 - 1  # scikit-learn's trees store depths and counts as 32-bit integers


def check_keys(cfg: DictConfig, experiment: Experiment) -> None:
    """Refuse keys that nothing reads: an unknown key in a section of the config, in any dataset or algorithm of
    the experiment, or an experiment-wide parameter that none of its algorithms has."""
    for alg in experiment.algorithms:  # the sections were checked by forestlab.spec.check_sections
        check_section("algorithm", alg.cfg, f"algorithm '{alg.name}'")
    for ds in experiment.datasets:  # the keys declared in forestlab.spec, before any run
        check_section("dataset", ds.cfg, f"dataset '{ds.name}'")
    shared = to_container(cfg.experiment.get("params")) or {}
    has = {k for alg in experiment.algorithms for k in (alg.cfg.get("params") or {})}
    for key in shared:
        if key not in has:
            names = ", ".join(a.name for a in experiment.algorithms)
            raise ConfigError(f"experiment.params.{key} is a parameter of none of the experiment's algorithms "
                              f"({names}), so it would change nothing{closest(str(key), sorted(has))}; their "
                              f"parameters: {', '.join(sorted(has)) or 'none'}")
    for alg in experiment.algorithms:
        for key, value in {**alg.params, **{f"grid.{k}": v for k, vs in alg.grid.items()
                                            for v in (vs if isinstance(vs, list) else [vs])}}.items():
            if is_int(value) and value > _MAX_INT:
                raise ConfigError(f"algorithm '{alg.name}': {key}={value} is too large for this platform "
                                  f"(at most {_MAX_INT})")


def check_paths(paths: Any) -> None:
    """The folders forestlab writes to are real, explicit places: never empty (the current folder by accident),
    the filesystem root or the repository root."""
    for key in ("results_dir", "reports_dir", "data_dir"):
        value = paths.get(key)
        if value is None and key == "reports_dir":
            continue
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"paths.{key} must name a folder, got {value!r} (it would write into the current "
                              f"folder); the default is {'data' if key == 'data_dir' else 'results'}/ in the "
                              "folder forestlab runs in")
        where = resolve_path(value)
        if where == Path(where.anchor):
            raise ConfigError(f"paths.{key}={value!r} is the filesystem root; choose a folder of its own")
        if where == PROJECT_DIR:
            raise ConfigError(f"paths.{key}={value!r} is the repository's own folder ({where}); choose a folder "
                              f"inside it (e.g. {'data' if key == 'data_dir' else 'results'}) or elsewhere")
        for kept in (".git", "conf", "forestlab", "experiments", "tests", "docs"):
            if where == PROJECT_DIR / kept or PROJECT_DIR / kept in where.parents:
                raise ConfigError(f"paths.{key}={value!r} is inside the repository's {kept}/ folder ({where}); "
                                  "forestlab never writes there: choose another folder")
        if where.exists() and not where.is_dir():
            raise ConfigError(f"paths.{key}={value!r} is a file ({where}), not a folder")
    log_file = paths.get("log_file")
    if log_file not in (None, ""):
        target = resolve_path(str(log_file))
        if target == Path(target.anchor) or target.is_dir():
            raise ConfigError(f"paths.log_file={log_file!r} is a folder, not a file; name a file (or '' for none)")


def check_overrides(cfg: DictConfig, experiment: Experiment, overrides: Sequence[str]) -> None:
    """A single-run choice beside an experiment (``experiment=uci_binary dataset=sonar``) has one meaning: it
    picks which of the experiment's datasets or algorithms ``dataset.*`` / ``algorithm.*`` overrides change. A
    choice the experiment does not list would change nothing, and is refused."""
    chosen = {o.split("=", 1)[0].lstrip("+"): o.split("=", 1)[1] for o in overrides if "=" in o}
    if "dataset" in chosen and cfg.dataset.get("name") != chosen["dataset"]:
        from forestlab.datasets._load import check_name_matches_file

        check_name_matches_file(to_container(cfg.dataset), conf_dir() / "dataset" / f"{chosen['dataset']}.yaml")
    for group, names in (("dataset", [d.name for d in experiment.datasets]),
                         ("algorithm", [a.name for a in experiment.algorithms])):
        if not experiment.from_choices and group in chosen and chosen[group] not in names:
            raise ConfigError(f"{group}={chosen[group]} beside experiment={experiment.name}: that experiment runs "
                              f"the {group}s {', '.join(names)}, so the choice would change nothing; to run "
                              f"{chosen[group]} instead write 'experiment.{group}s=[{chosen[group]}]', or drop "
                              f"experiment= for a single run")
    keys = [o.split("=", 1)[0].lstrip("+~") for o in overrides]
    for group, names in (("dataset", [d.name for d in experiment.datasets]),
                         ("algorithm", [a.name for a in experiment.algorithms])):
        touched = [k for k in keys if k.startswith(f"{group}.")]
        selected = cfg.get(group).get("name") if isinstance(cfg.get(group), DictConfig) else None
        if touched and selected not in names:
            raise ConfigError(f"{touched[0]} changes {group} '{selected}', which experiment {experiment.name} does not "
                              f"run ({', '.join(names)}): choose which of them with {group}=NAME")
    shared = {k.removeprefix("experiment.params.") for k in keys if k.startswith("experiment.params.")}
    for key in keys:
        if key.startswith("algorithm.params.") and key.removeprefix("algorithm.params.") in shared:
            raise ConfigError(f"{key} and experiment.{key.removeprefix('algorithm.')} are both given: the "
                              "experiment-wide value applies to every algorithm and would win; give one of them")


def check_group_lists(overrides: Sequence[str]) -> None:
    """``algorithm=[rf,sorf]``: a group takes one option; a list would merge the options into one config."""
    for override in overrides:
        key, sep, value = override.partition("=")
        key = key.lstrip("+~")
        if sep and key in GROUPS and value.strip().startswith("["):
            plural = {"dataset": "datasets", "algorithm": "algorithms"}.get(key)
            hint = (f"; to run several, write 'experiment.{plural}={value.strip()}'" if plural else "")
            raise ConfigError(f"{key}= takes one option name, got the list {value.strip()}{hint}")


def check_tasks(experiment: Experiment) -> None:
    """Every algorithm can handle every dataset's task: rankers and two-sample tests need a binary task, and so
    does a classifier whose scikit-learn tags say it is not multiclass (MinCq)."""
    from forestlab.learners import get_entry

    multiclass = [d.name for d in experiment.datasets if d.cfg.get("task") == "multiclass"]
    if not multiclass:
        return
    for alg in experiment.algorithms:
        entry = get_entry(alg.estimator)
        binary_only = entry.task != "classifier"
        if not binary_only:
            try:
                tags = entry.cls(**alg.params).__sklearn_tags__()
                binary_only = not tags.classifier_tags.multi_class
            except (AttributeError, TypeError, ValueError):  # no tags: assume it copes
                binary_only = False
        if binary_only:
            what = f"a {entry.task.replace('_', ' ')}" if entry.task != "classifier" else "binary only"
            raise ConfigError(f"algorithm '{alg.name}' is {what}, but dataset '{multiclass[0]}' is multiclass: "
                              f"remove one of them from the experiment")


def check_group_choices(overrides: Sequence[str]) -> None:
    """``experiment=nonexistent``: an option no file of the config tree holds is refused as Hydra would refuse it
    (the same message), before Hydra is imported and set up (~0.3 s of an error that should answer at once). Only
    when every override is a plain ``KEY=VALUE``: anything else (Hydra's syntax, a malformed one) is Hydra's to
    judge, in its order."""
    if not all(re.fullmatch(r"[+]?[A-Za-z_][\w.]*=[\w.,:/+-]*", o) for o in overrides):
        return
    for override in overrides:
        key, _, value = override.partition("=")
        key = key.lstrip("+")
        if (key in GROUPS and re.fullmatch(r"[A-Za-z_][\w.-]*", value)  # a string to Hydra: not 5, true, null, nan
                and value.lower() not in ("true", "false", "null", "nan", "inf")
                and not (conf_dir() / key / f"{value}.yaml").is_file()):
            raise ConfigError(f"unknown {key} '{value}'; valid {key} names: {', '.join(group_options(key))}")


def check_chosen_dataset_file(overrides: Sequence[str]) -> None:
    """``dataset=NAME``: an empty ``conf/dataset/NAME.yaml``, or one whose ``name:`` is not NAME, is refused naming
    the file (before Hydra would fail on it with a message about interpolations)."""
    for override in overrides:
        key, sep, value = override.partition("=")
        if sep and key.lstrip("+") == "dataset" and _SAFE_NAME.match(value.strip()):
            path = conf_dir() / "dataset" / f"{value.strip()}.yaml"
            if path.is_file():
                # local, and only here: the datasets package loads scikit-learn, which a command without dataset=
                # (an error, `list`) never needs
                from forestlab.datasets._load import check_name_matches_file

                stat = path.stat()
                check_name_matches_file(_load_yaml(str(path), stat.st_mtime_ns, stat.st_size), path)
