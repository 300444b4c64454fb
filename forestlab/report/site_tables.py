"""What the report's study pages add around each table, beside the numbers of :mod:`forestlab.report.model`: headers
in words with the metric's direction, the files a reader downloads (CSV and LaTeX of the reproduced table and of
published vs reproduced), the per-seed (per-fold) values behind each row, the facts of the datasets a table uses,
and the natural order of a study's tables (Table 7.1 before 7.2 before 7.10, figures and tables of a chapter
together, appendix tables A.1... last).

Like the rest of the report it only reads: dataset facts come from what the runs recorded (rows, features, the
train and test sizes of each run) and from the dataset's config (its task, its declared shape and its study's
split sizes), never from a data file.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from forestlab.metrics import direction
from forestlab.report.model import Comparison, Layout, TableModel, fmt_number
from forestlab.report.tables import to_latex
from forestlab.results import ExperimentResults

__all__ = ["arrow", "dataset_facts", "header_words", "natural_key", "runs_page", "table_downloads"]

UP, DOWN = "↑", "↓"


def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", str(text)).strip("-") or "x"


def page(title: str, body: str, *, root: str = "", shrunk: Any = None, footer: str = "", script: bool = False) -> str:
    """One page of the site: ``root`` leads back to the site's root from the page's folder ("" or "../"); a report
    of shrunk runs (``shrunk``: their :class:`~forestlab.spec.Shrunk`) is bannered on every page; ``script``: the
    sorting script, loaded last (the page reads the same without it)."""
    banner = "" if shrunk is None else \
        f'<p class="smoke-banner">{code_spans(html.escape(shrunk.banner, quote=False))}</p>'  # shrunk runs' words
    foot = f"<footer>{footer}</footer>\n" if footer else ""
    tail = f'<script src="{root}assets/sort.js"></script>\n' if script else ""
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="{root}assets/report.css">
</head>
<body>
<header class="top"><a href="{root}index.html">forestlab reproduction report</a></header>
<main>
{banner}{body}
</main>
{foot}{tail}</body>
</html>
"""


def code_spans(text: str) -> str:
    """`code` spans of a configured sentence as <code> (the text already escaped)."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", text)


# -- headers ------------------------------------------------------------------------------------------------------
def arrow(metric: str | None) -> str:
    """'↑' when higher is better for ``metric``, '↓' when lower is, '' when forestlab does not know."""
    up = direction(metric) if metric else None
    return "" if up is None else UP if up else DOWN


def words(name: str) -> str:
    """A stored name in words: 'test_risk' -> 'test risk'."""
    return str(name).replace("_", " ")


def header_words(layout: Layout) -> dict[str, str]:
    """The display header of each column of ``layout`` (:meth:`TableModel.display`) -> the same in words, with the
    metric's direction: 'rf test_risk' -> 'rf test risk ↓'."""
    out = {"dataset": "dataset", "runs": "runs done / planned"}
    for c in layout.columns:
        a = arrow(c.quantity)
        out[c.header] = words(c.header) + (f" {a}" if a else "")
        if c.vs and c.show_p:
            out[f"p ({c.header} vs {c.vs})"] = f"p ({words(c.header)} vs {c.vs})"
    return out


# -- natural order ------------------------------------------------------------------------------------------------
_NUMBERED = re.compile(r"\b(?:Table|Tab\.|Fig\.|Figure|Figs?\.?)\s*([A-Z](?=\.))?\.?(\d+)(?:\.(\d+))?", re.I)


def natural_key(text: str) -> tuple[Any, ...]:
    """The place of a table or figure in its study: the first 'Table 7.2' / 'Fig. 4.1' / 'Table A.3' its text
    names, as (appendix?, chapter, number); texts naming none come after, in natural order of their digits."""
    m = _NUMBERED.search(text)
    if m:
        letter, major, minor = m.group(1), int(m.group(2)), int(m.group(3) or 0)
        return (0, 1 if letter else 0, (letter or "").upper(), major, minor)
    parts = tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))
    return (1, "", "", 0, 0, *(str(p).zfill(8) if isinstance(p, int) else p for p in parts))


