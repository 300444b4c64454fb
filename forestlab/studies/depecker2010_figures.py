"""The figure kinds only depecker2010 draws: ROC envelopes, ROC*, AUC bars with the truncated AUCs, the test AUC
against the depth of a tree, the ROC curves and 2-d partitions of trees cut at a depth, and the power curves of the
two-sample tests. Each is declared (its options, checked by the spec before any run) and drawn here, registered with
:func:`forestlab.plotting.figure_kind`; the ROC panels use the shared helpers of :mod:`forestlab.plotting`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from forestlab.metrics import MEASURES, ROC_GRID, _tpr_at, roc_curve
from forestlab.metrics import roc_envelope as roc_envelope_of
from forestlab.plotting import (
    caption,
    figure_algorithms,
    figure_kind,
    figure_title,
    finish,
    grid_shape,
    metric_words,
    panel_size,
    roc_frame,
    roc_panel,
)
from forestlab.results import ExperimentResults
from forestlab.spec import (
    ALGORITHM,
    ALGORITHMS,
    Bool,
    Field,
    FigureSpec,
    Int,
    Known,
    ListOf,
    MappingOf,
    Real,
    Record,
    Registered,
    Text,
)

#: ``published: {file: <experiments/<study>/published/ file>, note: <a sentence for the caption>, <algorithm>:
#: <its name in the table>...}``: the published values a figure overlays (the rows of that table with the figure's
#: metric and measure; an algorithm the table names otherwise, such as ``trk_svm_opt`` printed as ``trk_svm``, is
#: given its published name).
_PUBLISHED = Field(MappingOf(Text(), Text()))
_ENVELOPE = ("The dashed grey diagonal is a random ranking; the red line, where drawn, is the optimal ROC curve "
             "ROC* of the generated problem (computed from its laws).")

_PANEL = Record({"title": Field(Text()), "x": Field(MappingOf(Known("dataset"), Real()), required=True)},
                "a panel of metric_by_x")


def _published(res: ExperimentResults, spec: FigureSpec) -> dict[tuple[str, str, str], tuple[float, float]]:
    """The published values the figure overlays, by (dataset, algorithm, metric): (value, std; NaN when not
    printed), from the study's table named by the ``published`` option ({} without one)."""
    pub = spec.options.get("published")
    if not pub or not res.study:
        return {}
    from forestlab.studies import get_study  # the studies stand above this module's registry

    table = get_study(res.study).read_published(str(pub["file"]))
    std = table["std"] if "std" in table.columns else np.nan
    ours = {str(v): str(k) for k, v in pub.items() if k not in ("file", "note")}  # published name -> ours
    out = {}
    for row, sd in zip(table.itertuples(), np.broadcast_to(np.asarray(std, dtype=float), len(table)), strict=True):
        value = pd.to_numeric(row.value, errors="coerce")
        if np.isfinite(value):
            algorithm = ours.get(str(row.algorithm), str(row.algorithm))
            out[(str(row.dataset), algorithm, str(row.metric))] = (float(value), float(sd))
    return out


def _published_note(spec: FigureSpec, res: ExperimentResults) -> str:
    pub = spec.options.get("published") or {}
    where = f"experiments/{res.study}/published/{pub.get('file')}"
    return f"Published values are read from {where}." + (f" {pub['note']}" if pub.get("note") else "")


@figure_kind("roc_envelope", "min/max/mean band of the test ROC curves of each algorithm",
             algorithms=Field(ALGORITHMS))
def roc_envelope(res: ExperimentResults, spec: FigureSpec):
    """One panel per dataset: for each algorithm, the band between the pointwise minimum and maximum of its runs'
    test ROC curves, and their mean (:func:`forestlab.metrics.roc_envelope`)."""
    import matplotlib.pyplot as plt

    datasets = res.datasets
    nrows, ncols = grid_shape(len(datasets))
    w, h = panel_size(ncols, 4.0, 3.8)
    fig, axes = plt.subplots(nrows, ncols, figsize=(w * ncols, h * nrows), squeeze=False)
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        drawn = 0
        for algorithm in (spec.options["algorithms"] or res.algorithms):
            runs = [a for a in res.run_arrays(str(algorithm), dataset) if "test_scores" in a and "y_test" in a]
            if not runs:
                continue
            grid, lo, mean, hi = roc_envelope_of(runs)
            (line,) = ax.plot(grid, mean, lw=1.4, label=f"{algorithm} ({len(runs)} runs)")
            ax.fill_between(grid, lo, hi, color=line.get_color(), alpha=0.2, lw=0)
            drawn += 1
        roc_panel(ax, res, dataset, drawn)
        if drawn:
            ax.legend(fontsize=8)
    caption(fig, "For each algorithm the line is the pointwise mean of its runs' test ROC curves and the shaded band "
            "spans their pointwise minimum to maximum (the sup-norm envelope of the curves).", _ENVELOPE)
    return finish(fig, axes, len(datasets), spec)


