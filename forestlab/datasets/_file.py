"""A user's own data file (``source.kind: file``): CSV (or any delimited text), ARFF or Parquet.

``source.path`` is absolute, ``~``-relative, or relative to the directory forestlab runs in (then to the data
folder). ``source.format`` is ``csv``, ``arff`` or ``parquet`` (default: from the file's suffix; ``.txt``,
``.data`` and ``.tsv`` are read as text). ``source.sha256``, when given, is checked before parsing. The target
column and the preprocessing are the same keys as for UCI files (see ``data/README.md``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
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


def resolve_user_path(value: str, data_dir: str | os.PathLike[str]) -> Path:
    """The file a ``source.path`` names: as given (``~`` expanded, relative to the working directory), else
    relative to the data folder."""
    path = Path(os.path.expanduser(value))
    if path.is_absolute() or path.exists():
        return path.resolve()
    alt = Path(os.path.expanduser(str(data_dir))) / path
    return alt.resolve() if alt.exists() else path.resolve()


def read_arff(path: Path, name: str) -> Table:
    """An ARFF file as a table: numeric attributes as floats, nominal ones as strings (``?`` = missing)."""
    from scipy.io import arff

    try:
        data, meta = arff.loadarff(path)
    except (ValueError, NotImplementedError, arff.ArffError) as exc:
        raise DatasetError(f"dataset '{name}': cannot read ARFF file {path}: {exc}") from None
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
    return Table(names=names, columns=columns, origin=path.name)


def load_file(cfg: Mapping[str, Any], *, name: str, data_dir: str | os.PathLike[str],
              mirror: str | os.PathLike[str] | None, download: bool,
              fresh: bool = False) -> tuple[Dataset, list[str]]:
    """Read, verify (when ``source.sha256`` is given) and preprocess a user's file."""
    source = cfg["source"]
    raw_path = str(require(source, "path", "source.", name))
    path = resolve_user_path(raw_path, data_dir)
    if not path.is_file():
        raise DatasetError(f"dataset '{name}': its file {raw_path} does not exist (looked for {path}); fix "
                           "`source.path` in its config (absolute, or relative to the directory forestlab runs in)")
    fmt = source.get("format") or _SUFFIXES.get(path.suffix.lower())
    if fmt not in FORMATS:
        raise DatasetError(f"dataset '{name}': cannot tell the format of {path.name}; set `source.format` to one "
                           f"of {', '.join(FORMATS)}")
    expected = source.get("sha256")
    if expected:
        actual = sha256_file(path)
        if actual != str(expected).lower():
            raise DatasetError(f"dataset '{name}': {path} has SHA-256 {actual}, but its config expects {expected}; "
                               "the file changed: restore it, or update `source.sha256` if the change is wanted")
    if fmt == "csv":
        has_header = (cfg.get("parse") or {}).get("header", cfg.get("columns") is None)
        opts = parse_options({**cfg, "parse": {"na_values": list(FILE_NA_VALUES), "header": has_header,
                                               **(cfg.get("parse") or {})}}, name)
        sep = "\t" if path.suffix.lower() == ".tsv" and "sep" not in (cfg.get("parse") or {}) else opts["sep"]
        table = parse_text(path, sep=sep, header=opts["header"], comment=opts["comment"],
                           columns=cfg.get("columns"), name=name, label=path.name)
        na_values = opts["na_values"]
    elif fmt == "arff":
        table, na_values = read_arff(path, name), ["?"]
    else:
        import pandas as pd

        try:
            frame = pd.read_parquet(path)
        except (ImportError, ValueError, OSError) as exc:
            raise DatasetError(f"dataset '{name}': cannot read Parquet file {path}: {exc}") from None
        table, na_values = table_from_frame(frame, path.name), list(FILE_NA_VALUES)
    return preprocess(cfg, table, name=name, na_values=na_values), [str(path)]
