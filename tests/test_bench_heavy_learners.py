"""The heavy learners' bench times the code before issue 24 from git (tests/benchmarks/bench_heavy_learners.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "benchmarks"))
import bench_heavy_learners as bench  # noqa: E402


@pytest.mark.skipif(not bench.has_commit(bench.REFERENCE),
                    reason=f"{bench.REFERENCE} is not in this clone's history (shallow?)")
def test_the_reference_is_the_package_before_issue_24(tmp_path: Path) -> None:
    assert bench._reference_checkout(tmp_path)
    ranksvm = (tmp_path / "forestlab" / "learners" / "_ranksvm.py").read_text(encoding="utf-8")
    assert "def _ranksvm_solve" in ranksvm and "line_minimum" not in ranksvm  # the Python line search
    assert not (tmp_path / "forestlab" / "learners" / "_ranksvm_kernels.py").exists()


def test_a_commit_that_cannot_be_had_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench, "REFERENCE", "0" * 40)
    assert not bench._reference_checkout(tmp_path)
    out: dict = {}
    monkeypatch.setattr(bench, "CASES", {})
    bench.run(out)
    assert out["heavy_learners"]["paired"] == f"not measured: {'0' * 40} is not in this checkout's history"


def test_pairs_alternate_and_their_median_ratio_is_reported():
    import pairs  # tests/benchmarks/pairs.py (on the path with the benches)

    calls: list[str] = []
    times = iter([4.0, 2.0, 3.0, 3.0, 9.0, 3.0])

    def timed(name: str):
        def run() -> float:
            calls.append(name)
            return next(times)
        return run

    got = pairs.alternating(timed("before"), timed("after"), rounds=3)
    assert calls == ["before", "after"] * 3
    assert got == {"before_s": [4.0, 3.0, 9.0], "after_s": [2.0, 3.0, 3.0], "ratios": [2.0, 1.0, 3.0]}
    assert pairs.median_ratio(got["ratios"], 2) == 2.0
