"""Published against reproduced: one image per study, every primary cell of its comparisons as a point.

x is the published number, y the mean of our runs with ± one standard deviation over them as its error bar; the
y = x line is perfect agreement, and a grey bar centred on that line at each point's x spans the values of our mean
that agree with the published one (± :data:`~forestlab.report.model.AGREEMENT_STDS` standard deviations of the
difference, the same test as the tables' ✓/✗, read back from the comparison's standardised difference ``z``), so a
point agrees when it lies inside its grey bar. Metrics are drawn in panels of their own (an AUC and an instability do
not share a scale). Only the cells the study reports as results are drawn (``Comparison.scored``, where the model has
it; every comparison otherwise), and of those only the ones with a published number and a run.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from forestlab.plotting import metric_words
from forestlab.report.model import AGREE, AGREEMENT_STDS, DISAGREE, Comparison

__all__ = ["PvrPlot", "draw_pvr", "plotted", "study_pvr"]

_STYLE = {AGREE: ("o", "#2a8a3e", "agrees"), DISAGREE: ("^", "#c0392b", "disagrees")}


@dataclass(frozen=True)
class PvrPlot:
    """A study's published-vs-reproduced plot: its image relative to the site root (None: nothing to draw, ``note``
    says why), how many cells it draws, and the caption that explains its marks."""

    image: str | None
    cells: int
    note: str = ""
    caption: str = ""


def plotted(comparisons: Sequence[Comparison]) -> list[Comparison]:
    """The cells a plot draws: primary (``scored``, where the model says), with a published number and a run."""
    return [c for c in comparisons
            if getattr(c, "scored", True) and c.n > 0 and math.isfinite(c.published) and math.isfinite(c.value)]


def _agreement_halfwidth(c: Comparison) -> float:
    """How far our mean may lie from the published number and agree (NaN when the cell is not judged)."""
    if c.mark not in (AGREE, DISAGREE):
        return float("nan")
    z = c.z
    if math.isfinite(z) and z != 0 and math.isfinite(c.diff) and c.diff != 0:
        return AGREEMENT_STDS * abs(c.diff / z)  # the standard deviation the test used, whatever its method
    return AGREEMENT_STDS * c.spread if c.spread > 0 else float("nan")


CAPTION = (
    "Each point is one published number the study reports as a result (x) against the mean of our runs of the same "
    "cell (y); its vertical error bar is ± one standard deviation over our runs and its horizontal one, where the "
    "study prints it, the published ± std. The diagonal is y = x (perfect agreement). The grey bar at each point "
    f"spans the means that would agree with the published number (± {AGREEMENT_STDS:g} standard deviations of the "
    "difference, as in the tables' ✓/✗): green circles lie inside theirs (agree), red triangles outside (disagree), "
    "hollow grey circles are cells with no spread to judge against (a single run, or one statistic over all runs). "
    "One panel per metric.")


def draw_pvr(comparisons: Sequence[Comparison], path: Path, title: str) -> int:
    """Draw the published-vs-reproduced plot of ``comparisons`` to ``path`` (PNG); returns how many cells it drew
    (0: nothing is written)."""
    cells = plotted(comparisons)
    if not cells:
        return 0
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = list(dict.fromkeys(c.metric for c in cells))
    ncols = min(2, len(metrics))
    nrows = math.ceil(len(metrics) / ncols)
    side = 3.9 if ncols == 2 else 5.4
    fig, axes = plt.subplots(nrows, ncols, figsize=(side * ncols, side * nrows + 0.5), squeeze=False)
    for ax, metric in zip(axes.flat, metrics, strict=False):
        mine = [c for c in cells if c.metric == metric]
        xs = np.array([c.published for c in mine])
        ys = np.array([c.value for c in mine])
        bars = np.array([c.spread if c.n > 1 and math.isfinite(c.spread) else 0.0 for c in mine])
        pub_bars = np.array([c.published_spread if math.isfinite(c.published_spread) else 0.0 for c in mine])
        half = np.array([_agreement_halfwidth(c) for c in mine])
        lo = float(np.nanmin(np.concatenate([xs - pub_bars, ys - bars, xs - np.nan_to_num(half)])))
        hi = float(np.nanmax(np.concatenate([xs + pub_bars, ys + bars, xs + np.nan_to_num(half)])))
        pad = 0.05 * (hi - lo) if hi > lo else max(abs(hi), 1.0) * 0.05
        lo, hi = lo - pad, hi + pad
        ax.plot([lo, hi], [lo, hi], color="0.3", lw=0.9, ls="--", zorder=1, label="y = x")
        ok = np.isfinite(half)
        if ok.any():
            ax.bar(xs[ok], 2 * half[ok], bottom=xs[ok] - half[ok], width=0.012 * (hi - lo), color="0.6",
                   alpha=0.45, zorder=0, label="agreement band")
        for mark, (marker, color, label) in _STYLE.items():
            sel = np.array([c.mark == mark for c in mine])
            if sel.any():
                ax.errorbar(xs[sel], ys[sel], yerr=bars[sel], xerr=pub_bars[sel], fmt=marker, color=color, ms=5,
                            elinewidth=0.8, capsize=1.5, zorder=3, label=f"{label} ({int(sel.sum())})")
        rest = np.array([c.mark not in _STYLE for c in mine])
        if rest.any():
            ax.errorbar(xs[rest], ys[rest], xerr=pub_bars[rest], fmt="o", mfc="none", color="0.45", ms=5,
                        elinewidth=0.8, zorder=2, label=f"not judged ({int(rest.sum())})")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        ax.set_aspect("equal", adjustable="box")
        words = metric_words(metric)
        ax.set_title(f"{words} ({len(mine)} cells)", fontsize=10)
        ax.set_xlabel(f"published {words}")
        ax.set_ylabel(f"reproduced {words} (our mean)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="best")
    for ax in list(axes.flat)[len(metrics):]:
        ax.set_visible(False)
    fig.suptitle("\n".join(textwrap.wrap(title, int(fig.get_figwidth() * 11))), fontsize=11)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return len(cells)


def study_pvr(key: str, comparisons: Sequence[Comparison], site: Path, rel: str) -> PvrPlot:
    """The published-vs-reproduced plot of study ``key`` drawn to ``site / rel`` (or why there is none)."""
    if not comparisons:
        return PvrPlot(None, 0, "No published-vs-reproduced plot: none of this study's experiments compares a "
                                "table with published numbers.")
    n = draw_pvr(comparisons, site / rel, f"{key}: published against reproduced, every primary cell with a run")
    if not n:
        return PvrPlot(None, 0, "No published-vs-reproduced plot yet: no published cell that the study reports as a "
                                "result has a run stored for this configuration.")
    return PvrPlot(rel, n, caption=CAPTION)
