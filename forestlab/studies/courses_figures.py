"""The figure kinds only the course experiments draw (``courses_*``): curves of several algorithms against the
number of trees, feature importances, boxes of error estimates. Each is declared (its options, checked by the spec
before any run) and drawn here, registered with :func:`forestlab.plotting.figure_kind`."""

from __future__ import annotations

import textwrap

import numpy as np

from forestlab.plotting import caption, figure_kind, finish, grid_shape, metric_words, n_trees_axis, panel_size
from forestlab.results import ExperimentResults
from forestlab.spec import ALGORITHM, Field, FigureSpec, Int, ListOf, MappingOf, Real, Text

_LABELS = MappingOf(ALGORITHM, Text(), list_ok=True)  # {algorithm: label}, or a list of algorithms


@figure_kind("curves_by_algorithm", "one stored curve of each algorithm, one panel per dataset",
             curve=Field(Text(), "test_error"), algorithms=Field(_LABELS), xlabel=Field(Text()),
             ylabel=Field(Text()), ylim=Field(ListOf(Real(), length=2)), xscale=Field(Text()))
def curves_by_algorithm(res: ExperimentResults, spec: FigureSpec):
    """One panel per dataset: curve ``spec['curve']`` (default ``test_error``) of each algorithm of
    ``spec['algorithms']`` ({name: label}, default every algorithm), mean ± one std band over the runs."""
    import matplotlib.pyplot as plt

    datasets = res.datasets
    curve_name = str(spec.options["curve"])
    algorithms = dict(spec.options["algorithms"] or {a: a for a in res.algorithms})
    nrows, ncols = grid_shape(len(datasets))
    w, h = panel_size(ncols, 5.2, 3.8)
    fig, axes = plt.subplots(nrows, ncols, figsize=(w * ncols, h * nrows), squeeze=False)
    banded = False
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        drawn = 0
        for algorithm, label in algorithms.items():
            curves = res.curve(algorithm, curve_name, dataset)
            if curves.size == 0:
                continue
            x = n_trees_axis(res, algorithm, dataset, curves.shape[1])
            with np.errstate(all="ignore"):
                mean, std = np.nanmean(curves, axis=0), np.nanstd(curves, axis=0)
            (line,) = ax.plot(x, mean, lw=1.4, label=f"{label} ({curves.shape[0]} runs)")
            if curves.shape[0] > 1:
                ax.fill_between(x, mean - std, mean + std, color=line.get_color(), alpha=0.15, lw=0)
                banded = True
            drawn += 1
        ax.set_title(dataset + ("" if drawn else "  [no runs yet]"), fontsize=10)
        ax.set_xlabel(str(spec.options["xlabel"] or "number of trees"))
        ax.set_ylabel(str(spec.options["ylabel"] or metric_words(curve_name)))
        if spec.options["ylim"]:
            ax.set_ylim(*spec.options["ylim"])
        if spec.options["xscale"]:
            ax.set_xscale(str(spec.options["xscale"]))
        ax.grid(alpha=0.3)
        if drawn:
            ax.legend(fontsize=8)
    caption(fig, f"Each line is an algorithm's mean {metric_words(curve_name)} over its runs (counted in the legend) "
            "after each number of trees; " + ("the shaded band is ± one standard deviation over those runs."
                                              if banded else "one run each, so no band is drawn."))
    return finish(fig, axes, len(datasets), spec, rect=(0, 0, 1, 0.97))


def _feature_names(res: ExperimentResults, dataset: str, n: int, n_probes: int) -> list[str]:
    """The dataset's feature names as its runs recorded them (x1..xd if unknown), then the probes' names."""
    names = res.feature_names(dataset)
    d = n - n_probes
    if len(names) != d:
        names = [f"x{i + 1}" for i in range(d)]
    return names + [f"noise{i + 1}" for i in range(n_probes)]


@figure_kind("importance", "feature importances of one algorithm, a row per dataset",
             algorithm=Field(ALGORITHM), measures=Field(MappingOf(Text(), Text())), top=Field(Int(1), 20),
             noise_features=Field(Int(0), 0))
