"""scikit-learn's bundled datasets (``source.kind: sklearn``), offline by construction.

``source.loader`` names one of the loaders below; the table it gives (features + a ``target`` column holding the
class names) goes through the same preprocessing as a file, so ``target.positive`` names a class by its name
(e.g. ``malignant`` for ``load_breast_cancer``, where scikit-learn codes malignant as 0).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from forestlab.datasets._base import Dataset
from forestlab.datasets._table import Table, preprocess
from forestlab.errors import DatasetError

LOADERS = ("load_breast_cancer", "load_iris", "load_wine", "load_digits")


def load_sklearn(cfg: Mapping[str, Any], *, name: str, data_dir: str | os.PathLike[str],
                 mirror: str | os.PathLike[str] | None, download: bool,
                 fresh: bool = False) -> tuple[Dataset, list[str]]:
    """Load a bundled scikit-learn dataset as a table with a ``target`` column of class names."""
    import sklearn.datasets

    loader = cfg["source"].get("loader")
    if loader not in LOADERS:
        raise DatasetError(f"dataset '{name}': `source.loader` must be one of {', '.join(LOADERS)}, got {loader!r}")
    bunch = getattr(sklearn.datasets, loader)()
    data = np.asarray(bunch.data, dtype=np.float64)
    features = [str(f) for f in getattr(bunch, "feature_names", [f"x{i}" for i in range(data.shape[1])])]
    target_names = np.asarray(bunch.target_names).astype(str)
    labels = np.array(target_names[np.asarray(bunch.target)], dtype=object)
    table = Table(names=[*features, "target"], columns=[*data.T.copy(), labels], origin=f"sklearn.datasets.{loader}")
    return preprocess(cfg, table, name=name), []
