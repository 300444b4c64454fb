"""The most power any two-stage test can have on depecker2010's Table 6.1 problems: the Wilcoxon rank-sum test of
the held-out half scored by the OPTIMAL score, which no learnt score can beat in expectation.

Both laws are Gaussian with covariance I, so the optimal score is the projection on mu+ - mu- and its law is
N(+delta/2, 1) for the positives and N(-delta/2, 1) for the negatives, whatever the dimension q. Each replicate
draws N = 2000 labels Bernoulli(1/2), keeps a random half as the test part (as the thesis's S-WMW_TR does), draws
the optimal scores of its points and runs the one-sided Wilcoxon test (normal approximation with tie correction,
as S-WMW_TR's "auto" does at this size) at level 5%. The power of the same test on all 2000 points (no learning
half, an impossible oracle) is printed beside it.

    python experiments/depecker2010/oracle_power.py [--reps 20000]
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.stats import mannwhitneyu

PUBLISHED = {0.2: (0.90, 0.85), 0.1: (0.58, 0.47), 0.08: (0.42, 0.32), 0.05: (0.18, 0.16)}  # S-WMW_TR, q = 10, 30


def power(delta: float, n_points: int, reps: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    positive = rng.random((reps, n_points)) < 0.5
    scores = rng.normal(size=(reps, n_points)) + np.where(positive, delta / 2, -delta / 2)
    rejected = 0
    for s, p in zip(scores, positive, strict=True):
        rejected += mannwhitneyu(s[p], s[~p], alternative="greater", method="asymptotic").pvalue < 0.05
    return rejected / reps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=20000)
    args = parser.parse_args()
    print("| delta | oracle, 1000 test points | oracle, all 2000 points | published S-WMW_TR q = 10 / q = 30 |")
    print("|---|---|---|---|")
    for i, (delta, (q10, q30)) in enumerate(PUBLISHED.items()):
        half, full = power(delta, 1000, args.reps, i), power(delta, 2000, args.reps, 100 + i)
        se = np.sqrt(half * (1 - half) / args.reps)
        print(f"| {delta:g} | {half:.3f} (± {se:.3f}) | {full:.3f} | {q10:.2f} / {q30:.2f} |")


if __name__ == "__main__":
    main()
