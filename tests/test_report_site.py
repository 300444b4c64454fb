"""The reproduction report (`forestlab report`): a static site built from a small real store, its content, its
statistics, and the site itself in headless Chromium (Debian's `chromium`, driven over the DevTools protocol on a
pipe: no extra package, no browser download).

The store: the offline `quickstart` experiment, zirakiza2013's `uci_binary` cut to 3 datasets, 3 seeds and 10 trees
(from the dataset mirror), and a probe experiment that a copy of the config tree adds to the registered
`depecker2010` study (its runs are quickstart's, shared by key): the report must show it with no change to its code.
A copy of the published tables has one value blanked with a note (an OCR gap).
"""

from __future__ import annotations

import base64
import functools
import http.server
import json
import math
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import unquote, urlparse

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from forestlab.cli import app
from tests.conftest import REPO, mirror_path

runner = CliRunner()
SMALL = ["seeds=3", "limits.max_estimators=10", "limits.max_datasets=3"]
PROBE = "depecker2010_report_probe"  # an experiment the copied config tree adds to a registered study
SCREENSHOTS = Path(tempfile.gettempdir()) / "forestlab-report-screenshots"

PROBE_YAML = f"""# @package _global_
# Test-only: quickstart's runs filed under a registered study that has no experiment of its own yet.
defaults:
  - quickstart
  - _self_

experiment:
  name: {PROBE}
  study: depecker2010
  description: quickstart's runs, filed under depecker2010 by the report test
  claims: []
  figures:
    - name: not_drawn
      kind: error_curves
      algorithm: rf
      curves: {{test_error: test}}
"""


BROKEN = "pisetta2010_report_broken"  # an experiment whose config cannot be resolved (a dataset not written yet)
BROKEN_YAML = f"""# @package _global_
defaults:
  - quickstart
  - _self_

experiment:
  name: {BROKEN}
  study: pisetta2010
  datasets: [no_such_dataset_yet]
"""


def _invoke(*args: str) -> str:
    res = runner.invoke(app, list(args))
    assert res.exit_code == 0, res.output
    return res.output


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Runs the small store, draws quickstart's figure, builds the report; returns the site folder."""
    root = tmp_path_factory.mktemp("report")
    conf = root / "conf"
    shutil.copytree(REPO / "conf", conf)
    (conf / "experiment" / f"{PROBE}.yaml").write_text(PROBE_YAML)
    (conf / "experiment" / f"{BROKEN}.yaml").write_text(BROKEN_YAML)
    experiments = root / "experiments"
    shutil.copytree(REPO / "experiments", experiments)
    table = experiments / "zirakiza2013" / "published" / "table7_1.csv"
    published = pd.read_csv(table)
    gap = (published["dataset"] == "adult") & (published["algorithm"] == "sorf") & (published["metric"] == "test_risk")
    published["value"] = published["value"].astype(object)
    published.loc[gap, "value"] = ""
    published["note"] = ""
    published.loc[gap, "note"] = "illegible in the OCR'd thesis"
    published.to_csv(table, index=False)
    env = {"FORESTLAB_RESULTS_DIR": str(root / "results"), "FORESTLAB_DATA_DIR": str(root / "data"),
           "FORESTLAB_CONF_DIR": str(conf), "FORESTLAB_EXPERIMENTS_DIR": str(experiments), "MPLBACKEND": "Agg"}
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        mirror = mirror_path()
        if mirror is not None:
            mp.setenv("FORESTLAB_DATA_MIRROR", str(mirror))
        else:
            mp.delenv("FORESTLAB_DATA_MIRROR", raising=False)
        _invoke("run", "experiment=quickstart", *SMALL, "--quiet")
        _invoke("run", f"experiment={PROBE}", *SMALL, "--quiet")
        if mirror is not None:
            _invoke("run", "experiment=uci_binary", *SMALL, "--quiet")
        _invoke("figures", "quickstart", *SMALL)
        for name in ("quickstart", "uci_binary") if mirror is not None else ("quickstart",):
            (root / f"compare-{name}.txt").write_text(_invoke("compare", name, *SMALL))
        t0 = time.perf_counter()
        out = _invoke("report", *SMALL)
        print(f"forestlab report took {time.perf_counter() - t0:.1f}s")
    index = Path(out.strip().splitlines()[-1])
    assert index == root / "results" / "report" / "index.html"
    return index.parent


def _page(site: Path, name: str) -> str:
    return (site / name).read_text(encoding="utf-8")


def _text(page: str) -> str:
    """The page's text with tags removed and entities decoded (for plain-text assertions)."""
    import html

    inline = re.sub(r"</?(code|span|a|sup|em|strong)\b[^>]*>", "", page)
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", inline)))


def _needs_mirror() -> None:
    if mirror_path() is None:
        pytest.skip("no dataset mirror: the uci_binary runs need FORESTLAB_DATA_MIRROR")


