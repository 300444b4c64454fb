"""Published numbers beside reproduced ones, cell by cell, with summary lines and the study's claims."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from omegaconf import DictConfig

from forestlab.config import experiments_dir, to_container
from forestlab.errors import ConfigError
from forestlab.report import claims_zirakiza2013  # noqa: F401  (registers the study's claims)
from forestlab.report._collect import ExperimentResults, load_results, summarise, tables_spec
from forestlab.report.claims import CLAIMS
from forestlab.report.pairwise import pair_table, pairs_of
from forestlab.report.tables import to_markdown


def load_published(study: str, filename: str) -> pd.DataFrame:
    """A published table in long form: columns dataset, algorithm, metric, value."""
    path = experiments_dir() / study / "published" / filename
    if not path.is_file():
        raise ConfigError(f"published table {path} not found")
    df = pd.read_csv(path)
    missing = {"dataset", "algorithm", "metric", "value"} - set(df.columns)
    if missing:
        raise ConfigError(f"{path}: missing columns {sorted(missing)} (expected dataset,algorithm,metric,value)")
    return df


def comparison_table(res: ExperimentResults, spec: dict[str, Any]) -> pd.DataFrame:
    """One row per published number that the experiment reproduces (same dataset, algorithm and metric)."""
    published = load_published(str(res.study), spec["published"])
    wanted = {(str(c["algorithm"]), str(c["metric"])) for c in spec["cells"] if "metric" in c}
    rows = []
    for _, p in published.iterrows():
        if (p["algorithm"], p["metric"]) not in wanted or p["dataset"] not in res.datasets:
            continue
        vals = res.values(p["algorithm"], p["metric"], p["dataset"])["value"].to_numpy()
        mean, std, n = summarise(vals)
        diff = mean - float(p["value"]) if n else float("nan")
        se = std / math.sqrt(n) if n > 1 else float("nan")
        rows.append({"dataset": p["dataset"], "algorithm": p["algorithm"], "metric": p["metric"],
                     "published": float(p["value"]), "reproduced": mean, "std": std, "n": n, "diff": diff,
                     # a single split's number falls inside our spread across splits about 95% of the time
                     "within_2std": bool(n > 1 and abs(diff) <= 2 * std) if n else False,
                     "z_mean": diff / se if n > 1 and se > 0 else float("nan")})
    return pd.DataFrame(rows, columns=["dataset", "algorithm", "metric", "published", "reproduced", "std", "n",
                                       "diff", "within_2std", "z_mean"])


def _fmt(x: float, digits: int = 3) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def summary_lines(table: pd.DataFrame) -> list[str]:
    lines = []
    for (algorithm, metric), grp in table.groupby(["algorithm", "metric"], sort=False):
        g = grp[grp["n"] > 0]
        if g.empty:
            lines.append(f"{algorithm} {metric}: no runs yet")
            continue
        mad = float(np.mean(np.abs(g["diff"])))
        lines.append(
            f"{algorithm} {metric}: {len(g)}/{len(grp)} cells reproduced; mean absolute difference {mad:.4f}; "
            f"mean published {g['published'].mean():.4f} vs reproduced {g['reproduced'].mean():.4f}; "
            f"published value within 2 std of our runs on {int(g['within_2std'].sum())}/{len(g)}")
    return lines


def compare_experiment(cfg: DictConfig) -> str:
    """Print-ready comparison of an experiment with its study; also written to results/tables/<exp>/."""
    res = load_results(cfg)
    specs = [s for s in tables_spec(cfg) if s.get("published") or s.get("pairs")]
    claims = list(to_container(cfg.experiment.get("claims") or []))
    if not specs and not claims:
        return ""
    out: list[str] = [f"== {res.name} ({res.study or 'no study'}) =="]
    out_dir = res.results_dir / "tables" / res.name
    for spec in specs:
        if not spec.get("published"):
            out_dir.mkdir(parents=True, exist_ok=True)
            out.extend(_pairs_section(res, spec, out_dir))
            continue
        table = comparison_table(res, spec)
        out.append(f"\n-- {spec.get('title', spec['name'])}: published vs reproduced "
                   f"(mean ± std over seeds; diff = reproduced - published)")
        digits = {(str(c["algorithm"]), str(c["metric"])): int(c.get("digits", 3)) for c in spec["cells"]
                  if "metric" in c}
        dig = [digits.get((a, m), 3) for a, m in zip(table["algorithm"], table["metric"], strict=True)]
        display = pd.DataFrame({
            "dataset": table["dataset"], "algorithm": table["algorithm"], "metric": table["metric"],
            "published": [_fmt(v, d) for v, d in zip(table["published"], dig, strict=True)],
            "reproduced": [f"{_fmt(m, d)} ± {_fmt(s, d)}" if n > 1 else _fmt(m, d)
                           for m, s, n, d in zip(table["reproduced"], table["std"], table["n"], dig, strict=True)],
            "n": table["n"], "diff": [("—" if math.isnan(d) else f"{d:+.3f}") for d in table["diff"]],
            "within 2 std": ["yes" if w else "no" for w in table["within_2std"]],
        })
        out.append(to_markdown(display).rstrip())
        out.append("")
        out.extend(summary_lines(table))
        out_dir.mkdir(parents=True, exist_ok=True)
        table.to_csv(out_dir / f"{spec['name']}_compare.csv", index=False, float_format="%.6g")
        (out_dir / f"{spec['name']}_compare.md").write_text(to_markdown(display) + "\n"
                                                            + "\n".join(summary_lines(table)) + "\n")
        out.extend(_pairs_section(res, spec, out_dir))
    if claims:
        out.append("\n-- claims")
        for name in claims:
            if name not in CLAIMS:
                raise ConfigError(f"unknown claim '{name}'; known claims: {', '.join(sorted(CLAIMS))}")
            r = CLAIMS[name](res)
            verdict = {True: "HOLDS", False: "DOES NOT HOLD", None: "NOT TESTED"}[r.holds]
            out.append(f"[{verdict}] {name}: {r.claim}\n    test: {r.test}\n    evidence: {r.evidence}")
    text = "\n".join(out) + "\n"
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "compare.txt").write_text(text)
    return text


def _pairs_section(res: ExperimentResults, spec: dict[str, Any], out_dir: Path) -> list[str]:
    """Head-to-head lines for the table's ``pairs`` (see forestlab.report.pairwise); writes <table>_pairs.csv."""
    pairs = pairs_of(spec)
    if not pairs:
        return []
    metric = str(spec.get("pair_metric", "test_risk"))
    lines = [f"\n-- {spec['name']}: head to head on the same splits ({metric})"]
    frames = []
    for a, b in pairs:
        table, summary = pair_table(res, a, b, metric)
        lines.append(summary.line())
        marks = [f"{d} {o}{'*' if s else ''}" for d, o, s in
                 zip(table["dataset"], table["outcome"], table["significant"], strict=True)]
        if marks:
            lines.append("    " + ", ".join(marks) + "   (* = paired t-test p < 0.05)")
        frames.append(table.rename(columns={a: "mean_a", b: "mean_b"}).assign(a=a, b=b, metric=metric))
    if frames:
        pd.concat(frames).to_csv(out_dir / f"{spec['name']}_pairs.csv", index=False, float_format="%.6g")
    return lines


def write_path(res: ExperimentResults) -> Path:
    return res.results_dir / "tables" / res.name
