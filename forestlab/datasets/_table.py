"""Turn a table of raw columns into a :class:`Dataset`, as the dataset config says.

Shared by every tabular source (UCI text files, a user's CSV/ARFF/Parquet file, OpenML, scikit-learn's bundled
sets). The steps, in order (the config keys are documented in ``data/README.md``):

1. ``drop``: remove columns (ids, names, flags);
2. ``target``: take the label column; for binary tasks keep only the rows whose label is listed in
   ``positive``/``negative`` when ``negative`` is given (e.g. two letters out of 26);
3. ``missing``: per attribute kind, rows with a missing value are dropped, or the value is imputed (numeric:
   the column median) or becomes a category of its own (categorical: the last code);
4. ``categorical``: nominal attributes become integer codes 0..k-1 in sorted order of their values (numeric
   order when every value is a number), or in the order given by ``category_order``; a column that holds only
   non-numbers (text) is categorical even if not listed;
5. labels, over the rows kept: binary → -1/+1 (+1 = ``positive``, or below ``positive_below``), multiclass →
   codes 0..k-1 in sorted (or ``classes``) order.

Data are read as written or refused, never silently changed (each refusal is one :class:`DatasetError` line that
names the dataset, the file, the column and the first offending rows with their values):

- a column that is not listed as categorical and mixes numbers with cells that are neither numbers nor declared
  missing markers (``parse.na_values``) is refused, not turned into ordinal codes of its strings;
- a non-finite number (``inf``, ``-inf``, or ``nan`` when it is not a declared missing marker) in a numeric column
  is refused (in a float column of a Parquet or ARFF file, NaN is that format's missing value, so the ``missing``
  policy applies to it);
- a binary task whose label column has more than two labels needs the mapping spelled out: ``target.positive``
  listing several labels (every other label is -1) or ``target.negative``; a single positive label facing two or
  more other labels is refused;
- every class needs at least :data:`~forestlab.datasets._base.MIN_ROWS_PER_CLASS` rows (checked by
  :func:`~forestlab.datasets._base.check_learnable`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from forestlab._values import is_int
from forestlab.datasets._base import TASKS, Dataset, as_list, check_learnable, check_shape, make_dataset
from forestlab.errors import DatasetError

DEFAULT_NA_VALUES = ("?",)
MISSING_TOKEN = "\x00NA"  # what a missing value of a data frame's text column becomes (always "missing")
_CAT_POLICIES = ("error", "drop", "category")
_NUM_POLICIES = ("error", "drop", "median")
#: How many offending cells a refusal quotes.
_SHOW_CELLS = 5


@dataclass
class Table:
    """Raw columns: each an array of stripped string tokens (str or object dtype), or float64 (NaN = missing).

    ``lines``, when known, holds the 1-based line of the source file each row was read from (for messages).
    """

    names: list[str]
    columns: list[np.ndarray]
    origin: str
    lines: np.ndarray | None = None

    @property
    def n_rows(self) -> int:
        return len(self.columns[0]) if self.columns else 0

    def take(self, rows: np.ndarray) -> Table:
        lines = None if self.lines is None else self.lines[rows]
        return Table(self.names, [c[rows] for c in self.columns], self.origin, lines)

    def where(self, rows: np.ndarray) -> list[str]:
        """How messages name the given rows (indices into this table): ``line N`` of the file when known, else
        ``row N`` (1-based, data rows only)."""
        if self.lines is not None and len(self.lines) == self.n_rows:
            return [f"line {int(self.lines[r])}" for r in rows]
        return [f"row {int(r) + 1}" for r in rows]


def show_name(text: str) -> str:
    """A column name or value for a message: as is when plain, else its repr (so that a byte-order mark, a control
    character or stray white space is visible)."""
    return text if text.isprintable() and text == text.strip() and text else repr(text)


def norm_token(value: Any) -> str:
    """Canonical text of a label or category: stripped, and integral numbers without decimals ("4.0" → "4")."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer():
        return str(int(value))
    if is_int(value):
        return str(int(value))
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        return text
    if math.isfinite(number) and number.is_integer() and text.lstrip("+-").replace(".", "", 1).isdigit():
        return str(int(number))
    return text


def _as_number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def sorted_values(values: Sequence[str]) -> list[str]:
    """Distinct values in sorted order: numeric order when all are numbers, else string order."""
    distinct = set(values)
    numbers = {v: _as_number(v) for v in distinct}
    if all(n is not None for n in numbers.values()):
        return sorted(distinct, key=lambda v: (numbers[v], v))
    return sorted(distinct)