# ---------------------------------------------------------------------------------------------------------------
def test_index_has_one_line_per_registered_study(site):
    from forestlab.studies import STUDIES

    index = _page(site, "index.html")
    rows = re.findall(r"<tr><th><a href=\"([^\"]+)\">([^<]+)</a></th>(.*?)</tr>", index)
    keys = [name for _, name, _ in rows]
    assert keys[: len(STUDIES)] == sorted(STUDIES)
    assert keys[len(STUDIES):] == ["other experiments"]  # quickstart has no study
    for href, _, _ in rows:
        assert (site / href).is_file()
    line = {name: _text(cells) for _, name, cells in rows}
    assert "18 done, 0 failed" in line["other experiments"]  # quickstart: 2 datasets x 3 learners x 3 seeds
    assert re.search(r"\d+ holds · \d+ does not hold · \d+ inconclusive", line["other experiments"])
    if mirror_path() is not None:
        z = line["zirakiza2013"]
        assert "72 done, 0 failed" in z  # 3 datasets x 8 learners (rf, sorf, mincq, the 5 successors) x 3 seeds
        # Table 7.1: 3 datasets x 6 cells, 1 gap: 8 test risks scored, 9 depths and hyperparameters shown apart;
        # Viallard's 5 cells on credit_a (another thesis, another protocol: compared, unscored)
        assert re.search(r"\d+ of 8 primary cells agree, \d+% \(\d+ not run, 1 not printed\)", z), z
        unscored = r"\d+ hyperparameter, diagnostic or other-reading cells shown, unscored \(\d+ of 14 agree\)"
        assert re.search(unscored, z), z
        assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d", z)  # when it last ran


def test_a_new_experiment_of_a_registered_study_appears_without_code_change(site):
    page = _page(site, "depecker2010.html")
    assert f'id="{PROBE}"' in page
    assert "Test risk of the three weighted votes of one forest" in page  # its table, from quickstart's config
    assert "18 done, 0 failed of 18 planned runs" in _text(page)
    assert "Friedman" in page  # 3 learners on 2 datasets


def test_an_experiment_that_cannot_be_resolved_is_shown_with_its_error(site):
    page = _text(_page(site, "pisetta2010.html"))
    assert f"Experiment {BROKEN} Its config cannot be resolved, so it is left out of this report:" in page
    assert "no_such_dataset_yet" in page and f"forestlab config experiment={BROKEN}" in page
    index = _text(_page(site, "index.html"))
    assert "(1 cannot be resolved)" in index


def test_report_site_code_names_no_study():
    from forestlab.studies import STUDIES

    for name in ("site.py", "critical_difference.py", "provenance.py", "readme.py"):
        source = (REPO / "forestlab" / "report" / name).read_text()
        for key in STUDIES:
            assert not re.search(rf"\b{key}\b", source), f"{name} names the study {key}"


def test_study_page_tables_published_values_and_marks(site):
    _needs_mirror()
    page = _page(site, "zirakiza2013.html")
    text = _text(page)
    assert "zirakiza2013 Table 7.1: test risk, fully grown trees" in text
    assert "Published vs reproduced (table7_1.csv)" in text
    # every published cell of the 3 datasets has a mark; the blanked one is a gap with its note
    section = page[page.index('id="uci_binary"'):page.index('id="uci_binary_mixed"')]
    marks = re.findall(r'class="mark m-(agree|disagree|single|no-run|gap)"', section)
    assert len(marks) == 3 * 6 + 5 and marks.count("gap") == 1  # Table 7.1's cells, Viallard's 5 on credit_a
    assert set(marks) <= {"agree", "disagree", "gap"}  # 3 seeds: every other cell is judged
    assert "not printed" in text and "illegible in the OCR'd thesis" in text
    # the reproduced table as `forestlab tables` writes it, and the command that reruns it, beside it
    assert "▸" in text and "24/24" in text  # runs of a dataset: 8 learners x 3 seeds
    assert ("forestlab run experiment=uci_binary seeds=3 limits.max_estimators=10 limits.max_datasets=3 "
            "launcher.n_jobs=1 && forestlab tables uci_binary seeds=3 limits.max_estimators=10 limits.max_datasets=3"
            ) in text
    # the paired tests forestlab already has, beside the comparison across datasets
    assert "sorf vs rf (test_risk, lower is better), 3 datasets" in text
    # the claims, each with its test and evidence
    assert re.search(r"(HOLDS|DOES NOT HOLD|INCONCLUSIVE|NOT TESTED) full_trees_rf_best", text)
    assert "Test:" in text and "Evidence:" in text
    # protocol choices and ambiguities from the README
    assert 'id="protocol-choices"' in page and "Protocol choices" in text and "Transcription notes" in text


