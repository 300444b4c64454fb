"""Published numbers beside reproduced ones, cell by cell, with summary lines, head-to-head tests and the study's
claims (each judged HOLDS, DOES NOT HOLD, INCONCLUSIVE or NOT TESTED; :func:`forestlab.studies.judge`).

Nothing here knows a study by name: the published tables are read by the experiment's study
(:meth:`forestlab.studies.Study.read_published`) and the claims are found by name across the registered studies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from forestlab.report.model import (
    AGREE,
    DISAGREE,
    MARKS,
    METHODS,
    Agreement,
    Comparison,
    Layout,
    build_model,
    fmt_number,
    read_layout,
    read_published,
    shrunk_note,
)
from forestlab.report.tables import to_markdown
from forestlab.results import ExperimentResults
from forestlab.stats import pair_table
from forestlab.studies import judge_all_cached

__all__ = ["compare_experiment", "comparison_table", "read_published", "summary_lines"]


def comparison_table(res: ExperimentResults, spec: Mapping[str, Any]) -> pd.DataFrame:
    """One row per published number that the table reproduces (same dataset, algorithm and metric, the published
    names): published (its std and n), reproduced mean, std and n, diff = reproduced - published, z = diff in
    standard errors of the difference and the method that computed it, the agreement mark, whether the cell is
    scored (a primary cell) and the file's note (:class:`forestlab.report.model.Comparison`)."""
    return build_model(res, spec).comparison_frame()


def summary_lines(comps: Sequence[Comparison]) -> list[str]:
    """Per published (algorithm, metric): how many numbers have runs, the mean absolute difference, the means, and
    how many agree (the vocabulary of :data:`forestlab.report.model.MARKS`)."""
    groups: dict[tuple[str, str], list[Comparison]] = {}
    for c in comps:
        groups.setdefault((c.algorithm, c.metric), []).append(c)
    lines = []
    for (algorithm, metric), grp in groups.items():
        agreement = Agreement.of(grp).text()
        g = [c for c in grp if c.n and not np.isnan(c.published) and not np.isnan(c.value)]
        if not g:
            lines.append(f"{algorithm} {metric}: no comparable runs yet; {agreement}")
            continue
        mad = float(np.mean([abs(c.diff) for c in g]))
        lines.append(
            f"{algorithm} {metric}: {len(g)}/{len(grp)} cells reproduced; mean absolute difference "
            f"{fmt_number(mad, 4)}; mean published {fmt_number(float(np.mean([c.published for c in g])), 4)} vs "
            f"reproduced {fmt_number(float(np.mean([c.value for c in g])), 4)}; {agreement}")
    return lines


def comparison_display(comps: Sequence[Comparison]) -> pd.DataFrame:
    """The published-vs-reproduced table as the ``compare`` text shows it."""
    display = pd.DataFrame({
        "dataset": [c.dataset for c in comps], "algorithm": [c.algorithm for c in comps],
        "metric": [c.metric for c in comps], "published": [c.published_text for c in comps],
        "reproduced": [c.value_text for c in comps], "n": [c.n for c in comps],
        "diff": [c.diff_text for c in comps], "z": [c.z_text for c in comps],
        "agreement": [c.mark_text for c in comps]})
    if any(not c.scored for c in comps):
        display["scored"] = [scored_text(c) for c in comps]
    if any(c.note for c in comps):
        display["note"] = [c.note for c in comps]
    return display


def scored_text(c: Comparison) -> str:
    """'yes' for a primary cell (counted in the score), else why not: its role, or 'no (another reading)'."""
    if c.scored:
        return "yes"
    return f"no ({c.role})" if c.role != "result" else "no (another reading)"


