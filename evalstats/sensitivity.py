"""How many system pairs a metric tells apart: ABC-Eval's sensitivity table (Table 5).

ABC-Eval (Finch et al., 2023, section 7.3) counts, per metric, the bot pairs whose difference
is significant at alpha = 0.01, 0.05 and 0.1 (z-tests of proportions for behaviours, t-tests
for Likert ratings, sign tests for comparative judgments). The comparison results of
``behaviour``, ``likert`` and ``comparative`` all carry ``metric``, ``pvalue`` and
``pvalue_adjusted``, so one counter serves them all.

Counts depend on how much data each method has, so the paper compares methods after
downsampling: "we downsample the conversations used for hypothesis testing to 32
conversations per bot for our Dialogue Likert, Turn Likert, and ABC-Eval metrics to match
the 32 conversation-pairs per bot-pair produced by our Comparative evaluation".
:func:`downsampled_significance` repeats such draws (without replacement, independently per
bot or bot pair) and reports each count's mean and spread over the draws.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

__all__ = [
    "DownsampledCount",
    "PairTest",
    "SignificanceCount",
    "count_significant",
    "downsampled_significance",
]

DEFAULT_ALPHAS = (0.01, 0.05, 0.1)


class PairTest(Protocol):
    """Anything with a metric name and (raw and multiplicity-adjusted) p-values."""

    metric: str
    pvalue: float
    pvalue_adjusted: float


@dataclass(frozen=True)
class SignificanceCount:
    """Pairs of ``metric`` significant at ``alpha`` among ``n_pairs`` tested (NaN p: untested)."""

    metric: str
    alpha: float
    n_significant: int
    n_pairs: int
    adjusted: bool


def count_significant(
    tests: Iterable[PairTest],
    alphas: Sequence[float] = DEFAULT_ALPHAS,
    *,
    adjusted: bool = True,
) -> tuple[SignificanceCount, ...]:
    """Per metric and alpha, the number of pairs with ``p < alpha`` (Table 5).

    ``adjusted`` chooses the multiplicity-adjusted p-values (default) or the raw ones (the
    paper reports uncorrected counts). Pairs whose p-value is NaN (nothing to test) are not
    counted in ``n_pairs``. Sorted by metric, then alpha.
    """
    for alpha in alphas:
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    pvalues: dict[str, list[float]] = {}
    for test in tests:
        pvalue = test.pvalue_adjusted if adjusted else test.pvalue
        bucket = pvalues.setdefault(test.metric, [])
        if not math.isnan(pvalue):
            bucket.append(pvalue)
    return tuple(
        SignificanceCount(
            metric=metric,
            alpha=alpha,
            n_significant=sum(p < alpha for p in pvalues[metric]),
            n_pairs=len(pvalues[metric]),
            adjusted=adjusted,
        )
        for metric in sorted(pvalues)
        for alpha in sorted(alphas)
    )


@dataclass(frozen=True)
class DownsampledCount:
    """Pairs of ``metric`` significant at ``alpha`` over ``draws`` draws of ``per_group`` units
    per group: the mean count, its 2.5 and 97.5 percentiles and its range over the draws.
    ``n_pairs`` is the most pairs a draw tested."""

    metric: str
    alpha: float
    n_pairs: int
    per_group: int
    draws: int
    mean: float
    low: float
    high: float
    minimum: int
    maximum: int
    adjusted: bool


def downsampled_significance(
    units: Mapping[Hashable, Sequence[Hashable]],
    tests_for: Callable[[set], Iterable[PairTest]],
    *,
    per_group: int,
    draws: int,
    alphas: Sequence[float] = DEFAULT_ALPHAS,
    adjusted: bool = True,
    rng: int | np.random.Generator = 0,
) -> tuple[DownsampledCount, ...]:
    """Table 5 after downsampling: :func:`count_significant` over ``draws`` random subsets.

    ``units`` maps each group (a bot, or a bot pair for comparative judgments) to its units
    (conversations, or pairs of conversations); each draw takes ``per_group`` of each group's
    units without replacement (all of a group's units when it has no more) and calls
    ``tests_for`` with the set of units drawn. When no group has more than ``per_group``
    units every draw would be the same, and one is made. Sorted by metric, then alpha.
    """
    if per_group < 1:
        raise ValueError(f"per_group must be at least 1, got {per_group!r}")
    if draws < 1:
        raise ValueError(f"draws must be at least 1, got {draws!r}")
    generator = np.random.default_rng(rng)
    pools = [list(members) for members in units.values()]
    if all(len(pool) <= per_group for pool in pools):
        draws = 1
    counts: dict[tuple[str, float], list[int]] = {}
    pairs: dict[str, int] = {}
    for draw in range(draws):
        chosen: set = set()
        for pool in pools:
            if len(pool) <= per_group:
                chosen.update(pool)
            else:
                picks = generator.choice(len(pool), size=per_group, replace=False)
                chosen.update(pool[i] for i in picks.tolist())
        for count in count_significant(tests_for(chosen), alphas, adjusted=adjusted):
            # A metric missing from earlier draws (nothing testable there) counted zero.
            counts.setdefault((count.metric, count.alpha), [0] * draw).append(count.n_significant)
            pairs[count.metric] = max(pairs.get(count.metric, 0), count.n_pairs)
        for values in counts.values():
            if len(values) == draw:
                values.append(0)
    rows = []
    for (metric, alpha), values in sorted(counts.items()):
        array = np.array(values, dtype=float)
        low, high = np.percentile(array, [2.5, 97.5])
        rows.append(
            DownsampledCount(
                metric=metric,
                alpha=alpha,
                n_pairs=pairs[metric],
                per_group=per_group,
                draws=draws,
                mean=float(array.mean()),
                low=float(low),
                high=float(high),
                minimum=int(array.min()),
                maximum=int(array.max()),
                adjusted=adjusted,
            )
        )
    return tuple(rows)
