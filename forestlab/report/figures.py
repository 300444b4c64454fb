"""Figures (PNG and PDF, matplotlib Agg) drawn from the stored runs and arrays.

Kinds (``experiment.figures[i].kind``):

- ``error_curves``: one panel per dataset, several named curves of one algorithm against the number of trees;
- ``curves_by_algorithm``: one panel per dataset, one curve (e.g. ``test_error``) of several algorithms against the
  number of trees (bagging vs forest vs boosting on one dataset, say);
- ``importance``: one row per dataset and one panel per importance measure, bars of the mean importance per
  feature over the runs with ± one std error bars (the top features by the first measure, probes marked);
- ``metric_boxes``: one panel per dataset, boxes of several metrics of one algorithm over the runs, optionally
  minus a reference metric (error estimates minus the test error);
- ``paired_diff``: one panel, per dataset the per-split differences a - b of a metric for pairs of algorithms (mean
  and 95% t interval), with an optional published difference marked beside it;
- ``roc_envelope``: one panel per dataset, for each algorithm the pointwise minimum and maximum of its runs' test
  ROC curves (a band) and their mean (depecker2010 Figs 4.1, 4.3);
- ``metric_and_measure``: one panel per dataset, bars of a metric (mean ± std) per algorithm and a statistic over
  the runs (e.g. the instability) on a second axis (depecker2010 Fig. 4.5);
- ``bars``: one panel per dataset, bars of a metric (mean ± std) per algorithm with marks at other metrics' means
  (depecker2010 Figs 5.3, 5.4);
- ``metric_by_depth``: one panel per dataset, a curve indexed by tree depth (test AUC of the tree cut at each depth)
  per algorithm, AUC* and marks for other algorithms (a pruned tree) (depecker2010 Figs 1.15d, 2.12, 3.6);
- ``roc_at_depth``: one panel per dataset, the mean test ROC of each algorithm's trees cut at one depth, with ROC*;
- ``partition_2d``: one row per 2-d dataset, the cells of each algorithm's tree (first run) at one depth;
- ``optimal_roc``: one panel, the optimal ROC* of every generated dataset (depecker2010 Figs 4.4, 6.1);
- ``metric_by_x``: one panel per group of datasets, the mean of a metric over the runs of each algorithm against a
  number attached to each dataset (``panels: [{title, x: {dataset: value}}]``), with a binomial 95% interval when
  the metric is a rate (``rate: true``) and an optional horizontal line (``hline``): the power curves of the
  two-sample tests against the shift, their level at shift 0 (depecker2010 chapter 6, beyond Table 6.1).

ROC curves are drawn with the dataset's optimal ROC* when its runs recorded one (generated problems). Any figure
may name the ``datasets`` it draws (default: all of the experiment's).

Figures read only the stored runs (values, arrays, and what runs recorded about their datasets, such as feature
names): they never load a dataset.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Any

import numpy as np

from forestlab.metrics import ROC_GRID, _tpr_at, roc_curve
from forestlab.metrics import roc_envelope as envelope
from forestlab.report.compare import read_published
from forestlab.results import ExperimentResults
from forestlab.spec import FigureSpec, figure_kinds
from forestlab.stats import paired_values


def _optimal_roc(ax: Any, res: ExperimentResults, dataset: str) -> None:
    """Draw the dataset's optimal ROC curve ROC* (solid red, as depecker2010 draws it) when its runs recorded one
    (a generated problem whose optimal ranking is known)."""
    info = res.datasets_info.get(dataset) or {}
    if info.get("roc_star_tpr"):
        ax.plot(ROC_GRID, np.asarray(info["roc_star_tpr"], dtype=float), color="red", lw=1.2,
                label=f"ROC* (AUC* {float(info['auc_star']):.3f})")


def _grid(n: int) -> tuple[int, int]:
    ncols = min(3, n)
    return math.ceil(n / ncols), ncols


def _finish(fig: Any, axes: Any, used: int, spec: FigureSpec, rect: tuple[float, ...] | None = None):
    """Hide the panels past the ``used`` first, title the figure, lay it out."""
    for ax in list(axes.flat)[used:]:
        ax.set_visible(False)
    _title(fig, spec)
    fig.tight_layout(**({"rect": rect} if rect else {}))
    return fig


def _title(fig: Any, spec: FigureSpec) -> None:
    """The figure's title, wrapped to its width (a one-panel figure is narrow)."""
    width = max(30, int(fig.get_figwidth() * 12))
    fig.suptitle("\n".join(textwrap.wrap(spec.title, width)), fontsize=11)


