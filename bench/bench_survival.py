"""Timing of the Spot The Bot survival analysis on a study-sized data set.

Run: ``.venv/bin/python bench/bench_survival.py``

Data: 6 systems x 900 judgments, segment lengths 2, 3, 5 (PersonaChat-sized). Compares
Turnbull's NPMLE on the aggregated intervals (analysis.stats.turnbull.turnbull_npmle) with
lifelines' ``KaplanMeierFitter().fit_interval_censoring`` on the expanded per-judgment
intervals, then times the 6-sample generalized log-rank test and the 15 pairwise tests.
Prints median wall times over repeats and their ratios.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from lifelines import KaplanMeierFitter

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis.stats.interval_logrank import (  # noqa: E402
    interval_logrank_test,
    pairwise_interval_logrank,
)
from analysis.stats.intervals import spot_the_bot_intervals  # noqa: E402
from analysis.stats.pairwise import BOT, HUMAN, UNSURE  # noqa: E402
from analysis.stats.turnbull import turnbull_npmle  # noqa: E402

N_SYSTEMS = 6
JUDGMENTS_PER_SYSTEM = 900
SEGMENT_LENGTHS = np.array([2.0, 3.0, 5.0])
# lifelines takes closed intervals: a survival past k becomes [k + EPS, inf].
EPS = 1e-6


def simulate_study(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    system = np.repeat(np.arange(N_SYSTEMS), JUDGMENTS_PER_SYSTEM)
    rate = np.linspace(0.1, 0.6, N_SYSTEMS)[system]
    k = rng.choice(SEGMENT_LENGTHS, system.size)
    spotted = rng.exponential(1.0 / rate) <= k
    label = np.where(spotted, BOT, rng.choice([HUMAN, UNSURE], system.size))
    return system, k, label


def median_seconds(function: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    system, k, label = simulate_study(np.random.default_rng(0))
    data = spot_the_bot_intervals(system, k, label)

    def ours() -> None:
        for counts in data.counts:
            turnbull_npmle(data.left, data.right, counts)

    def lifelines() -> None:
        for counts in data.counts:
            lower = np.repeat(data.left, counts)
            upper = np.repeat(data.right, counts)
            KaplanMeierFitter().fit_interval_censoring(
                np.where(np.isfinite(upper), lower, lower + EPS), upper, timeline=SEGMENT_LENGTHS
            )

    def aggregate_and_fit() -> None:
        fresh = spot_the_bot_intervals(system, k, label)
        for counts in fresh.counts:
            turnbull_npmle(fresh.left, fresh.right, counts)

    print(
        f"{N_SYSTEMS} systems x {JUDGMENTS_PER_SYSTEM} judgments, "
        f"segment lengths {SEGMENT_LENGTHS.astype(int).tolist()}, "
        f"{data.left.size} distinct intervals"
    )
    t_ours = median_seconds(ours, 21)
    t_with_aggregation = median_seconds(aggregate_and_fit, 21)
    t_lifelines = median_seconds(lifelines, 5)
    print(f"Turnbull, aggregated intervals (6 fits):         {t_ours * 1e3:9.2f} ms")
    print(f"  ... including aggregation of the judgments:    {t_with_aggregation * 1e3:9.2f} ms")
    print(f"lifelines fit_interval_censoring, expanded (6):  {t_lifelines * 1e3:9.2f} ms")
    print(f"  ratio lifelines / ours:                        {t_lifelines / t_ours:9.1f} x")
    print(
        f"  ratio lifelines / ours with aggregation:       {t_lifelines / t_with_aggregation:9.1f} x"
    )

    t_ksample = median_seconds(
        lambda: interval_logrank_test(data.left, data.right, data.counts), 51
    )
    t_hyper = median_seconds(
        lambda: interval_logrank_test(
            data.left, data.right, data.counts, variance="hypergeometric"
        ),
        51,
    )
    t_pairs = median_seconds(
        lambda: pairwise_interval_logrank(data.left, data.right, data.counts), 11
    )
    result = interval_logrank_test(data.left, data.right, data.counts)
    print(f"generalized log-rank, 6-sample, permutation:     {t_ksample * 1e3:9.2f} ms")
    print(f"generalized log-rank, 6-sample, hypergeometric:  {t_hyper * 1e3:9.2f} ms")
    print(f"15 pairwise tests + Holm:                        {t_pairs * 1e3:9.2f} ms")
    print(f"  (6-sample statistic {result.statistic:.1f} on {result.df} df)")


if __name__ == "__main__":
    main()
