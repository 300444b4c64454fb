"""Smoke runs and the reports never break each other: after `forestlab run experiment=X debug=smoke`, its tables,
figures and comparison, and `forestlab report debug=smoke`, exit 0 and write their files, for every registered
experiment (a table or figure naming datasets the smoke plan left out shows the others, with a note); and one
experiment whose section cannot be built is a note on that section, never the end of the report."""

from __future__ import annotations

import html
import re
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import run_cli

#: A small experiment whose smoke plan takes seconds, with tables of datasets the smoke plan leaves out (quickstart's
#: smoke runs are run by tests/test_ops.py; every experiment's by the other slow test)
FAST = ("depecker2010_table6_1",)


def _experiments() -> list[str]:
    from forestlab.config import list_options

    return list_options("experiments")


def _section_head(name: str) -> str:
    """The start of an experiment's section of the report, as it is when the section was built."""
    return f'id="{name}"><h2>Experiment <code>{name}</code>'  # a section that ran, or the short box of one that did not


def _smoke_cycle(names: tuple[str, ...] | list[str], workdir: Path) -> None:
    """Run each experiment's smoke plan, then its tables, figures and comparison, then the report, through the CLI;
    every command exits 0 and writes what the experiment's config names."""
    from forestlab.config import load_experiment

    results = workdir / "results"
    for name in names:
        run = run_cli("run", f"experiment={name}", "debug=smoke")
        assert run.returncode == 0, f"run {name}: {run.stderr[-2000:]}"
        for command in ("tables", "figures", "compare"):
            out = run_cli(command, name, "debug=smoke")
            assert out.returncode == 0, f"{command} {name}: {out.stderr[-2000:]}"
        exp = load_experiment([f"experiment={name}", "debug=smoke"])
        for spec in exp.tables:
            for ext in ("md", "csv", "tex"):
                assert (results / "tables" / f"{name}-smoke" / f"{spec.name}.{ext}").is_file(), (name, spec)
        for spec in exp.figures:
            for ext in ("png", "pdf"):
                assert (results / "figures" / f"{name}-smoke" / f"{spec.name}.{ext}").is_file(), (name, spec)
        if exp.claims or any(t.published or t.pairs for t in exp.tables):
            assert (results / "tables" / f"{name}-smoke" / "compare.txt").is_file(), name
    report = run_cli("report", "debug=smoke")
    assert report.returncode == 0, report.stderr[-2000:]
    site = results / "report-smoke"
    assert (site / "index.html").is_file()
    pages = "".join(p.read_text(encoding="utf-8") for p in site.glob("*.html"))
    for name in names:
        assert _section_head(name) in pages, name
    assert "could not be built" not in pages and "cannot be resolved" not in pages


@pytest.mark.slow  # 33 s; make test renders smoke reports (banners, untested claims) against goldens: test_equivalence
def test_smoke_plans_of_a_few_experiments_report_without_error(workdir: Path, mirror: Path) -> None:
    _smoke_cycle(FAST, workdir)
    results = workdir / "results"
    level = (results / "tables" / "depecker2010_table6_1-smoke" / "level.md").read_text()
    # every dataset of the level table is a null problem the smoke plan leaves out: the table says so
    assert "Not shown: gauss_shift_q10_d000, gauss_shift_q30_d000, which these runs' plan left out" in level
    compare = (results / "tables" / "depecker2010_table6_1-smoke" / "compare.txt").read_text()
    assert "[HOLDS]" not in compare and "[DOES NOT HOLD]" not in compare and "[NOT TESTED]" in compare
    assert "smoke runs (debug=smoke: shrunk to check that the code runs), never judged" in compare
    # its headings do not claim the full sizes: each title says the sizes these runs had
    sizes = "[SMOKE RUNS: 1 seed, at most 2 datasets, at most 10 trees per ensemble, 2 folds of each k-fold partition"
    assert f"over 100 samples of 2000 points; ± its std over the samples) {sizes}" in compare
    assert sizes in (results / "tables" / "depecker2010_table6_1-smoke" / "table6_1.md").read_text()
    # the report: every page bannered, every title annotated, no claim judged on smoke runs
    site = results / "report-smoke"
    assert list(site.glob("runs/*.html")), "no per-run page"
    for page in [*site.glob("*.html"), *site.glob("runs/*.html")]:  # the per-run pages too
        text = page.read_text(encoding="utf-8")
        assert '<p class="smoke-banner">' in text, page.name
        assert "v-holds" not in re.sub(r'class="vc v-[^"]*"', "", text), page.name  # no HOLDS badge
        assert 'class="verdict v-does-not-hold"' not in text, page.name
    study = (site / "depecker2010.html").read_text(encoding="utf-8")
    assert 'class="verdict v-not-tested"' in study and html.escape(sizes, quote=False) in study
    index = (site / "index.html").read_text(encoding="utf-8")
    assert ">0 holds<" in index and ">0 does not hold<" in index


@pytest.mark.slow
def test_smoke_plans_of_every_experiment_report_without_error(workdir: Path, mirror: Path) -> None:
    _smoke_cycle(_experiments(), workdir)


def test_a_section_that_cannot_be_built_is_a_note_and_the_others_build(workdir: Path) -> None:
    """quickstart's recorded plan is damaged in the store (its summary is not JSON): reading its results fails, and
    the report shows that on quickstart's section while every other experiment's section is built."""
    from forestlab.config import load_experiment
    from forestlab.report.site import build_site
    from forestlab.store import Store

    results = workdir / "results"
    exp = load_experiment(["experiment=quickstart", "debug=smoke"])
    with Store(results) as store:
        store.record_plan(exp.plan_id, exp.summary(), [])
    con = sqlite3.connect(results / "runs.sqlite")
    con.execute("UPDATE plans SET summary = '{damaged' WHERE plan_id = ?", (exp.plan_id,))
    con.commit()
    con.close()
    index = build_site(["debug=smoke"])
    pages = {p.name: p.read_text(encoding="utf-8") for p in index.parent.glob("*.html")}
    broken = [text for text in pages.values() if 'id="quickstart"' in text]
    assert len(broken) == 1
    section = broken[0].split('id="quickstart"', 1)[1].split("</section>", 1)[0]
    assert "Its section could not be built" in section and "JSONDecodeError" in section
    assert "forestlab tables quickstart debug=smoke" in section
    others = [name for name in _experiments() if name != "quickstart"]
    built = "".join(pages.values())
    for name in others:  # each other experiment has its own, normal section
        assert _section_head(name) in built, name
    assert "<code>quickstart</code></a> (could not be built)" in broken[0]  # its entry in the page's contents
    assert "1 could not be built" in pages["index.html"]