def legend(comps: Sequence[Comparison]) -> str:
    """What the marks of these comparisons mean, one clause each, and how z was computed for them."""
    shown = {c.mark for c in comps}
    text = "marks: " + "; ".join(f"{s} {k} = {m}" for k, (s, m) in MARKS.items() if k in shown)
    methods = [m for m in METHODS if any(c.method == m and c.mark in (AGREE, DISAGREE) for c in comps)]
    if methods:
        text += "\nz: " + "; ".join(f"{m} = {METHODS[m]}" for m in methods)
    return text


def compare_experiment(res: ExperimentResults, out_dir: Path | None) -> str:
    """Print-ready comparison of an experiment with its study; also written to ``out_dir`` when given."""
    layouts = [layout for layout in map(read_layout, res.tables()) if layout.published or layout.pairs]
    claims = res.claims()
    if not layouts and not claims:
        return ""
    out: list[str] = [f"== {res.name} ({res.study or 'no study'}){shrunk_note(res.shrunk)} =="]
    if res.shrunk is not None:
        out.append(res.shrunk.comparison)
    if res.counts.get("done", 0) == 0:
        out.append(f"no runs stored for this configuration of {res.name} yet: run `forestlab run "
                   f"experiment={res.name}` first")
    written: dict[str, str] = {}
    everything = res
    for layout in layouts:
        res = everything.restricted_to(layout.spec)
        if layout.published:
            model = build_model(res, layout.spec)
            comps = model.comparisons
            out.append(f"\n-- {model.title}: published vs reproduced "
                       f"(mean ± std over seeds; diff = reproduced - published; "
                       f"z = diff in standard errors of the difference; primary cells are scored)")
            display = comparison_display(comps)
            out.append(to_markdown(display).rstrip())
            out.append("")
            lines = ([legend(comps)] if comps else []) + summary_lines(comps) + \
                ([model.left_out] if model.left_out else [])
            out.extend(lines)
            written[f"{model.name}_compare.csv"] = model.comparison_frame().to_csv(index=False, float_format="%.6g")
            written[f"{model.name}_compare.md"] = to_markdown(display) + "\n" + "\n".join(lines) + "\n"
        lines, csv = _pairs_section(res, layout)
        out.extend(lines)
        if csv is not None:
            written[f"{layout.name}_pairs.csv"] = csv
    res = everything
    if claims:
        out.append("\n-- claims" + (f" ({res.shrunk.claims_note})" if res.shrunk is not None else ""))
        for name, j in zip(claims, judge_all_cached(claims, res), strict=True):
            r = j.result
            out.append(f"[{j.verdict}] {name}: {r.claim}\n    test: {r.test}\n    evidence: {r.evidence}")
    text = "\n".join(out) + "\n"
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        for name, content in written.items():
            (out_dir / name).write_text(content)
        (out_dir / "compare.txt").write_text(text)
    return text


def _pairs_section(res: ExperimentResults, layout: Layout) -> tuple[list[str], str | None]:
    """Head-to-head lines for the table's ``pairs`` (see :mod:`forestlab.stats`), and their CSV."""
    pairs = layout.pairs
    if not pairs:
        return [], None
    metric, alpha = layout.pair_metric, layout.alpha
    lines = [f"\n-- {layout.name}: head to head on the same splits ({metric})"]
    if res.left_out:
        lines.append(res.left_out_note())
    frames = []
    for a, b in pairs:
        for side in (a, b):
            res.check_stored(side, metric, f"table '{layout.name}', pair [{a}, {b}]")
        table, summary = pair_table(res, a, b, metric, digits=layout.digits, alpha=alpha)
        lines.append(summary.line())
        marks = [f"{d} {o}{'*' if s else ''}" for d, o, s in
                 zip(table["dataset"], table["outcome"], table["significant"], strict=True)]
        if marks:
            lines.append("    " + ", ".join(marks) + f"   (* = paired t-test p < {alpha:g})")
        frames.append(table.assign(a=a, b=b, metric=metric))
    csv = pd.concat(frames).to_csv(index=False, float_format="%.6g") if frames else None
    return lines, csv
