"""Tables of mean ± std over seeds or folds, in Markdown, CSV and LaTeX.

A table spec (``experiment.tables[i]``) lists ``cells``: ``{algorithm, metric}`` (a stored metric, mean ± std over
the runs), ``{algorithm, curve, at}`` (a stored curve read at a number of trees), or ``{algorithm, measure}`` (a
statistic over the set of runs, :data:`forestlab.metrics.MEASURES`, e.g. ``instability``: one value per dataset).
Optional per cell:

- ``label``: the column header shown in the Markdown and LaTeX tables (the CSV keeps ``"<algorithm> <metric>"``);
- ``vs: <algorithm>``: a paired two-sided t-test of this cell's metric against the same metric of that algorithm,
  runs paired by (repetition, fold) (:mod:`forestlab.stats`); a significant difference at the table's
  ``alpha`` (default 0.05) appends ``*`` to the cell, as some studies mark their tables. The CSV gets the columns
  ``"<label> vs <algorithm> diff"`` and ``"... p"``; ``show_p: true`` also shows the p-value as a column.

A table spec may name the ``datasets`` it shows (default: all of the experiment's), and may also say
``mark_best: <metric>`` (or a list): in each row, the best of the cells of that metric
is marked '▸', lower or higher being better as the metric says.

A cell whose algorithm chose its hyperparameters on the test set (selection ``test``, the thesis's own "keep the
best test result") is labelled *optimistic* in the header and the table's note, always.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from forestlab._values import as_list
from forestlab.results import ExperimentResults, cell_label, measure_value, summarise
from forestlab.stats import higher_is_better, paired_t_test, paired_values


def fmt(mean: float, std: float, n: int, digits: int = 3) -> str:
    """'0.123 ± 0.010' (just the mean for one run, '—' for none)."""
    if n == 0 or math.isnan(mean):
        return "—"
    if n == 1 or math.isnan(std):  # one run, or a statistic over the runs (a measure)
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def build_table(res: ExperimentResults, spec: dict[str, Any]) -> pd.DataFrame:
    """One row per dataset; for each cell its mean, std and number of runs."""
    for i, cell in enumerate(spec["cells"]):
        res.check_stored(cell.algorithm, cell.metric, f"table '{spec.name}', cell {i + 1}")
    rows = []
    for dataset in res.datasets:
        row: dict[str, Any] = {"dataset": dataset}
        planned = res.planned[res.planned["dataset"] == dataset]
        done = res.runs[res.runs["dataset"] == dataset]
        # by key: a study's after-the-fact choice (experiment.choices) repeats runs under another name
        row["runs"] = f"{done['key'].nunique()}/{planned['key'].nunique()}"
        for cell in spec["cells"]:
            label = cell_label(cell)
            if "measure" in cell:
                value = measure_value(res, cell, dataset)
                row[f"{label} mean"], row[f"{label} std"], row[f"{label} n"] = value, float("nan"), \
                    len(res.run_keys(str(cell["algorithm"]), dataset))
                continue
            mean, std, n = summarise(res.cell_values(cell, dataset))
            row[f"{label} mean"], row[f"{label} std"], row[f"{label} n"] = mean, std, n
            if cell.get("vs") and "metric" in cell:
                a, b = paired_values(res, str(cell["algorithm"]), str(cell["vs"]), str(cell["metric"]), dataset)
                test = paired_t_test(a, b)
                row[f"{label} vs {cell['vs']} diff"] = test.mean_diff
                row[f"{label} vs {cell['vs']} p"] = test.p
        rows.append(row)
    columns = ["dataset", "runs"]
    for cell in spec["cells"]:
        label = cell_label(cell)
        columns += [f"{label} mean", f"{label} std", f"{label} n"]
        if cell.get("vs") and "metric" in cell and "measure" not in cell:
            columns += [f"{label} vs {cell['vs']} diff", f"{label} vs {cell['vs']} p"]
    return pd.DataFrame(rows, columns=list(dict.fromkeys(columns)))  # the columns even without a row


def optimistic_algorithms(res: ExperimentResults) -> set[str]:
    """Algorithms whose hyperparameters were chosen on the test set (the studies' optimistic selection)."""
    return {str(a) for a in res.spec.get("optimistic_algorithms") or []}


def _display(res: ExperimentResults, spec: dict[str, Any], table: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame({"dataset": table["dataset"]})
    alpha = float(spec.get("alpha", 0.05))
    headers: dict[str, str] = {}
    for cell in spec["cells"]:
        label = cell_label(cell)
        header = str(cell.get("label", label))
        if str(cell["algorithm"]) in optimistic_algorithms(res):
            header += " (optimistic: chosen on the test set)"
        if header in out.columns:  # two cells with one label: keep both columns, told apart by what they hold
            header = f"{header} [{label}]"
        headers[label] = header
        default = 1 if str(cell.get("metric", "")).startswith("max_depth") else int(spec.get("digits", 3))
        digits = int(cell.get("digits", default))  # a cell may ask for its own precision (MinCq's mu: 4)
        out[header] = [fmt(m, s, int(n), digits) for m, s, n in
                       zip(table[f"{label} mean"], table[f"{label} std"], table[f"{label} n"], strict=True)]
        p_col = f"{label} vs {cell.get('vs')} p"
        if cell.get("vs") and p_col in table.columns:
            marks = ["*" if (p == p and p < alpha) else "" for p in table[p_col]]
            out[header] = [v + m for v, m in zip(out[header], marks, strict=True)]
            if cell.get("show_p"):
                out[f"p ({header} vs {cell['vs']})"] = ["—" if p != p else f"{p:.3g}" for p in table[p_col]]
    for metric in as_list(spec.get("mark_best")):
        _mark_best(spec, table, out, metric, headers)
    out["runs"] = table["runs"]
    return out


def _mark_best(spec: dict[str, Any], table: pd.DataFrame, out: pd.DataFrame, metric: str,
               headers: dict[str, str]) -> None:
    """``mark_best: <metric>``: in each row, the best mean among the cells of that metric (rounded as shown) gets
    a leading '▸', in the metric's direction (lower risk, higher AUC); ties are all marked."""
    up = higher_is_better(metric)
    cells = [c for c in spec["cells"] if str(c.get("metric")) == metric]
    if len(cells) < 2:
        return
    digits = int(spec.get("digits", 3))
    means = pd.DataFrame({headers[cell_label(c)]: table[f"{cell_label(c)} mean"].round(digits) for c in cells})
    best = means.max(axis=1) if up else means.min(axis=1)
    for h in means.columns:
        hit = (means[h] == best) & means[h].notna()
        out[h] = ["▸" + v if flag else v for v, flag in zip(out[h], hit, strict=True)]


def to_markdown(df: pd.DataFrame) -> str:
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for _, row in df.iterrows():
        lines.append("| " + " | ".join(str(v) for v in row.tolist()) + " |")
    return "\n".join(lines) + "\n"


def _tex_escape(text: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#"),
                 ("±", r"$\pm$"), ("—", "--")):
        text = text.replace(a, b)
    return text


def to_latex(df: pd.DataFrame, caption: str) -> str:
    cols = [str(c) for c in df.columns]
    lines = [r"\begin{table}[ht]", r"\centering", rf"\caption{{{_tex_escape(caption)}}}",
             r"\begin{tabular}{l" + "r" * (len(cols) - 1) + "}", r"\hline",
             " & ".join(_tex_escape(c) for c in cols) + r" \\", r"\hline"]
    for _, row in df.iterrows():
        lines.append(" & ".join(_tex_escape(str(v)) for v in row.tolist()) + r" \\")
    lines += [r"\hline", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def render_tables(res: ExperimentResults, out_dir: Path) -> list[Path]:
    """Write every table of the experiment to ``out_dir/<name>.{md,csv,tex}``."""
    written: list[Path] = []
    for spec in res.tables():
        view = res.restricted_to(spec)
        table = build_table(view, spec)
        display = _display(res, spec, table)
        out_dir.mkdir(parents=True, exist_ok=True)
        title = str(spec.get("title", spec["name"]))
        md = out_dir / f"{spec['name']}.md"
        note = "cells are mean ± std over seeds or folds"
        if any("measure" in c for c in spec["cells"]):
            note += "; a measure (e.g. instability) is one statistic over all the runs of its cell"
        if any(c.get("vs") for c in spec["cells"]):
            note += (f"; * = significant difference (paired two-sided t-test over the splits, "
                     f"alpha = {float(spec.get('alpha', 0.05)):g}) from the algorithm named in the cell's `vs`")
        for metric in as_list(spec.get("mark_best")):
            note += f"; ▸ = best {metric} of the row ({'higher' if higher_is_better(metric) else 'lower'} is better)"
        if any(str(c["algorithm"]) in optimistic_algorithms(res) for c in spec["cells"]):
            note += ("; OPTIMISTIC cells chose their hyperparameters on the test set, as the study did: they "
                     "overstate what the method would do on new data")
        if spec.get("note"):
            note += f". {spec['note']}"
        if view.left_out:
            note += f". {view.left_out_note()}"
        md.write_text(f"# {title}\n\nExperiment `{res.name}`{smoke_note(res)}; {note}.\n\n" + to_markdown(display))
        csv = out_dir / f"{spec['name']}.csv"
        table.to_csv(csv, index=False, float_format="%.6g")
        tex = out_dir / f"{spec['name']}.tex"
        tex.write_text(to_latex(display, title))
        written += [md, csv, tex]
    return written


def smoke_note(res: ExperimentResults) -> str:
    return (" (SMOKE RUNS: `debug=smoke`, shrunk to seconds; not the experiment's results)" if res.smoke else "")
