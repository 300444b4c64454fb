"""Generated problems (``source.kind: synthetic``): Breiman's (1996) ringnorm and twonorm, and depecker2010's
simulated problems (:mod:`forestlab.datasets._ranking_toys`; both register with :mod:`forestlab.datasets._generators`,
when :mod:`forestlab.datasets` is imported).

Both are d-dimensional (20 by default, as in Breiman's "Bias, variance and arcing classifiers" and DELVE) with
equal class priors: each point's class is drawn with probability 1/2, then its features.

- ringnorm: class 1 ~ N(0, 4 I) (positive, +1), class 2 ~ N((a, ..., a), I);
- twonorm: class 1 ~ N((a, ..., a), I) (positive, +1), class 2 ~ N((-a, ..., -a), I);

with a = 2 / sqrt(d) (the DELVE description; configurable as ``source.a``). Points come from
``numpy.random.default_rng(random_state)``, so the same config gives the same arrays on every machine.

Generators live in the registry :data:`forestlab.datasets._generators.GENERATORS` (name -> ``generator(n_samples,
n_features, rng_or_seed, **params) -> (X, y)``); :func:`register_generator` adds one, so a dataset config can name
it as ``source.generator``. Every other key of ``source`` (besides ``kind``, ``generator``, ``n_samples``,
``n_features`` and ``random_state``) is passed to the generator as a keyword parameter. :func:`sample_synthetic`
draws ``n`` points with any seed (the ``resample`` protocol's fresh training sets and its fixed test set). """

from __future__ import annotations

import inspect
import math
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from forestlab._values import is_int
from forestlab.datasets._base import Dataset, check_shape, make_dataset
from forestlab.datasets._generators import _RESERVED, GENERATORS, Generator, register_generator
from forestlab.errors import DatasetError

DEFAULT_N_SAMPLES = 7400
DEFAULT_N_FEATURES = 20

