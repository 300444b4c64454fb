"""Fitted estimators shared by the runs of one job.

The runner executes the runs that share a split and a ``seed_tag`` (RF, SORF and MinCq on one split, say) in one
job and hands them one :class:`FitCache`. A learner whose ``fit`` accepts ``fit_cache=`` fits its base forest
through it, so the forest is grown once and weighed several ways; for any other learner the runner itself fits
through the cache, so two algorithms with the same class, parameters and training data share one fit.

A cached estimator is shared: treat it as read-only.
"""

from __future__ import annotations

import hashlib
import inspect
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, clone


def fingerprint(a: Any) -> str:
    """A content hash of an array (dtype, shape and bytes)."""
    arr = np.ascontiguousarray(np.asarray(a))
    h = hashlib.sha1(usedforsecurity=False)
    h.update(f"{arr.dtype.str}{arr.shape}".encode())
    h.update(arr.view(np.uint8).reshape(-1) if arr.dtype != object else repr(arr.tolist()).encode())
    return h.hexdigest()


def _params_key(estimator: BaseEstimator) -> str:
    params = estimator.get_params(deep=False)
    return repr(sorted((k, repr(v)) for k, v in params.items()))


class FitCache:
    """A map (estimator class, parameters, training data) -> fitted estimator.

    Examples
    --------
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> cache = FitCache()
    >>> X, y = [[0.0], [1.0]], [0, 1]
    >>> a = cache.fit(DecisionTreeClassifier(random_state=0), X, y)
    >>> b = cache.fit(DecisionTreeClassifier(random_state=0), X, y)
    >>> a is b, cache.hits, cache.misses
    (True, 1, 1)
    """

    def __init__(self) -> None:
        self._fitted: dict[tuple[str, str, str, str], BaseEstimator] = {}
        self.hits = 0
        self.misses = 0

    def fit(self, estimator: BaseEstimator, X: Any, y: Any) -> BaseEstimator:
        """The fitted clone of ``estimator`` on (X, y), fitted on the first request only."""
        cls = type(estimator)
        key = (f"{cls.__module__}.{cls.__qualname__}", _params_key(estimator), fingerprint(X), fingerprint(y))
        if key in self._fitted:
            self.hits += 1
            return self._fitted[key]
        self.misses += 1
        fitted = clone(estimator).fit(X, y)
        self._fitted[key] = fitted
        return fitted

    def __len__(self) -> int:
        return len(self._fitted)


def accepts_fit_cache(estimator: Any) -> bool:
    """Whether ``estimator.fit`` takes a ``fit_cache`` keyword."""
    try:
        return "fit_cache" in inspect.signature(estimator.fit).parameters
    except (TypeError, ValueError):
        return False


def fit_with_cache(estimator: BaseEstimator, X: Any, y: Any, cache: FitCache | None) -> BaseEstimator:
    """Fit ``estimator`` the way the runner does: through ``cache`` when given."""
    if cache is None:
        return estimator.fit(X, y)
    if accepts_fit_cache(estimator):
        return estimator.fit(X, y, fit_cache=cache)
    return cache.fit(estimator, X, y)
