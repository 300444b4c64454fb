"""Figures (PNG and PDF, matplotlib Agg) drawn from the stored runs and arrays.

:func:`render_figures` draws every figure of an experiment: it looks the drawing of each figure's kind
(``experiment.figures[i].kind``) up in the registry of :mod:`forestlab.plotting` and names no study. A kind is declared
(the options its drawing reads, checked by :mod:`forestlab.spec` before any run) and drawn where it is used:

- here, the kinds that serve several studies: ``error_curves`` (one panel per dataset, several named curves of one
  algorithm against the number of trees: zirakiza2013, the courses, quickstart);
- in its study's module, a kind only that study draws: :mod:`forestlab.studies.courses_figures`
  (``curves_by_algorithm``, ``importance``, ``metric_boxes``), :mod:`forestlab.studies.pisetta2010_figures`
  (``paired_diff``), :mod:`forestlab.studies.depecker2010_figures` (``roc_envelope``, ``metric_and_measure``,
  ``bars``, ``metric_by_depth``, ``roc_at_depth``, ``partition_2d``, ``optimal_roc``, ``metric_by_x``).

Any figure may name the ``datasets`` it draws (default: all of the experiment's). Figures read only the stored runs
(values, arrays, and what runs recorded about their datasets, such as feature names): they never load a dataset.

Each drawing says in words what its bands, error bars and marks are (:func:`forestlab.plotting.caption`);
:func:`render_figures` writes that caption to ``<name>.caption.txt`` beside the PNG and the report shows it under the
figure. Figures are at most :data:`forestlab.plotting.MAX_WIDTH_IN` wide (two panels a row, or stacked), so their
labels stay legible at the width the report shows them; published values a study prints are overlaid in black or
hollow marks labelled "published" (the ``published`` option of the kinds that have one).
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import numpy as np

from forestlab.plotting import caption, caption_of, drawing, figure_title, finish, grid_shape, register_drawing
from forestlab.results import ExperimentResults
from forestlab.spec import FigureSpec


def error_curves(res: ExperimentResults, spec: FigureSpec):
    """One panel per dataset: the mean (± one std band) of each named curve against the number of trees."""
    import matplotlib.pyplot as plt

    datasets = res.datasets
    nrows, ncols = grid_shape(len(datasets))
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.0 * ncols, 3.2 * nrows), squeeze=False)
    algorithm = str(spec.options["algorithm"] or res.algorithms[0])
    banded = False
    for ax, (letter, dataset) in zip(axes.flat, zip("abcdefghijklmnopqrstuvwxyz", datasets, strict=False),
                                     strict=False):
        n_runs = 0
        for name, label in dict(spec.options["curves"]).items():
            curves = res.curve(algorithm, name, dataset)
            if curves.size == 0:
                continue
            n_runs = curves.shape[0]
            x = np.arange(1, curves.shape[1] + 1)
            with np.errstate(all="ignore"):
                mean = np.nanmean(curves, axis=0)
                std = np.nanstd(curves, axis=0)
            (line,) = ax.plot(x, mean, label=label, lw=1.4)
            if n_runs > 1:
                ax.fill_between(x, mean - std, mean + std, color=line.get_color(), alpha=0.15, lw=0)
                banded = True
        ax.set_title(f"({letter}) {dataset}" + (f"  [{n_runs} runs]" if n_runs else "  [no runs yet]"),
                     fontsize=10)
        ax.set_xlabel("number of trees")
        ax.set_ylabel("error rate")
        ax.grid(alpha=0.3)
        if n_runs:
            ax.legend(fontsize=8)
    caption(fig, f"Each line is the mean, over the runs counted in its panel's title, of {algorithm}'s error rate "
            "named in the legend after each number of trees; " + (
                "the shaded band is ± one standard deviation over those runs (how much one run varies, not the "
                "uncertainty of the mean)." if banded else "one run a panel, so no band is drawn."))
    return finish(fig, axes, len(datasets), spec)


register_drawing("error_curves", error_curves)  # declared in forestlab.spec: quickstart draws it


def _footer(fig: Any, notes: list[str]) -> None:
    """Write ``notes`` (red, small) under the figure, on a strip added below it: the panels, their labels and the
    title keep their places and sizes."""
    width = max(40, int(fig.get_figwidth() * 16))
    lines = [line for note in notes for line in textwrap.wrap(note, width)]
    height = fig.get_figheight()
    extra = 0.14 * len(lines) + 0.1  # inches
    fig.set_figheight(height + extra)
    scale = height / (height + extra)
    for ax in fig.axes:
        pos = ax.get_position()
        ax.set_position([pos.x0, 1 - (1 - pos.y0) * scale, pos.width, pos.height * scale])
    for legend in fig.legends:  # a legend under the panels (loc "lower center") goes up with them
        legend.set_bbox_to_anchor((0.5, 1 - scale), transform=fig.transFigure)
    for text in [fig._suptitle] if fig._suptitle is not None else []:
        x, y = text.get_position()
        text.set_position((x, 1 - (1 - y) * scale))
    fig.text(0.5, 0.005, "\n".join(lines), ha="center", va="bottom", fontsize=7, color="red")


def _nothing_to_draw(res: ExperimentResults, spec: FigureSpec):
    """A figure that says why it has no panel: none of the datasets it names is in these runs (the plan left them
    out, see :meth:`ExperimentResults.left_out_note`)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 2.4))
    ax.axis("off")
    why = (f"none of this figure's datasets ({', '.join(res.left_out)}) is in these runs" if res.left_out
           else "no dataset in these runs")
    ax.text(0.5, 0.5, "\n".join(textwrap.wrap(f"No panel: {why}.", 60)),
            ha="center", va="center", fontsize=10, transform=ax.transAxes)
    figure_title(fig, spec)
    return fig


