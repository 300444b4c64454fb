"""Find a dataset's files: the cache, then the mirror, then the network, each file checked by SHA-256.

The cache (``data_dir``) and the mirror (``$FORESTLAB_DATA_MIRROR``) share one layout, that of the UCI archive:
``uci/<folder>/<file>`` and ``mnist/<file>``. Resolution of one file:

1. ``data_dir/<rel>`` exists: its SHA-256 must match, else a DatasetError asks the user to delete it (a corrupt
   file is never used, and never overwritten silently);
2. ``mirror/<rel>`` exists: its SHA-256 must match (else a DatasetError), then it is copied into the cache through
   a temporary file and an atomic rename;
3. ``download`` is true: each URL is tried in turn, the body written to a temporary file beside its cache path,
   checked, then renamed into place.

Files found nowhere are reported together in one DatasetError that names the dataset, the files and the two ways
to provide them.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forestlab.errors import DatasetError

MIRROR_ENV = "FORESTLAB_DATA_MIRROR"
_CHUNK = 1 << 20
_USER_AGENT = "forestlab-datasets/1 (Python urllib)"


@dataclass(frozen=True)
class FileSpec:
    """One file a dataset needs: its path relative to the cache/mirror root, checksum and download URLs."""

    rel: str
    sha256: str | None
    urls: tuple[str, ...] = field(default_factory=tuple)


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of a file, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def resolve_mirror(mirror: str | os.PathLike[str] | None | bool) -> Path | None:
    """The mirror folder: the argument, else ``$FORESTLAB_DATA_MIRROR``; None when neither is set, or when the
    argument is False (a configuration that says "no mirror": :func:`configured_mirror`)."""
    if mirror is False:
        return None
    value = mirror if mirror not in (None, "") else os.environ.get(MIRROR_ENV) or None
    return Path(os.path.expanduser(str(value))).resolve() if value else None


def _atomic_copy(src: Path, dest: Path, expected: str | None) -> None:
    """Copy ``src`` to ``dest`` through a temporary file in dest's folder; check the copy before renaming it."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out, open(src, "rb") as inp:
            shutil.copyfileobj(inp, out, _CHUNK)
        if expected is not None and sha256_file(tmp) != expected:
            raise DatasetError(f"copying {src} to {dest} gave a file with the wrong SHA-256 (disk full or the "
                               "mirror changed during the copy); try again")
        os.chmod(tmp, 0o644)  # mkstemp makes 0600 files; cached data is readable like any download
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _download(url: str, dest: Path, expected: str | None, dataset: str, timeout: float = 60.0) -> None:
    """Download ``url`` to a temporary file beside ``dest``; check its SHA-256, then rename it to ``dest``."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    try:
        h = hashlib.sha256()
        request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(request, timeout=timeout) as resp:  # noqa: S310
            while chunk := resp.read(_CHUNK):
                h.update(chunk)
                out.write(chunk)
        actual = h.hexdigest()
        if expected is not None and actual != expected:
            raise DatasetError(f"dataset '{dataset}': the file downloaded from {url} has SHA-256 {actual}, "
                               f"expected {expected}; it was discarded. The server may hold another version of "
                               f"the file: set {MIRROR_ENV}=DIR to a folder holding the verified file "
                               f"(DIR/{dest.name} in the layout of data/README.md)")
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def corrupt_cache_error(dataset: str, path: Path, actual: str, expected: str) -> DatasetError:
    """The error for a cached file whose checksum is wrong."""
    return DatasetError(f"dataset '{dataset}': the cached file {path} is corrupt or another version "
                        f"(SHA-256 {actual}, expected {expected}); it was not used. Delete it (rm '{path}') and "
                        f"load again to fetch a verified copy from {MIRROR_ENV} or the network")


def fetch_files(dataset: str, specs: Sequence[FileSpec], *, data_dir: str | os.PathLike[str],
                mirror: str | os.PathLike[str] | None = None, download: bool = True) -> list[Path]:
    """Paths in the cache of every file in ``specs``, fetched and verified as the module docstring says.

    Parameters
    ----------
    dataset : str
        The dataset's name, for messages.
    specs : sequence of FileSpec
        The files, as paths relative to the cache/mirror root.
    data_dir : path
        The cache root.
    mirror : path or None
        The mirror root; None means ``$FORESTLAB_DATA_MIRROR`` (or no mirror when unset).
    download : bool
        Whether missing files may be fetched from their URLs.

    Returns
    -------
    list of Path
        One path per spec, in order; a file is normally in the cache, or in the mirror when the cache folder
        cannot be written.

    Raises
    ------
    DatasetError
        A checksum mismatch (naming the file, both checksums and the fix), or files found nowhere (one error
        listing them all).
    """
    root = Path(os.path.expanduser(str(data_dir))).resolve()
    mirror_root = resolve_mirror(mirror)
    paths: list[Path | None] = []
    missing: list[tuple[FileSpec, str]] = []
    for spec in specs:
        path, reason = _fetch_one(dataset, spec, root, mirror_root, download)
        paths.append(path)
        if path is None:
            missing.append((spec, reason))
    if missing:
        raise missing_files_error(dataset, missing, root, mirror_root, download)
    return [p for p in paths if p is not None]


def _fetch_one(dataset: str, spec: FileSpec, root: Path, mirror_root: Path | None,
               download: bool) -> tuple[Path | None, str]:
    """One file: (its path, "") or (None, why it could not be had)."""
    cached = root / spec.rel
    if cached.is_file():
        actual = sha256_file(cached)
        if spec.sha256 is not None and actual != spec.sha256:
            raise corrupt_cache_error(dataset, cached, actual, spec.sha256)
        return cached, ""
    if mirror_root is not None:
        mirrored = mirror_root / spec.rel
        if mirrored.is_file():
            actual = sha256_file(mirrored)
            if spec.sha256 is not None and actual != spec.sha256:
                url = f" from {spec.urls[0]}" if spec.urls else ""
                raise DatasetError(f"dataset '{dataset}': the mirror's file {mirrored} does not match its "
                                   f"checksum (SHA-256 {actual}, expected {spec.sha256}); it was not used or "
                                   f"copied. Replace it with the verified file (see the mirror's MANIFEST.md), "
                                   f"or unset {MIRROR_ENV} to download it{url}")
            try:
                _atomic_copy(mirrored, cached, spec.sha256)
            except OSError:  # a read-only cache: the verified mirror file serves in place
                return mirrored, ""
            return cached, ""
    if not download:
        return None, "downloading is off"
    if not spec.urls:
        return None, "no download URL is configured"
    reasons = []
    for url in spec.urls:
        try:
            _download(url, cached, spec.sha256, dataset)
            return cached, ""
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reasons.append(f"{url}: {_reason(exc)}")
    return None, "download failed (" + "; ".join(reasons) + ")"


def _reason(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code}"
    if isinstance(exc, urllib.error.URLError):
        return str(exc.reason)
    return " ".join(str(exc).split()) or type(exc).__name__


def missing_files_error(dataset: str, missing: Sequence[tuple[FileSpec, str]], root: Path,
                        mirror_root: Path | None, download: bool) -> DatasetError:
    """One error for every file that is in neither the cache nor the mirror and could not be downloaded."""
    rels = [spec.rel for spec, _ in missing]
    where = f"not in the cache {root}"
    if mirror_root is None:
        where += (f", no mirror set ({MIRROR_ENV} is unset)" if not os.environ.get(MIRROR_ENV)
                  else f", no mirror used (paths.mirror=null; {MIRROR_ENV} is not read then)")
    else:
        where += f", not in the mirror {mirror_root}"
    why = sorted({reason for _, reason in missing})
    urls = [spec.urls[0] for spec, _ in missing if spec.urls]
    online = f"go online so forestlab downloads it (e.g. {urls[0]})" if urls and download else \
        "go online with downloading on (paths.download=true, or --download)"
    return DatasetError(
        f"dataset '{dataset}' needs {', '.join(rels)}: {where}, and {'; '.join(why)}. Provide it either way: "
        f"(1) set {MIRROR_ENV}=DIR to a folder holding DIR/{rels[0]} (the layout of ../shared/datasets, see "
        f"data/README.md), or (2) {online}, or place the file(s) yourself at {root}/{rels[0]}"
        + (" etc." if len(rels) > 1 else ""))


def configured_mirror(paths: Any) -> str | bool:
    """The mirror a composed configuration names. Its ``paths.mirror`` already reads ``$FORESTLAB_DATA_MIRROR``, so
    null there means "no mirror" (``paths.mirror=null`` given with the variable set): False, never the variable
    again."""
    value = paths.get("mirror")
    return str(value) if value not in (None, "") else False
