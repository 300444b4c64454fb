"""Train/test protocols and seed derivation.

Seeds are derived, never threaded through the code: ``derive_seed(base_seed, dataset, repetition, ...)`` hashes its
parts, so a run's randomness depends only on what identifies it, not on the order runs execute in, the worker that
runs them or ``n_jobs``. Split seeds never include the algorithm, so learners compared in one table see the same
splits; learner seeds include a ``seed_tag`` that learners share when they should grow the same trees.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold

from forestlab.errors import ConfigError, DatasetError


def derive_seed(*parts: Any) -> int:
    """A 32-bit seed from the canonical JSON of ``parts`` (stable across runs, machines and Python versions)."""
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str).encode()
    return int.from_bytes(hashlib.sha256(blob).digest()[:4], "little")


@dataclass(frozen=True)
class Split:
    """Indices of one train/test split of a dataset."""

    train: np.ndarray
    test: np.ndarray


def n_folds(protocol: Mapping) -> int:
    """How many runs one repetition of the protocol produces (folds of k-fold, else 1)."""
    return int(protocol["n_folds"]) if protocol["kind"] == "kfold" else 1


def resolve_sizes(protocol: Mapping, dataset_cfg: Mapping) -> dict[str, Any]:
    """The protocol with study split sizes looked up in the dataset's ``splits`` (for the run key and the split)."""
    out = dict(protocol)
    study = protocol.get("sizes_from")
    if protocol["kind"] == "holdout" and study:
        splits = (dataset_cfg.get("splits") or {}).get(study)
        if not splits:
            raise ConfigError(f"dataset '{dataset_cfg.get('name')}' has no split sizes for study '{study}' "
                              f"(protocol.sizes_from={study}); add `splits: {{{study}: {{train: N, test: M}}}}` "
                              "to its config or set protocol.train_size")
        out["train_size"] = splits.get("train")
        out["test_size"] = splits.get("test")
    out.pop("sizes_from", None)
    out.pop("name", None)
    return out


def _count(size: int | float | None, n: int) -> int | None:
    """A size as a number of points: an int is a count, a float in (0, 1) a fraction of ``n``."""
    if size is None:
        return None
    if isinstance(size, float) and size < 1:
        return max(1, int(round(size * n)))
    return int(size)


def make_split(protocol: Mapping, y: np.ndarray, *, base_seed: int, dataset: str, repetition: int,
               fold: int | None = None) -> Split:
    """The train/test split of one run.

    Parameters
    ----------
    protocol : mapping
        A resolved protocol (see :func:`resolve_sizes`): ``kind`` holdout or kfold and its parameters.
    y : ndarray of shape (n_samples,)
        Labels, for stratification.
    base_seed, dataset, repetition, fold
        What the split seed is derived from. A holdout with ``resplit: false`` ignores the repetition, so every
        repetition sees the same split (a single-split study) and only the learner's seed changes.
    """
    n = len(y)
    kind = protocol["kind"]
    if kind == "holdout":
        rep = repetition if protocol.get("resplit", True) else 0
        rng = np.random.default_rng(derive_seed("split", base_seed, dataset, rep))
        n_train = _count(protocol.get("train_size"), n)
        n_test = _count(protocol.get("test_size"), n)
        if n_test is None:
            n_test = n - n_train
        if n_train < 2 or n_test < 1 or n_train + n_test > n:
            raise DatasetError(f"dataset '{dataset}' has {n} points, too few for a split of {n_train} training "
                               f"and {n_test} test points (protocol train_size/test_size)")
        if protocol.get("stratify"):
            train, test = _stratified_holdout(y, n_train, n_test, rng)
        else:
            perm = rng.permutation(n)
            train, test = perm[:n_train], perm[n_train:n_train + n_test]
        return Split(np.sort(train), np.sort(test))
    if kind == "kfold":
        k = int(protocol["n_folds"])
        seed = derive_seed("kfold", base_seed, dataset, repetition)
        if protocol.get("stratify", True):
            _, counts = np.unique(y, return_counts=True)
            if counts.min() < k:
                raise DatasetError(f"dataset '{dataset}': a class has {counts.min()} points, fewer than "
                                   f"the {k} folds of stratified k-fold")
            splitter = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
        else:
            splitter = KFold(n_splits=k, shuffle=True, random_state=seed)
        for i, (train, test) in enumerate(splitter.split(np.zeros(n), y)):
            if i == fold:
                return Split(train, test)
        raise ConfigError(f"fold {fold} out of range for {k}-fold cross-validation")
    raise ConfigError(f"unknown protocol kind '{kind}' (valid: holdout, kfold)")


def _stratified_holdout(y: np.ndarray, n_train: int, n_test: int,
                        rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Draw train and test parts with the class proportions of ``y`` (largest-remainder rounding)."""
    classes, inverse = np.unique(y, return_inverse=True)
    counts = np.bincount(inverse)

    def allocate(total: int) -> np.ndarray:
        raw = counts / counts.sum() * total
        base = np.floor(raw).astype(int)
        order = np.argsort(-(raw - base), kind="stable")
        base[order[: total - base.sum()]] += 1
        return base

    train_per, test_per = allocate(n_train), allocate(n_test)
    train, test = [], []
    for c in range(len(classes)):
        idx = rng.permutation(np.flatnonzero(inverse == c))
        a, b = min(train_per[c], len(idx)), min(test_per[c], max(0, len(idx) - train_per[c]))
        train.append(idx[:a])
        test.append(idx[a:a + b])
    return np.concatenate(train), np.concatenate(test)
