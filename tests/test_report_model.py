"""One results model (:mod:`forestlab.report.model`): a table cell reads the same, with the same digits and the same
agreement mark, in the Markdown table, its CSV and LaTeX, the `forestlab compare` text and CSV, and the site.

The store is real and small: quickstart's runs (3 seeds, 10 trees, offline data) read by a probe experiment that a
copy of the config tree files under the registered depecker2010 study, with a published table written for it (one
number close to ours, one far, one the source does not print, one with the study's own spread); the cells ask for
2, 3 and 4 digits and a tree depth (1 digit by the depth rule).
"""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from forestlab.cli import app
from forestlab.report.model import (
    AGREE,
    DISAGREE,
    GAP,
    MEASURE,
    NO_RUN,
    SINGLE,
    agreement,
    cell_digits,
    fmt_number,
    fmt_p,
    fmt_value,
)
from tests.conftest import REPO

runner = CliRunner()
SMALL = ["seeds=3", "limits.max_estimators=10"]
PROBE = "depecker2010_model_probe"
PROBE_YAML = f"""# @package _global_
defaults:
  - quickstart
  - _self_

experiment:
  name: {PROBE}
  study: depecker2010
  description: quickstart's runs beside a published table written by the test
  claims: []
  figures: []
  tables:
    - name: probe
      title: Probe of the results model
      published: model_probe.csv
      mark_best: test_risk
      cells:
        - {{algorithm: rf, metric: test_risk}}
        - {{algorithm: sorf, metric: test_risk, digits: 2}}
        - {{algorithm: mincq, metric: mu, digits: 4}}
        - {{algorithm: rf, metric: max_depth}}
"""
# (dataset, algorithm, metric) -> the column header in the tables, the digits it is shown with
CELLS = {("wdbc_sklearn", "rf", "test_risk"): ("rf test_risk", 3),
         ("ringnorm", "sorf", "test_risk"): ("sorf test_risk", 2),
         ("wdbc_sklearn", "mincq", "mu"): ("mincq mu", 4),
         ("ringnorm", "rf", "max_depth"): ("rf max_depth", 1)}


def _invoke(*args: str) -> str:
    res = runner.invoke(app, list(args))
    assert res.exit_code == 0, res.output
    return res.output


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Runs quickstart and the probe, writes the probe's tables and comparison and the site; returns the root."""
    root = tmp_path_factory.mktemp("model")
    conf = root / "conf"
    shutil.copytree(REPO / "conf", conf)
    (conf / "experiment" / f"{PROBE}.yaml").write_text(PROBE_YAML)
    experiments = root / "experiments"
    shutil.copytree(REPO / "experiments", experiments)
    (experiments / "depecker2010" / "published" / "model_probe.csv").write_text(
        "dataset,algorithm,metric,value,std,note\n"
        "wdbc_sklearn,rf,test_risk,0.05,0.01,\n"
        "ringnorm,sorf,test_risk,0.9,,\n"  # far from any forest's test risk: disagrees
        "wdbc_sklearn,mincq,mu,,,lost in the source\n"  # a gap
        "ringnorm,rf,max_depth,12,,\n")
    env = {"FORESTLAB_RESULTS_DIR": str(root / "results"), "FORESTLAB_DATA_DIR": str(root / "data"),
           "FORESTLAB_CONF_DIR": str(conf), "FORESTLAB_EXPERIMENTS_DIR": str(experiments), "MPLBACKEND": "Agg"}
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        _invoke("run", f"experiment={PROBE}", *SMALL, "--quiet")
        _invoke("tables", PROBE, *SMALL)
        (root / "compare.txt").write_text(_invoke("compare", PROBE, *SMALL))
        _invoke("report", *SMALL)
    return root