def _missing_mask(col: np.ndarray, na_values: set[str]) -> np.ndarray:
    if col.dtype.kind == "f":
        return np.isnan(col)
    return np.isin(col, sorted(na_values))


def _parse_float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _column_is_categorical(table: Table, rows: np.ndarray, column: str, col: np.ndarray, missing: np.ndarray,
                           name: str) -> bool:
    """Whether an attribute that the config does not list as categorical is one: True for a text column (no cell
    is a number); False for a numeric one. Refuses (DatasetError) a column that mixes numbers with other cells, and
    non-finite numbers. ``rows`` are the table rows of ``col``'s cells (for messages)."""
    if col.dtype.kind == "f":
        bad = ~missing & ~np.isfinite(col)
        if bad.any():
            _refuse_cells(table, rows, column, col, bad, name, "non-finite number",
                          "forestlab uses finite numbers only and does not replace them; correct the file (a "
                          "missing value is a null or NaN in a numeric column of a Parquet or ARFF file)")
        return False
    if not (~missing).any():
        return False
    uniq, inverse = np.unique(np.asarray(col[~missing], dtype=str), return_inverse=True)
    parsed = [_parse_float(u) for u in uniq]
    is_finite = np.array([v is not None and math.isfinite(v) for v in parsed])
    if not is_finite.any():
        return True  # a text column (no cell is a number; "NaN" or "inf" among words are words): categories
    is_number = np.array([v is not None for v in parsed])
    present = np.flatnonzero(~missing)
    cell_number, cell_finite = is_number[inverse.reshape(-1)], is_finite[inverse.reshape(-1)]
    if not cell_number.all():
        bad = np.zeros(len(col), dtype=bool)
        bad[present[~cell_number]] = True
        _refuse_cells(table, rows, column, col, bad, name, "non-numeric cell",
                      f"its other {int(cell_number.sum())} cells are numbers, and forestlab does not turn a numeric "
                      "column into categories by itself: list the values that mean 'missing' under "
                      "`parse.na_values`, list the column under `categorical:` if it is nominal, or correct the "
                      "file")
    if not cell_finite.all():
        bad = np.zeros(len(col), dtype=bool)
        bad[present[~cell_finite]] = True
        _refuse_cells(table, rows, column, col, bad, name, "non-finite number", _NONFINITE_FIX)
    return False


_NONFINITE_FIX = ("forestlab uses finite numbers only and does not replace them; correct the file, or list the "
                  "value under `parse.na_values` if it means 'missing'")


def _refuse_cells(table: Table, rows: np.ndarray, column: str, col: np.ndarray, bad: np.ndarray, name: str,
                  what: str, fix: str) -> None:
    """Raise the one-line DatasetError that names the column, how many cells are bad and the first few of them."""
    idx = np.flatnonzero(bad)
    shown = idx[:_SHOW_CELLS]
    values = [repr(float(col[i])) if col.dtype.kind == "f" else repr(str(col[i])) for i in shown]
    cells = ", ".join(f"{w}: {v}" for w, v in zip(table.where(rows[shown]), values, strict=True))
    more = ", ..." if len(idx) > len(shown) else ""
    plural = "s" if len(idx) > 1 else ""
    raise DatasetError(f"dataset '{name}': column {column!r} of {table.origin} has {len(idx)} {what}{plural} "
                       f"({cells}{more}); {fix}")


def _to_tokens(col: np.ndarray) -> np.ndarray:
    """Categorical values as strings (float columns → "3", "2.5")."""
    if col.dtype.kind == "f":
        return np.array([norm_token(v) for v in col], dtype=object)
    return col


def _normalise(tokens: np.ndarray, strip: str = "") -> np.ndarray:
    """:func:`norm_token` of every token (computed once per distinct value)."""
    if len(tokens) == 0:
        return np.array([], dtype=object)
    uniq, inverse = np.unique(np.asarray(tokens, dtype=str), return_inverse=True)
    normed = np.array([norm_token(u.rstrip(strip) if strip else u) for u in uniq], dtype=object)
    return normed[inverse.reshape(-1)]


def table_from_frame(frame: Any, origin: str) -> Table:
    """A :class:`Table` from a pandas DataFrame: numeric and boolean columns as float64 (NaN = missing), the
    others as strings (missing values become :data:`MISSING_TOKEN`)."""
    import pandas as pd

    names, columns = [], []
    for col in frame.columns:
        series = frame[col]
        names.append(str(col))
        if pd.api.types.is_bool_dtype(series) or pd.api.types.is_numeric_dtype(series):
            columns.append(series.astype("float64").to_numpy(dtype=np.float64, na_value=np.nan))
        else:
            missing = series.isna().to_numpy()
            text = np.array([str(v).strip() for v in series.astype(object).to_numpy()], dtype=object)
            text[missing] = MISSING_TOKEN
            columns.append(text)
    return Table(names=names, columns=columns, origin=origin)