def error_curves(res: ExperimentResults, spec: FigureSpec):
    """One panel per dataset: the mean (± one std band) of each named curve against the number of trees."""
    import matplotlib.pyplot as plt

    datasets = res.datasets
    nrows, ncols = _grid(len(datasets))
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.2 * nrows), squeeze=False)
    algorithm = str(spec.options["algorithm"] or res.algorithms[0])
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
        ax.set_title(f"({letter}) {dataset}" + (f"  [{n_runs} runs]" if n_runs else "  [no runs yet]"),
                     fontsize=10)
        ax.set_xlabel("number of trees")
        ax.set_ylabel("error rate")
        ax.grid(alpha=0.3)
        if n_runs:
            ax.legend(fontsize=8)
    return _finish(fig, axes, len(datasets), spec)


def _roc_frame(ax: Any) -> None:
    """The chance diagonal and the axis labels of a ROC panel."""
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--")
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")


def _roc_panel(ax: Any, res: ExperimentResults, dataset: str, drawn: int) -> None:
    """A dataset's ROC panel around its curves: ROC* where known, the diagonal, the title and the labels."""
    _optimal_roc(ax, res, dataset)
    _roc_frame(ax)
    ax.set_title(dataset + ("" if drawn else "  [no runs yet]"), fontsize=10)


def _n_trees_axis(res: ExperimentResults, algorithm: str, dataset: str, length: int) -> np.ndarray:
    x = res.curve(algorithm, "n_trees", dataset)
    return x[0, :length] if x.size and x.shape[1] >= length else np.arange(1, length + 1)


def curves_by_algorithm(res: ExperimentResults, spec: FigureSpec):
    """One panel per dataset: curve ``spec['curve']`` (default ``test_error``) of each algorithm of
    ``spec['algorithms']`` ({name: label}, default every algorithm), mean ± one std band over the runs."""
    import matplotlib.pyplot as plt

    datasets = res.datasets
    curve_name = str(spec.options["curve"])
    algorithms = dict(spec.options["algorithms"] or {a: a for a in res.algorithms})
    nrows, ncols = _grid(len(datasets))
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 3.8 * nrows), squeeze=False)
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        drawn = 0
        for algorithm, label in algorithms.items():
            curves = res.curve(algorithm, curve_name, dataset)
            if curves.size == 0:
                continue
            x = _n_trees_axis(res, algorithm, dataset, curves.shape[1])
            with np.errstate(all="ignore"):
                mean, std = np.nanmean(curves, axis=0), np.nanstd(curves, axis=0)
            (line,) = ax.plot(x, mean, lw=1.4, label=f"{label} ({curves.shape[0]} runs)")
            if curves.shape[0] > 1:
                ax.fill_between(x, mean - std, mean + std, color=line.get_color(), alpha=0.15, lw=0)
            drawn += 1
        ax.set_title(dataset + ("" if drawn else "  [no runs yet]"), fontsize=10)
        ax.set_xlabel(str(spec.options["xlabel"] or "number of trees"))
        ax.set_ylabel(str(spec.options["ylabel"] or curve_name.replace("_", " ")))
        if spec.options["ylim"]:
            ax.set_ylim(*spec.options["ylim"])
        if spec.options["xscale"]:
            ax.set_xscale(str(spec.options["xscale"]))
        ax.grid(alpha=0.3)
        if drawn:
            ax.legend(fontsize=8)
    return _finish(fig, axes, len(datasets), spec, rect=(0, 0, 1, 0.97))


