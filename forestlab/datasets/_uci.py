"""UCI-style text tables: a small, strict parser and the ``uci`` source.

The files are read as the UCI archive distributes them (no edits): comma- or whitespace-separated, optional header
or comment lines at the top of a file (``skip_lines``), ``"`` quoting (auto-mpg's car names), CRLF or LF line
endings, blank lines ignored. Every row must have the same number of fields, or the error names the file and line.
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from forestlab.datasets._base import Dataset, as_list, require
from forestlab.datasets._fetch import FileSpec, fetch_files
from forestlab.datasets._table import Table, preprocess
from forestlab.errors import DatasetError

_WS_FIELD = re.compile(r'"[^"]*"|\S+')


def _split_lines(lines: Sequence[str], sep: str) -> list[list[str]]:
    if sep == "whitespace":
        return [[f[1:-1] if len(f) >= 2 and f[0] == f[-1] == '"' else f for f in _WS_FIELD.findall(line)]
                for line in lines]
    if len(sep) != 1:
        raise ValueError(f"sep must be one character or 'whitespace', got {sep!r}")
    return [[f.strip() for f in row] for row in csv.reader(lines, delimiter=sep, skipinitialspace=True)]


def _fast_cells(lines: Sequence[str], sep: str, width: int) -> np.ndarray | None:
    """The (rows, width) array of stripped fields when the fast path applies (a one-character separator, no
    quotes, every line with ``width`` fields), else None."""
    if sep == "whitespace" or len(sep) != 1 or any('"' in line for line in lines):
        return None
    if any(line.count(sep) != width - 1 for line in lines):
        return None
    cells = np.array(sep.join(lines).split(sep), dtype=str)
    return np.strings.strip(cells).reshape(len(lines), width)


def parse_text(path: str | os.PathLike[str], *, sep: str = ",", header: bool = False, skip_lines: int = 0,
               comment: str | None = None, columns: Sequence[str] | None = None, name: str = "",
               label: str | None = None) -> Table:
    """Read a delimited text file into a :class:`Table` of stripped string tokens.

    Parameters
    ----------
    path : path
        The file.
    sep : str
        A one-character separator, or ``"whitespace"`` for runs of spaces and tabs.
    header : bool
        The first line (after ``skip_lines``) holds the column names.
    skip_lines : int
        Lines ignored at the top of the file (comments, a header that is not column names).
    comment : str, optional
        Lines starting with this prefix are ignored.
    columns : sequence of str, optional
        Column names; required unless ``header`` is true (they win over the header's names).
    name : str
        The dataset, for messages.
    label : str, optional
        How to call the file in messages (default: its name).
    """
    path = Path(path)
    label = label or path.name
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    numbered = [(i + 1, line) for i, line in enumerate(text.splitlines())][skip_lines:]
    numbered = [(n, line) for n, line in numbered
                if line.strip() and not (comment and line.lstrip().startswith(comment))]
    if header:
        if not numbered:
            raise DatasetError(f"dataset '{name}': {label} has no header line")
        head = _split_lines([numbered[0][1]], sep)[0]
        numbered = numbered[1:]
        names = list(columns) if columns is not None else head
    else:
        if columns is None:
            raise DatasetError(f"dataset '{name}': its config must name the columns of {label} (`columns:`), "
                               "or set `parse: {header: true}` when the file's first line holds them")
        names = list(columns)
    if not numbered:
        raise DatasetError(f"dataset '{name}': {label} holds no data rows")
    lines = [line for _, line in numbered]
    width = len(names)
    try:
        cells = _fast_cells(lines, sep, width)
        if cells is None:
            rows = _split_lines(lines, sep)
            for (line_no, _), row in zip(numbered, rows, strict=True):
                if len(row) != width:
                    raise DatasetError(f"dataset '{name}': {label} line {line_no} has {len(row)} fields, expected "
                                       f"{width} (the config's columns: {', '.join(names[:6])}"
                                       f"{', ...' if width > 6 else ''})")
            cells = np.array(rows, dtype=str).reshape(len(rows), width)
    except (ValueError, csv.Error) as exc:
        raise DatasetError(f"dataset '{name}': cannot parse {label}: {exc}") from None
    cols = [np.ascontiguousarray(cells[:, j]) for j in range(width)]
    return Table(names=[str(n) for n in names], columns=cols, origin=label)


def concat(tables: Sequence[Table]) -> Table:
    """Rows of several tables with the same columns, in order."""
    first = tables[0]
    for t in tables[1:]:
        if t.names != first.names:
            raise DatasetError(f"{t.origin} does not have the columns of {first.origin}")
    if len(tables) == 1:
        return first
    cols = [np.concatenate([t.columns[j] for t in tables]) for j in range(len(first.names))]
    return Table(first.names, cols, " + ".join(t.origin for t in tables))


def parse_options(cfg: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The ``parse:`` block with its defaults (sep ",", no header, na_values ["?"], no comment prefix)."""
    opts = dict(cfg.get("parse") or {})
    unknown = set(opts) - {"sep", "header", "na_values", "comment"}
    if unknown:
        raise DatasetError(f"dataset '{name}': unknown `parse` keys {sorted(unknown)}; valid: sep, header, "
                           "na_values, comment")
    return {"sep": str(opts.get("sep", ",")), "header": bool(opts.get("header", False)),
            "na_values": [str(v) for v in as_list(opts.get("na_values", ["?"]))],
            "comment": opts.get("comment")}


def _uci_files(cfg: Mapping[str, Any], name: str) -> tuple[list[FileSpec], list[Mapping[str, Any]]]:
    source = cfg["source"]
    folder = str(require(source, "folder", "source.", name)).strip("/")
    files = require(source, "files", "source.", name)
    if not isinstance(files, list) or not files:
        raise DatasetError(f"dataset '{name}': `source.files` must be a non-empty list of {{name, sha256}}")
    bases = [str(u) for u in as_list(source.get("url"))]
    specs, entries = [], []
    for i, entry in enumerate(files):
        if isinstance(entry, str) or not isinstance(entry, Mapping):
            raise DatasetError(f"dataset '{name}': `source.files[{i}]` must be a mapping {{name, sha256}}")
        fname = str(require(entry, "name", f"source.files[{i}].", name))
        sha = str(require(entry, "sha256", f"source.files[{i}].", name)).lower()
        urls = as_list(entry.get("url")) or [b.rstrip("/") + "/" + fname for b in bases]
        specs.append(FileSpec(rel=f"uci/{folder}/{fname}", sha256=sha, urls=tuple(str(u) for u in urls)))
        entries.append(entry)
    return specs, entries


def uci_files(cfg: Mapping[str, Any], name: str) -> list[str]:
    """Relative paths (``uci/<folder>/<file>``) of the files of a ``uci`` source."""
    return [s.rel for s in _uci_files(cfg, name)[0]]


def load_uci(cfg: Mapping[str, Any], *, name: str, data_dir: str | os.PathLike[str],
             mirror: str | os.PathLike[str] | None, download: bool,
             fresh: bool = False) -> tuple[Dataset, list[str]]:
    """Fetch, verify, parse and preprocess a ``uci`` source; returns the dataset and the files used."""
    specs, entries = _uci_files(cfg, name)
    paths = fetch_files(name, specs, data_dir=data_dir, mirror=mirror, download=download)
    opts = parse_options(cfg, name)
    columns = cfg.get("columns")
    tables = [parse_text(path, sep=opts["sep"], header=opts["header"], comment=opts["comment"],
                         skip_lines=int(entry.get("skip_lines", 0)), columns=columns, name=name,
                         label=spec.rel)
              for path, spec, entry in zip(paths, specs, entries, strict=True)]
    ds = preprocess(cfg, concat(tables), name=name, na_values=opts["na_values"])
    return ds, [s.rel for s in specs]
