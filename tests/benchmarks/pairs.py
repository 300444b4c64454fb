"""Timing two versions of something in alternating pairs: each pair runs back to back, so a slow spell of the
machine moves both of its runs alike, and the median of the pairs' ratios is the figure a drift moves least."""

from __future__ import annotations

import statistics
from collections.abc import Callable


def alternating(before: Callable[[], float], after: Callable[[], float], rounds: int) -> dict[str, list[float]]:
    """``rounds`` pairs of seconds, ``before()`` then ``after()`` each time: their lists and the pairs' ratios
    (before / after: above 1, ``after`` is faster)."""
    first, second = [], []
    for _ in range(rounds):
        first.append(before())
        second.append(after())
    return {"before_s": first, "after_s": second, "ratios": [b / a for b, a in zip(first, second, strict=True)]}


def median_ratio(ratios: list[float], digits: int) -> float:
    return round(float(statistics.median(ratios)), digits)