def _feature_names(res: ExperimentResults, dataset: str, n: int, n_probes: int) -> list[str]:
    """The dataset's feature names as its runs recorded them (x1..xd if unknown), then the probes' names."""
    names = res.feature_names(dataset)
    d = n - n_probes
    if len(names) != d:
        names = [f"x{i + 1}" for i in range(d)]
    return names + [f"noise{i + 1}" for i in range(n_probes)]


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
    fig, axes = plt.subplots(len(datasets), len(measures), squeeze=False,
                             figsize=(4.6 * len(measures), 0.22 * (top + n_probes) * len(datasets) + 1.2))
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
            ax.set_yticks(y, [names[i] for i in shown], fontsize=7)
            ax.axvline(0, color="k", lw=0.6)
            ax.set_title(f"{dataset}: {label} ({vals.shape[0]} runs)", fontsize=9)
            ax.grid(axis="x", alpha=0.3)
    fig.suptitle(textwrap.fill(spec.title, 20 * len(measures) + 20), fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    return fig


def metric_boxes(res: ExperimentResults, spec: FigureSpec):
    """One panel per dataset: a box per metric of ``spec['metrics']`` ({metric: label}) of one algorithm over the
    runs, minus ``spec['minus']`` of the same run when given (e.g. estimate - test error)."""
    import matplotlib.pyplot as plt

    algorithm = str(spec.options["algorithm"] or res.algorithms[0])
    metrics = dict(spec.options["metrics"])
    minus = spec.options["minus"]
    datasets = res.datasets
    nrows, ncols = _grid(len(datasets))
    fig, axes = plt.subplots(nrows, ncols, figsize=(0.9 * len(metrics) * ncols + 1.5, 3.6 * nrows), squeeze=False)
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
    return _finish(fig, axes, len(datasets), spec, rect=(0, 0, 1, 0.97))


def paired_diff(res: ExperimentResults, spec: FigureSpec):
    """Per dataset, for each pair ``{a, b, label}`` of ``spec['pairs']``: the mean of the per-split differences
    a - b of ``spec['metric']`` with its 95% t interval; ``spec['published']`` = {file, a, b} adds the published
    difference (from experiments/<study>/published/<file>) as a black cross."""
    import matplotlib.pyplot as plt
    from scipy import stats as st

    metric = str(spec.options["metric"])
    pairs = [dict(p) for p in spec.options["pairs"]]
    datasets = res.datasets
    published: dict[str, float] = {}
    pub = spec.options["published"]
    if pub and res.study:
        table = read_published(res.study, str(pub["file"]))
        vals = {(r.dataset, r.algorithm): float(r.value) for r in table[table["metric"] == metric].itertuples()}
        published = {d: vals[(d, pub["a"])] - vals[(d, pub["b"])] for d in datasets
                     if (d, pub["a"]) in vals and (d, pub["b"]) in vals}
    fig, ax = plt.subplots(figsize=(max(6.0, 0.75 * len(datasets) + 2), 4.2))
    width = 0.8 / (len(pairs) + (1 if published else 0))
    x0 = np.arange(len(datasets))
    for k, pair in enumerate(pairs):
        means, errs = [], []
        for dataset in datasets:
            a, b = paired_values(res, str(pair["a"]), str(pair["b"]), metric, dataset)
            d = (a - b)[np.isfinite(a - b)]
            means.append(float(d.mean()) if d.size else np.nan)
            errs.append(float(st.t.ppf(0.975, d.size - 1) * d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else 0)
        ax.errorbar(x0 + (k - (len(pairs) - 1) / 2) * width, means, yerr=errs, fmt="o", ms=4, capsize=3,
                    label=str(pair.get("label", f"{pair['a']} - {pair['b']}")))
    if published:
        xs = [i for i, d in enumerate(datasets) if d in published]
        ax.plot(np.asarray(xs, float) + (len(pairs) / 2) * width, [published[datasets[i]] for i in xs], "kx",
                ms=7, label=str(pub.get("label", "published difference")))
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xticks(x0, datasets, rotation=35, ha="right", fontsize=9)
    ax.set_ylabel(str(spec.options["ylabel"] or f"difference in {metric.replace('_', ' ')}"))
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(textwrap.fill(spec.title, 90), fontsize=10)
    fig.tight_layout()
    return fig


def roc_envelope(res: ExperimentResults, spec: FigureSpec):
    """One panel per dataset: for each algorithm, the band between the pointwise minimum and maximum of its runs'
    test ROC curves, and their mean (:func:`forestlab.metrics.roc_envelope`)."""
    import matplotlib.pyplot as plt

    datasets = res.datasets
    nrows, ncols = _grid(len(datasets))
    fig, axes = plt.subplots(nrows, ncols, figsize=(4 * ncols, 3.8 * nrows), squeeze=False)
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        drawn = 0
        for algorithm in (spec.options["algorithms"] or res.algorithms):
            runs = [a for a in res.run_arrays(str(algorithm), dataset) if "test_scores" in a and "y_test" in a]
            if not runs:
                continue
            grid, lo, mean, hi = envelope(runs)
            (line,) = ax.plot(grid, mean, lw=1.4, label=f"{algorithm} ({len(runs)} runs)")
            ax.fill_between(grid, lo, hi, color=line.get_color(), alpha=0.2, lw=0)
            drawn += 1
        _roc_panel(ax, res, dataset, drawn)
        if drawn:
            ax.legend(fontsize=8)
    return _finish(fig, axes, len(datasets), spec)


def _algorithms(res: ExperimentResults, spec: FigureSpec) -> list[str]:
    return [str(a) for a in (spec.options["algorithms"] or res.algorithms)]


def metric_and_measure(res: ExperimentResults, spec: FigureSpec):
    """One panel per dataset: for each algorithm a bar of a metric's mean (± one std over the runs) and, on a
    second axis, a statistic over its runs (a measure such as the instability) as a marker (depecker2010 Fig. 4.5)."""
    import matplotlib.pyplot as plt

    metric, measure = str(spec.options["metric"]), str(spec.options["measure"])
    algorithms = _algorithms(res, spec)
    datasets = res.datasets
    nrows, ncols = _grid(len(datasets))
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.6 * nrows), squeeze=False)
    x = np.arange(len(algorithms))
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        means, stds, inst = [], [], []
        for algorithm in algorithms:
            v = res.values(algorithm, metric, dataset)["value"].to_numpy(dtype=float)
            v = v[np.isfinite(v)]
            means.append(v.mean() if v.size else np.nan)
            stds.append(v.std(ddof=1) if v.size > 1 else np.nan)
            inst.append(res.measure(str(algorithm), measure, dataset))
        ax.bar(x, means, yerr=stds, color="#4c72b0", alpha=0.85, capsize=2, label=metric)
        finite = [m for m in means if np.isfinite(m)]
        if finite:
            lo = min(m - (s if np.isfinite(s) else 0) for m, s in zip(means, stds, strict=True) if np.isfinite(m))
            ax.set_ylim(max(0.0, lo - 0.05), min(1.0, max(finite) + 0.05))
        ax.set_ylabel(metric, color="#4c72b0")
        twin = ax.twinx()
        twin.plot(x, inst, "o", color="#c44e52", label=measure)
        twin.set_ylabel(measure, color="#c44e52")
        if np.isfinite(inst).any():
            twin.set_ylim(0, 1.1 * np.nanmax(inst))
        ax.set_xticks(x, algorithms, rotation=45, ha="right", fontsize=8)
        ax.set_title(dataset + ("" if finite else "  [no runs yet]"), fontsize=10)
    return _finish(fig, axes, len(datasets), spec)


