"""Several learners on several datasets, compared as Demšar (2006) recommends: the Friedman test on the ranks of the
learners within each dataset, then the Nemenyi post hoc test, drawn as a critical-difference (CD) diagram.

J. Demšar, "Statistical comparisons of classifiers over multiple data sets", JMLR 7:1-30, 2006. Each dataset is a
block; on each, the learners are ranked by their mean over the seeds (rank 1 = best in the metric's direction; ties
share the average rank). Friedman's chi-square tests whether the average ranks differ more than chance would make
them; Iman and Davenport's F, which Demšar prefers (chi-square is conservative), is given beside it. Two learners
differ by Nemenyi's test when their average ranks differ by at least the critical difference
``CD = q_alpha * sqrt(k (k + 1) / (6 N))``, q_alpha being the studentized range quantile divided by sqrt(2).

The statistics come from libraries, not from code of ours: ``scipy.stats.friedmanchisquare`` (with its tie
correction) and ``scipy.stats.studentized_range`` for the quantile; scikit-posthocs
(``posthoc_nemenyi_friedman``, ``critical_difference_diagram``) for the Nemenyi p-values and the diagram. Only
Iman and Davenport's one-line transformation of chi-square is written here.

Which comparisons a table makes (:func:`comparisons`): per metric of known direction, the algorithms of the table's
cells of that metric, plus the algorithms of its ``pairs`` when the metric is its ``pair_metric``; a comparison needs
at least three algorithms (two are what the paired tests of :mod:`forestlab.stats` are for) and two datasets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from forestlab.metrics import direction
from forestlab.results import ExperimentResults, summarise
from forestlab.spec import TableSpec
from forestlab.stats import higher_is_better

__all__ = ["MIN_DATASETS_DIAGRAM", "Comparison", "FriedmanResult", "comparisons", "draw_cd_diagram",
           "friedman_nemenyi", "score_matrix"]

MIN_ALGORITHMS = 3
#: The least datasets for which the statistics are computed at all (one dataset ranks nothing).
MIN_DATASETS = 2
#: The least datasets for which the report draws a critical-difference diagram. Friedman's statistic is referred to
#: its chi-square approximation, which Demšar (2006, §3.2.2) calls good only "when N and k are big enough (as a
#: rule of a thumb, N > 10 and k > 5)", and the Nemenyi critical difference rests on the same large-sample
#: normal ranks; below about ten datasets the diagram would draw as settled a difference the test cannot carry
#: (with N = 3 and k = 3 the CD exceeds the whole rank range). So with fewer datasets the report shows the
#: average ranks and the statistics with their caution, and one line saying why there is no diagram. We keep
#: k >= 3 (:data:`MIN_ALGORITHMS`, two learners are the Wilcoxon test's) rather than Demšar's k > 5: with many
#: datasets the approximation is usable at small k (Iman-Davenport's F, given beside it, even more so).
MIN_DATASETS_DIAGRAM = 10


@dataclass(frozen=True)
class Comparison:
    """A table's comparison of ``algorithms`` on ``metric`` (``measure`` when the cells are statistics over runs)."""

    metric: str
    algorithms: tuple[str, ...]
    measure: bool = False


@dataclass(frozen=True)
class FriedmanResult:
    """The Friedman test, the average ranks and the Nemenyi post hoc test of one comparison.

    ``scores`` holds the per-dataset means used (complete datasets only); ``dropped`` the datasets left out because
    a learner has no value there; ``ranks`` the average ranks, best first; ``nemenyi`` the matrix of Nemenyi
    p-values; ``cd`` the critical difference at ``alpha``.
    """

    metric: str
    higher_is_better: bool
    scores: pd.DataFrame
    dropped: tuple[str, ...]
    ranks: pd.Series
    chi2: float
    p: float
    iman_davenport_f: float
    iman_davenport_p: float
    nemenyi: pd.DataFrame
    cd: float
    alpha: float

    @property
    def n_datasets(self) -> int:
        return int(self.scores.shape[0])

    @property
    def n_algorithms(self) -> int:
        return int(self.scores.shape[1])

    @property
    def significant(self) -> bool:
        """Whether the Friedman test (Iman-Davenport's F) rejects equal average ranks at ``alpha``."""
        return bool(self.iman_davenport_p < self.alpha)

    def different_pairs(self) -> list[tuple[str, str]]:
        """Pairs (better, worse) whose Nemenyi p-value is below ``alpha``."""
        names = list(self.ranks.index)
        out = []
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                if float(self.nemenyi.loc[a, b]) < self.alpha:
                    out.append((a, b))
        return out

    def caution(self) -> str:
        """What the reader should know about the size of the comparison ('' when nothing)."""
        n, k = self.n_datasets, self.n_algorithms
        notes = []
        if n < 10 or k < 5:
            notes.append(f"with N = {n} datasets and k = {k} learners the chi-square approximation is rough "
                         "(Demšar: N > 10 and k > 5); Iman-Davenport's F is the one to read")
        if n < 5:
            notes.append("so few datasets can hardly show any difference as significant")
        return "; ".join(notes)


