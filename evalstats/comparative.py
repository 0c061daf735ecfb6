"""Comparative (side-by-side) judgments per dimension: win/tie/loss shares and sign tests.

ABC-Eval's Comparative evaluation (Finch et al., 2023) shows two conversations of different
bots and asks, per dimension, which is better or whether they are equal. Figure 7 reports
win/tie/loss proportions with Wilson intervals; Table 5 tests each bot pair with a sign test
(wins against losses, ties dropped). ChatEval's A/B results are read the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from evalstats.pairwise import Correction, adjust_pvalues
from evalstats.proportions import sign_test_from_counts, wilson_interval

__all__ = ["ComparativeJudgment", "ComparativeResult", "Share", "comparative_results"]

Outcome = Literal["a", "b", "tie"]
_OUTCOMES = ("a", "b", "tie")
_SWAPPED = {"a": "b", "b": "a", "tie": "tie"}


@dataclass(frozen=True)
class ComparativeJudgment:
    """One annotation's verdict on ``dimension`` between the conversations of two systems."""

    system_a: str
    system_b: str
    dimension: str
    outcome: Outcome


@dataclass(frozen=True)
class Share:
    """``count / n`` with its Wilson interval."""

    count: int
    proportion: float
    low: float
    high: float


@dataclass(frozen=True)
class ComparativeResult:
    """Win/tie/loss of ``system_a`` against ``system_b`` on ``metric`` (a dimension).

    ``wins``, ``ties`` and ``losses`` are shares of all ``n`` judgments (ties included), from
    ``system_a``'s side; ``statistic``/``pvalue`` are the exact sign test of wins against
    losses with ties dropped, ``pvalue_adjusted`` corrected over the pairs of one dimension.
    """

    metric: str
    system_a: str
    system_b: str
    n: int
    wins: Share
    ties: Share
    losses: Share
    statistic: int
    pvalue: float
    pvalue_adjusted: float
    correction: str
    confidence_level: float


def _tallies(
    judgments: Iterable[ComparativeJudgment],
) -> dict[tuple[str, str, str], dict[str, int]]:
    tallies: dict[tuple[str, str, str], dict[str, int]] = {}
    for index, judgment in enumerate(judgments):
        if judgment.outcome not in _OUTCOMES:
            raise ValueError(
                f"judgment {index}: outcome must be one of {_OUTCOMES}, got {judgment.outcome!r}"
            )
        if judgment.system_a == judgment.system_b:
            raise ValueError(f"judgment {index}: compares {judgment.system_a!r} with itself")
        outcome = judgment.outcome
        first, second = judgment.system_a, judgment.system_b
        if second < first:
            # One orientation per pair, so (a vs b) and (b vs a) judgments pool.
            first, second, outcome = second, first, _SWAPPED[outcome]
        cell = tallies.setdefault((judgment.dimension, first, second), dict.fromkeys(_OUTCOMES, 0))
        cell[outcome] += 1
    return tallies


def comparative_results(
    judgments: Iterable[ComparativeJudgment],
    *,
    correction: Correction = "holm",
    confidence: float = 0.95,
) -> tuple[ComparativeResult, ...]:
    """Shares with Wilson intervals and a sign test per dimension and system pair.

    Pairs are oriented alphabetically (``system_a < system_b``) whatever the order shown.
    A pair with only ties has p-value 1 (nothing to test) and does not count in the
    multiplicity family of its dimension. Sorted by dimension, then pair.
    """
    tallies = _tallies(judgments)
    keys = sorted(tallies)
    tests = [
        sign_test_from_counts(tallies[k]["a"], tallies[k]["b"], n_ties=tallies[k]["tie"])
        for k in keys
    ]
    # Pairs with ties only were not tested: they stay out of the multiplicity family.
    decided = np.array([t.n_positive + t.n_negative > 0 for t in tests], dtype=bool)
    raw = np.where(decided, [t.pvalue for t in tests], np.nan)
    adjusted = np.ones(len(keys))
    for dimension in {k[0] for k in keys}:
        family = [i for i, k in enumerate(keys) if k[0] == dimension]
        adjusted[family] = np.where(decided[family], adjust_pvalues(raw[family], correction), 1.0)
    results = []
    for i, (dimension, first, second) in enumerate(keys):
        cell = tallies[dimension, first, second]
        n = sum(cell.values())
        shares = {}
        for outcome in _OUTCOMES:
            interval = wilson_interval(cell[outcome], n, confidence)
            low, high = interval.confidence_interval
            shares[outcome] = Share(cell[outcome], float(interval.proportion), low, high)
        results.append(
            ComparativeResult(
                metric=dimension,
                system_a=first,
                system_b=second,
                n=n,
                wins=shares["a"],
                ties=shares["tie"],
                losses=shares["b"],
                statistic=tests[i].statistic,
                pvalue=tests[i].pvalue,
                pvalue_adjusted=float(adjusted[i]),
                correction=correction,
                confidence_level=confidence,
            )
        )
    return tuple(results)
