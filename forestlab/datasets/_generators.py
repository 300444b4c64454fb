"""The registry of generated problems (``source.kind: synthetic``): generator name -> function. Breiman's
ringnorm and twonorm (:mod:`forestlab.datasets._synthetic`) and depecker2010's simulated problems
(:mod:`forestlab.datasets._ranking_toys`) register here; the loader reads it.

A generator may also register what is known of its problem beyond its samples (:func:`register_info`: an
oracle's quantities, such as depecker2010's AUC*, ROC* and level sets of eta). The runner stores it with the
dataset's info through :func:`generated_info`, without knowing any problem by name."""

from __future__ import annotations

from collections.abc import Callable, Mapping
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


#: What a generator's problem is known to be, from a dataset config: ``(ds_cfg) -> {name: JSON-able value}``.
InfoFunction = Callable[[Mapping[str, Any]], dict[str, Any]]

#: Generator name -> its :data:`InfoFunction` (generators that registered one).
GENERATED_INFO: dict[str, InfoFunction] = {}


def register_info(name: str, info: InfoFunction | None = None) -> Any:
    """Register what generator ``name``'s problem is known to be (also usable as a decorator): ``info(ds_cfg)``
    gives values stored with the dataset's info for the reports (e.g. the optimal AUC of a problem whose law is
    known), so that they never recompute it.

    Raises
    ------
    ValueError
        If ``name`` already has another info function.
    """

    def add(func: InfoFunction) -> InfoFunction:
        if name in GENERATED_INFO and GENERATED_INFO[name] is not func:
            raise ValueError(f"generator '{name}' already has an info function")
        GENERATED_INFO[name] = func
        return func

    return add if info is None else add(info)


def generated_info(ds_cfg: Mapping[str, Any]) -> dict[str, Any]:
    """What is known of a dataset beyond its samples: its generator's registered info (:func:`register_info`) for
    a generated dataset, empty for any other."""
    source = ds_cfg.get("source") or {}
    if not isinstance(source, Mapping) or source.get("kind") != "synthetic":
        return {}
    info = GENERATED_INFO.get(source.get("generator"))
    return {} if info is None else info(ds_cfg)