def bars(res: ExperimentResults, spec: FigureSpec):
    """One panel per dataset: for each algorithm a bar of a metric's mean with ± one std error bars, and short
    horizontal marks at the means of other metrics (``marks``: metric -> label), e.g. the truncated AUCs on the AUC
    bars of depecker2010 Figs 5.3, 5.4."""
    import matplotlib.pyplot as plt

    metric = str(spec.options["metric"])
    marks = dict(spec.options["marks"] or {})
    algorithms = _algorithms(res, spec)
    datasets = res.datasets
    nrows, ncols = _grid(len(datasets))
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.4 * ncols, 3.4 * nrows), squeeze=False)
    x = np.arange(len(algorithms))
    styles = ["_", "x", "."]

    def mean_std(algorithm: str, name: str, dataset: str) -> tuple[float, float]:
        v = res.values(algorithm, name, dataset)["value"].to_numpy(dtype=float)
        v = v[np.isfinite(v)]
        return (v.mean() if v.size else np.nan), (v.std(ddof=1) if v.size > 1 else np.nan)

    for ax, dataset in zip(axes.flat, datasets, strict=False):
        stats = [mean_std(a, metric, dataset) for a in algorithms]
        ax.bar(x, [m for m, _ in stats], yerr=[s for _, s in stats], color="#8fb0d8", capsize=2, label=metric)
        for k, (name, label) in enumerate(marks.items()):
            ax.scatter(x, [mean_std(a, name, dataset)[0] for a in algorithms], marker=styles[k % len(styles)],
                       s=160 if styles[k % len(styles)] == "_" else 30, color=f"C{k + 1}", label=str(label),
                       zorder=3)
        ax.set_ylim(0, 1)
        ax.set_xticks(x, algorithms, rotation=45, ha="right", fontsize=8)
        ax.set_title(dataset + ("" if any(np.isfinite(m) for m, _ in stats) else "  [no runs yet]"), fontsize=10)
        if ax is axes.flat[0]:
            ax.legend(fontsize=7, loc="lower right")
    return _finish(fig, axes, len(datasets), spec)


