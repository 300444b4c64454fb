"""Published numbers beside reproduced ones, cell by cell, with summary lines, head-to-head tests and the study's
claims (each judged HOLDS, DOES NOT HOLD, INCONCLUSIVE or NOT TESTED; :func:`forestlab.studies.judge`).

Nothing here knows a study by name: the published tables are read by the experiment's study
(:meth:`forestlab.studies.Study.read_published`) and the claims are found by name across the registered studies.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from forestlab.errors import ConfigError
from forestlab.report.tables import smoke_note, to_markdown
from forestlab.results import ExperimentResults, measure_value, summarise
from forestlab.stats import pair_table, pairs_of
from forestlab.studies import get_study, judge_all_cached


def read_published(study: str | None, filename: str) -> pd.DataFrame:
    """A published table of ``study`` in long form: columns dataset, algorithm, metric, value."""
    if not study:
        raise ConfigError(f"a table names the published file '{filename}' but its experiment has no study")
    return get_study(study).read_published(filename)


def comparison_table(res: ExperimentResults, spec: dict[str, Any]) -> pd.DataFrame:
    """One row per published number that the experiment reproduces (same dataset, algorithm and metric).

    A cell ``{algorithm, measure}`` (a statistic over all the runs of the cell, e.g. the instability) is compared
    as one number (``n`` = 1, no spread). A cell's ``published_as`` / ``published_metric`` name the published
    algorithm / metric it stands for when the names differ (the kernel chosen as the study chose it; one reading
    of a metric the study leaves ambiguous). A
    published value left empty (a number lost in the source, e.g. to OCR) gives a row with ``published`` NaN and
    the file's ``note``: shown, never judged.
    """
    published = read_published(res.study, spec["published"])

    def published_key(c: dict[str, Any], what: str) -> tuple[str, str]:
        return str(c.get("published_as", c["algorithm"])), str(c.get("published_metric", c[what]))

    wanted = {published_key(c, "metric"): c for c in spec["cells"] if "metric" in c}
    measures = {published_key(c, "measure"): c for c in spec["cells"] if "measure" in c}
    rows = []
    for _, p in published.iterrows():
        key = (p["algorithm"], p["metric"])
        if (key not in wanted and key not in measures) or p["dataset"] not in res.datasets:
            continue
        if key in measures:
            value = measure_value(res, measures[key], p["dataset"])
            mean, std, n = value, float("nan"), int(not math.isnan(value))
        else:
            cell = wanted[key]
            mean, std, n = summarise(res.values(str(cell["algorithm"]), str(cell["metric"]),
                                                p["dataset"])["value"].to_numpy())
        pub = pd.to_numeric(p["value"], errors="coerce")
        pub = float("nan") if pd.isna(pub) else float(pub)
        diff = mean - pub if n else float("nan")
        se = std / math.sqrt(n) if n > 1 else float("nan")
        judged = n > 1 and not math.isnan(diff)
        note = p.get("note") if "note" in published.columns else None
        rows.append({"dataset": p["dataset"], "algorithm": p["algorithm"], "metric": p["metric"],
                     "published": pub, "reproduced": mean, "std": std, "n": n, "diff": diff,
                     # a single split's number falls inside our spread across splits about 95% of the time; with
                     # fewer than two runs there is no spread, and a lost published number has nothing to judge:
                     # not applicable
                     "within_2std": bool(abs(diff) <= 2 * std) if judged else None,
                     "z_mean": diff / se if judged and se > 0 else float("nan"),
                     "note": "" if note is None or pd.isna(note) else str(note)})
    return pd.DataFrame(rows, columns=["dataset", "algorithm", "metric", "published", "reproduced", "std", "n",
                                       "diff", "within_2std", "z_mean", "note"])


def _fmt(x: float, digits: int = 3) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _within(flag: Any) -> str:
    return "n/a" if flag is None or (isinstance(flag, float) and math.isnan(flag)) else ("yes" if flag else "no")


def summary_lines(table: pd.DataFrame) -> list[str]:
    lines = []
    for (algorithm, metric), grp in table.groupby(["algorithm", "metric"], sort=False):
        lost = int(grp["published"].isna().sum())
        g = grp[(grp["n"] > 0) & grp["published"].notna()]
        lost_note = f" ({lost} published value(s) lost in the source, not compared)" if lost else ""
        if g.empty:
            lines.append(f"{algorithm} {metric}: no comparable runs yet{lost_note}")
            continue
        mad = float(np.mean(np.abs(g["diff"])))
        judged = g[g["n"] > 1]
        within = (f"published value within 2 std of our runs on {int(judged['within_2std'].astype(bool).sum())}"
                  f"/{len(judged)}" if len(judged) else "within 2 std: n/a (a single run has no spread)")
        lines.append(
            f"{algorithm} {metric}: {len(g)}/{len(grp)} cells reproduced; mean absolute difference {mad:.4f}; "
            f"mean published {g['published'].mean():.4f} vs reproduced {g['reproduced'].mean():.4f}; {within}"
            f"{lost_note}")
    return lines


def compare_experiment(res: ExperimentResults, out_dir: Path | None) -> str:
    """Print-ready comparison of an experiment with its study; also written to ``out_dir`` when given."""
    specs = [s for s in res.tables() if s.get("published") or s.get("pairs")]
    claims = res.claims()
    if not specs and not claims:
        return ""
    out: list[str] = [f"== {res.name} ({res.study or 'no study'}){smoke_note(res)} =="]
    if res.smoke:
        out.append("These are smoke runs (debug=smoke: one seed, two datasets, ten trees): they check that the "
                   "experiment runs, they do not reproduce it; no claim is judged on them (each is NOT TESTED, "
                   "its test's answer on them shown as a check of the code).")
    if res.counts.get("done", 0) == 0:
        out.append(f"no runs stored for this configuration of {res.name} yet: run `forestlab run "
                   f"experiment={res.name}` first")
    written: dict[str, str] = {}
    everything = res
    for spec in specs:
        res = everything.restricted_to(spec)
        if spec.get("published"):
            table = comparison_table(res, spec)
            out.append(f"\n-- {spec.get('title', spec['name'])}: published vs reproduced "
                       f"(mean ± std over seeds; diff = reproduced - published)")
            digits = {(str(c["algorithm"]), str(c.get("metric", c.get("measure")))): int(c.get("digits", 3))
                      for c in spec["cells"] if "metric" in c or "measure" in c}
            dig = [digits.get((a, m), 3) for a, m in zip(table["algorithm"], table["metric"], strict=True)]
            display = pd.DataFrame({
                "dataset": table["dataset"], "algorithm": table["algorithm"], "metric": table["metric"],
                "published": [_fmt(v, d) for v, d in zip(table["published"], dig, strict=True)],
                "reproduced": [f"{_fmt(m, d)} ± {_fmt(s, d)}" if n > 1 else _fmt(m, d)
                               for m, s, n, d in zip(table["reproduced"], table["std"], table["n"], dig,
                                                     strict=True)],
                "n": table["n"], "diff": [("—" if math.isnan(d) else f"{d:+.3f}") for d in table["diff"]],
                "within 2 std": [_within(w) for w in table["within_2std"]],
            })
            if table["note"].astype(bool).any():
                display["note"] = table["note"]
            out.append(to_markdown(display).rstrip())
            out.append("")
            lines = summary_lines(table) + ([res.left_out_note()] if res.left_out else [])
            out.extend(lines)
            written[f"{spec['name']}_compare.csv"] = table.to_csv(index=False, float_format="%.6g")
            written[f"{spec['name']}_compare.md"] = to_markdown(display) + "\n" + "\n".join(lines) + "\n"
        lines, csv = _pairs_section(res, spec)
        out.extend(lines)
        if csv is not None:
            written[f"{spec['name']}_pairs.csv"] = csv
    res = everything
    if claims:
        out.append("\n-- claims" + (" (smoke runs: none is judged; each test runs as a check of the code)"
                                     if res.smoke else ""))
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


def _pairs_section(res: ExperimentResults, spec: dict[str, Any]) -> tuple[list[str], str | None]:
    """Head-to-head lines for the table's ``pairs`` (see :mod:`forestlab.stats`), and their CSV."""
    pairs = pairs_of(spec)
    if not pairs:
        return [], None
    metric = str(spec.get("pair_metric", "test_risk"))
    alpha = float(spec.get("alpha", 0.05))
    lines = [f"\n-- {spec['name']}: head to head on the same splits ({metric})"]
    if res.left_out:
        lines.append(res.left_out_note())
    frames = []
    for a, b in pairs:
        for side in (a, b):
            res.check_stored(side, metric, f"table '{spec.name}', pair [{a}, {b}]")
        table, summary = pair_table(res, a, b, metric, alpha=alpha)
        lines.append(summary.line())
        marks = [f"{d} {o}{'*' if s else ''}" for d, o, s in
                 zip(table["dataset"], table["outcome"], table["significant"], strict=True)]
        if marks:
            lines.append("    " + ", ".join(marks) + f"   (* = paired t-test p < {alpha:g})")
        frames.append(table.assign(a=a, b=b, metric=metric))
    csv = pd.concat(frames).to_csv(index=False, float_format="%.6g") if frames else None
    return lines, csv