def missing_policy(cfg: Mapping[str, Any], name: str) -> tuple[str, str]:
    """(categorical policy, numeric policy) from the config's ``missing`` key."""
    value = cfg.get("missing")
    if value is None:
        return "error", "error"
    if isinstance(value, str):
        shorthand = {"error": ("error", "error"), "drop": ("drop", "drop"), "category": ("category", "error")}
        if value not in shorthand:
            raise DatasetError(f"dataset '{name}': `missing: {value}` is not one of error, drop, category, or a "
                               "mapping {categorical: error|drop|category, numeric: error|drop|median}")
        return shorthand[value]
    if not isinstance(value, Mapping) or set(value) - {"categorical", "numeric"}:
        raise DatasetError(f"dataset '{name}': `missing` must be error, drop, category, or a mapping with keys "
                           "categorical (error|drop|category) and numeric (error|drop|median)")
    cat, num = str(value.get("categorical", "error")), str(value.get("numeric", "error"))
    if cat not in _CAT_POLICIES:
        raise DatasetError(f"dataset '{name}': `missing.categorical` must be one of {', '.join(_CAT_POLICIES)}")
    if num not in _NUM_POLICIES:
        raise DatasetError(f"dataset '{name}': `missing.numeric` must be one of {', '.join(_NUM_POLICIES)}")
    return cat, num