# -- downloads ----------------------------------------------------------------------------------------------------
def table_downloads(site: Path, folder: str, name: str, model: TableModel | None,
                    comps: Sequence[Comparison], headers: Mapping[str, str]) -> dict[str, str]:
    """Write the table's files under ``site/tables/<folder>/`` and return their paths relative to the site root:
    ``csv``/``tex`` (the reproduced table: the numbers, mean, std and n per cell; the table as shown) and
    ``compare_csv``/``compare_tex`` (published vs reproduced, one row per published number)."""
    out: dict[str, str] = {}
    base = Path("tables") / folder
    (site / base).mkdir(parents=True, exist_ok=True)
    if model is not None and model.rows:
        csv, tex = base / f"{slug(name)}.csv", base / f"{slug(name)}.tex"
        (site / csv).write_text(model.frame().to_csv(index=False, float_format="%.6g"), encoding="utf-8")
        shown = model.display().rename(columns=dict(headers))
        (site / tex).write_text(to_latex(shown, model.title), encoding="utf-8")
        out.update(csv=csv.as_posix(), tex=tex.as_posix())
    if comps:
        from forestlab.report.model import comparison_frame

        csv, tex = base / f"{slug(name)}_compare.csv", base / f"{slug(name)}_compare.tex"
        (site / csv).write_text(comparison_frame(comps).to_csv(index=False, float_format="%.6g"), encoding="utf-8")
        shown = pd.DataFrame([{"dataset": c.dataset, "cell": f"{c.algorithm} {words(c.metric)}",
                               "published": c.published_text, "reproduced": c.value_text, "Δ": c.diff_text,
                               "z": "—" if c.z != c.z else f"{c.z:+.1f}", "mark": c.mark} for c in comps])
        (site / tex).write_text(to_latex(shown, f"{name}: published vs reproduced"), encoding="utf-8")
        out.update(compare_csv=csv.as_posix(), compare_tex=tex.as_posix())
    return out


# -- per-seed values ----------------------------------------------------------------------------------------------
def runs_frame(res: ExperimentResults, layout: Layout, dataset: str) -> pd.DataFrame:
    """One row per (repetition, fold) of ``dataset`` (a missing fold as -1), sorted: each metric or curve cell's
    value in that run, NaN where it has none (a measure is one statistic over the runs: it has no per-run value and
    no column). A (repetition, fold) a cell has twice keeps its first run's value.

    Built from the results' run index as plain arrays (one frame per dataset, no frame per cell): a report writes
    this for every dataset of every table."""
    headers: list[str] = []
    columns: list[dict[tuple[int, int], float]] = []
    for c in layout.columns:
        if c.kind == "measure":
            continue
        splits, values = res.split_values(c.algorithm, c.quantity, dataset)
        if c.kind != "metric":
            values = res.cell_values(c.spec, dataset)
            if len(values) != len(splits):
                continue
        column: dict[tuple[int, int], float] = {}
        for split, value in zip(splits, values.tolist(), strict=True):
            column.setdefault(split, value)  # the first run of a split, as a duplicated index keeps it
        headers.append(c.header)
        columns.append(column)
    if not columns:
        return pd.DataFrame()
    index = sorted(set().union(*columns))
    nan = float("nan")
    data = np.array([[col.get(split, nan) for col in columns] for split in index], dtype=float).reshape(
        len(index), len(columns))
    return pd.DataFrame(data, columns=headers,
                        index=pd.MultiIndex.from_tuples(index, names=["repetition", "fold"]) if index else
                        pd.MultiIndex.from_arrays([np.empty(0, dtype=np.int64)] * 2, names=["repetition", "fold"]))