def test_claims_get_the_verdicts_of_forestlab_compare(site):
    """The report judges each claim as `forestlab compare` does (same resamples, same verdicts), though it
    shares the arrays and the combined experiments it reads across experiments."""
    root = site.parent.parent
    for name, page in (("quickstart", "other.html"), ("uci_binary", "zirakiza2013.html")):
        path = root / f"compare-{name}.txt"
        if not path.exists():
            continue
        expected = sorted(re.findall(r"^\[([A-Z ]+)\] ([a-z0-9_]+):", path.read_text(), re.M))
        html = _page(site, page)
        shown = sorted(re.findall(rf'<li id="claim-{name}-[^"]+"><span class="verdict[^"]*">([^<]+)</span> '
                                  r"<code>([^<]+)</code>", html))
        assert shown == expected and expected, name


def test_friedman_and_critical_difference_on_a_multi_dataset_table(site):
    _needs_mirror()
    from forestlab.report.critical_difference import friedman_nemenyi

    page = _page(site, "zirakiza2013.html")
    text = _text(page)
    assert "Friedman test and Nemenyi post hoc on test_risk (rf, sorf, mincq)" in text
    m = re.search(r"Friedman χ² = ([\d.]+), p = ([\d.e-]+); Iman-Davenport F = ([\d.]+|inf)", text)
    assert m, text[:2000]
    # 3 datasets: the average ranks, and no critical-difference diagram (Demšar trusts it only from 10)
    assert not (site / "cd" / "uci_binary" / "table7_1-test_risk.png").exists()
    assert "No critical-difference diagram: 3 dataset(s)" in text and "average rank (1 = best)" in text
    # the same statistic from the stored per-dataset means of the table
    rows = re.search(r"table7_1.*?<tbody>(.*?)</tbody>", page, re.S).group(1)
    means = {}
    for row in re.findall(r"<tr>(.*?)</tr>", rows):
        cells = [_text(c).strip() for c in re.findall(r"<t[hd]>(.*?)</t[hd]>", row)]
        means[cells[0]] = [float(re.sub(r"[^\d.]", "", cells[i].split("±")[0])) for i in (2, 4, 6)]
    scores = pd.DataFrame(means, index=["rf", "sorf", "mincq"]).T
    result = friedman_nemenyi(scores, "test_risk")
    # the table shows rounded means; ties after rounding may move the ranks: compare only when none tie
    if all(len(set(v)) == 3 for v in means.values()):
        assert float(m.group(1)) == pytest.approx(result.chi2, abs=0.01)


def test_friedman_nemenyi_matches_demsar():
    """Critical differences of Demšar (2006), Table 5 (q_0.05) and its worked example (k = 4, N = 14: CD = 1.25);
    Friedman's statistic from its formula; rank 1 = best in the metric's direction."""
    from forestlab.report.critical_difference import friedman_nemenyi

    rng = np.random.default_rng(0)
    for k, q in [(3, 2.343), (4, 2.569), (5, 2.728), (6, 2.850), (10, 3.164)]:
        scores = pd.DataFrame(rng.random((14, k)), columns=[f"a{i}" for i in range(k)])
        r = friedman_nemenyi(scores, "test_risk")
        assert r.cd == pytest.approx(q * math.sqrt(k * (k + 1) / (6 * 14)), abs=2e-3)
        if k == 4:
            assert r.cd == pytest.approx(1.25, abs=0.01)
        ranks = scores.rank(axis=1).to_numpy()
        mean = ranks.mean(axis=0)
        chi2 = 12 * 14 / (k * (k + 1)) * (np.sum(mean ** 2) - k * (k + 1) ** 2 / 4)
        assert r.chi2 == pytest.approx(chi2)
        f = 13 * chi2 / (14 * (k - 1) - chi2)
        assert r.iman_davenport_f == pytest.approx(f)
    # accuracy: higher is better, so the highest gets rank 1; a learner always best is told apart from the worst
    acc = pd.DataFrame({"good": np.linspace(0.9, 0.95, 12), "mid": np.linspace(0.8, 0.85, 12),
                        "bad": np.linspace(0.6, 0.7, 12)})
    r = friedman_nemenyi(acc, "test_accuracy")
    assert list(r.ranks.index) == ["good", "mid", "bad"] and r.ranks["good"] == 1.0
    assert r.significant and ("good", "bad") in r.different_pairs()
    risk = 1 - acc
    assert list(friedman_nemenyi(risk, "test_risk").ranks.index) == ["good", "mid", "bad"]
    # a dataset where a learner has no value is left out, and said
    acc.loc[3, "mid"] = np.nan
    r = friedman_nemenyi(acc, "test_accuracy")
    assert r.n_datasets == 11 and r.dropped == ("3",)
    assert friedman_nemenyi(acc.iloc[:1], "test_accuracy") is None  # one dataset: no test