def _markdown_cells(md: str) -> dict[tuple[str, str], str]:
    lines = [line for line in md.splitlines() if line.startswith("| ")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    out = {}
    for line in lines[1:]:
        values = [c.strip() for c in line.strip("|").split("|")]
        for h, v in zip(head[1:], values[1:], strict=True):
            out[(values[0], h)] = v
    return out


def _compare_rows(text: str) -> dict[tuple[str, str, str], dict[str, str]]:
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = [dict(zip(head, [c.strip() for c in line.strip("|").split("|")], strict=True)) for line in lines[1:]]
    return {(r["dataset"], r["algorithm"], r["metric"]): r for r in rows if "algorithm" in r}


def test_a_cell_reads_the_same_in_every_output(store: Path) -> None:
    tables = store / "results" / "tables" / PROBE
    md = _markdown_cells((tables / "probe.md").read_text())
    tex = (tables / "probe.tex").read_text()
    csv = pd.read_csv(tables / "probe.csv").set_index("dataset")
    compare = _compare_rows((store / "compare.txt").read_text())
    compare_csv = pd.read_csv(tables / "probe_compare.csv")
    page = (store / "results" / "report" / "depecker2010.html").read_text(encoding="utf-8")
    section = page[page.index(f'id="{PROBE}"'):]
    section = section[:section.index("</section>")]
    for (dataset, algorithm, metric), (header, digits) in CELLS.items():
        shown = md[(dataset, header)]
        text = shown.lstrip("▸").rstrip("*")  # the tables' marks (best of row, significance) around the value
        # the digits: every number of the cell has exactly the cell's digits, and is the CSV's number rounded
        numbers = re.findall(r"\d+\.(\d+)", text)
        assert numbers and all(len(n) == digits for n in numbers), (header, text)
        mean, std = csv.loc[dataset, f"{header} mean"], csv.loc[dataset, f"{header} std"]
        assert abs(float(text.split(" ± ")[0]) - mean) <= 0.5 * 10 ** -digits + 1e-9, (header, text, mean)
        assert text == fmt_value(mean, std, int(csv.loc[dataset, f"{header} n"]), digits) or \
            abs(float(text.split(" ± ")[1]) - std) <= 0.5 * 10 ** -digits + 1e-9
        # LaTeX: the same text, escaped
        assert shown.replace("±", r"$\pm$") in tex, (header, shown)
        # the compare text: the same reproduced text and digits, and one agreement mark ...
        row = compare[(dataset, algorithm, metric)]
        assert row["reproduced"] == text, (row, text)
        record = compare_csv[(compare_csv["dataset"] == dataset) & (compare_csv["algorithm"] == algorithm)
                             & (compare_csv["metric"] == metric)].iloc[0]
        mark = record["mark"]
        assert row["agreement"].endswith(f" {mark}")
        if mark != GAP:
            assert row["published"].split(" ± ")[0] == fmt_number(record["published"], digits)
            assert row["diff"] == fmt_number(record["diff"], digits, signed=True)
        # ... which the site shows for the same cell, beside the same text; its reproduced table as the Markdown
        cells = re.findall(r'<td class="pub">(.*?)</td><td class="ours">([^<]*)</td>'
                           r'<td class="mark m-([a-z-]+)"[^>]*>([^<]*)<span', section)
        ours = {(html.unescape(o), m, html.unescape(d).strip()) for _, o, m, d in cells}
        assert (text, mark, row["diff"]) in ours, (text, mark, ours)
        assert f"<td>{html.escape(shown)}</td>" in section, shown
    # the published table's own spread, a gap and a far number read alike in the compare text and the site
    assert compare[("wdbc_sklearn", "rf", "test_risk")]["published"] == "0.050 ± 0.010"
    assert compare[("wdbc_sklearn", "mincq", "mu")]["published"] == "not printed"
    assert compare[("wdbc_sklearn", "mincq", "mu")]["agreement"] == "? gap"
    assert compare[("ringnorm", "sorf", "test_risk")]["agreement"] == "✗ disagree"
    assert "0.050 ± 0.010" in section and "not printed" in section and "m-disagree" in section


def test_best_of_row_is_marked_on_the_values_as_shown(store: Path) -> None:
    """mark_best compares the cells rounded at their own digits (rf at 3, sorf at 2), as the table shows them."""
    md = _markdown_cells((store / "results" / "tables" / PROBE / "probe.md").read_text())
    for dataset in ("wdbc_sklearn", "ringnorm"):
        rf, sorf = md[(dataset, "rf test_risk")], md[(dataset, "sorf test_risk")]
        values = {"rf": float(rf.lstrip("▸").split(" ± ")[0]), "sorf": float(sorf.lstrip("▸").split(" ± ")[0])}
        best = min(values.values())
        assert rf.startswith("▸") == (values["rf"] == best) and sorf.startswith("▸") == (values["sorf"] == best)


# -- the rules, one by one ---------------------------------------------------------------------------------------
def test_one_agreement_rule() -> None:
    assert agreement(0.10, 0.12, 0.01, 3) == AGREE  # 2 std exactly
    assert agreement(0.10, 0.1201, 0.01, 3) == DISAGREE
    assert agreement(0.10, 0.12, 0.0, 1) == SINGLE
    assert agreement(50.0, 48.0, float("nan"), 4, measure=True) == MEASURE
    assert agreement(0.10, float("nan"), float("nan"), 0) == NO_RUN
    assert agreement(float("nan"), 0.12, 0.01, 3) == GAP


def test_one_number_formatter_and_digits_rule() -> None:
    assert fmt_value(0.12345, 0.0101, 3, 3) == "0.123 ± 0.010"
    assert fmt_value(0.12345, 0.0, 1, 2) == "0.12"  # one run: no spread shown
    assert fmt_value(48.123, float("nan"), 4, 2) == "48.12"  # a statistic over the runs
    assert fmt_value(float("nan"), float("nan"), 0) == "—"
    assert fmt_number(-0.01234, 3, signed=True) == "-0.012" and fmt_number(None) == "—"
    assert fmt_p(0.0123) == "0.012" and fmt_p(0.00012) == "0.00012" and fmt_p(float("nan")) == "—"
    assert cell_digits(3, {"algorithm": "a", "metric": "max_depth"}) == 1 \
        and cell_digits(4, {"algorithm": "a", "metric": "test_auc"}) == 4
    assert cell_digits(3, {"algorithm": "a", "metric": "max_depth", "digits": 2}) == 2