def caption_path(png: Path) -> Path:
    """Where the caption of the figure ``<name>.png`` is written: ``<name>.caption.txt`` beside it."""
    return png.with_name(png.stem + ".caption.txt")


def read_caption(png: Path) -> str:
    """The caption written beside the figure ``png`` ('' when it has none)."""
    path = caption_path(png)
    return path.read_text(encoding="utf-8").strip() if path.is_file() else ""


def render_figures(res: ExperimentResults, out_dir: Path) -> list[Path]:
    """Draw every figure of the experiment to ``out_dir/<name>.{png,pdf}``, with its caption (what its bands, error
    bars and marks are, as its drawing said with :func:`forestlab.plotting.caption`) in ``<name>.caption.txt``
    beside them: the report shows it under the figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written: list[Path] = []
    for spec in res.figures():
        # its kind and its options were checked with the experiment (forestlab.spec); the algorithms it names must
        # also have runs (an experiment whose list was narrowed on the command line does not run them all)
        for algorithm in spec.algorithms:
            res.check_stored(algorithm, None, f"figure '{spec.name}'")
        view = res.restricted_to(spec)
        fig = drawing(spec.kind)(view, spec) if view.datasets else _nothing_to_draw(view, spec)
        notes = [view.left_out_note()] if view.left_out else []
        if res.shrunk is not None:
            notes.append(res.shrunk.figure_note)
        if notes:
            _footer(fig, notes)
        out_dir.mkdir(parents=True, exist_ok=True)
        for ext in ("png", "pdf"):
            path = out_dir / f"{spec.name}.{ext}"
            fig.savefig(path, dpi=130)
            written.append(path)
        text = caption_of(fig)
        cap = caption_path(out_dir / f"{spec.name}.png")
        if text:
            cap.write_text(text + "\n", encoding="utf-8")
            written.append(cap)
        else:
            cap.unlink(missing_ok=True)  # an older drawing's caption must not outlive it
        plt.close(fig)
    return written
