"""A user's own data file (``source.kind: file``): CSV (or any delimited text), ARFF or Parquet.

``source.path`` is absolute, ``~``-relative, or relative to the directory forestlab runs in (then to the data
folder). ``source.format`` is ``csv``, ``arff`` or ``parquet`` (default: from the file's suffix; ``.txt``,
``.data`` and ``.tsv`` are read as text). ``source.sha256``, when given, is checked before parsing. The target
column and the preprocessing are the same keys as for UCI files (see ``data/README.md``).

Text (CSV, ARFF) is read as UTF-8 (else Latin-1, as UCI files). A UTF-8 byte-order mark (EF BB BF) at the very start
of the file is an encoding marker, not data: it is removed before parsing (as Python's ``utf-8-sig``, pandas and
spreadsheet programs do), so it never glues itself to the first column's name or first value. A UTF-16 or UTF-32
byte-order mark is refused (save the file as UTF-8). Messages about cells name the file's line.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from forestlab.datasets._base import Dataset, require
from forestlab.datasets._fetch import sha256_file
from forestlab.datasets._table import Table, preprocess, table_from_frame
from forestlab.datasets._uci import parse_options, parse_text
from forestlab.errors import DatasetError

FORMATS = ("csv", "arff", "parquet")
FILE_NA_VALUES = ("?", "", "NA", "N/A", "NaN", "nan", "null", "None")
_SUFFIXES = {".csv": "csv", ".tsv": "csv", ".txt": "csv", ".data": "csv", ".dat": "csv", ".arff": "arff",
             ".parquet": "parquet", ".pq": "parquet"}
UTF8_BOM = b"\xef\xbb\xbf"
# Byte-order marks of encodings forestlab does not read (longest first: UTF-32 LE starts like UTF-16 LE).
_OTHER_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32 LE"), (b"\x00\x00\xfe\xff", "UTF-32 BE"), (b"\xff\xfe", "UTF-16 LE"),
               (b"\xfe\xff", "UTF-16 BE"))


def resolve_user_path(value: str, data_dir: str | os.PathLike[str]) -> Path:
    """The file a ``source.path`` names: as given (``~`` expanded, relative to the working directory), else
    relative to the data folder."""
    path = Path(os.path.expanduser(value))
    if path.is_absolute() or path.exists():
        return path.resolve()
    alt = Path(os.path.expanduser(str(data_dir))) / path
    return alt.resolve() if alt.exists() else path.resolve()


_fingerprints: dict[tuple[str, int, int], str] = {}
_fingerprints_lock = threading.Lock()


def file_fingerprint(cfg: Mapping[str, Any], data_dir: str | os.PathLike[str]) -> str | None:
    """The SHA-256 of the content of a ``file`` source, or None (another kind of source, or no readable file).

    The planner puts it in the dataset's identity (``source.content_sha256``), so a file edited or replaced after its
    runs were stored gets new run keys instead of its old results; :func:`load_file` checks it before parsing, so a
    run never reads content other than what its key says. The hash is recomputed only when the file's size or
    modification time changes (remembered in this process and in ``<data_dir>/processed/fingerprints.json``)."""
    source = cfg.get("source")
    if not isinstance(source, Mapping) or source.get("kind") != "file" or not source.get("path"):
        return None
    path = resolve_user_path(str(source["path"]), data_dir)
    try:
        st = path.stat()
    except OSError:
        return None
    if not path.is_file():
        return None
    key = (str(path), st.st_size, st.st_mtime_ns)
    with _fingerprints_lock:
        if key in _fingerprints:
            return _fingerprints[key]
    store = Path(os.path.expanduser(str(data_dir))) / "processed" / "fingerprints.json"
    try:
        known = json.loads(store.read_text())
    except (OSError, ValueError):
        known = {}
    entry = known.get(str(path)) if isinstance(known, dict) else None
    if isinstance(entry, list) and len(entry) == 3 and entry[:2] == [st.st_size, st.st_mtime_ns]:
        digest = str(entry[2])
    else:
        try:
            digest = sha256_file(path)
        except OSError:
            return None  # unreadable: the load says why, naming the file
        known = known if isinstance(known, dict) else {}
        known[str(path)] = [st.st_size, st.st_mtime_ns, digest]
        try:
            store.parent.mkdir(parents=True, exist_ok=True)
            tmp = store.with_name(f".{store.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(known, sort_keys=True))
            os.replace(tmp, store)
        except OSError:
            pass  # a read-only data folder: hashed again by the next process
    with _fingerprints_lock:
        _fingerprints[key] = digest
    return digest


def check_text(path: Path, name: str, probe: int = 8192) -> None:
    """Refuse a file given as text (CSV, ARFF) whose first bytes are not text: a NUL byte, or mostly control bytes
    (a spreadsheet, an archive, a renamed binary), before its bytes end up quoted as column names."""
    with open(path, "rb") as fh:
        head = fh.read(probe)
    if head.startswith(UTF8_BOM) or any(head.startswith(bom) for bom, _ in _OTHER_BOMS):
        return  # an encoding marker: text_without_bom deals with it
    control = sum(1 for b in head if b < 32 and b not in (9, 10, 12, 13))
    if b"\0" in head or (head and control / len(head) > 0.05):
        hint = " (an Excel workbook: export it as CSV)" if head[:4] == b"PK\x03\x04" else ""
        raise DatasetError(f"dataset '{name}': {path} is not a text file: its first bytes are binary data{hint}; "
                           "give a CSV, ARFF or Parquet file (set `source.format` for Parquet)")


@contextmanager
def text_without_bom(path: Path, name: str) -> Iterator[Path]:
    """The text file to parse: ``path`` itself, or a temporary copy without its leading UTF-8 byte-order mark.

    Refuses a file that starts with a UTF-16 or UTF-32 byte-order mark (it would be read as Latin-1 garbage).
    """
    with open(path, "rb") as fh:
        head = fh.read(4)
    for bom, encoding in _OTHER_BOMS:
        if head.startswith(bom):
            raise DatasetError(f"dataset '{name}': {path.name} is {encoding} text (it starts with the byte-order mark "
                               f"{bom.hex(' ').upper()}); forestlab reads UTF-8 or Latin-1 text: save it as UTF-8")
    if not head.startswith(UTF8_BOM):
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="forestlab-bom-") as tmp:
        copy = Path(tmp) / path.name
        copy.write_bytes(path.read_bytes()[len(UTF8_BOM):])
        yield copy


def data_line_numbers(path: Path, header: bool, comment: str | None) -> np.ndarray:
    """The 1-based line of each data row of a delimited text file, as ``parse_text`` selects them (blank and
    comment lines skipped, the header line dropped)."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    lines = [i + 1 for i, line in enumerate(text.splitlines())
             if line.strip() and not (comment and line.lstrip().startswith(comment))]
    return np.asarray(lines[1:] if header else lines, dtype=np.int64)


