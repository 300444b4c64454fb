"""Significance tests for the reports: paired and one-sample Student t-tests over seeds or folds.

pisetta2010 marks with '*' the datasets where two methods differ significantly (Student's t-test, 5%) over 20
random splits. Our reading (digest §004.5.10): a *paired* t-test over the splits (both methods see the same
splits, df = n - 1), two-sided. Runs are paired by (repetition, fold) with
:func:`forestlab.report.pairwise.paired_values`; a run missing on either side is dropped. The head-to-head
win/tie/loss counts and the Wilcoxon test across datasets live in :mod:`forestlab.report.pairwise`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as _st

from forestlab.report._collect import ExperimentResults
from forestlab.report.pairwise import paired_values  # runs aligned on (repetition, fold); shared with W/T/L

__all__ = ["TTest", "compare_algorithms", "one_sample_t_test", "paired_t_test", "paired_values",
           "significance_mark"]


_EQUAL = 1e-12  # differences within this of each other (or of 0) count as equal (float rounding of a - b)


@dataclass(frozen=True)
class TTest:
    """Result of a two-sided t-test: mean difference (a - b, or values - mu), statistic, p-value, sample size."""

    mean_diff: float
    t: float
    p: float
    n: int

    def significant(self, alpha: float = 0.05) -> bool:
        return bool(self.n >= 2 and self.p < alpha)


def _t_from_diffs(d: np.ndarray) -> TTest:
    d = np.asarray(d, dtype=float)
    d = d[np.isfinite(d)]
    n = int(d.size)
    if n == 0:
        return TTest(float("nan"), float("nan"), float("nan"), 0)
    mean = float(d.mean())
    if n < 2:
        return TTest(mean, float("nan"), float("nan"), n)
    sd = float(d.std(ddof=1))
    if not math.isfinite(sd) or sd <= _EQUAL * max(1.0, abs(mean)):
        # every difference equal (up to rounding): no evidence of a difference if they are 0, certainty otherwise
        if abs(mean) <= _EQUAL:
            return TTest(mean, 0.0, 1.0, n)
        return TTest(mean, math.copysign(math.inf, mean), 0.0, n)
    t = mean / (sd / math.sqrt(n))
    p = float(2 * _st.t.sf(abs(t), df=n - 1))
    return TTest(mean, float(t), p, n)


def paired_t_test(a: np.ndarray, b: np.ndarray) -> TTest:
    """Two-sided paired t-test of mean(a - b) = 0 (pairs with a non-finite side are dropped).

    >>> r = paired_t_test(np.array([0.90, 0.92, 0.91, 0.93]), np.array([0.88, 0.90, 0.90, 0.90]))
    >>> round(r.mean_diff, 4), r.n, r.p < 0.05
    (0.02, 4, True)
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired samples must have the same length, got {a.shape} and {b.shape}")
    return _t_from_diffs(a - b)


def one_sample_t_test(values: np.ndarray, mu: float) -> TTest:
    """Two-sided one-sample t-test of mean(values) = mu (e.g. our runs against a published mean)."""
    return _t_from_diffs(np.asarray(values, dtype=float) - float(mu))


def significance_mark(test: TTest, alpha: float = 0.05, mark: str = "*") -> str:
    """``mark`` when the test is significant at ``alpha``, else ''."""
    return mark if test.significant(alpha) else ""


def compare_algorithms(res: ExperimentResults, algorithm_a: str, algorithm_b: str, metric: str,
                       alpha: float = 0.05) -> pd.DataFrame:
    """Per dataset: paired means of a and b, a - b, the paired t-test and its verdict at ``alpha``.

    Columns: dataset, n, mean_a, mean_b, diff, t, p, significant, higher (which side is significantly higher:
    ``"a"``, ``"b"``, or ``""`` when not significant; whether higher is better depends on the metric).
    """
    rows = []
    for dataset in res.datasets:
        a, b = paired_values(res, algorithm_a, algorithm_b, metric, dataset)
        test = paired_t_test(a, b)
        sig = test.significant(alpha)
        rows.append({"dataset": dataset, "n": test.n,
                     "mean_a": float(np.nanmean(a)) if a.size else float("nan"),
                     "mean_b": float(np.nanmean(b)) if b.size else float("nan"),
                     "diff": test.mean_diff, "t": test.t, "p": test.p, "significant": sig,
                     "higher": ("a" if test.mean_diff > 0 else "b") if sig else ""})
    return pd.DataFrame(rows, columns=["dataset", "n", "mean_a", "mean_b", "diff", "t", "p", "significant",
                                       "higher"])