def runs_page(site: Path, folder: str, name: str, title: str, res: ExperimentResults, layout: Layout,
              headers: Mapping[str, str], back: str) -> str | None:
    """Write ``site/runs/<folder>--<name>.html``: per dataset of the table, the value of each cell in each run
    (seed or fold), the numbers behind each mean ± std. Returns its path relative to the site root (None when
    the table has no per-run value). Kept out of the study page so that a study of thousands of runs stays light."""
    sections = []
    any_folds = False
    for dataset in res.datasets:
        df = runs_frame(res, layout, dataset)
        if df.empty:
            continue
        digits = {c.header: c.digits for c in layout.columns}
        has_folds = bool((df.index.get_level_values("fold") >= 0).any())
        any_folds = any_folds or has_folds
        head = "<th>seed (repetition)</th>" + ("<th>fold</th>" if has_folds else "") + "".join(
            f"<th>{esc(headers.get(h, h))}</th>" for h in df.columns)
        body = []
        shown = [digits.get(h, 3) for h in df.columns]
        for (rep, fold), values in zip(df.index, df.to_numpy(), strict=True):
            cells = "".join(f"<td>{esc(fmt_number(v, d))}</td>" for v, d in zip(values, shown, strict=True))
            body.append(f"<tr><th>{int(rep)}</th>" + (f"<td>{int(fold) if fold >= 0 else '—'}</td>"
                                                      if has_folds else "") + cells + "</tr>")
        sections.append(f'<section id="{esc(slug(dataset))}"><h2>{esc(dataset)} <a class="permalink" '
                        f'href="#{esc(slug(dataset))}" title="link to this dataset">¶</a> '
                        '<a class="to-top" href="#top">↑ top</a></h2>'
                        f'<div class="scroll"><table class="data sortable"><thead><tr>{head}</tr></thead><tbody>'
                        f'{"".join(body)}</tbody></table></div></section>')
    if not sections:
        return None
    rel = f"runs/{slug(folder)}--{slug(name)}.html"
    folds = ", fold" if any_folds else ""
    body = (f'<p><a href="../{esc(back)}">← back to the table</a></p>\n'
            f'<h1 id="top">{esc(title)}: the value of each run</h1>\n'
            f'<p class="muted">Experiment <code>{esc(res.name)}</code>. One row per seed (repetition{folds}) of each '
            "dataset:\nthe numbers whose mean ± std the table shows.\nA cell that is one statistic over all the runs "
            f"(a measure) has no per-run value and is not listed.</p>\n{''.join(sections)}")
    text = page(f"{title}: per-run values", body, root="../", shrunk=res.shrunk, script=True)
    (site / rel).parent.mkdir(parents=True, exist_ok=True)
    (site / rel).write_text(text, encoding="utf-8")
    return rel


# -- dataset facts ------------------------------------------------------------------------------------------------
def _sizes(res: ExperimentResults, dataset: str, metric: str) -> str:
    if metric not in res.runs.columns:
        return ""
    v = pd.to_numeric(res.runs.loc[res.runs["dataset"] == dataset, metric], errors="coerce").dropna()
    if v.empty:
        return ""
    lo, hi = int(v.min()), int(v.max())
    return f"{lo}" if lo == hi else f"{lo}–{hi}"


def dataset_facts(res: ExperimentResults, configs: Mapping[str, Mapping[str, Any]], study: str | None,
                  datasets: Sequence[str]) -> pd.DataFrame:
    """Rows, features, classes and train / test sizes of ``datasets``: what the runs recorded (the dataset's size
    and features when it was loaded, each run's ``n_train`` / ``n_test``), else what the dataset's config declares
    (``shape``, the study's ``splits``); classes from the config's task (2 for a binary task: a multiclass dataset's
    number of classes is not recorded). '—' where neither says."""
    out = []
    for d in datasets:
        info = res.datasets_info.get(d) or {}
        cfg = configs.get(d) or {}
        shape = cfg.get("shape") or [None, None]
        split = ((cfg.get("splits") or {}).get(study) or {}) if study else {}
        rows = info.get("n_samples", shape[0] if len(shape) > 0 else None)
        feats = info.get("n_features", shape[1] if len(shape) > 1 else None)
        task = cfg.get("task")
        train = _sizes(res, d, "n_train") or str(split.get("train", "") or "")
        test = _sizes(res, d, "n_test") or str(split.get("test", "") or "")
        out.append({"dataset": d, "rows": "—" if rows is None else f"{int(rows)}",
                    "features": "—" if feats is None else f"{int(feats)}",
                    "classes": "2" if task == "binary" else (task or "—"),
                    "train size": train or "—", "test size": test or "—"})
    return pd.DataFrame(out, columns=["dataset", "rows", "features", "classes", "train size", "test size"])
