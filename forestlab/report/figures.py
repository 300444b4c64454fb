"""Figures (PNG and PDF, matplotlib Agg) drawn from the stored runs and arrays."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import DictConfig

from forestlab.errors import ConfigError
from forestlab.report._collect import ExperimentResults, figures_spec, load_results


def _grid(n: int) -> tuple[int, int]:
    ncols = min(3, n)
    return math.ceil(n / ncols), ncols


def error_curves(res: ExperimentResults, spec: dict[str, Any]):
    """One panel per dataset: the mean (± one std band) of each named curve against the number of trees."""
    import matplotlib.pyplot as plt

    datasets = res.datasets
    nrows, ncols = _grid(len(datasets))
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.2 * nrows), squeeze=False)
    algorithm = str(spec.get("algorithm", res.algorithms[0]))
    for ax, (letter, dataset) in zip(axes.flat, zip("abcdefghijklmnopqrstuvwxyz", datasets, strict=False),
                                     strict=False):
        n_runs = 0
        for name, label in dict(spec["curves"]).items():
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
        ax.set_title(f"({letter}) {dataset}" + (f"  [{n_runs} runs]" if n_runs else "  [no runs yet]"),
                     fontsize=10)
        ax.set_xlabel("number of trees")
        ax.set_ylabel("error rate")
        ax.grid(alpha=0.3)
        if n_runs:
            ax.legend(fontsize=8)
    for ax in list(axes.flat)[len(datasets):]:
        ax.set_visible(False)
    fig.suptitle(str(spec.get("title", spec["name"])), fontsize=11)
    fig.tight_layout()
    return fig


def roc_curves(res: ExperimentResults, spec: dict[str, Any]):
    """One panel per dataset: the ROC curve of each algorithm, from the stored test scores (vertical average)."""
    import matplotlib.pyplot as plt

    from forestlab.metrics import roc_curve

    datasets = res.datasets
    nrows, ncols = _grid(len(datasets))
    fig, axes = plt.subplots(nrows, ncols, figsize=(4 * ncols, 3.6 * nrows), squeeze=False)
    grid = np.linspace(0, 1, 201)
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        for algorithm in spec.get("algorithms", res.algorithms):
            keys = res.runs[(res.runs["algorithm"] == algorithm) & (res.runs["dataset"] == dataset)]["key"]
            tprs = []
            for key in keys:
                arr = res.arrays(key)
                if "test_scores" in arr and "y_test" in arr:
                    fpr, tpr = roc_curve(arr["y_test"], arr["test_scores"])
                    tprs.append(np.interp(grid, fpr, tpr))
            if tprs:
                ax.plot(grid, np.mean(tprs, axis=0), label=f"{algorithm} ({len(tprs)})", lw=1.4)
        ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--")
        ax.set_title(dataset, fontsize=10)
        ax.set_xlabel("false positive rate")
        ax.set_ylabel("true positive rate")
        ax.legend(fontsize=8)
    for ax in list(axes.flat)[len(datasets):]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig


KINDS = {"error_curves": error_curves, "roc": roc_curves}


def render_figures(cfg: DictConfig) -> list[Path]:
    """Draw every figure of the experiment to results/figures/<experiment>/<name>.{png,pdf}."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = load_results(cfg)
    out_dir = res.results_dir / "figures" / res.name
    written: list[Path] = []
    for spec in figures_spec(cfg):
        kind = spec.get("kind")
        if kind not in KINDS:
            raise ConfigError(f"figure '{spec.get('name')}': unknown kind '{kind}'; valid kinds: "
                              f"{', '.join(KINDS)}")
        fig = KINDS[kind](res, spec)
        out_dir.mkdir(parents=True, exist_ok=True)
        for ext in ("png", "pdf"):
            path = out_dir / f"{spec['name']}.{ext}"
            fig.savefig(path, dpi=130)
            written.append(path)
        plt.close(fig)
    return written