def read_arff(path: Path, name: str, label: str | None = None) -> Table:
    """An ARFF file as a table: numeric attributes as floats, nominal ones as strings (``?`` = missing)."""
    from scipy.io import arff

    try:
        data, meta = arff.loadarff(path)
    except (ValueError, NotImplementedError, arff.ArffError) as exc:
        raise DatasetError(f"dataset '{name}': cannot read ARFF file {label or path}: {exc}") from None
    names, columns = [], []
    for attr in meta.names():
        kind = meta[attr][0]
        values = data[attr]
        names.append(attr)
        if kind == "numeric":
            columns.append(np.asarray(values, dtype=np.float64))
        else:
            columns.append(np.array([v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in values],
                                    dtype=object))
    return Table(names=names, columns=columns, origin=label or path.name)


def _declared_na(cfg: Mapping[str, Any], name: str) -> list[str]:
    """The config's ``parse.na_values`` (text cells of ARFF and Parquet files that mean missing), or []."""
    if "na_values" not in (cfg.get("parse") or {}):
        return []
    return list(parse_options(cfg, name)["na_values"])


def load_file(cfg: Mapping[str, Any], *, name: str, data_dir: str | os.PathLike[str],
              mirror: str | os.PathLike[str] | None, download: bool,
              fresh: bool = False) -> tuple[Dataset, list[str]]:
    """Read, verify (when ``source.sha256`` is given) and preprocess a user's file."""
    source = cfg["source"]
    raw_path = str(require(source, "path", "source.", name))
    path = resolve_user_path(raw_path, data_dir)
    if path.is_dir():
        raise DatasetError(f"dataset '{name}': its file {raw_path} is a folder ({path}), not a data file; set "
                           "`source.path` in its config to the file itself")
    if not path.is_file():
        kind = "is not a regular file" if path.exists() else "does not exist"
        raise DatasetError(f"dataset '{name}': its file {raw_path} {kind} (looked for {path}); fix "
                           "`source.path` in its config (absolute, or relative to the directory forestlab runs in)")
    fmt = source.get("format") or _SUFFIXES.get(path.suffix.lower())
    if fmt not in FORMATS:
        raise DatasetError(f"dataset '{name}': cannot tell the format of {path.name}; set `source.format` to one "
                           f"of {', '.join(FORMATS)}")
    planned = source.get("content_sha256")  # set by the planner (file_fingerprint): what the run's key says
    if planned and sha256_file(path) != planned:
        raise DatasetError(f"dataset '{name}': {path} changed after its runs were planned (its SHA-256 is no longer "
                           f"{planned}); run the command again: the new content gets runs of its own")
    expected = source.get("sha256")
    if expected:
        actual = sha256_file(path)
        if actual != str(expected).lower():
            raise DatasetError(f"dataset '{name}': {path} has SHA-256 {actual}, but its config expects {expected}; "
                               "the file changed: restore it, or update `source.sha256` if the change is wanted")
    if fmt in ("csv", "arff"):
        check_text(path, name)
    if fmt == "csv":
        has_header = (cfg.get("parse") or {}).get("header", cfg.get("columns") is None)
        opts = parse_options({**cfg, "parse": {"na_values": list(FILE_NA_VALUES), "header": has_header,
                                               **(cfg.get("parse") or {})}}, name)
        sep = "\t" if path.suffix.lower() == ".tsv" and "sep" not in (cfg.get("parse") or {}) else opts["sep"]
        with text_without_bom(path, name) as text_path:
            table = parse_text(text_path, sep=sep, header=opts["header"], comment=opts["comment"],
                               columns=cfg.get("columns"), name=name, label=path.name)
            lines = data_line_numbers(text_path, opts["header"], opts["comment"])
        if len(lines) == table.n_rows:
            table.lines = lines
        na_values = opts["na_values"]
    elif fmt == "arff":
        with text_without_bom(path, name) as text_path:
            table = read_arff(text_path, name, label=path.name)
        na_values = ["?", *_declared_na(cfg, name)]
    else:
        import pandas as pd

        try:
            frame = pd.read_parquet(path)
        except (ImportError, ValueError, OSError) as exc:
            raise DatasetError(f"dataset '{name}': cannot read Parquet file {path}: {exc}") from None
        table, na_values = table_from_frame(frame, path.name), _declared_na(cfg, name) or list(FILE_NA_VALUES)
    return preprocess(cfg, table, name=name, na_values=na_values), [str(path)]
