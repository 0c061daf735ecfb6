"""How many system pairs a metric tells apart: ABC-Eval's sensitivity table (Table 5).

ABC-Eval (Finch et al., 2023, section 7.3) counts, per metric, the bot pairs whose difference
is significant at alpha = 0.01, 0.05 and 0.1 (z-tests of proportions for behaviours, t-tests
for Likert ratings, sign tests for comparative judgments). The comparison results of
``behaviour``, ``likert`` and ``comparative`` all carry ``metric``, ``pvalue`` and
``pvalue_adjusted``, so one counter serves them all.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = ["PairTest", "SignificanceCount", "count_significant"]

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
