"""Head-to-head comparisons of two algorithms on the same splits: per-dataset paired tests over seeds, win/tie/loss
counts and a Wilcoxon signed-rank test across datasets.

A table spec asks for them with ``pairs``::

    tables:
      - name: table7_2
        pairs: [[sorf, rf], [mincq, rf], [sorf, mincq]]   # [A, B]: is A's metric lower than B's?
        pair_metric: test_risk                             # default test_risk; lower is better

Runs are paired by (dataset, repetition, fold), which the runner guarantees share one split (and, for learners
sharing a ``seed_tag``, the same trees).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from forestlab.report._collect import ExperimentResults

ALPHA = 0.05


@dataclass(frozen=True)
class PairSummary:
    """Across datasets: counts and the Wilcoxon signed-rank test on the per-dataset mean differences."""

    a: str
    b: str
    metric: str
    n_datasets: int
    wins: int  # A lower than B after rounding to `digits` (the thesis's reading of its tables)
    ties: int
    losses: int
    sig_wins: int  # A lower than B, paired t-test p < ALPHA
    sig_losses: int
    mean_a: float
    mean_b: float
    wilcoxon_p: float

    def line(self) -> str:
        p = "—" if math.isnan(self.wilcoxon_p) else f"{self.wilcoxon_p:.3g}"
        return (f"{self.a} vs {self.b} ({self.metric}, lower is better), {self.n_datasets} datasets: "
                f"{self.wins} W / {self.ties} T / {self.losses} L on the rounded means; "
                f"significant (paired t-test over seeds, p < {ALPHA}): {self.sig_wins} W / {self.sig_losses} L; "
                f"mean {self.mean_a:.4f} vs {self.mean_b:.4f}; Wilcoxon signed-rank across datasets p = {p}")


def paired_values(res: ExperimentResults, a: str, b: str, metric: str, dataset: str) -> tuple[np.ndarray, np.ndarray]:
    """The metric of A and of B on the splits where both ran, aligned by (repetition, fold)."""
    va = res.values(a, metric, dataset).set_index(["repetition", "fold"])["value"]
    vb = res.values(b, metric, dataset).set_index(["repetition", "fold"])["value"]
    both = pd.concat([va.rename("a"), vb.rename("b")], axis=1, join="inner").dropna()
    return both["a"].to_numpy(float), both["b"].to_numpy(float)


def paired_t_pvalue(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided paired t-test p-value (:func:`forestlab.report.stats.paired_t_test`); 1.0 when every difference
    is zero, 0.0 when every difference is the same non-zero shift, NaN under two pairs."""
    from forestlab.report.stats import paired_t_test  # stats builds on paired_values above

    return float(paired_t_test(a, b).p)


def wilcoxon_pvalue(diffs: np.ndarray) -> float:
    """Two-sided Wilcoxon signed-rank p-value of per-dataset differences (zeros split between the signs)."""
    d = np.asarray(diffs, float)
    d = d[np.isfinite(d)]
    if d.size < 2 or np.all(d == 0):
        return float("nan") if d.size < 2 else 1.0
    return float(stats.wilcoxon(d, zero_method="zsplit").pvalue)


def pair_table(res: ExperimentResults, a: str, b: str, metric: str = "test_risk",
               digits: int = 3) -> tuple[pd.DataFrame, PairSummary]:
    """Per dataset: means, difference, paired t-test p-value and the outcome; plus the summary across datasets."""
    rows = []
    for dataset in res.datasets:
        xa, xb = paired_values(res, a, b, metric, dataset)
        if xa.size == 0:
            continue
        ma, mb = float(xa.mean()), float(xb.mean())
        ra, rb = round(ma, digits), round(mb, digits)
        p = paired_t_pvalue(xa, xb)
        outcome = "W" if ra < rb else "L" if ra > rb else "T"
        sig = bool(np.isfinite(p) and p < ALPHA)
        rows.append({"dataset": dataset, "n": int(xa.size), f"{a}": ma, f"{b}": mb, "diff": ma - mb,
                     "p_paired_t": p, "outcome": outcome,
                     "significant": ("W" if ma < mb else "L") if sig else ""})
    table = pd.DataFrame(rows, columns=["dataset", "n", a, b, "diff", "p_paired_t", "outcome", "significant"])
    summary = PairSummary(
        a=a, b=b, metric=metric, n_datasets=len(table),
        wins=int((table["outcome"] == "W").sum()), ties=int((table["outcome"] == "T").sum()),
        losses=int((table["outcome"] == "L").sum()),
        sig_wins=int((table["significant"] == "W").sum()), sig_losses=int((table["significant"] == "L").sum()),
        mean_a=float(table[a].mean()) if len(table) else float("nan"),
        mean_b=float(table[b].mean()) if len(table) else float("nan"),
        wilcoxon_p=wilcoxon_pvalue(table["diff"].to_numpy()) if len(table) else float("nan"))
    return table, summary


def pairs_of(spec: dict[str, Any]) -> list[tuple[str, str]]:
    return [(str(p[0]), str(p[1])) for p in spec.get("pairs") or []]