def importance(res: ExperimentResults, spec: FigureSpec):
    """Rows = datasets, columns = the measures of ``spec['measures']`` ({array name: label}): horizontal bars of
    the mean importance of the ``top`` features (ranked by the first measure's mean; probe features always
    shown, in grey), error bars ± one std over the runs."""
    import matplotlib.pyplot as plt

    algorithm = str(spec.options["algorithm"] or res.algorithms[0])
    measures = dict(spec.options["measures"] or {"importance_mdi": "mean decrease of impurity",
                                             "importance_oob_perm": "OOB permutation"})
    top = int(spec.options["top"])
    n_probes = int(spec.options["noise_features"])
    datasets = res.datasets
    w, _ = panel_size(len(measures), 4.6, 1.0)
    fig, axes = plt.subplots(len(datasets), len(measures), squeeze=False,
                             figsize=(w * len(measures), 0.24 * (top + n_probes) * len(datasets) + 1.2))
    for row, dataset in enumerate(datasets):
        stacks = {m: res.curve(algorithm, m, dataset) for m in measures}
        first = next(iter(measures))
        if stacks[first].size == 0:
            for ax in axes[row]:
                ax.set_title(f"{dataset}  [no runs yet]", fontsize=10)
                ax.set_axis_off()
            continue
        n_feat = stacks[first].shape[1]
        names = _feature_names(res, dataset, n_feat, n_probes)
        order = np.argsort(-np.nanmean(stacks[first], axis=0), kind="stable")
        real = [i for i in order if i < n_feat - n_probes][:top]
        shown = real + list(range(n_feat - n_probes, n_feat))
        shown = sorted(shown, key=lambda i: list(order).index(i))
        for col, (m, label) in enumerate(measures.items()):
            ax = axes[row][col]
            vals = stacks[m]
            if vals.size == 0:
                ax.set_axis_off()
                continue
            mean, std = np.nanmean(vals, axis=0)[shown], np.nanstd(vals, axis=0)[shown]
            y = np.arange(len(shown))[::-1]
            colors = ["0.6" if i >= n_feat - n_probes else f"C{col}" for i in shown]
            ax.barh(y, mean, xerr=std, color=colors, error_kw={"lw": 0.8, "capsize": 2})
            ax.set_yticks(y, [names[i] for i in shown], fontsize=8)
            ax.axvline(0, color="k", lw=0.6)
            ax.set_title(f"{dataset}: {label} ({vals.shape[0]} runs)", fontsize=9)
            ax.grid(axis="x", alpha=0.3)
    fig.suptitle(textwrap.fill(spec.title, 20 * len(measures) + 20), fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    return caption(fig, f"Bars: the mean importance of each feature over {algorithm}'s runs, by the measure named in "
                   "the panel's title; error bars: ± one standard deviation over those runs. Grey bars are the "
                   "pure-noise probe features added to the data; the others are the dataset's features, the "
                   f"{top} most important by the first measure.")


@figure_kind("metric_boxes", "boxes of metrics of one algorithm (minus another metric)",
             algorithm=Field(ALGORITHM), metrics=Field(MappingOf(Text(), Text()), required=True),
             minus=Field(Text()), ylabel=Field(Text()))
def metric_boxes(res: ExperimentResults, spec: FigureSpec):
    """One panel per dataset: a box per metric of ``spec['metrics']`` ({metric: label}) of one algorithm over the
    runs, minus ``spec['minus']`` of the same run when given (e.g. estimate - test error)."""
    import matplotlib.pyplot as plt

    algorithm = str(spec.options["algorithm"] or res.algorithms[0])
    metrics = dict(spec.options["metrics"])
    minus = spec.options["minus"]
    datasets = res.datasets
    nrows, ncols = grid_shape(len(datasets))
    if len(metrics) > 4:  # one panel a row: seven boxes side by side need the width
        nrows, ncols = len(datasets), 1
    w, h = panel_size(ncols, 0.9 * len(metrics) + 1.5, 3.6)
    fig, axes = plt.subplots(nrows, ncols, figsize=(w * ncols, h * nrows), squeeze=False)
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        data, labels = [], []
        ref = res.values(algorithm, str(minus), dataset).set_index("key")["value"] if minus else None
        for m, label in metrics.items():
            v = res.values(algorithm, m, dataset).set_index("key")["value"]
            if ref is not None:
                v = v - ref.reindex(v.index)
            v = v.to_numpy(float)
            data.append(v[np.isfinite(v)])
            labels.append(label)
        if any(len(d) for d in data):
            ax.boxplot(data, showmeans=True, meanprops={"marker": "D", "markersize": 4})
            ax.set_xticks(range(1, len(labels) + 1), labels, rotation=35, ha="right", fontsize=8)
        if minus:
            ax.axhline(0, color="k", lw=0.8, ls="--")
        n_runs = max((len(d) for d in data), default=0)
        ax.set_title(f"{dataset}  [{n_runs} runs]" if n_runs else f"{dataset}  [no runs yet]", fontsize=10)
        ax.set_ylabel(str(spec.options["ylabel"] or (f"value - {minus}" if minus else "value")))
        ax.grid(axis="y", alpha=0.3)
    caption(fig, f"One box per quantity, over {algorithm}'s runs" + (f", each run's value minus its {minus}" if minus
                                                                     else "") +
            ": the box spans the quartiles, the line inside is the median, the diamond the mean, the whiskers "
            "reach the furthest values within 1.5 times the box's height, and points beyond them are drawn one by "
            "one." + (" The dashed line at 0 is no difference." if minus else ""))
    return finish(fig, axes, len(datasets), spec, rect=(0, 0, 1, 0.97))