@figure_kind("metric_and_measure", "a metric's mean and a measure across runs, per algorithm",
             metric=Field(Text(), "test_auc"),
             measure=Field(Registered("measure", lambda: list(MEASURES)), "instability"), algorithms=Field(ALGORITHMS),
             published=_PUBLISHED)
def metric_and_measure(res: ExperimentResults, spec: FigureSpec):
    """One panel per dataset, stacked (the panels keep their width on the page): for each algorithm a bar of a
    metric's mean (± one std over the runs) and, on a second axis, a statistic over its runs (a measure such as the
    instability) as a marker (depecker2010 Fig. 4.5); the published values of the ``published`` table beside them,
    in black and hollow."""
    import matplotlib.pyplot as plt

    metric, measure = str(spec.options["metric"]), str(spec.options["measure"])
    algorithms = figure_algorithms(res, spec)
    datasets = res.datasets
    published = _published(res, spec)
    fig, axes = plt.subplots(len(datasets), 1, figsize=(7.6, 3.3 * len(datasets) + 0.6), squeeze=False)
    x = np.arange(len(algorithms))
    shown_pub = False
    legend: list = []
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        means, stds, inst = [], [], []
        for algorithm in algorithms:
            v = res.values(algorithm, metric, dataset)["value"].to_numpy(dtype=float)
            v = v[np.isfinite(v)]
            means.append(v.mean() if v.size else np.nan)
            stds.append(v.std(ddof=1) if v.size > 1 else np.nan)
            inst.append(res.measure(str(algorithm), measure, dataset))
        pub_m = [published.get((dataset, a, metric), (np.nan, np.nan)) for a in algorithms]
        pub_i = [published.get((dataset, a, measure), (np.nan, np.nan))[0] for a in algorithms]
        handles = [ax.bar(x - 0.1, means, width=0.6, yerr=stds, color="#4c72b0", alpha=0.85, capsize=2,
                          label=f"{metric_words(metric)}, ours (mean ± std)")]
        if any(np.isfinite(v) for v, _ in pub_m):
            shown_pub = True
            handles.append(ax.errorbar(x + 0.3, [v for v, _ in pub_m],
                                       yerr=[0 if not np.isfinite(s) else s for _, s in pub_m], fmt="D", ms=5,
                                       color="black", capsize=2, label=f"{metric_words(metric)}, published"))
        every = [v for m, s in zip(means, stds, strict=True) for v in (m - np.nan_to_num(s), m + np.nan_to_num(s))]
        every += [v for m, s in pub_m for v in (m - np.nan_to_num(s), m + np.nan_to_num(s))]
        every = [v for v in every if np.isfinite(v)]
        finite = [m for m in means if np.isfinite(m)]
        if every:
            ax.set_ylim(max(0.0, min(every) - 0.03), min(1.0, max(every) + 0.03))
        ax.set_ylabel(metric_words(metric), color="#4c72b0", fontsize=10)
        twin = ax.twinx()
        handles += twin.plot(x - 0.1, inst, "o", ms=7, color="#c44e52", label=f"{measure}, ours")
        if any(np.isfinite(v) for v in pub_i):
            shown_pub = True
            handles += twin.plot(x + 0.3, pub_i, "s", ms=7, mfc="none", mew=1.5, color="#c44e52",
                                 label=f"{measure}, published")
        twin.set_ylabel(metric_words(measure), color="#c44e52", fontsize=10)
        tops = [v for v in [*inst, *pub_i] if np.isfinite(v)]
        if tops:
            twin.set_ylim(0, 1.15 * max(tops))
        ax.set_xticks(x, algorithms, rotation=30, ha="right", fontsize=9)
        ax.tick_params(axis="y", labelsize=9)
        twin.tick_params(axis="y", labelsize=9)
        ax.set_title(dataset + ("" if finite else "  [no runs yet]"), fontsize=11)
        if ax is axes.flat[0]:
            legend = handles
    fig.legend(handles=legend, fontsize=9, loc="lower center", ncol=2)
    caption(fig, f"Blue bars (left axis): the mean {metric_words(metric)} of each algorithm over its runs; error "
            f"bars: ± one standard deviation over those runs. Red dots (right axis): the {metric_words(measure)} "
            "over the same runs (a statistic of the set of runs, no error bar).")
    if shown_pub:
        caption(fig, f"Black diamonds: the published mean ± its std; hollow red squares: the published "
                f"{measure}; a missing one was not printed (or lost). {_published_note(spec, res)}")
    return finish(fig, axes, len(datasets), spec, rect=(0, 0.6 / fig.get_figheight(), 1, 1))