def comparisons(spec: TableSpec) -> list[Comparison]:
    """The multi-learner comparisons a table spec makes (see the module docstring), in the order of its cells."""
    by_metric: dict[tuple[str, bool], list[str]] = {}
    for cell in spec.cells:
        name, measure = (cell.metric, False) if cell.metric is not None else (cell.measure, True)
        if name is None or direction(name) is None:
            continue
        algs = by_metric.setdefault((name, measure), [])
        if cell.algorithm not in algs:
            algs.append(cell.algorithm)
    if spec.pairs and direction(spec.pair_metric) is not None:
        algs = by_metric.setdefault((spec.pair_metric, False), [])
        for pair in spec.pairs:
            for side in pair:
                if side not in algs:
                    algs.append(side)
    return [Comparison(metric, tuple(algs), measure) for (metric, measure), algs in by_metric.items()
            if len(algs) >= MIN_ALGORITHMS]


def score_matrix(res: ExperimentResults, comparison: Comparison) -> pd.DataFrame:
    """Datasets x algorithms: each algorithm's mean over the seeds on each dataset (the measure's value for a
    measure), NaN where it has no run."""
    rows = {}
    for dataset in res.datasets:
        row = {}
        for algorithm in comparison.algorithms:
            if comparison.measure:
                row[algorithm] = res.measure(algorithm, comparison.metric, dataset)
            else:
                row[algorithm] = summarise(res.values(algorithm, comparison.metric, dataset)["value"].to_numpy())[0]
        rows[dataset] = row
    return pd.DataFrame.from_dict(rows, orient="index", columns=list(comparison.algorithms), dtype=float)


def friedman_nemenyi(scores: pd.DataFrame, metric: str, *, alpha: float = 0.05) -> FriedmanResult | None:
    """The Friedman and Nemenyi tests on a datasets x algorithms matrix of ``metric`` (None when fewer than
    :data:`MIN_DATASETS` datasets have a value for every algorithm, or fewer than :data:`MIN_ALGORITHMS`
    algorithms)."""
    import scikit_posthocs as sp
    from scipy import stats as _st  # here: ~0.6 s to import, and a report whose sections are kept tests nothing

    up = higher_is_better(metric)
    complete = scores.dropna(axis=0, how="any")
    dropped = tuple(str(d) for d in scores.index if d not in complete.index)
    n, k = complete.shape
    if n < MIN_DATASETS or k < MIN_ALGORITHMS:
        return None
    oriented = -complete if up else complete  # rank 1 = best, whatever the metric's direction
    ranks = pd.Series(_st.rankdata(oriented.to_numpy(), axis=1).mean(axis=0), index=complete.columns)
    ranks = ranks.sort_values(kind="stable")
    if np.all(oriented.to_numpy() == oriented.to_numpy()[:, :1]):  # every learner tied on every dataset
        chi2, p = 0.0, 1.0
    else:
        res = _st.friedmanchisquare(*(oriented[c].to_numpy() for c in oriented.columns))
        chi2, p = float(res.statistic), float(res.pvalue)
    denom = n * (k - 1) - chi2
    f = (n - 1) * chi2 / denom if denom > 0 else math.inf
    f_p = float(_st.f.sf(f, k - 1, (k - 1) * (n - 1))) if math.isfinite(f) else 0.0
    nemenyi = sp.posthoc_nemenyi_friedman(oriented.to_numpy())
    nemenyi.index = nemenyi.columns = list(complete.columns)
    q_alpha = float(_st.studentized_range.ppf(1 - alpha, k, np.inf)) / math.sqrt(2)
    cd = q_alpha * math.sqrt(k * (k + 1) / (6.0 * n))
    return FriedmanResult(metric=metric, higher_is_better=up, scores=complete, dropped=dropped, ranks=ranks,
                          chi2=chi2, p=p, iman_davenport_f=f, iman_davenport_p=f_p, nemenyi=nemenyi, cd=cd,
                          alpha=alpha)


def draw_cd_diagram(result: FriedmanResult, path: Path, *, title: str = "") -> Path:
    """Draw the critical-difference diagram (average ranks on an axis, rank 1 = best, the CD drawn as a bar above
    it, learners the Nemenyi test cannot tell apart joined by a thick line) to ``path`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import scikit_posthocs as sp
    from matplotlib.transforms import offset_copy

    k = result.n_algorithms
    fig, ax = plt.subplots(figsize=(7.5, 1.5 + 0.32 * k))
    sp.critical_difference_diagram(result.ranks, result.nemenyi, alpha=result.alpha, ax=ax,
                                   label_fmt_left="{label} ({rank:.2f})", label_fmt_right="({rank:.2f}) {label}",
                                   label_props={"fontsize": 9})
    lo, hi = 1, max(k, 2)
    ax.set_xlim(lo - 0.4, max(hi + 0.4, lo + result.cd + 0.15))
    ax.set_xticks(range(lo, hi + 1))
    # the CD as a bar from rank 1, above the axis and its tick labels (Demšar's Fig. 1)
    above = offset_copy(ax.transData, fig=fig, y=26, units="points")
    ax.plot([lo, lo + result.cd], [0, 0], color="k", lw=1.5, transform=above, clip_on=False)
    for x in (lo, lo + result.cd):
        ax.plot([x, x], [0, 0], marker="|", markersize=7, color="k", transform=above, clip_on=False)
    ax.text(lo + result.cd / 2, 0, f"CD = {result.cd:.2f} (Nemenyi, alpha = {result.alpha:g})", ha="center",
            va="bottom", fontsize=8, transform=offset_copy(ax.transData, fig=fig, y=29, units="points"))
    better = "higher" if result.higher_is_better else "lower"
    ax.set_title(title or f"{result.metric} ({better} is better): average rank over {result.n_datasets} datasets, "
                 "1 = best", fontsize=9, pad=44)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