def metric_by_depth(res: ExperimentResults, spec: FigureSpec):
    """One panel per dataset: for each algorithm the mean (± one std band over the runs) of a stored curve indexed
    by tree depth (``curve``, default ``test_auc``: entry d is the test AUC of the tree cut at depth d), the
    optimal AUC* as a red line when known, and the mean of a metric of other algorithms as horizontal marks
    (``marks``: algorithm -> label, e.g. a pruned tree; depecker2010 Figs 1.15d, 2.12, 3.6)."""
    import matplotlib.pyplot as plt

    name = str(spec.options["curve"])
    marks = dict(spec.options["marks"] or {})
    datasets = res.datasets
    nrows, ncols = _grid(len(datasets))
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.4 * nrows), squeeze=False)
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        drawn = 0
        for algorithm in _algorithms(res, spec):
            curves = res.curve(algorithm, name, dataset)
            if curves.size == 0:
                continue
            curves = curves[:, 1:]  # index = depth; depth 0 (one leaf) is AUC 1/2
            depth = np.arange(1, curves.shape[1] + 1)
            with np.errstate(all="ignore"):
                mean, std = np.nanmean(curves, axis=0), np.nanstd(curves, axis=0)
            (line,) = ax.plot(depth, mean, "o-", ms=3, lw=1.2, label=f"{algorithm} ({curves.shape[0]} runs)")
            ax.fill_between(depth, mean - std, mean + std, color=line.get_color(), alpha=0.15, lw=0)
            drawn += 1
        for k, (algorithm, label) in enumerate(marks.items()):
            v = res.values(str(algorithm), str(spec.options["metric"]), dataset)["value"].to_numpy(float)
            v = v[np.isfinite(v)]
            if v.size:
                depths = res.values(str(algorithm), "max_depth", dataset)["value"].to_numpy(float)
                x = float(np.nanmean(depths)) if np.isfinite(depths).any() else 1.0
                ax.errorbar([x], [v.mean()], yerr=[v.std(ddof=1) if v.size > 1 else 0], fmt="s", color="green",
                            ms=6, label=f"{label} (mean depth {x:.1f})" if k == 0 else str(label))
        info = res.datasets_info.get(dataset) or {}
        if info.get("auc_star") is not None:
            ax.axhline(float(info["auc_star"]), color="red", lw=1, label=f"AUC* {float(info['auc_star']):.3f}")
        ax.set_title(dataset + ("" if drawn else "  [no runs yet]"), fontsize=10)
        ax.set_xlabel("depth D")
        ax.set_ylabel("test AUC")
        if drawn:
            ax.legend(fontsize=7)
    return _finish(fig, axes, len(datasets), spec)


