"""The :class:`Dataset` container and small helpers shared by the loaders.

A dataset config is a plain mapping (the YAML of ``conf/dataset/<key>.yaml``, see ``data/README.md``). Everything a
user can get wrong in it, or in the files it names, is reported as one single-line :class:`DatasetError`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from forestlab.errors import DatasetError

TASKS = ("binary", "multiclass")
#: Fewest rows a class may have: with fewer, no split can put the class on both the training and the test side.
MIN_ROWS_PER_CLASS = 2


@dataclass(frozen=True, eq=False)
class Dataset:
    """A loaded dataset: features, labels and what they mean.

    Attributes
    ----------
    name : str
        The dataset key (the config's ``name``).
    X : ndarray of shape (n_samples, n_features), float64, C-contiguous, read-only
        Features. Categorical attributes are integer codes 0..k-1 (ordinal coding, never one-hot).
    y : ndarray of shape (n_samples,), int64, read-only
        Labels: -1/+1 for ``task == "binary"`` (+1 = the configured positive class), codes 0..k-1 for
        ``"multiclass"``.
    task : {"binary", "multiclass"}
    feature_names : tuple of str, length n_features
    classes : tuple of str
        The original label of each code; binary: ``(negative_label, positive_label)``.
    categorical : ndarray of shape (n_features,), bool, read-only
        True where the attribute is categorical (integer-coded).
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    task: str
    feature_names: tuple[str, ...]
    classes: tuple[str, ...]
    categorical: np.ndarray

    @property
    def n_samples(self) -> int:
        """Number of rows of ``X``."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Number of columns of ``X``."""
        return int(self.X.shape[1])

    def class_counts(self) -> dict[str, int]:
        """Number of samples of each class, keyed by the original label (binary: negative first)."""
        if self.task == "binary":
            return {self.classes[0]: int(np.sum(self.y == -1)), self.classes[1]: int(np.sum(self.y == 1))}
        counts = np.bincount(self.y, minlength=len(self.classes))
        return {label: int(c) for label, c in zip(self.classes, counts, strict=True)}

    def __repr__(self) -> str:
        return (f"Dataset(name={self.name!r}, task={self.task!r}, n_samples={self.n_samples}, "
                f"n_features={self.n_features}, classes={self.classes!r})")


def make_dataset(name: str, X: np.ndarray, y: np.ndarray, task: str, feature_names: Sequence[str],
                 classes: Sequence[str], categorical: np.ndarray | Sequence[bool] | None = None) -> Dataset:
    """Build a :class:`Dataset` with the dtypes, layout and read-only flags the public API promises."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.int64)
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise DatasetError(f"dataset '{name}': X has shape {X.shape} and y {y.shape}; expected (n, d) and (n,)")
    if not np.all(np.isfinite(X)):
        raise DatasetError(f"dataset '{name}': X holds NaN or infinite values after preprocessing; "
                           "set its `missing:` policy (see data/README.md)")
    cat = np.zeros(X.shape[1], dtype=bool) if categorical is None else np.asarray(categorical, dtype=bool).copy()
    if task == "binary" and not np.all(np.isin(y, (-1, 1))):
        raise DatasetError(f"dataset '{name}': binary labels must be -1/+1")
    for arr in (X, y, cat):
        arr.flags.writeable = False
    return Dataset(name=name, X=X, y=y, task=task, feature_names=tuple(str(f) for f in feature_names),
                   classes=tuple(str(c) for c in classes), categorical=cat)


def check_learnable(name: str, y: np.ndarray, task: str, classes: Sequence[str], origin: str | None = None) -> None:
    """Refuse a dataset too small to learn from: a class (of ``classes``) with fewer than
    :data:`MIN_ROWS_PER_CLASS` rows, which covers a one-class target and a handful of rows."""
    y = np.asarray(y)
    if task == "binary":
        counts = [int(np.sum(y == -1)), int(np.sum(y == 1))]
    else:
        counts = np.bincount(y.astype(np.int64), minlength=len(classes)).tolist() if len(y) else [0] * len(classes)
    where = f" of {origin}" if origin else ""
    if task == "binary" and min(counts) == 0:
        present = str(classes[1] if counts[1] else classes[0])
        sign = "+1" if counts[1] else "-1"
        raise DatasetError(f"dataset '{name}': too small to learn from: all {len(y)} rows{where} are of one class "
                           f"({present!r}, {sign}) after preprocessing; a binary task needs rows of both classes "
                           "(check `target` and `missing`, and the file)")
    short = [(str(c), int(n)) for c, n in zip(classes, counts, strict=True) if n < MIN_ROWS_PER_CLASS]
    if not short:
        return
    listed = ", ".join(f"{c!r}: {n} row{'' if n == 1 else 's'}" for c, n in short[:5])
    more = ", ..." if len(short) > 5 else ""
    raise DatasetError(f"dataset '{name}': too small to learn from: {len(y)} rows{where} after preprocessing, and "
                       f"{'a class has' if len(short) == 1 else f'{len(short)} classes have'} fewer than "
                       f"{MIN_ROWS_PER_CLASS} ({listed}{more}); every class needs at least {MIN_ROWS_PER_CLASS} rows "
                       "to appear in both a training and a test part (check `target`, `missing` and the file)")


def check_features(name: str, X: np.ndarray, task: str, origin: str | None = None) -> None:
    """Refuse data with nothing to learn from in its features: no feature column at all (only the target was
    left), or every feature constant over every row, so that every learner could only predict a constant."""
    where = f" of {origin}" if origin else ""
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[1] == 0:
        raise DatasetError(f"dataset '{name}': nothing to learn from: no feature column{where} is left besides the "
                           "target (check `drop`, `columns` and the file's header)")
    if task == "two_sample" or X.shape[0] < 2:
        return
    with np.errstate(invalid="ignore"):
        constant = np.all((X == X[0]) | (np.isnan(X) & np.isnan(X[0])), axis=0) if X.dtype.kind == "f" \
            else np.all(X == X[0], axis=0)
    if bool(np.all(constant)):
        raise DatasetError(f"dataset '{name}': nothing to learn from: each of its {X.shape[1]} feature column(s)"
                           f"{where} holds one value on all {X.shape[0]} rows")


def plain(value: Any) -> Any:
    """A plain JSON-like copy of a config value (dicts, lists, scalars); OmegaConf nodes are converted."""
    if hasattr(value, "_metadata") and hasattr(value, "_get_node"):  # an OmegaConf node, without importing it
        from omegaconf import OmegaConf

        value = OmegaConf.to_container(value, resolve=True)
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def canonical_json(value: Any) -> str:
    """Stable JSON text of a config (sorted keys), used as a cache key."""
    return json.dumps(plain(value), sort_keys=True, separators=(",", ":"), default=str)


def dataset_name(cfg: Mapping[str, Any]) -> str:
    """The config's ``name`` (for messages), or ``'<unnamed>'``."""
    return str(cfg.get("name") or "<unnamed>")


def require(cfg: Mapping[str, Any], key: str, where: str, name: str) -> Any:
    """``cfg[key]``, or a DatasetError naming the dataset and the missing key."""
    if key not in cfg or cfg[key] is None:
        raise DatasetError(f"dataset '{name}': `{where}{key}` is missing from its config (see data/README.md)")
    return cfg[key]


def as_list(value: Any) -> list[Any]:
    """``value`` as a list: None → [], a scalar → [value]."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def check_shape(name: str, X: np.ndarray, expected: Any, origin: str) -> None:
    """Compare ``X.shape`` with the config's ``shape: [n_samples, n_features]``; raise DatasetError on mismatch."""
    if expected is None:
        return
    exp = tuple(int(v) for v in expected)
    if len(exp) != 2:
        raise DatasetError(f"dataset '{name}': `shape` must be [n_samples, n_features], got {list(expected)}")
    if tuple(X.shape) != exp:
        raise DatasetError(f"dataset '{name}': got shape {X.shape[0]} x {X.shape[1]} from {origin}, but its "
                           f"config expects {exp[0]} x {exp[1]}; the file is not the one the config was written "
                           "for, or the parsing options are wrong (delete the cached file to fetch it again, or "
                           "fix `shape` if you changed the preprocessing)")