def preprocess(cfg: Mapping[str, Any], table: Table, *, name: str, na_values: Sequence[str] | None = None,
               check: bool = True) -> Dataset:
    """Apply the config's preprocessing to ``table`` (see the module docstring) and check the result's shape.

    Parameters
    ----------
    cfg : mapping
        The dataset config (keys ``task``, ``target``, ``drop``, ``categorical``, ``category_order``,
        ``missing``, ``shape``).
    table : Table
        The raw columns.
    name : str
        The dataset's name, for messages and the result.
    na_values : sequence of str, optional
        Tokens that mean "missing" in string columns (default ``("?",)``).
    check : bool
        Compare the result's shape with ``cfg["shape"]``.
    """
    task = cfg.get("task")
    if task not in TASKS:
        raise DatasetError(f"dataset '{name}': `task` must be binary or multiclass, got {task!r}")
    na = set(DEFAULT_NA_VALUES if na_values is None else (str(v) for v in na_values)) | {MISSING_TOKEN}
    names = list(table.names)
    if len(set(names)) != len(names):
        dupes = sorted({n for n in names if names.count(n) > 1})
        raise DatasetError(f"dataset '{name}': duplicate column names {dupes} in {table.origin}")

    def index_of(col: Any, key: str) -> int:
        if str(col) not in names:
            raise DatasetError(f"dataset '{name}': `{key}` names column {col!r}, which {table.origin} does not "
                               f"have; its columns are: {', '.join(show_name(n) for n in names)}")
        return names.index(str(col))

    # 1. drop columns
    drop = {index_of(c, "drop") for c in as_list(cfg.get("drop"))}
    # 2. target
    target = cfg.get("target")
    if isinstance(target, str):
        target = {"column": target}
    if not isinstance(target, Mapping) or "column" not in target:
        raise DatasetError(f"dataset '{name}': `target` must be a mapping with at least `column` "
                           "(see data/README.md)")
    t_idx = index_of(target["column"], "target.column")
    if t_idx in drop:
        raise DatasetError(f"dataset '{name}': the target column {target['column']!r} is also in `drop`")
    raw_labels = table.columns[t_idx]
    label_missing = _missing_mask(raw_labels, na)
    if label_missing.any():
        raise DatasetError(f"dataset '{name}': {int(label_missing.sum())} rows of {table.origin} have no label "
                           f"(column {target['column']!r}); remove them from the file")
    strip = str(target.get("strip") or "")
    labels = _normalise(_to_tokens(raw_labels), strip)
    keep = _label_rows(task, target, labels, name, table.origin)
    feat_idx = [i for i in range(len(names)) if i != t_idx and i not in drop]
    columns = [table.columns[i][keep] for i in feat_idx]
    feat_names = [names[i] for i in feat_idx]
    labels = labels[keep]
    rows = np.flatnonzero(keep)  # the table row of each row kept (for messages)

    # which attributes are categorical
    cat_cfg = cfg.get("categorical")
    if cat_cfg == "all":
        listed = set(feat_names)
    else:
        listed = {str(c) for c in as_list(cat_cfg)}
        for c in listed:
            index_of(c, "categorical")
        bad = listed - set(feat_names)
        if bad:
            raise DatasetError(f"dataset '{name}': `categorical` lists {sorted(bad)}, which are dropped or the "
                               "target")
    orders = cfg.get("category_order") or {}
    if not isinstance(orders, Mapping):
        raise DatasetError(f"dataset '{name}': `category_order` must map a column to its list of values")
    for c in orders:
        if str(c) not in feat_names:
            raise DatasetError(f"dataset '{name}': `category_order` names {c!r}, which is not an attribute")

    # 3. missing values
    cat_policy, num_policy = missing_policy(cfg, name)
    missing = [_missing_mask(c, na) for c in columns]
    is_cat = [fn in listed or _column_is_categorical(table, rows, fn, c, m, name)
              for fn, c, m in zip(feat_names, columns, missing, strict=True)]
    drop_rows = np.zeros(len(labels), dtype=bool)
    for fn, col, m, cat in zip(feat_names, columns, missing, is_cat, strict=True):
        if not m.any():
            continue
        policy = cat_policy if cat else num_policy
        if policy == "error":
            kind = "categorical" if cat else "numeric"
            options = "drop|category" if cat else "drop|median"
            markers = ("NaN or null" if col.dtype.kind == "f"
                       else "/".join(repr(v) for v in sorted(na - {MISSING_TOKEN})))
            raise DatasetError(f"dataset '{name}': {kind} column {fn!r} has {int(m.sum())} missing values "
                               f"({markers or 'empty'}) in {table.origin}; say what to do with them in its "
                               f"config: `missing: {{{kind}: {options}}}`")
        if policy == "drop":
            drop_rows |= m
    if drop_rows.any():
        keep_rows = ~drop_rows
        columns = [c[keep_rows] for c in columns]
        missing = [m[keep_rows] for m in missing]
        labels = labels[keep_rows]
    if len(labels) == 0:
        raise DatasetError(f"dataset '{name}': no row is left after preprocessing {table.origin}")

    # 4. numeric conversion, imputation and categorical codes
    X = np.empty((len(labels), len(columns)), dtype=np.float64)
    for j, (fn, col, m, cat) in enumerate(zip(feat_names, columns, missing, is_cat, strict=True)):
        if cat:
            X[:, j] = _codes(_to_tokens(col), m, orders.get(fn), name, fn)
            continue
        values = np.full(len(col), np.nan)
        values[~m] = col[~m].astype(np.float64)
        if m.any():  # only "median" gets here: "drop" removed the rows
            values[m] = float(np.median(values[~m]))
        X[:, j] = values

    # 5. labels, over the rows kept (a threshold such as max(mpg)/2 too); every class needs enough rows
    y, classes = _encode_labels(task, target, labels, name)
    check_learnable(name, y, task, classes, table.origin)
    if check:
        check_shape(name, X, cfg.get("shape"), table.origin)
    return make_dataset(name, X, y, task, feat_names, classes, is_cat)


def _codes(tokens: np.ndarray, missing: np.ndarray, order: Any, name: str, column: str) -> np.ndarray:
    """Integer codes of a categorical column: sorted (or configured) order; missing values get the last code.

    Sorted order is zirakiza2013's coding example (1 = carré, 2 = circulaire, 3 = rectangulaire), from 0; that
    example does not place the missing marker, which a literal alphabetical reading would code first ('?' sorts
    before letters): see experiments/zirakiza2013/README.md, Protocol choices.
    """
    uniq, inverse = np.unique(np.asarray(tokens[~missing], dtype=str), return_inverse=True)
    normed = [norm_token(u) for u in uniq]
    distinct = sorted_values(normed)
    if order is not None:
        values = [norm_token(v) for v in as_list(order)]
        unknown = sorted(set(distinct) - set(values))
        if unknown:
            raise DatasetError(f"dataset '{name}': column {column!r} has values {unknown} that its "
                               f"`category_order` does not list")
    else:
        values = distinct
    mapping = {v: float(i) for i, v in enumerate(values)}
    out = np.full(len(tokens), float(len(values)))  # missing: a category of its own, after the others
    out[~missing] = np.array([mapping[v] for v in normed], dtype=np.float64)[inverse.reshape(-1)]
    return out


