"""The public entry points: :func:`load_dataset`, :func:`verify_dataset`, :func:`dataset_files`.

``load_dataset`` dispatches on ``cfg["source"]["kind"]`` and keeps the datasets it loaded in an in-process LRU
cache (keyed by the canonical JSON of the config and the resolved cache and mirror folders), so that a worker
that runs hundreds of splits of Adult or an MNIST pair parses the files once.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from forestlab.datasets._base import TASKS, Dataset, canonical_json, dataset_name, plain
from forestlab.datasets._fetch import resolve_mirror
from forestlab.errors import DatasetError, ForestlabError

# Top-level keys a dataset config may have (anything else is a typo, reported as such).
CONFIG_KEYS = ("name", "task", "description", "studies", "shape", "source", "parse", "columns", "drop", "target",
               "categorical", "category_order", "missing", "splits", "notes", "citation")
KINDS = ("uci", "mnist", "sklearn", "synthetic", "openml", "file")

_CACHE_MAX_ITEMS = 16
_CACHE_MAX_BYTES = 1 << 30
_cache: OrderedDict[tuple[str, str, str], Dataset] = OrderedDict()
_cache_lock = threading.Lock()

Loader = Callable[..., tuple[Dataset, list[str]]]


def _validate(cfg: Mapping[str, Any]) -> tuple[str, str]:
    """(name, source kind) of a config, after checking its top-level structure."""
    if not isinstance(cfg, Mapping):
        raise DatasetError(f"a dataset config must be a mapping, got {type(cfg).__name__}")
    name = dataset_name(cfg)
    unknown = sorted(set(cfg) - set(CONFIG_KEYS))
    if unknown:
        raise DatasetError(f"dataset '{name}': unknown config keys {unknown}; valid keys: {', '.join(CONFIG_KEYS)}")
    if cfg.get("task") not in TASKS:
        raise DatasetError(f"dataset '{name}': `task` must be binary or multiclass, got {cfg.get('task')!r}")
    source = cfg.get("source")
    if not isinstance(source, Mapping) or source.get("kind") not in KINDS:
        kind = source.get("kind") if isinstance(source, Mapping) else None
        raise DatasetError(f"dataset '{name}': `source.kind` must be one of {', '.join(KINDS)}, got {kind!r}")
    return name, str(source["kind"])


def _loader(kind: str) -> Loader:
    if kind == "uci":
        from forestlab.datasets._uci import load_uci

        return load_uci
    if kind == "mnist":
        from forestlab.datasets._mnist import load_mnist

        return load_mnist
    if kind == "sklearn":
        from forestlab.datasets._sklearn import load_sklearn

        return load_sklearn
    if kind == "synthetic":
        from forestlab.datasets._synthetic import load_synthetic

        return load_synthetic
    if kind == "openml":
        from forestlab.datasets._openml import load_openml

        return load_openml
    from forestlab.datasets._file import load_file

    return load_file


def _load(cfg: Mapping[str, Any], data_dir: str | os.PathLike[str], mirror: str | os.PathLike[str] | None,
          download: bool, fresh: bool = False) -> tuple[Dataset, list[str]]:
    name, kind = _validate(cfg)
    return _loader(kind)(cfg, name=name, data_dir=data_dir, mirror=mirror, download=download, fresh=fresh)


def load_dataset(cfg: Mapping[str, Any], *, data_dir: str | os.PathLike[str],
                 mirror: str | os.PathLike[str] | None = None, download: bool = True) -> Dataset:
    """Load the dataset a config describes: fetch and verify its files, parse, preprocess, check its shape.

    Parameters
    ----------
    cfg : mapping
        The plain dict of ``conf/dataset/<key>.yaml`` (possibly with user overrides); see ``data/README.md``.
    data_dir : path
        The dataset cache (``data/`` by default); files are fetched into it as ``uci/<folder>/<file>``,
        ``mnist/<file>``, ``openml/...``.
    mirror : path, optional
        A folder with the cache's layout to copy files from; default ``$FORESTLAB_DATA_MIRROR``.
    download : bool
        Whether files found neither in the cache nor in the mirror may be downloaded from their URLs.

    Returns
    -------
    Dataset
        Read-only arrays; the same object is returned for the same config, cache and mirror in one process.

    Raises
    ------
    DatasetError
        An invalid config, a missing file (one message naming the dataset, the files and the two ways to provide
        them), a checksum mismatch, a parse error, or a shape that differs from the config's ``shape``.
    """
    cfg = plain(cfg)
    key = (canonical_json(cfg), str(Path(os.path.expanduser(str(data_dir))).resolve()),
           str(resolve_mirror(mirror)))
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    ds, _ = _load(cfg, data_dir, mirror, download)
    with _cache_lock:
        _cache[key] = ds
        _cache.move_to_end(key)
        while len(_cache) > 1 and (len(_cache) > _CACHE_MAX_ITEMS or _cache_bytes() > _CACHE_MAX_BYTES):
            _cache.popitem(last=False)
    return ds


def _cache_bytes() -> int:
    return sum(d.X.nbytes + d.y.nbytes for d in _cache.values())


def clear_cache() -> None:
    """Forget the datasets loaded in this process (the next :func:`load_dataset` parses the files again)."""
    from forestlab.datasets._mnist import clear_raw_cache

    with _cache_lock:
        _cache.clear()
    clear_raw_cache()


def verify_dataset(cfg: Mapping[str, Any], *, data_dir: str | os.PathLike[str],
                   mirror: str | os.PathLike[str] | None = None, download: bool = False) -> dict[str, Any]:
    """Check a dataset end to end (files' SHA-256, parsing, shape) without using the in-process cache.

    Returns
    -------
    dict
        ``{"name", "ok", "files", "shape", "message"}``: ``files`` are the files used (or needed, when it fails),
        ``shape`` is ``(n_samples, n_features)`` or None, ``message`` says what is wrong, or gives the class
        counts when all is well. A bad or missing file is reported here, never raised.
    """
    cfg = plain(cfg)
    name = dataset_name(cfg) if isinstance(cfg, Mapping) else "<invalid>"
    try:
        needed = dataset_files(cfg)
    except ForestlabError:
        needed = []
    try:
        ds, used = _load(cfg, data_dir, mirror, download, fresh=True)
    except ForestlabError as exc:
        return {"name": name, "ok": False, "files": needed, "shape": None, "message": str(exc)}
    counts = ", ".join(f"{label}: {n}" for label, n in ds.class_counts().items())
    return {"name": name, "ok": True, "files": used or needed, "shape": (ds.n_samples, ds.n_features),
            "message": counts}


def dataset_files(cfg: Mapping[str, Any]) -> list[str]:
    """Relative paths of the files a dataset needs in the cache or the mirror (e.g. ``uci/sonar/sonar.all-data``).

    Generated and bundled datasets need none; OpenML files are managed by the openml package (none listed); a
    user's ``file`` source lists its own path. For MNIST the original IDX files are listed; the mirror may hold the
    training images as PNG batches instead (see ``data/README.md``).
    """
    cfg = plain(cfg)
    name, kind = _validate(cfg)
    if kind == "uci":
        from forestlab.datasets._uci import uci_files

        return uci_files(cfg, name)
    if kind == "mnist":
        from forestlab.datasets._mnist import mnist_files

        return mnist_files(cfg)
    if kind == "file":
        return [str(cfg["source"].get("path", ""))]
    return []