@figure_kind("bars", "bars of a metric per algorithm with marks of other metrics",
             metric=Field(Text(), "test_auc"), marks=Field(MappingOf(Text(), Text())), algorithms=Field(ALGORITHMS),
             published=_PUBLISHED)
def bars(res: ExperimentResults, spec: FigureSpec):
    """One panel per dataset: for each algorithm a bar of a metric's mean with ± one std error bars, and short
    horizontal marks at the means of other metrics (``marks``: metric -> label), e.g. the truncated AUCs on the AUC
    bars of depecker2010 Figs 5.3, 5.4; the published mean ± std of the metric (``published``) beside each bar."""
    import matplotlib.pyplot as plt

    metric = str(spec.options["metric"])
    marks = dict(spec.options["marks"] or {})
    algorithms = figure_algorithms(res, spec)
    datasets = res.datasets
    nrows, ncols = grid_shape(len(datasets))
    w, h = panel_size(ncols, 4.0, 3.4)
    fig, axes = plt.subplots(nrows, ncols, figsize=(w * ncols, h * nrows + 0.5), squeeze=False)
    x = np.arange(len(algorithms))
    styles = ["_", "x", "."]

    def mean_std(algorithm: str, name: str, dataset: str) -> tuple[float, float]:
        v = res.values(algorithm, name, dataset)["value"].to_numpy(dtype=float)
        v = v[np.isfinite(v)]
        return (v.mean() if v.size else np.nan), (v.std(ddof=1) if v.size > 1 else np.nan)

    handles: list = []
    labels: list = []
    published = _published(res, spec)
    shown_pub = False
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        stats = [mean_std(a, metric, dataset) for a in algorithms]
        ax.bar(x, [m for m, _ in stats], yerr=[s for _, s in stats], color="#8fb0d8", capsize=2,
               label=f"{metric_words(metric)} (mean ± std)")
        pub = [published.get((dataset, a, metric), (np.nan, np.nan)) for a in algorithms]
        if any(np.isfinite(v) for v, _ in pub):
            ax.errorbar(x + 0.32, [v for v, _ in pub], yerr=[0 if not np.isfinite(sd) else sd for _, sd in pub],
                        fmt="D", ms=4, color="black", capsize=2, label=f"{metric_words(metric)}, published")
            shown_pub = True
        for k, (name, label) in enumerate(marks.items()):
            ax.scatter(x, [mean_std(a, name, dataset)[0] for a in algorithms], marker=styles[k % len(styles)],
                       s=160 if styles[k % len(styles)] == "_" else 30, color=f"C{k + 1}", label=str(label),
                       zorder=3)
        ax.set_ylim(0, 1)
        ax.set_ylabel(metric_words(metric))
        ax.set_xticks(x, algorithms, rotation=45, ha="right", fontsize=8)
        ax.set_title(dataset + ("" if any(np.isfinite(m) for m, _ in stats) else "  [no runs yet]"), fontsize=10)
        if len(ax.get_legend_handles_labels()[1]) > len(labels):
            handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=9, loc="lower center", ncol=min(3, len(labels)))
    caption(fig, f"Bars: the mean {metric_words(metric)} of each algorithm over its runs; error bars: ± one "
            "standard deviation over those runs." + (
                " Marks: the means, over the same runs, of " + ", ".join(
                    f"{metric_words(m)} ({lab})" for m, lab in marks.items()) + "." if marks else ""))
    if shown_pub:
        caption(fig, "Black diamonds: the published mean ± its std, where the study prints one. "
                + _published_note(spec, res))
    return finish(fig, axes, len(datasets), spec, rect=(0, 0.45 / fig.get_figheight(), 1, 1))


@figure_kind("metric_by_depth", "a curve indexed by tree depth per algorithm, with marks of others",
             curve=Field(Text(), "test_auc"), metric=Field(Text(), "test_auc"),
             marks=Field(MappingOf(ALGORITHM, Text())), algorithms=Field(ALGORITHMS))