def _label_rows(task: str, target: Mapping[str, Any], labels: np.ndarray, name: str,
                origin: str = "the file") -> np.ndarray:
    """Rows whose label takes part: for a binary task with ``negative`` given, those labelled positive or
    negative; otherwise all. Also checks ``positive``/``negative`` against the labels present, and refuses a
    binary target of three or more labels whose mapping onto two classes the config does not spell out (a single
    ``positive`` label and no ``negative``)."""
    if task != "binary" or target.get("positive_below") is not None:
        return np.ones(len(labels), dtype=bool)
    present = set(labels.tolist())
    col = target["column"]
    if target.get("positive") is None:
        raise DatasetError(f"dataset '{name}': a binary task needs `target.positive` (the label(s) of the +1 "
                           f"class); the labels of column {col!r} are: {', '.join(sorted_values(present)[:30])}")
    positive = [norm_token(v) for v in as_list(target["positive"])]
    negative = [norm_token(v) for v in as_list(target.get("negative"))]
    for key, wanted in (("positive", positive), ("negative", negative)):
        if wanted and not set(wanted) & present:  # one listed label absent from the data is fine; all absent: a typo
            raise DatasetError(f"dataset '{name}': `target.{key}` lists {wanted}, none of which is a label of "
                               f"column {col!r}; its labels are: {', '.join(sorted_values(present)[:30])}")
    if set(positive) & set(negative):
        raise DatasetError(f"dataset '{name}': a label is both positive and negative")
    if not negative and len(set(positive)) == 1 and len(present - set(positive)) >= 2:
        others = sorted_values(present - set(positive))
        shown = ", ".join(show_name(v) for v in others[:10]) + (", ..." if len(others) > 10 else "")
        raise DatasetError(f"dataset '{name}': column {col!r} of {origin} has {len(present)} labels but the task is "
                           f"binary and `target.positive` names one ({show_name(positive[0])}); forestlab does not "
                           f"merge the others ({shown}) into one class by itself: list the -1 labels under "
                           "`target.negative` (rows with other labels are dropped), list several labels under "
                           "`target.positive`, or set `task: multiclass`")
    if not negative:
        return np.ones(len(labels), dtype=bool)
    return np.isin(labels, positive + negative)


def _encode_labels(task: str, target: Mapping[str, Any], labels: np.ndarray,
                   name: str) -> tuple[np.ndarray, tuple[str, ...]]:
    """(y, classes) from the normalised labels of the rows kept."""
    present = sorted_values(labels.tolist())
    col = target["column"]
    if task == "multiclass":
        if target.get("classes") is not None:
            classes = [norm_token(c) for c in as_list(target["classes"])]
            unknown = sorted(set(present) - set(classes))
            if unknown:
                raise DatasetError(f"dataset '{name}': labels {unknown} of column {col!r} are not in "
                                   "`target.classes`")
        else:
            classes = present
        if len(classes) < 2:
            raise DatasetError(f"dataset '{name}': a multiclass task needs at least 2 classes, got {classes}")
        index = {c: i for i, c in enumerate(classes)}
        return np.array([index[v] for v in labels], dtype=np.int64), tuple(classes)
    if target.get("positive_below") is not None:
        return _threshold_labels(target, labels, name)
    positive = [v for v in (norm_token(p) for p in as_list(target["positive"])) if v in set(present)]
    negative = [v for v in (norm_token(n) for n in as_list(target.get("negative"))) if v in set(present)]
    negative = negative or [v for v in present if v not in set(positive)]
    y = np.where(np.isin(labels, positive), 1, -1).astype(np.int64)
    return y, ("|".join(negative), "|".join(positive))


def _threshold_labels(target: Mapping[str, Any], labels: np.ndarray,
                      name: str) -> tuple[np.ndarray, tuple[str, ...]]:
    """Binary labels from a numeric target: +1 when the value is below a threshold."""
    col = target["column"]
    try:
        values = np.array([float(v) for v in labels])
    except ValueError:
        raise DatasetError(f"dataset '{name}': `target.positive_below` needs numeric labels in column "
                           f"{col!r}") from None
    rule = target["positive_below"]
    if isinstance(rule, Mapping):
        if set(rule) != {"fraction_of_max"}:
            raise DatasetError(f"dataset '{name}': `target.positive_below` is a number or "
                               "{fraction_of_max: F}")
        threshold = float(rule["fraction_of_max"]) * float(values.max())
    else:
        threshold = float(rule)
    y = np.where(values < threshold, 1, -1).astype(np.int64)
    return y, (f"{col} >= {threshold:g}", f"{col} < {threshold:g}")