def test_provenance_on_every_page(site):
    import numpy
    import sklearn

    from forestlab import __version__

    for page in sorted(site.glob("*.html")):
        text = _text(page.read_text(encoding="utf-8"))
        assert "Provenance" in text, page.name
        assert f"forestlab {__version__}, commit " in text, page.name
        assert re.search(r"commit ([0-9a-f]{40}|unknown)", text), page.name
        assert f"numpy {numpy.__version__}" in text and f"scikit-learn {sklearn.__version__}" in text
        assert "scikit-posthocs" in text and "report built" in text
        # a config hash is said once per experiment, in its own provenance, never in every page's footer
        assert "config hashes" not in text
        assert text.count("config hash (composed config") == page.read_text(encoding="utf-8").count(
            '<details class="provenance">')
    text = _text(_page(site, "other.html"))
    assert "Provenance of quickstart" in text
    assert re.search(r"config hash \(composed config, without paths and launcher\) [0-9a-f]{24}", text)
    # what produced its runs: this checkout's commit (dirty or not) and the packages, for all 18 runs
    assert re.search(r"forestlab commits that ran them ([0-9a-f]{40}|unknown)( \(\+ uncommitted changes\))? "
                     r"\(18 runs\)", text), text
    assert re.search(rf"package versions that ran them python [\d.]+, .*numpy {numpy.__version__}, .*"
                     rf"scikit-learn {sklearn.__version__}.* \(18 runs\)", text)
    assert "runs planned / done / failed / pending 18 / 18 / 0 / 0" in text
    assert re.search(r"runs finished \d{4}-\d\d-\d\d \d\d:\d\d", text)
    # complete: the data mirror the runs read (when one is set) and the workers
    mirror = f"FORESTLAB_DATA_MIRROR={mirror_path()} " if mirror_path() is not None else ""
    assert (f"{mirror}forestlab run experiment=quickstart seeds=3 limits.max_estimators=10 limits.max_datasets=3 "
            "launcher.n_jobs=1") in text


def test_missing_runs_and_figures_get_placeholders(site):
    page = _page(site, "zirakiza2013.html")
    # uci_binary_stumps was not run: one short box with its command, no table of empty columns
    section = re.search(r'<section class="experiment not-run" id="uci_binary_stumps">.*?</section>', page, re.S)
    assert section, "uci_binary_stumps is not a short box"
    section = section.group(0)
    mirror = f"FORESTLAB_DATA_MIRROR={mirror_path()} " if mirror_path() is not None else ""
    assert f"Not run yet: no run stored for this configuration. Run it with: {mirror}forestlab run " \
           "experiment=uci_binary_stumps seeds=3" in _text(section)
    assert "<table" not in section and "m-no-run" not in section and 'class="notes"' not in section
    assert len(section) < 6000, len(section)
    # its claims are listed by their statement, not only their id (NOT TESTED: nothing ran)
    claims = re.findall(r'<li id="claim-uci_binary_stumps-[^"]+">(.*?)</li>', section)
    assert claims and all("NOT TESTED" in c for c in claims)
    assert any(re.search(r"</code>.*: \w+", c) for c in claims), claims
    assert "figures/zirakiza2013_fig4_1" not in page
    # a figure not drawn: a placeholder with the command that draws it, and no image
    # the figure that was drawn is copied into the site, beside the description of the original
    other = _page(site, "other.html")
    assert 'src="figures/quickstart/error_curves.png"' in other and (site / "figures/quickstart/error_curves.png"
                                                                     ).is_file()
    probe = _page(site, "depecker2010.html")
    assert "Not drawn yet" in probe and f"forestlab figures {PROBE}" in _text(probe)


def test_report_refuses_an_experiment_override(tmp_path, monkeypatch):
    monkeypatch.setenv("FORESTLAB_RESULTS_DIR", str(tmp_path / "results"))
    res = runner.invoke(app, ["report", "experiment=uci_binary"])
    assert res.exit_code == 2
    assert "the report covers every experiment" in res.output


def test_report_on_an_empty_store(tmp_path, monkeypatch):
    """No run at all: every study page exists and says what to run; nothing crashes."""
    from forestlab.report.site import build_site
    from forestlab.studies import STUDIES

    monkeypatch.setenv("FORESTLAB_RESULTS_DIR", str(tmp_path / "results"))
    index = build_site([])
    for key in STUDIES:
        assert (index.parent / f"{key}.html").is_file()
    assert "0 done, 0 failed" in _text(index.read_text())


