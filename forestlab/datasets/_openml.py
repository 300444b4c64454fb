"""Any OpenML dataset by id (``source.kind: openml``); needs the network once, then its cache.

The openml package downloads the dataset's description and data file (Parquet, else ARFF) into
``data_dir/openml``. forestlab reads that file itself with pandas/scipy, never through openml's pickled cache
files, then applies the usual preprocessing. ``target.column`` defaults to the dataset's default target; its
row-id and ignored attributes are dropped unless ``drop`` is set. ``source.server`` may point at another OpenML
server (e.g. ``https://test.openml.org/api/v1/xml``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from forestlab.datasets._base import Dataset, as_list, require
from forestlab.datasets._file import read_arff
from forestlab.datasets._table import Table, preprocess, table_from_frame
from forestlab.errors import DatasetError


def _cached(cache: Path, did: int) -> bool:
    """Whether the openml cache under ``cache`` holds the data file of dataset ``did``."""
    return any(p.suffix in (".pq", ".parquet", ".arff")
               for p in cache.glob(f"**/datasets/{did}/*") if p.is_file())


def _fetch(did: int, cache: Path, server: str | None, name: str) -> Any:
    """``openml.datasets.get_dataset`` with its cache in ``cache``, one connection attempt, config restored."""
    import openml

    config = openml.config
    saved = (config.server, config.connection_n_retries, config.get_config_as_dict()["cachedir"])
    try:
        config.set_root_cache_directory(cache)
        config.connection_n_retries = 1
        if server:
            config.server = str(server)
        return openml.datasets.get_dataset(did, download_data=True, download_qualities=False,
                                           download_features_meta_data=False)
    except Exception as exc:  # noqa: BLE001 - openml raises many types (requests, minio, its own); all mean "not had"
        text = " ".join(str(exc).split())[:300] or type(exc).__name__
        raise DatasetError(f"dataset '{name}': cannot get OpenML dataset {did} ({type(exc).__name__}: {text}); "
                           f"OpenML datasets need the network the first time, then they are cached in {cache}") \
            from None
    finally:
        config.server, config.connection_n_retries = saved[0], saved[1]
        config.set_root_cache_directory(saved[2])


def load_openml(cfg: Mapping[str, Any], *, name: str, data_dir: str | os.PathLike[str],
                mirror: str | os.PathLike[str] | None, download: bool,
                fresh: bool = False) -> tuple[Dataset, list[str]]:
    """Download (once) and load an OpenML dataset."""
    source = cfg["source"]
    try:
        did = int(require(source, "id", "source.", name))
    except (TypeError, ValueError):
        raise DatasetError(f"dataset '{name}': `source.id` must be an OpenML dataset id (an integer)") from None
    cache = Path(os.path.expanduser(str(data_dir))).resolve() / "openml"
    if not download and not _cached(cache, did):
        raise DatasetError(f"dataset '{name}': OpenML dataset {did} is not in the cache {cache} and downloading is "
                           "off; go online with downloading on (paths.download=true) to fetch it once")
    cache.mkdir(parents=True, exist_ok=True)
    ds = _fetch(did, cache, source.get("server"), name)
    data_file = getattr(ds, "parquet_file", None) or getattr(ds, "data_file", None)
    if not data_file or not Path(data_file).is_file():
        raise DatasetError(f"dataset '{name}': OpenML dataset {did} came without a data file")
    path = Path(data_file)
    if path.suffix in (".pq", ".parquet"):
        import pandas as pd

        table = table_from_frame(pd.read_parquet(path), f"OpenML dataset {did}")
    else:
        table = read_arff(path, name)
        table = Table(table.names, table.columns, f"OpenML dataset {did}")
    cfg = dict(cfg)
    target = dict(cfg.get("target") or {})
    if not target.get("column"):
        if not ds.default_target_attribute:
            raise DatasetError(f"dataset '{name}': OpenML dataset {did} has no default target; set `target.column`")
        target["column"] = str(ds.default_target_attribute).split(",")[0]
    cfg["target"] = target
    if cfg.get("drop") is None:
        auto = [c for c in as_list(ds.row_id_attribute) + as_list(ds.ignore_attribute) if c in table.names]
        cfg["drop"] = auto
    return preprocess(cfg, table, name=name, na_values=["?"]), [str(path)]
