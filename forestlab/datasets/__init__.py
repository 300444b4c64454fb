"""Datasets: load the dataset a ``conf/dataset/<key>.yaml`` config describes, from the cache, a mirror or the web.

>>> from forestlab.datasets import load_dataset          # doctest: +SKIP
>>> ds = load_dataset(cfg, data_dir="data")              # doctest: +SKIP
>>> ds.X.shape, ds.y[:3], ds.classes                     # doctest: +SKIP
((208, 60), array([-1, -1, -1]), ('R', 'M'))

Sources (``source.kind``): ``uci`` (files of the UCI archive, verified by SHA-256), ``mnist`` (digit pairs),
``sklearn`` (bundled loaders), ``synthetic`` (Breiman's ringnorm and twonorm, depecker2010's simulated problems),
``openml`` (by id) and ``file`` (a user's CSV, ARFF or Parquet file). The config schema and the cache layout are
documented in ``data/README.md``.
"""

# The generated problems register on import: Breiman's first, then depecker2010's (the order messages list them in).
from forestlab.datasets import _synthetic  # noqa: F401

# isort: split
from forestlab.datasets import _ranking_toys  # noqa: F401

# isort: split
from forestlab.datasets._base import Dataset
from forestlab.datasets._fetch import MIRROR_ENV
from forestlab.datasets._generators import generated_info
from forestlab.datasets._load import clear_cache, dataset_files, load_dataset, verify_dataset

__all__ = ["Dataset", "MIRROR_ENV", "clear_cache", "dataset_files", "generated_info", "load_dataset",
           "verify_dataset"]