# ---------------------------------------------------------------------------------------------------------------
# The site in a real browser
# ---------------------------------------------------------------------------------------------------------------
def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Chromium:
    """Headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``: fd 3 in,
    fd 4 out, messages separated by NUL)."""

    def __init__(self, exe: str, profile: Path) -> None:
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def fds() -> None:  # in the child: the pipe ends on fds 3 and 4 (moved out of the way first)
            import fcntl

            ends = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_child_r, from_child_w)]
            os.dup2(ends[0], 3)
            os.dup2(ends[1], 4)

        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--remote-debugging-pipe",
             "--no-first-run", "--no-default-browser-check", "--hide-scrollbars", "--mute-audio",
             "--disable-extensions", f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=fds, close_fds=False)  # our other fds are not inheritable (PEP 446)
        os.close(to_child_r)
        os.close(from_child_w)
        self._id = 0
        self._buffer = b""
        self.events: list[dict] = []
        self.session = ""

    def _read(self, timeout: float) -> dict:
        import select

        deadline = time.monotonic() + timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_child], [], [], left)[0]:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method: str, params: dict | None = None, *, session: bool = True, timeout: float = 30) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read(timeout)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, timeout: float = 30) -> dict:
        for i, ev in enumerate(self.events):
            if ev.get("method") == method:
                return self.events.pop(i)
        deadline = time.monotonic() + timeout
        while True:
            ev = self._read(max(0.01, deadline - time.monotonic()))
            if ev.get("method") == method:
                return ev
            self.events.append(ev)

    def drain(self, seconds: float) -> None:
        """Collect the events that arrive within ``seconds``."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                self.events.append(self._read(max(0.01, deadline - time.monotonic())))
            except TimeoutError:
                return

    def open_tab(self, width: int = 1280, height: int = 900) -> None:
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 session=False)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1,
                                                         "mobile": False})

    def load(self, url: str) -> list[str]:
        """Navigate to ``url``, wait for its load event; returns the errors seen: console errors, uncaught
        exceptions, failed loads."""
        self.events.clear()
        reply = self.send("Page.navigate", {"url": url})
        assert not reply.get("errorText"), f"{url}: {reply['errorText']}"
        self.wait_for("Page.loadEventFired")
        self.drain(0.3)
        errors = []
        for ev in self.events:
            method, p = ev.get("method"), ev.get("params", {})
            if method == "Runtime.exceptionThrown":
                errors.append(f"exception: {p['exceptionDetails'].get('text')}")
            elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                errors.append("console." + p["type"] + ": " + " ".join(str(a.get("value")) for a in p["args"]))
            elif method == "Log.entryAdded" and p["entry"]["level"] == "error":
                errors.append(f"log: {p['entry'].get('text')} {p['entry'].get('url', '')}")
            elif method == "Network.loadingFailed" and not p.get("canceled"):
                errors.append(f"load failed: {p.get('errorText')} ({p.get('type')})")
        return errors

    def evaluate(self, expression: str):
        reply = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                               "awaitPromise": True})
        return reply["result"].get("value")

    def screenshot(self, path: Path, max_height: int = 6000) -> Path:
        size = self.send("Page.getLayoutMetrics")["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], max_height), "scale": 1}
        data = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": clip})
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data["data"]))
        return path

    def close(self) -> None:
        try:
            self.send("Browser.close", session=False, timeout=5)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_child, self._from_child):
            os.close(fd)


PAGE_FACTS = """
(async () => {
  const imgs = Array.from(document.images);
  await Promise.all(imgs.map(i => i.complete ? null : new Promise(r => { i.onload = i.onerror = r; })));
  return {
    images: imgs.map(i => ({src: i.currentSrc || i.src, ok: i.complete && i.naturalWidth > 0})),
    links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href),
    ids: Array.from(document.querySelectorAll('[id]')).map(e => e.id),
    styled: getComputedStyle(document.querySelector('header.top')).backgroundColor === 'rgb(31, 111, 74)',
    title: document.title,
  };
})()
"""


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    exe = chromium_path()
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed: .ci/run installs Debian's chromium package when missing")
        pytest.skip("chromium is not installed here (apt-get install chromium); CI installs it (.ci/run)")
    chrome = Chromium(exe, tmp_path_factory.mktemp("chromium-profile"))
    try:
        chrome.open_tab()
        yield chrome
    finally:
        chrome.close()


def test_site_in_headless_chromium(site, browser):
    """Every page loads without a console error, with its stylesheet, every image decoded and every local link
    (and #anchor) resolving; a screenshot of the index is written to SCREENSHOTS/index.png."""
    t0 = time.perf_counter()
    pages = sorted(site.glob("*.html")) + sorted(site.glob("runs/*.html"))
    facts = {}
    for page in pages:
        errors = browser.load(page.as_uri())
        assert errors == [], f"{page.name}: {errors}"
        facts[page.resolve()] = browser.evaluate(PAGE_FACTS)
        assert facts[page.resolve()]["styled"], f"{page.name}: the stylesheet did not apply"
    n_images = n_links = 0
    for page, f in facts.items():
        for img in f["images"]:
            assert img["ok"], f"{page.name}: image {img['src']} does not load"
            n_images += 1
        for href in f["links"]:
            url = urlparse(href)
            if url.scheme != "file":
                assert url.scheme in ("http", "https", "mailto"), f"{page.name}: odd link {href}"
                continue
            target = Path(unquote(url.path))
            assert target.is_file(), f"{page.name}: broken link {href}"
            assert site.resolve() in target.resolve().parents, f"{page.name}: link out of the site {href}"
            if url.fragment:
                ids = facts[target.resolve()]["ids"] if target.suffix == ".html" else []
                assert url.fragment in ids, f"{page.name}: no #{url.fragment} in {target.name}"
            n_links += 1
    assert n_links > 10
    if mirror_path() is not None:
        assert n_images >= 1  # quickstart's figure (3 datasets draw no critical-difference diagram)
    browser.load((site / "index.html").as_uri())
    shot = browser.screenshot(SCREENSHOTS / "index.png")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    browser.load((site / "zirakiza2013.html").as_uri())
    browser.screenshot(SCREENSHOTS / "zirakiza2013.png")
    print(f"screenshots: {shot} and {SCREENSHOTS / 'zirakiza2013.png'}; {len(pages)} pages, {n_images} images, "
          f"{n_links} local links checked in {time.perf_counter() - t0:.1f}s")


def test_site_behind_a_static_web_server(site, browser):
    """The same site served over HTTP by a plain static server: no console error, images and stylesheet load."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        for name in ("index.html", "other.html", "zirakiza2013.html"):
            errors = browser.load(base + name)
            assert errors == [], f"{name}: {errors}"
            f = browser.evaluate(PAGE_FACTS)
            assert all(i["ok"] for i in f["images"]), name
            assert f["styled"], name
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


def test_split_values_are_values_as_arrays():
    """The fast path the paired tests use (claims repeat them on every bootstrap resample) holds what
    :meth:`ExperimentResults.values` holds, folds missing as -1, on resamples too."""
    from forestlab.results import ExperimentResults

    rng = np.random.default_rng(1)
    rows = [{"dataset": d, "algorithm": a, "repetition": r, "fold": (None if d == "x" else f),
             "test_risk": (np.nan if rng.random() < 0.1 else rng.random()), "label": "text"}
            for d in ("x", "y") for a in ("rf", "sorf") for r in range(4) for f in ((0,) if d == "x" else (0, 1))]
    res = ExperimentResults.from_frame(pd.DataFrame(rows))
    for sample in (res, res.resample_repetitions(np.random.default_rng(0))):
        for a in ("rf", "sorf"):
            for d in ("x", "y", "absent"):
                for metric in ("test_risk", "label", "absent"):
                    values = sample.values(a, metric, d)
                    splits, arr = sample.split_values(a, metric, d)
                    np.testing.assert_array_equal(arr, values["value"].to_numpy())
                    assert splits == [(int(r), -1 if f is None or f != f else int(f))
                                      for r, f in zip(values["repetition"], values["fold"], strict=True)]
            mask = (sample.runs["algorithm"] == a)
            expected = pd.to_numeric(sample.runs.loc[mask, "test_risk"], errors="coerce").astype(float)
            pd.testing.assert_series_equal(sample.values(a, "test_risk")["value"], expected, check_names=False)


def test_comparison_rows_cover_measures_gaps_and_published_spread(tmp_path, monkeypatch):
    """A published cell that is a statistic over the runs (a measure such as the instability) is compared without a
    spread; an empty published value is a gap with its note; a published std is kept beside the value."""
    from forestlab.report.model import MEASURE, comparisons, read_layout
    from forestlab.report.model import rows as table_rows
    from forestlab.report.site import TableView, _comparison_html, comparison_rows
    from forestlab.results import ExperimentResults

    published = tmp_path / "depecker2010" / "published"
    published.mkdir(parents=True)
    (published / "probe.csv").write_text("dataset,algorithm,metric,value,std,note\n"
                                         "d1,a,test_auc,0.7,0.01,\n"
                                         "d1,a,instability,50,,\n"
                                         "d1,b,test_auc,,,illegible\n"
                                         "d1,a_pub,test_auc,0.69,,\n"
                                         "d2,a,test_auc,0.6,,\n")
    monkeypatch.setenv("FORESTLAB_EXPERIMENTS_DIR", str(tmp_path))
    rng = np.random.default_rng(0)
    rows, arrays = [], {}
    for alg in ("a", "b"):
        for rep in range(4):
            key = f"{alg}{rep}"
            rows.append({"key": key, "dataset": "d1", "algorithm": alg, "repetition": rep,
                         "test_auc": 0.7 + 0.01 * rng.standard_normal()})
            arrays[key] = {"y_test": np.repeat([-1, 1], 20), "test_scores": rng.random(40)}
    res = ExperimentResults.from_frame(pd.DataFrame(rows), study="depecker2010", arrays=arrays)
    spec = {"name": "probe", "published": "probe.csv",
            "cells": [{"algorithm": "a", "metric": "test_auc"}, {"algorithm": "a", "measure": "instability"},
                      {"algorithm": "b", "metric": "test_auc"},
                      {"algorithm": "a", "metric": "test_auc", "published_as": "a_pub", "label": "A as printed"}]}
    table = comparison_rows(res, spec)
    by = {(r.algorithm, r.metric): r for r in table.itertuples()}
    assert list(table["dataset"]) == ["d1"] * 4  # d2 is not in the plan
    assert by[("a_pub", "test_auc")].n == 4  # a cell compared under the name the study printed
    assert by[("a", "test_auc")].mark in ("agree", "disagree") and by[("a", "test_auc")].published_std == 0.01
    m = by[("a", "instability")]
    # n: the runs the statistic is computed over, as in `forestlab tables`
    assert m.mark == MEASURE and m.n == 4 and math.isfinite(m.reproduced) and m.diff == m.reproduced - 50
    assert by[("b", "test_auc")].mark == "gap" and by[("b", "test_auc")].note == "illegible"
    layout = read_layout(spec)
    view = TableView(layout, comparisons=comparisons(res, layout, table_rows(res, layout)))
    html = _comparison_html(view, res)
    assert "0.700 ± 0.010" in html and "not printed" in html and 'title="illegible"' in html
    assert "A as printed" in html
    assert "1 statistics over runs" in html and "1 not printed" in html


# ---------------------------------------------------------------------------------------------------------------
# Study pages that read well (issue 21, parts 2 and 3)
# ---------------------------------------------------------------------------------------------------------------
def _tables_of(page: str) -> list[str]:
    return re.findall(r'<section class="table" id="[^"]+">.*?</section>', page, re.S)


def test_every_table_has_csv_and_latex_downloads(site):
    """Beside every reproduced table and every published-vs-reproduced table: a CSV that parses and a LaTeX file,
    in the site, linked relatively; every row's dataset opens the value of each of its runs."""
    n = 0
    for path in sorted(site.glob("*.html")):
        page = path.read_text(encoding="utf-8")
        for section in _tables_of(page):
            tables = section.count('<table class="data ') - section.count('class="data small')
            links = re.findall(r'<p class="downloads">(.*?)</p>', section)
            # one download line per big table (the reproduced one, the published-vs-reproduced one)
            assert len(links) == tables, (path.name, section[:300])
            for line in links:
                hrefs = re.findall(r'href="([^"]+)" download>(CSV|LaTeX)', line)
                assert [k for _, k in hrefs] == ["CSV", "LaTeX"], line
                for href, kind in hrefs:
                    assert not href.startswith(("/", "http")), href
                    target = site / href
                    assert target.is_file(), href
                    if kind == "CSV":
                        df = pd.read_csv(target)
                        assert len(df) >= 1 and "dataset" in df.columns, href
                    else:
                        assert "\\begin{tabular}" in target.read_text(), href
                    n += 1
            for href in re.findall(r'<a href="(runs/[^"#]+)#[^"]+" title="the value of each run">', section):
                assert (site / href).is_file(), href
    assert n >= 4


def test_footnotes_once_per_distinct_text(site):
    for path in sorted(site.glob("*.html")):
        page = path.read_text(encoding="utf-8")
        for notes in re.findall(r'<ol class="notes">(.*?)</ol>', page, re.S):
            texts = [_text(t).rsplit(" (", 1)[0] for t in re.findall(r"<li>(.*?)</li>", notes)]
            assert len(texts) == len(set(texts)), (path.name, texts)
        for section in _tables_of(page):
            numbers = {int(x) for x in re.findall(r'<sup class="fn"[^>]*>(\d+)</sup>', section)}
            listed = sum(len(re.findall(r"<li>", n)) for n in re.findall(r'<ol class="notes">(.*?)</ol>', section,
                                                                           re.S))
            assert numbers == set(range(1, listed + 1)), path.name
    if mirror_path() is not None:  # the blanked published cell of Table 7.1 has its note, once
        text = _text(_page(site, "zirakiza2013.html"))
        assert text.count("illegible in the OCR'd thesis") == 1


def test_headers_say_the_direction_and_experiments_come_in_study_order(site):
    _needs_mirror()
    page = _page(site, "zirakiza2013.html")
    text = _text(page)
    assert "rf test risk ↓" in text and "Δ (z)" in text and "Δ = reproduced − published (positive" in text
    for mark in ("▸", "↑", "↓", "optimistic", "¶"):  # the legend names every mark the tables use
        assert mark in _text(re.search(r'<details class="legend-box".*?</details>', page, re.S).group(0)), mark
    order = [m for m in re.findall(r'<section class="experiment[^"]*" id="([^"]+)"', page)]
    assert order.index("uci_binary") < order.index("uci_binary_stumps") < order.index("uci_binary_mixed") \
        < order.index("uci_multiclass")  # Tables 7.1, 7.2, 7.3, 7.4
    assert order.index("zirakiza2013_fig4_1") < order.index("uci_binary")  # Fig. 4.1 (chapter 4) first
    # permalinks on tables and claims, and the way back to the top
    assert 'href="#uci_binary--table7_1" title="link to this table">¶</a>' in page and 'id="top"' in page
    assert re.search(r'<li id="(claim-uci_binary-[^"]+)">.*?href="#\1"', page)
    # head to head as a small table: dataset, both means, the difference, p, the outcome
    assert re.search(r"<th>dataset</th><th>sorf mean</th><th>rf mean</th><th>sorf − rf</th><th>p \(paired t\)"
                     r"</th><th>outcome for sorf</th>", page)
    # the facts of its datasets beside the table, from what the runs recorded
    facts = re.search(r'<details class="facts">.*?</details>', page, re.S).group(0)
    assert "<th>rows</th><th>features</th><th>classes</th><th>train size</th><th>test size</th>" in facts


def test_tables_scroll_in_their_own_box_and_sort_at_phone_width(site, browser):
    """At 390 px no page is wider than the screen: a table wider than its box scrolls inside it (overflow-x), its
    first column sticky; clicking a header sorts the rows by value (sort.js), the ± parts ignored."""
    check = """
    (() => {
      const out = {pageWidth: document.documentElement.scrollWidth, view: window.innerWidth, bad: [], n: 0};
      for (const t of document.querySelectorAll('main table')) {
        out.n += 1;
        const box = t.parentElement;
        const scrolls = ['auto', 'scroll'].includes(getComputedStyle(box).overflowX);
        if (t.scrollWidth > box.clientWidth + 1 && !scrolls) out.bad.push(t.className + ' in ' + box.className);
        if (t.classList.contains('data')) {
          const first = t.querySelector('tbody tr > :first-child');
          if (first && getComputedStyle(first).position !== 'sticky') out.bad.push('first column not sticky');
        }
      }
      return out;
    })()
    """
    browser.send("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 1,
                                                        "mobile": True})
    try:
        for name in ("index.html", *sorted(p.name for p in site.glob("*.html") if p.name != "index.html")):
            errors = browser.load((site / name).as_uri())
            assert errors == [], (name, errors)
            facts = browser.evaluate(check)
            assert facts["pageWidth"] <= facts["view"] + 1, (name, facts)
            assert facts["bad"] == [], (name, facts["bad"])
        browser.load((site / "other.html").as_uri())
        browser.screenshot(SCREENSHOTS / "other-390.png")
        order = browser.evaluate("""
        (() => {
          const t = document.querySelector('section.table table.sortable');
          const th = t.tHead.rows[t.tHead.rows.length - 1].cells[1];
          th.click();
          const values = Array.from(t.tBodies[0].rows).map(r => r.cells[1].textContent);
          return {values, sorted: th.getAttribute('aria-sort')};
        })()""")
        nums = [float(re.match(r"[▸]?(-?[\d.]+)", v).group(1)) for v in order["values"]]
        assert order["sorted"] == "ascending" and nums == sorted(nums), order
    finally:
        browser.send("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 900, "deviceScaleFactor": 1,
                                                            "mobile": False})