def metric_by_depth(res: ExperimentResults, spec: FigureSpec):
    """One panel per dataset: for each algorithm the mean (± one std band over the runs) of a stored curve indexed
    by tree depth (``curve``, default ``test_auc``: entry d is the test AUC of the tree cut at depth d), the
    optimal AUC* as a red line when known, and the mean of a metric of other algorithms as horizontal marks
    (``marks``: algorithm -> label, e.g. a pruned tree; depecker2010 Figs 1.15d, 2.12, 3.6)."""
    import matplotlib.pyplot as plt

    name = str(spec.options["curve"])
    marks = dict(spec.options["marks"] or {})
    datasets = res.datasets
    nrows, ncols = grid_shape(len(datasets))
    w, h = panel_size(ncols, 4.2, 3.4)
    fig, axes = plt.subplots(nrows, ncols, figsize=(w * ncols, h * nrows), squeeze=False)
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        drawn = 0
        for algorithm in figure_algorithms(res, spec):
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
        ax.set_xlabel("depth D of the tree")
        ax.set_ylabel(metric_words(name))
        if drawn:
            ax.legend(fontsize=8)
    caption(fig, f"Each line is the mean {metric_words(name)} over an algorithm's runs of its tree cut at each depth; "
            "the shaded band is ± one standard deviation over those runs. The red line, where drawn, is AUC*, the "
            "optimal AUC of the generated problem (computed from its laws).",
            (f"Squares: the mean {metric_words(str(spec.options['metric']))} ± one standard deviation of "
             + ", ".join(str(v) for v in marks.values()) + ", placed at their mean depth.") if marks else "")
    return finish(fig, axes, len(datasets), spec)


@figure_kind("roc_at_depth", "mean test ROC curve of trees cut at a depth",
             depth=Field(Int(1), 3), algorithms=Field(ALGORITHMS))
def roc_at_depth(res: ExperimentResults, spec: FigureSpec):
    """One panel per dataset: the mean test ROC curve of each algorithm's trees cut at depth ``depth`` (from the
    stored ``test_scores_by_depth``), beside ROC* (depecker2010 Figs 1.14c, 1.15c, 2.9c-2.11d)."""
    import matplotlib.pyplot as plt

    depth = int(spec.options["depth"])
    datasets = res.datasets
    nrows, ncols = grid_shape(len(datasets))
    w, h = panel_size(ncols, 4.0, 3.8)
    fig, axes = plt.subplots(nrows, ncols, figsize=(w * ncols, h * nrows), squeeze=False)
    styles = ["--", ":", "-.", "-"]
    for ax, dataset in zip(axes.flat, datasets, strict=False):
        drawn = 0
        for k, algorithm in enumerate(figure_algorithms(res, spec)):
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
        roc_panel(ax, res, dataset, drawn)
        ax.legend(fontsize=8, loc="lower right")
    caption(fig, "Each line is the pointwise mean of the test ROC curves of an algorithm's trees cut at depth "
            f"{depth}, over its runs (counted in the legend); no band is drawn.", _ENVELOPE)
    return finish(fig, axes, len(datasets), spec)


@figure_kind("partition_2d", "the partition of a 2-d dataset by trees cut at a depth",
             depth=Field(Int(1), 3), algorithms=Field(ALGORITHMS))
def partition_2d(res: ExperimentResults, spec: FigureSpec):
    """One row per 2-d dataset: the 8 equal-mass level sets of eta when the runs recorded them (Figs 1.14a, 1.15a,
    2.9a-2.11a), then the cells of the first run's tree of each algorithm cut at depth ``depth``, coloured from best
    (dark red) to worst (light), from the stored ``grid_scores_by_depth`` on the grid ``grid_x`` x ``grid_y``
    (depecker2010 Figs 1.14b, 1.15b, 2.9b-2.11c: the estimated level sets)."""
    import matplotlib.pyplot as plt

    depth = int(spec.options["depth"])
    algorithms = figure_algorithms(res, spec)
    datasets = res.datasets
    ncols = len(algorithms) + 1
    w, h = panel_size(ncols, 3.3, 3.2)
    fig, axes = plt.subplots(len(datasets), ncols, figsize=(w * ncols, h * len(datasets) + 0.4), squeeze=False)
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
            ax.set_xlabel("first feature x1", fontsize=8)
            ax.set_ylabel("second feature x2", fontsize=8)
    figure_title(fig, spec)
    fig.tight_layout()
    return caption(fig, "First column: the level sets of the posterior probability eta(x) = P(Y = +1 | X = x) of the "
                   "generated problem, darker = higher, where its runs recorded them. Other columns: the cells of "
                   f"the first run's tree of each algorithm cut at depth {depth}, darker = ranked higher; one run, "
                   "so no spread is shown.")


