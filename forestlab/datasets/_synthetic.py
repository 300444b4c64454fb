"""Breiman's (1996) generated problems, ringnorm and twonorm (``source.kind: synthetic``).

Both are d-dimensional (20 by default, as in Breiman's "Bias, variance and arcing classifiers" and DELVE) with
equal class priors: each point's class is drawn with probability 1/2, then its features.

- ringnorm: class 1 ~ N(0, 4 I) (positive, +1), class 2 ~ N((a, ..., a), I);
- twonorm: class 1 ~ N((a, ..., a), I) (positive, +1), class 2 ~ N((-a, ..., -a), I);

with a = 2 / sqrt(d) (the DELVE description; configurable as ``source.a``). Points come from
``numpy.random.default_rng(random_state)``, so the same config gives the same arrays on every machine.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from forestlab.datasets._base import Dataset, check_shape, make_dataset
from forestlab.errors import DatasetError

GENERATORS = ("ringnorm", "twonorm")
DEFAULT_N_SAMPLES = 7400
DEFAULT_N_FEATURES = 20


def ringnorm(n_samples: int = DEFAULT_N_SAMPLES, n_features: int = DEFAULT_N_FEATURES, random_state: int = 0,
             a: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Breiman's ringnorm: X of shape (n_samples, n_features) and y in {-1, +1} (+1 = the N(0, 4I) class)."""
    return _generate("ringnorm", n_samples, n_features, random_state, a)


def twonorm(n_samples: int = DEFAULT_N_SAMPLES, n_features: int = DEFAULT_N_FEATURES, random_state: int = 0,
            a: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Breiman's twonorm: X of shape (n_samples, n_features) and y in {-1, +1} (+1 = the mean (a, ..., a) class)."""
    return _generate("twonorm", n_samples, n_features, random_state, a)


def _generate(kind: str, n_samples: int, n_features: int, random_state: int,
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
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise DatasetError(f"dataset '{name}': `source.{key}` must be an integer >= {minimum}, got {value!r}")
    return value


def load_synthetic(cfg: Mapping[str, Any], *, name: str, data_dir: str | os.PathLike[str],
                   mirror: str | os.PathLike[str] | None, download: bool,
                   fresh: bool = False) -> tuple[Dataset, list[str]]:
    """Generate the configured problem (no files involved)."""
    source = cfg["source"]
    generator = source.get("generator")
    if generator not in GENERATORS:
        raise DatasetError(f"dataset '{name}': `source.generator` must be one of {', '.join(GENERATORS)}, "
                           f"got {generator!r}")
    if cfg.get("task") != "binary":
        raise DatasetError(f"dataset '{name}': {generator} is a binary task")
    n = _int(source, "n_samples", DEFAULT_N_SAMPLES, name, 2)
    d = _int(source, "n_features", DEFAULT_N_FEATURES, name, 1)
    seed = _int(source, "random_state", 0, name, 0)
    X, y = _generate(generator, n, d, seed, source.get("a"))
    if cfg.get("shape") is not None and list(cfg["shape"]) != [n, d]:
        check_shape(name, X, cfg["shape"], f"the {generator} generator (source.n_samples={n}, "
                    f"source.n_features={d}; set `shape` to [{n}, {d}] when you change them)")
    return make_dataset(name, X, y, "binary", [f"x{i + 1}" for i in range(d)], ("2", "1")), []
