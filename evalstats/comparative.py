"""Comparative (side-by-side) judgments per dimension: win/tie/loss shares and sign tests.

ABC-Eval's Comparative evaluation (Finch et al., 2023) shows two conversations of different
bots and asks, per dimension, which is better or whether they are equal. Figure 7 reports
win/tie/loss proportions with Wilson intervals; Table 5 tests each bot pair with a sign test
(wins against losses, ties dropped). ChatEval's A/B results are read the same way.

Independence: a pair of conversations (an item) judged twice is one unit, not two. As in the
paper's design (a second judgment of some pairs served agreement only), ``use="first"``
keeps the first judgment of each item per dimension; ``use="all"`` uses every judgment and
summarises each item by its majority verdict (a split is a tie). Judgments without an item
are units of their own.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from evalstats.pairwise import Correction, adjust_pvalues
from evalstats.proportions import wilson_interval

__all__ = [
    "ComparativeJudgment",
    "ComparativeResult",
    "Share",
    "UnitVerdict",
    "comparative_results",
    "comparative_units",
    "results_of",
]

Outcome = Literal["a", "b", "tie"]
_OUTCOMES = ("a", "b", "tie")
_SWAPPED = {"a": "b", "b": "a", "tie": "tie"}
_SIGN = {"a": 1, "tie": 0, "b": -1}
AnnotationUse = Literal["all", "first"]
_USES = ("all", "first")


@dataclass(frozen=True)
class ComparativeJudgment:
    """One annotation's verdict on ``dimension`` between the conversations of two systems;
    ``item`` names the pair of conversations judged (None: a unit of its own)."""

    system_a: str
    system_b: str
    dimension: str
    outcome: Outcome
    item: Hashable | None = None


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
    ``n`` counts units (items), ``judgments`` the verdicts they summarise.
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
    judgments: int = 0
    annotations_used: AnnotationUse = "first"


@dataclass(frozen=True)
class UnitVerdict:
    """One unit's verdict on ``dimension``, oriented alphabetically (``system_a <
    system_b``): ``unit`` is ``("item", item)`` or, for a judgment without an item,
    ``("judgment", index)``; ``judgments`` the verdicts it summarises."""

    system_a: str
    system_b: str
    dimension: str
    outcome: Outcome
    unit: tuple
    judgments: int


def comparative_units(
    judgments: Iterable[ComparativeJudgment], *, use: AnnotationUse = "first"
) -> tuple[UnitVerdict, ...]:
    """One verdict per (item, dimension), oriented alphabetically (see the module's note on
    independence), in the order the units first appear."""
    if use not in _USES:
        raise ValueError(f"use must be one of {_USES}, got {use!r}")
    units: dict[tuple, list[ComparativeJudgment]] = {}
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
        own = ("judgment", index) if judgment.item is None else ("item", judgment.item)
        oriented = ComparativeJudgment(first, second, judgment.dimension, outcome, own)
        previous = units.setdefault((judgment.dimension, own), [oriented])
        if previous[0] is not oriented:
            earlier = previous[0]
            if (earlier.system_a, earlier.system_b) != (first, second):
                raise ValueError(
                    f"judgment {index}: item {judgment.item!r} compares {first!r} with "
                    f"{second!r}, an earlier judgment of it {earlier.system_a!r} with "
                    f"{earlier.system_b!r}"
                )
            previous.append(oriented)
    verdicts = []
    for of_unit in units.values():
        head = of_unit[0]
        if use == "first":
            outcome = head.outcome
        else:
            total = sum(_SIGN[v.outcome] for v in of_unit)
            outcome = "a" if total > 0 else "b" if total < 0 else "tie"
        verdicts.append(
            UnitVerdict(
                head.system_a, head.system_b, head.dimension, outcome, head.item, len(of_unit)
            )
        )
    return tuple(verdicts)


def _tallies(
    verdicts: Iterable[UnitVerdict],
) -> tuple[dict[tuple[str, str, str], dict[str, int]], dict[tuple[str, str, str], int]]:
    """Per (dimension, a, b): units per outcome, and the judgments behind them."""
    tallies: dict[tuple[str, str, str], dict[str, int]] = {}
    behind: dict[tuple[str, str, str], int] = {}
    for verdict in verdicts:
        key = (verdict.dimension, verdict.system_a, verdict.system_b)
        cell = tallies.setdefault(key, dict.fromkeys(_OUTCOMES, 0))
        cell[verdict.outcome] += 1
        behind[key] = behind.get(key, 0) + verdict.judgments
    return tallies, behind


def comparative_results(
    judgments: Iterable[ComparativeJudgment],
    *,
    correction: Correction = "holm",
    confidence: float = 0.95,
    use: AnnotationUse = "first",
) -> tuple[ComparativeResult, ...]:
    """Shares with Wilson intervals and a sign test per dimension and system pair, over one
    verdict per item (see the module's note on independence).

    Pairs are oriented alphabetically (``system_a < system_b``) whatever the order shown.
    A pair with only ties has p-value 1 (nothing to test) and does not count in the
    multiplicity family of its dimension. Sorted by dimension, then pair.
    """
    return results_of(
        comparative_units(judgments, use=use),
        correction=correction,
        confidence=confidence,
        use=use,
    )


def results_of(
    verdicts: Iterable[UnitVerdict],
    *,
    units: Iterable[tuple] | None = None,
    correction: Correction = "holm",
    confidence: float = 0.95,
    use: AnnotationUse = "first",
) -> tuple[ComparativeResult, ...]:
    """:func:`comparative_results` from :func:`comparative_units`, over every unit or the
    given ones (``UnitVerdict.unit`` values); ``use`` is only reported."""
    if units is not None:
        wanted = set(units)
        verdicts = [v for v in verdicts if v.unit in wanted]
    tallies, behind = _tallies(verdicts)
    keys = sorted(tallies)
    counts = np.array([[tallies[k][o] for o in _OUTCOMES] for k in keys], dtype=float)
    counts = counts.reshape(len(keys), len(_OUTCOMES))
    wins, losses = counts[:, 0], counts[:, 1]
    decided_n = wins + losses
    # The exact sign test (sign_test_from_counts), vectorised: min(1, 2 P(X <= min(w, l))).
    tail = stats.binom.cdf(np.minimum(wins, losses), np.maximum(decided_n, 1), 0.5)
    pvalues = np.where(decided_n > 0, np.minimum(1.0, 2.0 * tail), 1.0)
    # Pairs with ties only were not tested: they stay out of the multiplicity family.
    decided = decided_n > 0
    raw = np.where(decided, pvalues, np.nan)
    adjusted = np.ones(len(keys))
    for dimension in {k[0] for k in keys}:
        family = [i for i, k in enumerate(keys) if k[0] == dimension]
        adjusted[family] = np.where(decided[family], adjust_pvalues(raw[family], correction), 1.0)
    n = counts.sum(axis=1)
    interval = wilson_interval(counts, n[:, None], confidence)
    proportion = np.asarray(interval.proportion).reshape(counts.shape)
    low = np.asarray(interval.confidence_interval.low).reshape(counts.shape)
    high = np.asarray(interval.confidence_interval.high).reshape(counts.shape)
    results = []
    for i, (dimension, first, second) in enumerate(keys):
        shares = {
            outcome: Share(
                int(counts[i, j]), float(proportion[i, j]), float(low[i, j]), float(high[i, j])
            )
            for j, outcome in enumerate(_OUTCOMES)
        }
        results.append(
            ComparativeResult(
                metric=dimension,
                system_a=first,
                system_b=second,
                n=int(n[i]),
                wins=shares["a"],
                ties=shares["tie"],
                losses=shares["b"],
                statistic=int(wins[i]),
                pvalue=float(pvalues[i]),
                pvalue_adjusted=float(adjusted[i]),
                correction=correction,
                confidence_level=confidence,
                judgments=behind[dimension, first, second],
                annotations_used=use,
            )
        )
    return tuple(results)
