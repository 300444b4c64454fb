"""The report's figures: the README section beside a figure is the one describing the original; a figure kind's
caption is written beside its PNG and reaches the page; each study's published-vs-reproduced plot is drawn when it
has compared cells with runs, and replaced by a sentence when it has none. Quick (no run, no store)."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import pytest

from forestlab import plotting
from forestlab.report import readme
from forestlab.report.model import AGREE, DISAGREE, Comparison
from forestlab.report.pvr import plotted, study_pvr

README = """# study: a small README

## Where each published number comes from

### Figure 2 (`fig2`): the original

The thesis draws the test risk against the number of trees (the original).

## Protocol choices

### Trees for `exp_fig` (`fig2`)

Our choice of 300 trees.

## Reproduction results

### Our figures (`exp_fig`, `fig2`, 600 runs)

What we measured.

#### `fig3` in detail

Our account of fig3.

## Figure 3 of the paper (`exp_fig`)

The original figure 3, described.
"""


@pytest.fixture
def small_readme(tmp_path: Path) -> Path:
    path = tmp_path / "README.md"
    path.write_text(README, encoding="utf-8")
    readme.sections.cache_clear()
    return path


def test_figure_section_is_the_description_of_the_original(small_readme):
    sec = readme.figure_section(small_readme, "exp_fig", "fig2")
    assert sec is not None and sec.title == "Figure 2 (`fig2`): the original"
    assert "the original" in sec.markdown and "Our choice" not in sec.markdown
    # fig3 is named only under "Reproduction results" (our account): not the original; the experiment's own
    # section describing the original is taken instead
    sec3 = readme.figure_section(small_readme, "exp_fig", "fig3")
    assert sec3 is not None and sec3.title == "Figure 3 of the paper (`exp_fig`)"
    # nothing outside our own sections names this one: no section, never a wrong one
    assert readme.figure_section(small_readme, "other_exp", "fig9") is None


def test_figure_section_never_takes_a_results_or_protocol_section(tmp_path):
    path = tmp_path / "README.md"
    path.write_text("# s\n\n## Reproduction results\n\n### Figures (`exp`)\n\nours\n\n"
                    "## Protocol choices for `exp`\n\nchoices\n", encoding="utf-8")
    readme.sections.cache_clear()
    assert readme.figure_section(path, "exp", "fig") is None


def test_a_drawings_caption_is_kept_with_the_figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure()
    plotting.caption(fig, "Lines: the mean over the runs.", "", "Band: ± one std.")
    assert plotting.caption_of(fig) == "Lines: the mean over the runs. Band: ± one std."
    plt.close(fig)
    assert plotting.metric_words("test_truncated_auc_20_fractional") == "test truncated AUC, top 20% of the ranking"
    assert plotting.metric_words("oob_risk") == "out-of-bag error rate"


def test_figure_caption_reaches_the_page(tmp_path):
    from forestlab.report.figures import caption_path, read_caption
    from forestlab.report.site import FigureView, _figure_html

    png = tmp_path / "fig.png"
    png.write_bytes(b"\x89PNG")
    assert read_caption(png) == ""
    caption_path(png).write_text("Bars: mean ± one std over the runs <10>.\n", encoding="utf-8")
    fv = FigureView(SimpleNamespace(name="fig", title="A figure"), "figures/e/fig.png", None, 0.0, "The original",
                    "<p>x</p>", read_caption(png))
    ev = SimpleNamespace(name="e", runs=SimpleNamespace(last=None), commands=SimpleNamespace(figures="forestlab "
                                                                                                     "figures e"))
    html = _figure_html(ev, fv)
    assert "<figcaption>" in html and "Bars: mean ± one std over the runs &lt;10&gt;." in html
    missing = _figure_html(ev, FigureView(fv.spec, None, None, None, "The original", "<p>x</p>"))
    assert "Not drawn yet: <code>forestlab figures e</code>" in missing and "original" not in missing.lower()


def _comparison(published: float, value: float, spread: float, n: int, metric: str = "test_risk",
                **extra) -> Comparison:
    # a cell's role and whether it is scored come from its column, as in the model
    column = SimpleNamespace(kind="metric", digits=3, scored=extra.pop("scored", True),
                             role=extra.pop("role", "result"))
    comp = Comparison("d", "a", metric, column, published, math.nan, "", value, spread, n)
    for k, v in extra.items():
        object.__setattr__(comp, k, v)
    return comp


def test_pvr_plot_drawn_for_a_study_with_comparisons(tmp_path):
    comps = [_comparison(0.10, 0.11, 0.01, 10), _comparison(0.20, 0.30, 0.01, 10),
             _comparison(0.80, 0.79, 0.02, 10, metric="test_auc"), _comparison(0.5, math.nan, math.nan, 0)]
    assert [c.mark for c in comps[:3]] == [AGREE, DISAGREE, AGREE]
    assert len(plotted(comps)) == 3  # the cell without a run is not drawn
    plot = study_pvr("s", comps, tmp_path, "pvr/s.png")
    assert plot.image == "pvr/s.png" and plot.cells == 3 and (tmp_path / "pvr/s.png").stat().st_size > 1000
    assert "y = x" in plot.caption and "standard deviation" in plot.caption


def test_pvr_plot_absent_with_a_sentence(tmp_path):
    none = study_pvr("s", [], tmp_path, "pvr/s.png")
    assert none.image is None and "none of this study's experiments compares" in none.note
    unrun = study_pvr("s", [_comparison(0.5, math.nan, math.nan, 0)], tmp_path, "pvr/s.png")
    assert unrun.image is None and "no published cell" in unrun.note and not (tmp_path / "pvr").exists()


def test_pvr_plot_draws_only_primary_cells(tmp_path):
    comps = [_comparison(0.1, 0.1, 0.01, 5), _comparison(5.0, 5.0, 0.5, 5, metric="max_depth", scored=False)]
    assert [c.metric for c in plotted(comps)] == ["test_risk"]


def test_pvr_html_says_why_there_is_no_plot(tmp_path):
    from forestlab.report.pvr import PvrPlot
    from forestlab.report.site import StudyView, pvr_html

    study = StudyView("s", "S", None, [])
    assert pvr_html(study) == ""
    study.pvr = PvrPlot(None, 0, "No published-vs-reproduced plot: none.")
    assert "No published-vs-reproduced plot: none." in pvr_html(study)
    study.pvr = PvrPlot("pvr/s.png", 3, caption="The caption.")
    html = pvr_html(study)
    assert 'src="pvr/s.png"' in html and "<figcaption>The caption.</figcaption>" in html


def test_every_figure_kind_is_drawn_by_its_own_function():
    import forestlab.studies  # noqa: F401  (registers the studies' figure kinds)

    drawn = plotting.drawings()
    assert {"error_curves", "metric_and_measure", "optimal_roc", "paired_diff", "importance"} <= set(drawn)
    assert {kind: draw.__name__ for kind, draw in drawn.items() if draw.__name__ != kind} == {}