def test_natural_order_of_tables_and_figures():
    from forestlab.report.site_tables import natural_key

    titles = ["x Table A.1: a", "x Table 7.10: b", "x Table 7.2: c", "Fig. 4.1 d", "no number", "x Table 6.1: e"]
    assert sorted(titles, key=natural_key) == ["Fig. 4.1 d", "x Table 6.1: e", "x Table 7.2: c", "x Table 7.10: b",
                                               "x Table A.1: a", "no number"]


def test_figure_captions_and_published_vs_reproduced_plots(site):
    """The caption a figure's drawing wrote beside its PNG is under it on the page; each study with compared cells
    that have runs gets its published-vs-reproduced plot, the others none."""
    other = _page(site, "other.html")
    figure = other[other.index('id="quickstart--fig-error_curves"'):]
    figure = figure[:figure.index("</section>")]
    assert re.search(r"<figcaption><span class=\"fig-caption\">Each line is the mean, over the runs counted in its "
                     r"panel&#x27;s title, of rf&#x27;s error rate .* the shaded band is ± one standard deviation",
                     figure)
    assert (site / "figures/quickstart/error_curves.png").is_file()
    if mirror_path() is not None:  # uci_binary ran: zirakiza2013's Table 7.1 has cells to plot
        assert (site / "pvr/zirakiza2013.png").stat().st_size > 1000
    assert not (site / "pvr/courses.png").exists() and not (site / "pvr/pisetta2010.png").exists()


def test_the_index_counts_each_claim_once_in_the_browser(site, browser):
    """What a reader sees: for every study, the claims cell of the index adds up to the number of distinct claims
    its page lists (a claim several experiments share, such as zirakiza2013's `overall`, counted once)."""
    errors = browser.load((site / "index.html").as_uri())
    assert errors == [], errors
    cells = browser.evaluate("""
    Array.from(document.querySelectorAll('table.index tbody tr')).map(r => ({
      page: r.querySelector('th a').getAttribute('href'),
      counts: Array.from(r.cells[4].querySelectorAll('.vc')).map(s => parseInt(s.textContent, 10)),
    }))""")
    assert cells, "no study line on the index"
    shared = 0
    for row in cells:
        browser.load((site / row["page"]).as_uri())
        names = browser.evaluate("""
        Array.from(document.querySelectorAll('li[id^="claim-"] > code')).map(c => c.textContent)""")
        assert sum(row["counts"]) == len(set(names)), (row, sorted(names))
        shared += len(names) - len(set(names))
    if mirror_path() is not None:  # zirakiza2013's hyperparameters/overall sit in three experiments each
        assert shared > 0