def ringnorm(n_samples: int = DEFAULT_N_SAMPLES, n_features: int = DEFAULT_N_FEATURES,
             random_state: int | np.random.Generator = 0, a: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Breiman's ringnorm: X of shape (n_samples, n_features) and y in {-1, +1} (+1 = the N(0, 4I) class)."""
    return _generate("ringnorm", n_samples, n_features, random_state, a)


def twonorm(n_samples: int = DEFAULT_N_SAMPLES, n_features: int = DEFAULT_N_FEATURES,
            random_state: int | np.random.Generator = 0, a: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Breiman's twonorm: X of shape (n_samples, n_features) and y in {-1, +1} (+1 = the mean (a, ..., a) class)."""
    return _generate("twonorm", n_samples, n_features, random_state, a)


register_generator("ringnorm", ringnorm)
register_generator("twonorm", twonorm)


def _generate(kind: str, n_samples: int, n_features: int, random_state: int | np.random.Generator,
              a: float | None) -> tuple[np.ndarray, np.ndarray]:
    shift = 2.0 / math.sqrt(n_features) if a is None else float(a)
    rng = np.random.default_rng(random_state)
    positive = rng.random(n_samples) < 0.5
    Z = rng.standard_normal((n_samples, n_features))
    if kind == "ringnorm":
        X = np.where(positive[:, None], 2.0 * Z, Z + shift)
    else:
        X = np.where(positive[:, None], Z + shift, Z - shift)
    return X, np.where(positive, 1, -1).astype(np.int64)


def _int(source: Mapping[str, Any], key: str, default: int, name: str, minimum: int) -> int:
    value = source.get(key, default)
    if not is_int(value) or value < minimum:
        raise DatasetError(f"dataset '{name}': `source.{key}` must be an integer >= {minimum}, got {value!r}")
    return value


def _generator(cfg: Mapping[str, Any], name: str) -> str:
    """The name of the config's generator; DatasetError unless it is registered and the task is binary."""
    generator = (cfg.get("source") or {}).get("generator")
    if generator not in GENERATORS:
        raise DatasetError(f"dataset '{name}': `source.generator` must be one of {', '.join(GENERATORS)}, "
                           f"got {generator!r}")
    if cfg.get("task") != "binary":
        raise DatasetError(f"dataset '{name}': {generator} is a binary task")
    return generator


def _generator_params(source: Mapping[str, Any], generator: str, func: Generator, name: str) -> dict[str, Any]:
    """The generator's keyword parameters from ``source``; a key it does not accept is a DatasetError."""
    params = {k: v for k, v in source.items() if k not in _RESERVED}
    sig = inspect.signature(func)
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values()):
        accepted = list(sig.parameters)[3:]
        unknown = sorted(set(params) - set(accepted))
        if unknown:
            raise DatasetError(f"dataset '{name}': `source.{unknown[0]}` is not a parameter of the {generator} "
                               f"generator (its parameters: {', '.join(accepted) or 'none'})")
    return params


def sample_synthetic(ds_cfg: Mapping[str, Any], n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` points of the dataset's generator drawn with ``seed``.

    With ``n`` and ``seed`` equal to the config's ``source.n_samples`` and ``source.random_state`` this gives exactly
    the arrays of :func:`load_synthetic`; the ``resample`` protocol calls it with its own sizes and derived seeds.

    Parameters
    ----------
    ds_cfg : mapping
        A dataset config with ``source.kind: synthetic``.
    n : int
        Number of points (0 gives empty arrays).
    seed : int
        The generator's seed.

    Returns
    -------
    X : ndarray of shape (n, n_features), float64
    y : ndarray of shape (n,), int64, in {-1, +1}

    Raises
    ------
    DatasetError
        If the config is not a synthetic binary dataset, names an unknown generator or parameter, or the generator
        returns arrays of the wrong shape or labels.
    """
    name = str(ds_cfg.get("name") or "<unnamed>")
    source = ds_cfg.get("source") or {}
    if source.get("kind") != "synthetic":
        raise DatasetError(f"dataset '{name}' is not generated (source.kind={source.get('kind')!r}, not synthetic)")
    generator = _generator(ds_cfg, name)
    if not is_int(n) or n < 0:
        raise DatasetError(f"dataset '{name}': cannot draw {n!r} points from {generator}")
    d = _int(source, "n_features", DEFAULT_N_FEATURES, name, 1)
    func = GENERATORS[generator]
    X, y = func(int(n), d, int(seed), **_generator_params(source, generator, func, name))
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    if X.shape != (n, d) or y.shape != (n,) or not np.all(np.isin(y, (-1, 1))):
        raise DatasetError(f"dataset '{name}': the {generator} generator returned X of shape {X.shape} and y of "
                           f"shape {y.shape}; expected ({n}, {d}) and ({n},) with labels -1/+1")
    return X, y


def load_synthetic(cfg: Mapping[str, Any], *, name: str, data_dir: str | os.PathLike[str],
                   mirror: str | os.PathLike[str] | None, download: bool,
                   fresh: bool = False) -> tuple[Dataset, list[str]]:
    """Generate the configured problem (no files involved)."""
    source = cfg["source"]
    generator = _generator(cfg, name)
    n = _int(source, "n_samples", DEFAULT_N_SAMPLES, name, 2)
    d = _int(source, "n_features", DEFAULT_N_FEATURES, name, 1)
    seed = _int(source, "random_state", 0, name, 0)
    X, y = sample_synthetic({**cfg, "name": name}, n, seed)
    if cfg.get("shape") is not None and list(cfg["shape"]) != [n, d]:
        check_shape(name, X, cfg["shape"], f"the {generator} generator (source.n_samples={n}, "
                    f"source.n_features={d}; set `shape` to [{n}, {d}] when you change them)")
    return make_dataset(name, X, y, "binary", [f"x{i + 1}" for i in range(d)], ("2", "1")), []