def roc_at_depth(res: ExperimentResults, spec: FigureSpec):
    """One panel per dataset: the mean test ROC curve of each algorithm's trees cut at depth ``depth`` (from the
    stored ``test_scores_by_depth``), beside ROC* (depecker2010 Figs 1.14c, 1.15c, 2.9c-2.11d)."""
    import matplotlib.pyplot as plt

    depth = int(spec.options["depth"])
    datasets = res.datasets
    nrows, ncols = _grid(len(datasets))
    fig, axes = plt.subplots(nrows, ncols, figsize=(4 * ncols, 3.8 * nrows), squeeze=False)
    styles = ["--", ":", "-.", "-"]
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        drawn = 0
        for k, algorithm in enumerate(_algorithms(res, spec)):
            tprs = []
            for arr in res.run_arrays(algorithm, dataset):
                by_depth = arr.get("test_scores_by_depth")
                if by_depth is None or "y_test" not in arr or len(by_depth) == 0:
                    continue
                scores = by_depth[min(depth, len(by_depth) - 1)]  # row d: the tree cut at depth d
                fpr, tpr = roc_curve(arr["y_test"], scores)
                tprs.append(_tpr_at(fpr, tpr, ROC_GRID))
            if tprs:
                ax.plot(ROC_GRID, np.mean(tprs, axis=0), styles[k % len(styles)], lw=1.5,
                        label=f"{algorithm}, D={depth} ({len(tprs)} runs)")
                drawn += 1
        _roc_panel(ax, res, dataset, drawn)
        ax.legend(fontsize=7, loc="lower right")
    return _finish(fig, axes, len(datasets), spec)


def partition_2d(res: ExperimentResults, spec: FigureSpec):
    """One row per 2-d dataset: the 8 equal-mass level sets of eta when the runs recorded them (Figs 1.14a, 1.15a,
    2.9a-2.11a), then the cells of the first run's tree of each algorithm cut at depth ``depth``, coloured from best
    (dark red) to worst (light), from the stored ``grid_scores_by_depth`` on the grid ``grid_x`` x ``grid_y``
    (depecker2010 Figs 1.14b, 1.15b, 2.9b-2.11c: the estimated level sets)."""
    import matplotlib.pyplot as plt

    depth = int(spec.options["depth"])
    algorithms = _algorithms(res, spec)
    datasets = res.datasets
    ncols = len(algorithms) + 1
    fig, axes = plt.subplots(len(datasets), ncols, figsize=(3.3 * ncols, 3.2 * len(datasets)), squeeze=False)
    for row, dataset in zip(axes, datasets, strict=True):
        info = res.datasets_info.get(dataset) or {}
        ax = row[0]
        if info.get("eta_level_sets"):
            gx, gy = np.asarray(info["eta_grid_x"], dtype=float), np.asarray(info["eta_grid_y"], dtype=float)
            z = np.asarray(info["eta_level_sets"], dtype=float).reshape(len(gy), len(gx))
            z[z < 0] = np.nan  # outside the support
            ax.pcolormesh(gx, gy, -z, cmap="Reds", shading="auto")
            ax.set_title(f"{dataset}: level sets of eta", fontsize=9)
        else:
            ax.set_title(f"{dataset}: eta unknown", fontsize=9)
            ax.set_axis_off()
        for ax, algorithm in zip(row[1:], algorithms, strict=True):
            arrays = [a for a in res.run_arrays(algorithm, dataset) if "grid_scores_by_depth" in a]
            ax.set_title(f"{dataset}: {algorithm}, D={depth}" + ("" if arrays else " [no runs]"), fontsize=9)
            if not arrays:
                continue
            arr = arrays[0]
            gx, gy = np.asarray(arr["grid_x"], dtype=float), np.asarray(arr["grid_y"], dtype=float)
            by_depth = arr["grid_scores_by_depth"]
            z = np.asarray(by_depth[min(depth, len(by_depth) - 1)], dtype=float).reshape(len(gy), len(gx))
            ax.pcolormesh(gx, gy, z, cmap="Reds", shading="auto")
            ax.set_xlabel("x1", fontsize=8)
            ax.set_ylabel("x2", fontsize=8)
    _title(fig, spec)
    fig.tight_layout()
    return fig


