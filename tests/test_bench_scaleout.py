"""The scale-out bench's account of a fan-out's wall time (tests/benchmarks/bench_scaleout.py: fan_out)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "benchmarks"))
import bench_scaleout as bench  # noqa: E402


def test_busy_share_and_drain_of_two_workers():
    # worker A: runs over [0, 1] and [1, 2]; worker B: one run over [0, 1.5]; the fan-out took 2 s
    spans = [(1.0, 1.0), (2.0, 1.0), (1.5, 1.5)]
    got = bench.fan_out(spans, workers=2, wall=2.0)
    assert got["utilization"] == pytest.approx(3.5 / 4.0, abs=1e-3)
    assert got["drain_s"] == pytest.approx(0.5)  # both busy until B's end at 1.5


def test_workers_never_all_busy_has_no_drain():
    got = bench.fan_out([(1.0, 1.0)], workers=2, wall=1.0)
    assert got == {"utilization": 0.5, "drain_s": None}


def test_medians_take_the_warm_counts_at_the_most_workers():
    rows = [{"backend": "serial", "workers": 1, "start": "-", "speedup": 1.0},
            {"backend": "loky", "workers": 2, "start": "warm", "speedup": 1.9},
            {"backend": "loky", "workers": 4, "start": "cold", "speedup": 2.0},
            *({"backend": "loky", "workers": 4, "start": "warm", "speedup": s} for s in (3.1, 3.9, 3.5)),
            {"backend": "dask", "workers": 4, "start": "warm", "speedup": 3.0}]
    assert bench.medians({"rows": rows}) == {"loky": 3.5, "dask": 3.0}
