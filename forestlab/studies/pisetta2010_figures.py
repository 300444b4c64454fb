"""The figure kind only pisetta2010 draws: per dataset, the mean per-split differences of pairs of algorithms with
their 95% t intervals, beside the published differences (Table 1's "RF-SVM minus RF"). Declared (its options,
checked by the spec before any run) and drawn here, registered with :func:`forestlab.plotting.figure_kind`."""

from __future__ import annotations

import textwrap

import numpy as np

from forestlab.plotting import MAX_WIDTH_IN, caption, figure_kind, metric_words
from forestlab.results import ExperimentResults
from forestlab.spec import ALGORITHM, Field, FigureSpec, ListOf, MappingOf, Record, Text
from forestlab.stats import paired_values
from forestlab.studies import get_study

_PAIR = Record({"a": Field(ALGORITHM, required=True), "b": Field(ALGORITHM, required=True), "label": Field(Text())},
               "a pair of paired_diff")


@figure_kind("paired_diff", "mean per-split differences of pairs of algorithms, with published ones",
             metric=Field(Text(), "test_accuracy"), pairs=Field(ListOf(_PAIR), required=True),
             published=Field(MappingOf(Text(), Text())), ylabel=Field(Text()))
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
        table = get_study(res.study).read_published(str(pub["file"]))
        vals = {(r.dataset, r.algorithm): float(r.value) for r in table[table["metric"] == metric].itertuples()}
        published = {d: vals[(d, pub["a"])] - vals[(d, pub["b"])] for d in datasets
                     if (d, pub["a"]) in vals and (d, pub["b"]) in vals}
    fig, ax = plt.subplots(figsize=(min(MAX_WIDTH_IN, max(6.0, 0.75 * len(datasets) + 2)), 4.2))
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
    ax.set_ylabel(str(spec.options["ylabel"] or f"difference in {metric_words(metric)}"))
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(textwrap.fill(spec.title, 90), fontsize=10)
    fig.tight_layout()
    caption(fig, f"Each point is the mean, over the splits, of the per-split difference in {metric_words(metric)} "
            "between the two algorithms of its legend entry (the same split for both); its error bar is the 95% "
            "t interval of that mean. The line at 0 is no difference.")
    if published:
        caption(fig, "Black crosses: the difference of the two published means, labelled published in the legend "
                f"(experiments/{res.study}/published/{pub['file']}); the study prints no interval for it.")
    return fig