def optimal_roc(res: ExperimentResults, spec: FigureSpec):
    """One panel: the optimal ROC curve ROC* of each generated dataset of the experiment, as its runs recorded it
    (depecker2010 Figs 4.4, 6.1)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4.6, 4.2))
    drawn = 0
    for dataset in res.datasets:
        info = res.datasets_info.get(dataset) or {}
        if info.get("roc_star_tpr"):
            ax.plot(ROC_GRID, np.asarray(info["roc_star_tpr"], dtype=float), lw=1.5,
                    label=f"{dataset} (AUC* {float(info['auc_star']):.3f})")
            drawn += 1
    _roc_frame(ax)
    ax.set_title("ROC*" if drawn else "ROC* [no runs of a generated problem yet]", fontsize=10)
    if drawn:
        ax.legend(fontsize=8, loc="lower right")
    return _finish(fig, np.array([ax]), 1, spec)


def metric_by_x(res: ExperimentResults, spec: FigureSpec):
    """One panel per entry of ``panels`` (``{title, x: {dataset: x value}}``): for each algorithm the mean of
    ``metric`` over its runs on each dataset of the panel, against the dataset's x value (the power of a test
    against the shift of its alternative). With ``rate: true`` each point carries its 95% Wilson interval for a
    binomial proportion; ``hline`` draws a dashed horizontal line (the tests' level)."""
    import matplotlib.pyplot as plt
    from scipy.stats import norm

    metric = str(spec.options["metric"])
    panels = list(spec.options["panels"])  # at least one (forestlab.spec)
    algorithms = _algorithms(res, spec)
    z = float(norm.ppf(0.975))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.8 * len(panels), 3.8), squeeze=False)
    for ax, panel in zip(axes.flat, panels, strict=True):
        xs = {str(d): float(v) for d, v in dict(panel.get("x") or {}).items()}
        drawn = False
        for k, algorithm in enumerate(algorithms):
            pts = []
            for dataset, x in sorted(xs.items(), key=lambda kv: kv[1]):
                v = res.values(algorithm, metric, dataset)["value"].to_numpy(dtype=float)
                v = v[np.isfinite(v)]
                if v.size:
                    pts.append((x, float(v.mean()), v.size))
            if not pts:
                continue
            drawn = True
            x, m, n = (np.asarray(c, dtype=float) for c in zip(*pts, strict=True))
            if spec.options["rate"]:  # Wilson score interval of a proportion m over n runs
                centre = (m + z * z / (2 * n)) / (1 + z * z / n)
                half = z * np.sqrt(m * (1 - m) / n + z * z / (4 * n * n)) / (1 + z * z / n)
                ax.fill_between(x, centre - half, centre + half, color=f"C{k}", alpha=0.15, lw=0)
            ax.plot(x, m, "o-", color=f"C{k}", label=algorithm, ms=4)
        hline = spec.options["hline"]
        if hline is not None:
            ax.axhline(float(hline), color="grey", ls="--", lw=0.8, label=f"{float(hline):g}")
        ax.set_xlabel(str(spec.options["x_label"]))
        ax.set_ylabel(metric)
        if spec.options["rate"]:
            ax.set_ylim(0, 1.02)
        ax.set_title(str(panel.get("title", "")) + ("" if drawn else "  [no runs yet]"), fontsize=10)
        if drawn:
            ax.legend(fontsize=8, loc="upper left")
    return _finish(fig, axes, len(panels), spec)


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
    _title(fig, spec)
    return fig


KINDS = {"error_curves": error_curves, "curves_by_algorithm": curves_by_algorithm,
         "importance": importance, "metric_boxes": metric_boxes, "paired_diff": paired_diff,
         "roc_envelope": roc_envelope, "metric_and_measure": metric_and_measure, "bars": bars,
         "metric_by_depth": metric_by_depth, "roc_at_depth": roc_at_depth, "partition_2d": partition_2d,
         "optimal_roc": optimal_roc, "metric_by_x": metric_by_x}
# every kind the spec accepts has a drawing here (their options are declared in forestlab.spec)
assert set(KINDS) == set(figure_kinds()), sorted(set(KINDS) ^ set(figure_kinds()))


def render_figures(res: ExperimentResults, out_dir: Path) -> list[Path]:
    """Draw every figure of the experiment to ``out_dir/<name>.{png,pdf}``."""
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
        fig = KINDS[spec.kind](view, spec) if view.datasets else _nothing_to_draw(view, spec)
        notes = [view.left_out_note()] if view.left_out else []
        if res.smoke:
            notes.append("SMOKE RUNS (debug=smoke): a check that the code runs, not the experiment's results")
        if notes:
            _footer(fig, notes)
        out_dir.mkdir(parents=True, exist_ok=True)
        for ext in ("png", "pdf"):
            path = out_dir / f"{spec.name}.{ext}"
            fig.savefig(path, dpi=130)
            written.append(path)
        plt.close(fig)
    return written
