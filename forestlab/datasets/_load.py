"""The public entry points: :func:`load_dataset`, :func:`verify_dataset`, :func:`dataset_files`.

``load_dataset`` dispatches on ``cfg["source"]["kind"]`` and keeps the datasets it loaded in an in-process LRU
cache (keyed by the canonical JSON of the config and the resolved cache and mirror folders), so that a worker
that runs hundreds of splits of Adult or an MNIST pair parses the files once. Parsed UCI and MNIST arrays are also
kept on disk under ``<data_dir>/processed/`` (see ``_read_processed``), so other processes skip the parse.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import threading
import zipfile
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from forestlab.datasets._base import (
    TASKS,
    Dataset,
    canonical_json,
    check_features,
    check_learnable,
    check_shape,
    dataset_name,
    make_dataset,
    plain,
)
from forestlab.datasets._fetch import resolve_mirror
from forestlab.datasets._file import load_file
from forestlab.datasets._mnist import clear_raw_cache, load_mnist, mnist_files
from forestlab.datasets._openml import load_openml
from forestlab.datasets._sklearn import load_sklearn
from forestlab.datasets._synthetic import load_synthetic
from forestlab.datasets._uci import load_uci, uci_files
from forestlab.errors import ConfigError, DatasetError, ForestlabError, one_line
from forestlab.spec import check_section

KINDS = ("uci", "mnist", "sklearn", "synthetic", "openml", "file")

_CACHE_MAX_ITEMS = 32
# Bump when parsing or preprocessing changes what a config loads: every processed file is rebuilt.
# 2: data are read as written or refused (mixed and non-finite columns, unmapped binary labels, classes too small);
#    a processed file written before those checks existed must not serve a config they refuse.
PROCESSED_VERSION = 2
# Sources whose parsing costs enough to keep the processed arrays on disk.
_PROCESSED_KINDS = ("uci", "mnist")
# The in-process cache holds a few datasets (plans are dataset-major, so a process rarely needs an older one back).
# Kept under loky's leak check, which replaces a worker whose memory has grown by 300 MB since its first job: a cache
# holding several MNIST pairs (88 MB each) could get a worker replaced, and its datasets reloaded, mid-experiment.
_CACHE_MAX_BYTES = 200 << 20
_cache: OrderedDict[tuple[str, str, str], Dataset] = OrderedDict()
_cache_lock = threading.Lock()

Loader = Callable[..., tuple[Dataset, list[str]]]

log = logging.getLogger("forestlab")

#: What reading a damaged processed file raises: a truncated archive (BadZipFile, EOFError), a flipped bit (BadZipFile
#: "Bad CRC-32", zlib.error), a missing member (KeyError), a garbled header or metadata (ValueError, TypeError).
_DAMAGED = (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile, zlib.error)


def _validate(cfg: Mapping[str, Any]) -> tuple[str, str]:
    """(name, source kind) of a config, after checking its top-level structure."""
    if not isinstance(cfg, Mapping):
        raise DatasetError(f"a dataset config must be a mapping, got {type(cfg).__name__}")
    if not cfg:
        raise DatasetError("the dataset config is empty: it needs at least name, task, source and target "
                           "(see data/README.md)")
    name = dataset_name(cfg)
    try:  # the keys a dataset config may have, declared once (forestlab.spec.SECTIONS["dataset"])
        check_section("dataset", cfg, f"dataset '{name}'")
    except ConfigError as exc:
        raise DatasetError(str(exc)) from None
    if cfg.get("task") not in TASKS:
        raise DatasetError(f"dataset '{name}': `task` must be binary or multiclass, got {cfg.get('task')!r}")
    source = cfg.get("source")
    if not isinstance(source, Mapping) or source.get("kind") not in KINDS:
        kind = source.get("kind") if isinstance(source, Mapping) else None
        raise DatasetError(f"dataset '{name}': `source.kind` must be one of {', '.join(KINDS)}, got {kind!r}")
    return name, str(source["kind"])


def _loader(kind: str) -> Loader:
    return {"uci": load_uci, "mnist": load_mnist, "sklearn": load_sklearn, "synthetic": load_synthetic,
            "openml": load_openml}.get(kind, load_file)


def _load(cfg: Mapping[str, Any], data_dir: str | os.PathLike[str], mirror: str | os.PathLike[str] | None,
          download: bool, fresh: bool = False) -> tuple[Dataset, list[str]]:
    name, kind = _validate(cfg)
    try:
        ds, used = _loader(kind)(cfg, name=name, data_dir=data_dir, mirror=mirror, download=download, fresh=fresh)
    except OSError as exc:  # a permission, a device error, a folder where a file should be: one line naming it
        what = exc.filename or ", ".join(dataset_files(cfg)) or "its source"
        raise DatasetError(f"dataset '{name}': cannot read {what}: {exc.strerror or one_line(exc)}") from None
    origin = ", ".join(used) or None
    check_learnable(name, ds.y, ds.task, ds.classes, origin)  # every kind, generated ones too
    check_features(name, ds.X, ds.task, origin)
    return ds, used


def check_name_matches_file(cfg: Any, path: str | os.PathLike[str]) -> None:
    """Refuse a dataset config file that is empty, is not a mapping, or whose ``name:`` is not its file's stem.

    The name is the dataset's key: ``dataset=<name>`` picks ``conf/dataset/<name>.yaml``, and runs, split and
    forest seeds and the processed cache are keyed by ``name``; a file ``glass2.yaml`` saying ``name: glass`` would
    run under another dataset's key. ``cfg`` is the file's content (a mapping, an OmegaConf node, or None for an
    empty file); ``path`` is the file. Raises a one-line :class:`DatasetError` naming the file.
    """
    path = Path(path)
    stem = path.stem
    cfg = plain(cfg)
    if cfg is None or (isinstance(cfg, Mapping) and not cfg):
        raise DatasetError(f"{path} is empty: a dataset config needs at least `name: {stem}`, task, source and "
                           "target (see data/README.md)")
    if not isinstance(cfg, Mapping):
        raise DatasetError(f"{path} must hold a mapping (name, task, source, target, ...), got "
                           f"{type(cfg).__name__}")
    name = cfg.get("name")
    if name is None:
        raise DatasetError(f"{path} has no `name:`; add `name: {stem}` (a dataset's name is its file's name)")
    if str(name) != stem:
        raise DatasetError(f"{path} says `name: {name}` but its file name is {stem!r}; they must be equal (the name "
                           f"is the dataset's key: dataset={stem} selects the file, runs and seeds are keyed by the "
                           f"name): set `name: {stem}`, or rename the file to {name}.yaml")


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
    ds = _read_processed(cfg, data_dir, mirror)
    if ds is None:
        ds, used = _load(cfg, data_dir, mirror, download)
        _write_processed(cfg, ds, used, data_dir, mirror)
    with _cache_lock:
        _cache[key] = ds
        _cache.move_to_end(key)
        while len(_cache) > 1 and (len(_cache) > _CACHE_MAX_ITEMS or _cache_bytes() > _CACHE_MAX_BYTES):
            _cache.popitem(last=False)
    return ds


# ---------------------------------------------------------------------------------------------------------------
# Processed arrays on disk: data/processed/<name>-<hash>.npz, written after a verified parse, so that every worker
# process (and every later run) skips re-parsing the text files. The hash covers the config and PROCESSED_VERSION; the
# file records the size and modification time of each source file, and is ignored as soon as one of them differs
# (a replaced or altered source is then verified by its SHA-256 again). Loaded with pickling refused.
# ---------------------------------------------------------------------------------------------------------------
def _processed_path(cfg: Mapping[str, Any], data_dir: str | os.PathLike[str]) -> Path:
    blob = f"{PROCESSED_VERSION}:{canonical_json(cfg)}".encode()
    digest = hashlib.sha256(blob).hexdigest()[:20]
    return Path(os.path.expanduser(str(data_dir))) / "processed" / f"{dataset_name(cfg)}-{digest}.npz"


def _source_stats(used: list[str], data_dir: str | os.PathLike[str],
                  mirror: str | os.PathLike[str] | None) -> list[list[Any]] | None:
    roots = [Path(os.path.expanduser(str(data_dir)))]
    resolved = resolve_mirror(mirror)
    if resolved is not None:
        roots.append(Path(resolved))
    stats = []
    for rel in used:
        path = next((r / rel for r in roots if (r / rel).is_file()), None)
        if path is None:
            return None
        st = path.stat()
        # The resolved path: the parent (data_dir as configured, often relative) and the workers (absolute paths)
        # must agree, or each process would take the other's file for stale and parse the sources again.
        stats.append([str(path.resolve()), st.st_size, st.st_mtime_ns])
    return stats


@contextlib.contextmanager
def _open_processed(cfg: Mapping[str, Any], data_dir: str | os.PathLike[str],
                    mirror: str | os.PathLike[str] | None) -> Iterator[tuple[Path, Any, dict[str, Any]] | None]:
    """The config's processed file, open, with its path and metadata, when it is on disk and up to date with its
    sources (by their size and modification time); None otherwise, or for a source kind that is not kept. Raises
    what reading a damaged file raises (OSError, ValueError, KeyError, TypeError) and DatasetError for an invalid
    config: the callers treat these as "no usable file"."""
    if _validate(cfg)[1] not in _PROCESSED_KINDS:
        yield None
        return
    path = _processed_path(cfg, data_dir)
    if not path.is_file():
        yield None
        return
    with np.load(path, allow_pickle=False) as npz:
        meta = json.loads(str(npz["meta"]))
        stats = _source_stats(meta["used"], data_dir, mirror)
        yield (path, npz, meta) if stats is not None and stats == meta["stats"] else None


def _read_processed_or_raise(cfg: Mapping[str, Any], data_dir: str | os.PathLike[str],
                             mirror: str | os.PathLike[str] | None) -> Dataset | None:
    """The processed arrays (every member read, so the archive's CRC-32 checks run), None when there is no up-to-date
    file; raises what a damaged file raises (see :data:`_DAMAGED`) or DatasetError for a wrong shape."""
    with _open_processed(cfg, data_dir, mirror) as found:
        if found is None:
            return None
        path, npz, meta = found
        ds = make_dataset(meta["name"], npz["X"], npz["y"], meta["task"], meta["feature_names"],
                          meta["classes"], npz["categorical"])
    check_shape(ds.name, ds.X, cfg.get("shape"), str(path))
    return ds


def _read_processed(cfg: Mapping[str, Any], data_dir: str | os.PathLike[str],
                    mirror: str | os.PathLike[str] | None) -> Dataset | None:
    """The processed arrays, or None: absent, stale, or damaged (truncated, a flipped bit): the caller then parses the
    sources again and rewrites the file, so a damaged file heals on its next read instead of failing every run."""
    try:
        return _read_processed_or_raise(cfg, data_dir, mirror)
    except (*_DAMAGED, DatasetError) as exc:
        log.warning("dataset '%s': the processed arrays %s are damaged (%s); parsing the source files again",
                    dataset_name(cfg), _processed_path(cfg, data_dir), _reason(exc))
        return None


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def processed_ready(cfg: Mapping[str, Any], *, data_dir: str | os.PathLike[str],
                    mirror: str | os.PathLike[str] | None = None) -> bool:
    """Whether a verified processed file for this config is on disk and up to date with its sources (reads only its
    metadata): a parent process that only checks availability can then leave the arrays to the workers (which heal
    a file whose arrays turn out damaged: :func:`_read_processed`)."""
    try:
        with _open_processed(plain(cfg), data_dir, mirror) as found:
            return found is not None
    except (*_DAMAGED, DatasetError):
        return False


def check_processed(cfg: Mapping[str, Any], ds: Dataset, used: list[str], *, data_dir: str | os.PathLike[str],
                    mirror: str | os.PathLike[str] | None = None) -> str | None:
    """Compare the processed file the runs would read with ``ds``, a fresh parse of the sources; rewrite it from
    ``ds`` when it is damaged or differs. Returns what was found and done (None: no file, or it matches)."""
    cfg = plain(cfg)
    if _validate(cfg)[1] not in _PROCESSED_KINDS or not _processed_path(cfg, data_dir).is_file():
        return None
    try:
        kept = _read_processed_or_raise(cfg, data_dir, mirror)
    except (*_DAMAGED, DatasetError) as exc:
        problem = f"damaged ({_reason(exc)})"
    else:
        if kept is None:
            return None  # stale (its sources changed): never read, rewritten by the next load
        same = (np.array_equal(kept.X, ds.X, equal_nan=True) and np.array_equal(kept.y, ds.y)
                and list(kept.classes) == list(ds.classes) and list(kept.feature_names) == list(ds.feature_names))
        if same:
            return None
        problem = "different from a fresh parse of the sources"
    _write_processed(cfg, ds, used, data_dir, mirror)
    rebuilt = _read_processed(cfg, data_dir, mirror) is not None
    return f"processed arrays {problem}: {'rebuilt' if rebuilt else 'could not be rebuilt (data folder not writable)'}"


def _write_processed(cfg: Mapping[str, Any], ds: Dataset, used: list[str], data_dir: str | os.PathLike[str],
                     mirror: str | os.PathLike[str] | None) -> None:
    try:
        if _validate(cfg)[1] not in _PROCESSED_KINDS or not used:
            return
        stats = _source_stats(used, data_dir, mirror)
        if stats is None:
            return
        path = _processed_path(cfg, data_dir)
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = {"name": ds.name, "task": ds.task, "feature_names": list(ds.feature_names),
                "classes": list(ds.classes), "used": list(used), "stats": stats}
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            np.savez(fh, X=ds.X, y=ds.y, categorical=ds.categorical, meta=np.array(json.dumps(meta)))
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only or full data folder only costs the next process a parse


def _cache_bytes() -> int:
    return sum(d.X.nbytes + d.y.nbytes for d in _cache.values())


def clear_cache() -> None:
    """Forget the datasets loaded in this process (the next :func:`load_dataset` parses the files again)."""
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
    processed = check_processed(cfg, ds, used, data_dir=data_dir, mirror=mirror)  # what the runs actually read
    ok = processed is None or processed.endswith("rebuilt")
    return {"name": name, "ok": ok, "files": used or needed, "shape": (ds.n_samples, ds.n_features),
            "message": counts + (f"; {processed}" if processed else "")}


def dataset_files(cfg: Mapping[str, Any]) -> list[str]:
    """Relative paths of the files a dataset needs in the cache or the mirror (e.g. ``uci/sonar/sonar.all-data``).

    Generated and bundled datasets need none; OpenML files are managed by the openml package (none listed); a
    user's ``file`` source lists its own path. For MNIST the original IDX files are listed; the mirror may hold the
    training images as PNG batches instead (see ``data/README.md``).
    """
    cfg = plain(cfg)
    name, kind = _validate(cfg)
    if kind == "uci":
        return uci_files(cfg, name)
    if kind == "mnist":
        return mnist_files(cfg)
    if kind == "file":
        return [str(cfg["source"].get("path", ""))]
    return []
