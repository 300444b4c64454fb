"""The registry of generated problems (``source.kind: synthetic``): generator name -> function. Breiman's
ringnorm and twonorm (:mod:`forestlab.datasets._synthetic`) and depecker2010's simulated problems
(:mod:`forestlab.datasets._ranking_toys`) register here; the loader reads it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

#: A generator: ``(n_samples, n_features, rng_or_seed, **params) -> (X, y)``, y in {-1, +1}. ``rng_or_seed`` is an
#: int seed or a ``numpy.random.Generator``; the same seed must give the same arrays on every machine.
Generator = Callable[..., tuple[np.ndarray, np.ndarray]]

#: Generator name (``source.generator``) -> generator.
GENERATORS: dict[str, Generator] = {}

#: ``source`` keys that are not generator parameters.
_RESERVED = ("kind", "generator", "n_samples", "n_features", "random_state")


def register_generator(name: str, generator: Generator | None = None) -> Any:
    """Register ``generator`` under ``name`` (also usable as a decorator: ``@register_generator("gauss")``).

    Raises
    ------
    ValueError
        If ``name`` is already registered to another function.
    """

    def add(func: Generator) -> Generator:
        if name in GENERATORS and GENERATORS[name] is not func:
            raise ValueError(f"a synthetic generator named '{name}' is already registered")
        GENERATORS[name] = func
        return func

    return add if generator is None else add(generator)
