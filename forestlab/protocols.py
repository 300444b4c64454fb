"""Train/test protocols and seed derivation.

Seeds are derived, never threaded through the code: ``derive_seed(base_seed, dataset, repetition, ...)`` hashes its
parts, so a run's randomness depends only on what identifies it, not on the order runs execute in, the worker that
runs them or ``n_jobs``. Split seeds never include the algorithm, so learners compared in one table see the same
splits; learner seeds include a ``seed_tag`` that learners share when they should grow the same trees.

Protocol kinds (:func:`protocol_kinds`; :class:`forestlab.spec.Protocol` declares and checks a protocol config,
and the functions here take its ``as_dict()``, the dict the run keys hash):

- ``holdout``: one train/test split per repetition (:func:`make_split`);
- ``kfold``: (stratified) k-fold cross-validation, one run per fold (:func:`make_split`);
- ``resample``: a fresh training set drawn from a synthetic dataset's generator for every repetition, against one
  test set drawn once (depecker2010 E4, E5, E9; :func:`draw_resample`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold

from forestlab.datasets._synthetic import sample_synthetic
from forestlab.errors import ConfigError, DatasetError
from forestlab.seeds import derive_seed
from forestlab.spec import PROTOCOL_KINDS, Protocol


@dataclass(frozen=True)
class Split:
    """Indices of one train/test split of a dataset."""

    train: np.ndarray
    test: np.ndarray


@dataclass(frozen=True, eq=False)
class ResampleSplit:
    """The data of one run of the ``resample`` protocol: a fresh training set and the shared test set.

    ``X_test`` has shape (0, n_features) and ``y_test`` shape (0,) when the protocol's ``test_size`` is 0.
    """

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray


def protocol_kinds() -> tuple[str, ...]:
    """The valid values of ``protocol.kind``."""
    return PROTOCOL_KINDS


def draw_resample(protocol: Mapping, ds_cfg: Mapping, *, base_seed: int, dataset: str,
                  repetition: int) -> ResampleSplit:
    """The data of one repetition of the ``resample`` protocol (depecker2010 E4, E5, E9).

    The training set is ``train_size`` fresh points of the dataset's generator, drawn with seed
    ``derive_seed("resample-train", base_seed, dataset, repetition)``: independent training sets, one per
    repetition. The test set is ``test_size`` points drawn with ``derive_seed("resample-test", base_seed,
    dataset)``: no repetition in it, so every repetition is evaluated on the same test set (what the instability
    measure and ROC envelopes compare). With ``resplit: false`` every repetition gets the training set of
    repetition 0 and only the learner's seed varies (the instability of a randomised learner on one training
    set, as opposed to its instability across independent training sets). The two seeds never coincide (should a
    training seed hash to the test seed, it is derived again with a salt), so no training set repeats the test
    set's draws.

    Parameters
    ----------
    protocol : mapping
        ``{kind: resample, train_size: INT, test_size: INT}`` (see :class:`forestlab.spec.Protocol`).
    ds_cfg : mapping
        A dataset config with ``source.kind: synthetic``.
    base_seed, dataset, repetition
        What the seeds are derived from.

    Raises
    ------
    ConfigError
        If the protocol is not a valid resample protocol, or the dataset is not synthetic.
    """
    Protocol.from_config({**protocol, "selection": None})
    if protocol["kind"] != "resample":
        raise ConfigError(f"draw_resample is for protocol kind resample, got kind {protocol['kind']}")
    source = ds_cfg.get("source") or {}
    if not isinstance(source, Mapping) or source.get("kind") != "synthetic":
        kind = source.get("kind") if isinstance(source, Mapping) else None
        raise ConfigError(f"protocol kind resample draws fresh samples from a generator, but dataset '{dataset}' "
                          f"is not synthetic (source.kind={kind!r}); use a dataset with source.kind: synthetic "
                          "or protocol kind holdout/kfold")
    test_seed = derive_seed("resample-test", base_seed, dataset)
    rep = repetition if protocol.get("resplit", True) else 0  # resplit false: one training set, learner seeds vary
    train_seed = derive_seed("resample-train", base_seed, dataset, rep)
    salt = 0
    while train_seed == test_seed:  # a 2**-32 event, but then the training set would repeat the test set's draws
        salt += 1
        train_seed = derive_seed("resample-train", base_seed, dataset, rep, salt)
    cfg = {**ds_cfg, "name": ds_cfg.get("name") or dataset}
    X_train, y_train = sample_synthetic(cfg, int(protocol["train_size"]), train_seed)
    X_test, y_test = sample_synthetic(cfg, int(protocol["test_size"]), test_seed)
    return ResampleSplit(X_train, y_train, X_test, y_test)


def n_folds(protocol: Mapping) -> int:
    """How many runs one repetition of the protocol produces (folds of k-fold, else 1)."""
    return int(protocol["n_folds"]) if protocol["kind"] == "kfold" else 1


#: The training fraction of a dataset without split sizes (``splits:``) run with a study's split sizes
#: (``protocol.sizes_from``) when the protocol sets no ``train_size`` of its own; the rest is the test part.
DEFAULT_TRAIN_SIZE = 0.5


def resolve_sizes(protocol: Mapping, dataset_cfg: Mapping) -> dict[str, Any]:
    """The protocol with study split sizes looked up in the dataset's ``splits`` (for the run key and the split).

    A dataset whose config has no ``splits`` at all (a user's own data, run with a study's protocol) is split as the
    protocol's own ``train_size``/``test_size`` say (:data:`DEFAULT_TRAIN_SIZE` when the protocol leaves it null);
    one that has splits for other studies only is refused (a typo in ``sizes_from`` is not defaulted)."""
    out = dict(protocol)
    study = protocol.get("sizes_from")
    if protocol["kind"] == "holdout" and study and "splits" not in dataset_cfg:
        if out.get("train_size") is None:
            out["train_size"] = DEFAULT_TRAIN_SIZE
    elif protocol["kind"] == "holdout" and study:
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


def check_sizes(protocol: Mapping, ds_cfg: Mapping, name: str, *, n: int,
                class_counts: Sequence[int] | None = None) -> None:
    """Refuse, before any run, a protocol that cannot split dataset ``name`` of ``n`` points (the size its config
    documents, or the size its file turned out to have; ``class_counts`` too when known): too few points for the
    train and test sizes, or for the folds. Raises ConfigError naming the dataset and its size."""
    proto = resolve_sizes(protocol, ds_cfg)
    if proto["kind"] == "resample":  # fresh draws from the generator: no finite pool to split
        return
    if proto["kind"] == "kfold":
        k = int(proto["n_folds"])
        if k > n:
            raise ConfigError(f"protocol.n_folds={k} is more than the {n} points of dataset '{name}'")
        if class_counts is not None and proto.get("stratify", True) and min(class_counts) < k:
            raise ConfigError(f"protocol.n_folds={k}: dataset '{name}' has a class of {min(class_counts)} points, "
                              f"fewer than the folds of stratified k-fold; lower protocol.n_folds to at most "
                              f"{min(class_counts)}")
        return
    n_train, n_test = _counts(proto, n)
    if n_train is None:
        return
    sizes = f"protocol.train_size={proto.get('train_size')}, protocol.test_size={proto.get('test_size')}"
    if n_train < 2:
        raise ConfigError(f"dataset '{name}': {sizes} leaves {n_train} training point(s); at least 2 are needed")
    if n_test is None and n_train >= n:
        raise ConfigError(f"dataset '{name}' has {n} points, too few for {n_train} training points and a test "
                          f"part ({sizes})")
    if n_test is not None and (n_test < 1 or n_train + n_test > n):
        raise ConfigError(f"dataset '{name}' has {n} points, too few for {n_train} training and {n_test} test "
                          f"points ({sizes})")


def training_size(protocol: Mapping, ds_cfg: Mapping, n: int) -> int:
    """How many points a fit sees when the protocol splits ``n`` points (k-fold: the largest training part)."""
    proto = resolve_sizes(protocol, ds_cfg)
    if proto["kind"] == "kfold":
        k = int(proto["n_folds"])
        return n - n // k
    if proto["kind"] == "resample":
        return n
    n_train, n_test = _counts(proto, n)
    if n_train is None:
        return n - (n_test or 0)
    return n_train


def _counts(protocol: Mapping, n: int) -> tuple[int | None, int | None]:
    """A holdout's ``train_size`` and ``test_size`` as numbers of points out of ``n`` (None where unset)."""
    return _count(protocol.get("train_size"), n), _count(protocol.get("test_size"), n)


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
        n_train, n_test = _counts(protocol, n)
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
    if kind == "resample":
        raise ConfigError(f"protocol kind resample draws fresh data for dataset '{dataset}' instead of splitting "
                          "it: use draw_resample, not make_split")
    raise ConfigError(f"unknown protocol kind '{kind}' (valid: {', '.join(PROTOCOL_KINDS)})")


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
