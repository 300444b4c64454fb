"""Significance tests for comparing learners on the same splits, and the one head-to-head table built on them.

Runs of two algorithms are paired by (dataset, repetition, fold), which the runner guarantees share one split (and,
for learners sharing a ``seed_tag``, the same trees). Per dataset: a two-sided *paired* t-test over the splits
(pisetta2010's '*' marks: Student's t-test at 5%, digest §004.5.10, read as paired since both methods see the
same splits); across datasets: win/tie/loss counts on the means rounded as the studies print them, and a Wilcoxon
signed-rank test on the per-dataset mean differences. Whether a win is a lower or a higher value is the metric's
own direction (:func:`forestlab.metrics.direction`): risk lower, accuracy and AUC higher.

A table spec asks for the head to head with ``pairs``::

    tables:
      - name: table7_2
        pairs: [[sorf, rf], [mincq, rf], [sorf, mincq]]   # [A, B]: does A beat B?
        pair_metric: test_risk                             # default test_risk
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from forestlab._cache import memo_float
from forestlab.errors import ConfigError
from forestlab.metrics import direction

if TYPE_CHECKING:  # stats reads results; results never needs stats
    from forestlab.results import ExperimentResults
    from forestlab.spec import TableSpec

__all__ = ["ALPHA", "PairSummary", "TTest", "higher_is_better", "one_sample_t_test", "pair_table", "paired_t_test",
           "paired_values", "pairs_of", "wilcoxon_pvalue"]

ALPHA = 0.05
_EQUAL = 1e-12  # differences within this of each other (or of 0) count as equal (float rounding of a - b)


@dataclass(frozen=True)
class TTest:
    """Result of a two-sided t-test: mean difference (a - b, or values - mu), statistic, p-value, sample size."""

    mean_diff: float
    t: float
    p: float
    n: int

    def significant(self, alpha: float = ALPHA) -> bool:
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
    p = 2 * memo_float("student_t_sf", f"{n - 1}:{abs(t)!r}:scipy {_scipy_version()}".encode(),
                       lambda: _student_t_sf(n - 1, abs(t)))
    return TTest(mean, float(t), p, n)


def _student_t_sf(df: int, t: float) -> float:
    """Student's t survival function as scipy.stats.t.sf computes it (t_gen._sf is stdtr(df, -x): the same
    numbers), from scipy.special alone; memoised by the caller, as importing scipy.special costs ~0.2 s, more than
    `forestlab compare` spends testing."""
    from scipy.special import stdtr

    return float(stdtr(df, -t))


@functools.lru_cache(maxsize=1)
def _scipy_version() -> str:
    from importlib.metadata import version

    return version("scipy")


def paired_t_test(a: np.ndarray, b: np.ndarray) -> TTest:
    """Two-sided paired t-test of mean(a - b) = 0 (pairs with a non-finite side are dropped); p = 1 when every
    difference is zero, 0 when every difference is the same non-zero shift, NaN under two pairs.

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


def wilcoxon_pvalue(diffs: np.ndarray) -> float:
    """Two-sided Wilcoxon signed-rank p-value of per-dataset differences (zeros split between the signs)."""
    d = np.asarray(diffs, float)
    d = d[np.isfinite(d)]
    # a difference within float rounding of 0 (two equal means summed in another order) is a zero, as in the t-test
    d = np.where(np.abs(d) <= _EQUAL, 0.0, d)
    if d.size < 2 or np.all(d == 0):
        return float("nan") if d.size < 2 else 1.0
    def compute() -> float:
        exact = _signflip_pvalue(d)
        if exact is not None:
            return exact
        from scipy import stats  # local: ~0.5 s to import, paid once per input (the memo below)

        return float(stats.wilcoxon(d, zero_method="zsplit").pvalue)

    # a pure function of the differences (and scipy's version): `forestlab compare` tests the same pairs each time
    key = f"{d.dtype.str}:{d.shape}:scipy {_scipy_version()}:zsplit:".encode() + np.ascontiguousarray(d).tobytes()
    return memo_float("wilcoxon", key, compute)


#: scipy's ``wilcoxon`` enumerates every sign flip when there are ties or zeros and at most this many differences.
_SIGNFLIP_MAX_N = 13


def _signflip_pvalue(d: np.ndarray) -> float | None:
    """``scipy.stats.wilcoxon(d, zero_method="zsplit").pvalue`` in the case it computes by an exact permutation
    test (ties or zeros among at most 13 differences: ``method="auto"`` then calls ``permutation_test`` over the
    2**n sign flips, one Python call of the statistic each, about a second per test), computed at once over all the
    flips; None in the other cases (scipy's own exact or normal computation, fast, is used).

    The same numbers: the signed-rank sums of the flips are sums of half-ranks, exact in floating point, so each
    flip's statistic is the value scipy computes; the p-value is scipy's two-sided count, min(#{T <= t}, #{T >= t})
    / 2**n * 2 clipped to 1 (its tolerance of 100 eps times t cannot reach the 0.25 between two distinct values).
    tests/test_pairwise.py checks equality with scipy on random samples with ties and zeros.
    """
    n = d.size
    magnitude = np.abs(d)
    zeros = d == 0
    if n > _SIGNFLIP_MAX_N or not (zeros.any() or np.unique(magnitude).size < n):
        return None
    from scipy.stats import rankdata

    ranks = rankdata(magnitude, method="average")
    base = float(ranks[zeros].sum()) / 2  # zsplit: half of the zeros' ranks on each side
    observed = float(ranks[d > 0].sum()) + base
    # every sign pattern of the n differences (zeros included: flipping one changes nothing, as in scipy's 2**n)
    bits = (np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]) & 1
    positive = np.where(zeros, 0.0, ranks)  # a zero is never > 0, whatever its sign
    null = bits @ positive + base
    gamma = abs(np.finfo(np.float64).eps * 100 * observed)
    less = np.count_nonzero(null <= observed + gamma) / 2 ** n
    greater = np.count_nonzero(null >= observed - gamma) / 2 ** n
    return float(min(max(min(less, greater) * 2, 0.0), 1.0))


