"""What every figure shares, below the report and the studies: the registry of drawings and the panel helpers.

A figure kind has two halves. Its declaration (the options its drawing reads) is registered in
:mod:`forestlab.spec`, so ``forestlab run --dry-run`` checks a figure before any run; its drawing (a function of an
:class:`~forestlab.results.ExperimentResults` and a :class:`~forestlab.spec.FigureSpec` returning a matplotlib
figure) is registered here. :func:`figure_kind` registers both at once: a study declares and draws its own kinds in
its module under :mod:`forestlab.studies`, the kinds that serve several studies live in
:mod:`forestlab.report.figures`, and :func:`forestlab.report.figures.render_figures` looks each figure's drawing up
with :func:`drawing`, naming no study.

The helpers (a grid of panels, the title, the ROC axes and ROC*) are here rather than in the report so that a study's
drawings use them without importing the report, which stands above the studies.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable
from typing import Any

import numpy as np

from forestlab.errors import ConfigError
from forestlab.metrics import ROC_GRID
from forestlab.results import ExperimentResults
from forestlab.spec import Field, FigureSpec, figure_kinds, register_figure_kind

__all__ = ["Drawing", "caption", "caption_of", "drawing", "drawings", "figure_algorithms", "figure_kind",
           "figure_title", "finish", "grid_shape", "metric_words", "panel_size", "n_trees_axis", "optimal_roc_line",
           "register_drawing", "roc_frame", "roc_panel"]

#: A drawing: the figure of a kind, from the runs and the figure's spec (a matplotlib Figure).
Drawing = Callable[[ExperimentResults, FigureSpec], Any]
_DRAWINGS: dict[str, Drawing] = {}


def register_drawing(kind: str, draw: Drawing) -> Drawing:
    """Register ``draw`` as the drawing of the declared figure kind ``kind`` (again: replaces it)."""
    if kind not in figure_kinds():
        raise ValueError(f"figure kind {kind!r} has no declaration: register it with forestlab.spec first")
    _DRAWINGS[kind] = draw
    return draw


def figure_kind(name: str, doc: str = "", **options: Field) -> Callable[[Drawing], Drawing]:
    """Decorator: declare the figure kind ``name`` with its ``options`` (:func:`forestlab.spec.register_figure_kind`)
    and register the decorated function as its drawing."""

    def register(draw: Drawing) -> Drawing:
        register_figure_kind(name, doc or (draw.__doc__ or "").split("\n")[0], **options)
        return register_drawing(name, draw)

    return register


def drawing(kind: str) -> Drawing:
    """The drawing of a figure kind; a declared kind nobody draws is a clear error, not a KeyError."""
    try:
        return _DRAWINGS[kind]
    except KeyError:
        raise ConfigError(f"figure kind {kind!r} is declared but has no drawing registered "
                          "(forestlab.plotting.register_drawing)") from None


def drawings() -> dict[str, Drawing]:
    """The registered drawings, by kind."""
    return dict(_DRAWINGS)


def caption(fig: Any, *sentences: str) -> Any:
    """Add ``sentences`` to the caption of ``fig``: what its bands, error bars and marks are. The report shows the
    caption under the figure (:func:`forestlab.report.figures.render_figures` writes it beside the PNG), so a
    drawing says there, in words, what a reader cannot see on the image."""
    fig._forestlab_caption = [*_caption_list(fig), *(s.strip() for s in sentences if s and s.strip())]
    return fig


def _caption_list(fig: Any) -> list[str]:
    return list(getattr(fig, "_forestlab_caption", []))


def caption_of(fig: Any) -> str:
    """The caption a drawing gave ``fig`` ('' when none)."""
    return " ".join(_caption_list(fig))


_METRIC_WORDS = {
    "auc": "AUC", "risk": "error rate", "error": "error rate", "accuracy": "accuracy",
    "reject": "rejection rate", "instability": "instability Instab_N",
    "truncated_auc": "truncated AUC, top 10% of the ranking", "max_depth": "tree depth", "depth": "tree depth",
}
_PREFIX_WORDS = {"test": "test", "train": "training", "oob": "out-of-bag", "est": "estimated"}


def metric_words(metric: str) -> str:
    """A metric's name in words for an axis or a legend: ``test_auc`` -> 'test AUC',
    ``test_truncated_auc_20_fractional`` -> 'test truncated AUC, top 20% of the ranking',
    ``test_risk`` -> 'test error rate';
    a name it does not know is shown with spaces for underscores."""
    m = str(metric)
    prefix = ""
    head, _, rest = m.partition("_")
    if rest and head in _PREFIX_WORDS:
        prefix, m = _PREFIX_WORDS[head] + " ", rest
    for kind in ("truncated_auc", "partial_auc"):
        if m.startswith(kind + "_"):
            level = m[len(kind) + 1:].split("_")[0]
            if level.isdigit():
                return f"{prefix}{kind.split('_')[0]} AUC, top {int(level)}% of the ranking"
    return prefix + _METRIC_WORDS.get(m, m.replace("_", " "))


def optimal_roc_line(ax: Any, res: ExperimentResults, dataset: str) -> None:
    """Draw the dataset's optimal ROC curve ROC* (solid red, as depecker2010 draws it) when its runs recorded one
    (a generated problem whose optimal ranking is known)."""
    info = res.datasets_info.get(dataset) or {}
    if info.get("roc_star_tpr"):
        ax.plot(ROC_GRID, np.asarray(info["roc_star_tpr"], dtype=float), color="red", lw=1.2,
                label=f"ROC* (AUC* {float(info['auc_star']):.3f})")


#: The widest a figure is drawn, in inches (at 130 dpi, 1040 px): the report shows a figure about 750 px wide, so
#: a 9-point tick label stays about 11 px high there. Wider figures shrank their labels to 5 px (issue 21).
MAX_WIDTH_IN = 8.0


def grid_shape(n: int) -> tuple[int, int]:
    """Rows and columns of a grid of ``n`` panels, at most two a row (see :data:`MAX_WIDTH_IN`)."""
    ncols = max(1, min(2, n))
    return math.ceil(n / ncols), ncols


def panel_size(ncols: int, width: float, height: float) -> tuple[float, float]:
    """Width and height (inches) of one panel of a figure ``ncols`` panels wide: ``width`` x ``height``, both shrunk
    alike when the row would be wider than :data:`MAX_WIDTH_IN`."""
    scale = min(1.0, MAX_WIDTH_IN / (width * max(1, ncols)))
    return width * scale, height * max(scale, 0.8)


def finish(fig: Any, axes: Any, used: int, spec: FigureSpec, rect: tuple[float, ...] | None = None):
    """Hide the panels past the ``used`` first, title the figure, lay it out."""
    for ax in list(axes.flat)[used:]:
        ax.set_visible(False)
    figure_title(fig, spec)
    fig.tight_layout(**({"rect": rect} if rect else {}))
    return fig


def figure_title(fig: Any, spec: FigureSpec) -> None:
    """The figure's title, wrapped to its width (a one-panel figure is narrow)."""
    width = max(30, int(fig.get_figwidth() * 12))
    fig.suptitle("\n".join(textwrap.wrap(spec.title, width)), fontsize=11)


def roc_frame(ax: Any) -> None:
    """The chance diagonal and the axis labels of a ROC panel."""
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--")
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")


def roc_panel(ax: Any, res: ExperimentResults, dataset: str, drawn: int) -> None:
    """A dataset's ROC panel around its curves: ROC* where known, the diagonal, the title and the labels."""
    optimal_roc_line(ax, res, dataset)
    roc_frame(ax)
    ax.set_title(dataset + ("" if drawn else "  [no runs yet]"), fontsize=10)


def n_trees_axis(res: ExperimentResults, algorithm: str, dataset: str, length: int) -> np.ndarray:
    """The x axis of a curve against the number of trees: the stored ``n_trees`` curve when there is one."""
    x = res.curve(algorithm, "n_trees", dataset)
    return x[0, :length] if x.size and x.shape[1] >= length else np.arange(1, length + 1)


def figure_algorithms(res: ExperimentResults, spec: FigureSpec) -> list[str]:
    """The algorithms a figure draws: its ``algorithms`` option, else every algorithm of the runs."""
    return [str(a) for a in (spec.options["algorithms"] or res.algorithms)]