@figure_kind("optimal_roc", "the optimal ROC curve of each generated dataset", published=_PUBLISHED)
def optimal_roc(res: ExperimentResults, spec: FigureSpec):
    """One panel: the optimal ROC curve ROC* of each generated dataset of the experiment, as its runs recorded it
    (depecker2010 Figs 4.4, 6.1), its AUC* in the legend beside the published AUC* (metric ``auc_star`` of the
    ``published`` table) where the study prints one."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    published = _published(res, spec)
    fig, ax = plt.subplots(figsize=(5.6, 5.0))
    drawn = 0
    handles = []
    for dataset in res.datasets:
        info = res.datasets_info.get(dataset) or {}
        if info.get("roc_star_tpr"):
            handles += ax.plot(ROC_GRID, np.asarray(info["roc_star_tpr"], dtype=float), lw=1.5,
                               label=f"{dataset}: AUC* {float(info['auc_star']):.3f}, ours")
            pub = next((v for (d, _, m), (v, _) in published.items() if d == dataset and m == "auc_star"), None)
            if pub is not None:
                handles.append(Line2D([], [], color=handles[-1].get_color(), ls="none", marker="s", mfc="none",
                                      label=f"{dataset}: AUC* {pub:.3f}, published"))
            drawn += 1
    roc_frame(ax)
    ax.set_title("ROC*" if drawn else "ROC* [no runs of a generated problem yet]", fontsize=10)
    if drawn:
        ax.legend(handles=handles, fontsize=8, loc="lower right")
    caption(fig, "Each line is the optimal ROC curve ROC* of a generated problem, computed from its laws (no run "
            "varies it, so there is no band); its area AUC* is in the legend. The dashed grey diagonal is a "
            "random ranking.")
    if published:
        caption(fig, "The legend's hollow squares give the AUC* the study prints (no curve of its own: the "
                f"original's image is not transcribed). {_published_note(spec, res)}")
    return finish(fig, np.array([ax]), 1, spec)


@figure_kind("metric_by_x", "a metric's mean per algorithm against an x value of each dataset, per panel",
             metric=Field(Text(), "reject"), panels=Field(ListOf(_PANEL, min_length=1), required=True),
             algorithms=Field(ALGORITHMS), rate=Field(Bool(), False), hline=Field(Real()), x_label=Field(Text(), "x"))
def metric_by_x(res: ExperimentResults, spec: FigureSpec):
    """One panel per entry of ``panels`` (``{title, x: {dataset: x value}}``): for each algorithm the mean of
    ``metric`` over its runs on each dataset of the panel, against the dataset's x value (the power of a test
    against the shift of its alternative). With ``rate: true`` each point carries its 95% Wilson interval for a
    binomial proportion; ``hline`` draws a dashed horizontal line (the tests' level)."""
    import matplotlib.pyplot as plt
    from scipy.stats import norm

    metric = str(spec.options["metric"])
    panels = list(spec.options["panels"])  # at least one (forestlab.spec)
    algorithms = figure_algorithms(res, spec)
    z = float(norm.ppf(0.975))
    w, h = panel_size(len(panels), 4.8, 3.8)
    fig, axes = plt.subplots(1, len(panels), figsize=(w * len(panels), h + 0.3), squeeze=False)
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
        ax.set_ylabel(metric_words(metric))
        if spec.options["rate"]:
            ax.set_ylim(0, 1.02)
        ax.set_title(str(panel.get("title", "")) + ("" if drawn else "  [no runs yet]"), fontsize=10)
        if drawn:
            ax.legend(fontsize=8, loc="upper left")
    caption(fig, f"Each point is the mean {metric_words(metric)} of an algorithm over its runs on one dataset, "
            "placed at that dataset's x value; the lines join them.",
            "The shaded band is each point's 95% Wilson score interval for a proportion over that many runs."
            if spec.options["rate"] else "No band is drawn.",
            f"The dashed grey line is at {float(spec.options['hline']):g}." if spec.options["hline"] is not None
            else "")
    return finish(fig, axes, len(panels), spec)