def paired_values(res: ExperimentResults, a: str, b: str, metric: str, dataset: str) -> tuple[np.ndarray, np.ndarray]:
    """The metric of A and of B on the splits where both ran, aligned by (repetition, fold) (a missing fold as -1:
    NaN would never equal itself)."""
    splits_a, va = res.split_values(a, metric, dataset)
    splits_b, vb = res.split_values(b, metric, dataset)
    b_by_split = dict(zip(splits_b, vb.tolist(), strict=True))
    xa, xb = [], []
    for split, value in zip(splits_a, va.tolist(), strict=True):
        other = b_by_split.get(split)
        if other is not None and np.isfinite(value) and np.isfinite(other):
            xa.append(value)
            xb.append(other)
    return np.asarray(xa, float), np.asarray(xb, float)


def higher_is_better(metric: str) -> bool:
    """The direction of a stored metric name; a ConfigError when forestlab does not know it (a comparison would
    not know who wins)."""
    better = direction(metric)
    if better is None:
        raise ConfigError(f"cannot say who wins on '{metric}': forestlab does not know whether higher is better "
                          "(compare on a registered metric such as test_risk or test_auc)")
    return bool(better)


@dataclass(frozen=True)
class PairSummary:
    """Across datasets: counts and the Wilcoxon signed-rank test on the per-dataset mean differences."""

    a: str
    b: str
    metric: str
    higher_is_better: bool
    n_datasets: int
    wins: int  # A better than B after rounding to `digits` (the studies' reading of their tables)
    ties: int
    losses: int
    sig_wins: int  # A better than B, paired t-test p < alpha
    sig_losses: int
    mean_a: float
    mean_b: float
    diffs: tuple[float, ...] = field(default=(), repr=False)  # per-dataset mean differences A - B
    alpha: float = ALPHA

    @cached_property
    def wilcoxon_p(self) -> float:
        """Two-sided Wilcoxon signed-rank p-value of :attr:`diffs` (NaN without datasets), computed when first
        read: claims that read only the per-dataset table on hundreds of resamples never pay for it (scipy's
        exact null distribution, on ties, takes about a second)."""
        return wilcoxon_pvalue(np.asarray(self.diffs, float)) if self.diffs else float("nan")

    def line(self) -> str:
        p = "—" if math.isnan(self.wilcoxon_p) else f"{self.wilcoxon_p:.3g}"
        better = "higher" if self.higher_is_better else "lower"
        return (f"{self.a} vs {self.b} ({self.metric}, {better} is better), {self.n_datasets} datasets: "
                f"{self.wins} W / {self.ties} T / {self.losses} L on the rounded means; "
                f"significant (paired t-test over seeds, p < {self.alpha:g}): {self.sig_wins} W / {self.sig_losses} L; "
                f"mean {self.mean_a:.4f} vs {self.mean_b:.4f}; Wilcoxon signed-rank across datasets p = {p}")


PAIR_COLUMNS = ["dataset", "n", "mean_a", "mean_b", "diff", "t", "p", "outcome", "significant", "higher"]


def pair_table(res: ExperimentResults, a: str, b: str, metric: str = "test_risk", *, digits: int = 3,
               alpha: float = ALPHA) -> tuple[pd.DataFrame, PairSummary]:
    """Per dataset: paired means of A and B, A - B, the paired t-test, the outcome for A (W/T/L on the means
    rounded to ``digits``, in the metric's direction), the significant outcome ("W", "L" or ""), and which side is
    significantly higher ("a", "b" or ""); plus the summary across datasets.
    """
    up = higher_is_better(metric)
    rows = []
    for dataset in res.datasets:
        xa, xb = paired_values(res, a, b, metric, dataset)
        if xa.size == 0:
            continue
        ma, mb = float(xa.mean()), float(xb.mean())
        ra, rb = round(ma, digits), round(mb, digits)
        test = paired_t_test(xa, xb)
        sig = test.significant(alpha)
        a_better, b_better = (ra > rb, ra < rb) if up else (ra < rb, ra > rb)
        a_sig_better = (ma > mb) if up else (ma < mb)
        rows.append({"dataset": dataset, "n": int(xa.size), "mean_a": ma, "mean_b": mb, "diff": ma - mb,
                     "t": test.t, "p": test.p, "outcome": "W" if a_better else "L" if b_better else "T",
                     "significant": ("W" if a_sig_better else "L") if sig else "",
                     "higher": ("a" if ma > mb else "b") if sig else ""})
    table = pd.DataFrame(rows, columns=PAIR_COLUMNS)
    summary = PairSummary(
        a=a, b=b, metric=metric, higher_is_better=up, n_datasets=len(table),
        wins=int((table["outcome"] == "W").sum()), ties=int((table["outcome"] == "T").sum()),
        losses=int((table["outcome"] == "L").sum()),
        sig_wins=int((table["significant"] == "W").sum()), sig_losses=int((table["significant"] == "L").sum()),
        mean_a=float(table["mean_a"].mean()) if len(table) else float("nan"),
        mean_b=float(table["mean_b"].mean()) if len(table) else float("nan"),
        diffs=tuple(table["diff"].astype(float).tolist()), alpha=alpha)
    return table, summary


def pairs_of(spec: TableSpec) -> list[tuple[str, str]]:
    """The ``pairs`` of a table spec as (A, B) tuples."""
    return list(spec.pairs)
