"""ABC-Eval behaviour rates, their comparisons and their agreement.

ABC-Eval (Finch, Finch & Choi, 2023, "Don't Forget Your ABC's") labels every bot turn of a
conversation with binary behaviours (ignore, irrelevant, self contradiction, ...). This module
computes, from flat per-turn judgments:

* :func:`behaviour_rates`: per system and label, the share of bot turns showing the behaviour
  with its Wilson interval (Figures 4-5);
* :func:`behaviour_comparisons`: pooled two-proportion z-tests between every pair of systems
  per label, corrected for multiplicity within the label (Table 5 counts them, see
  :func:`evalstats.sensitivity.count_significant`);
* :func:`behaviour_agreement`: nominal Krippendorff's alpha per label over the bot turns of
  conversations annotated more than once, with a BCa bootstrap interval that resamples
  conversations (Figure 1: "BCa ... with k=10,000 Monte Carlo case resamples").

Counting convention: a bot turn counts once per annotation of it. When a conversation was
annotated more than once, ``use="all"`` counts every annotation and ``use="first"`` only the
first annotation of the conversation for the label (in input order: pass judgments sorted by
submission time); results state which was used.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from evalstats.agreement import AlphaBootstrapResult, krippendorff_alpha_bca
from evalstats.pairwise import Correction, adjust_pvalues
from evalstats.proportions import two_proportion_ztest, wilson_interval

__all__ = [
    "BehaviourAgreement",
    "BehaviourComparison",
    "BehaviourJudgment",
    "BehaviourRate",
    "behaviour_agreement",
    "behaviour_comparisons",
    "behaviour_rates",
]

AnnotationUse = Literal["all", "first"]
_USES = ("all", "first")


@dataclass(frozen=True)
class BehaviourJudgment:
    """One annotation's decision whether ``label`` shows in one bot ``turn``.

    ``annotation`` identifies one annotation of the conversation (e.g. the assignment); the
    same annotation judges many turns. ``turn`` identifies the bot turn within the conversation.
    """

    conversation: Hashable
    system: str
    turn: Hashable
    annotation: Hashable
    label: str
    present: bool


@dataclass(frozen=True)
class BehaviourRate:
    """Share of annotated bot turns of ``system`` showing ``label``, with a Wilson interval."""

    system: str
    label: str
    n_turns: int
    n_present: int
    rate: float
    low: float
    high: float
    confidence_level: float
    annotations_used: AnnotationUse


@dataclass(frozen=True)
class BehaviourComparison:
    """Pooled z-test of equal rates of ``metric`` (a label) between two systems."""

    metric: str
    system_a: str
    system_b: str
    rate_a: float
    rate_b: float
    statistic: float
    pvalue: float
    pvalue_adjusted: float
    correction: str


@dataclass(frozen=True)
class BehaviourAgreement:
    """Nominal alpha of one label over conversations annotated at least twice.

    ``alpha.n_units`` is the number of conversations resampled by the bootstrap; ``n_turns``
    the bot turns with at least two judgments; ``n_positive`` the judgments marking the label
    present (few positives mean wide intervals, as ABC-Eval's footnote on !Soc and !Int says).
    """

    label: str
    n_conversations: int
    n_turns: int
    n_positive: int
    alpha: AlphaBootstrapResult


def _validated(judgments: Iterable[BehaviourJudgment]) -> list[BehaviourJudgment]:
    systems: dict[Hashable, str] = {}
    seen: set[tuple[Hashable, Hashable, Hashable, str]] = set()
    checked = []
    for index, judgment in enumerate(judgments):
        system = systems.setdefault(judgment.conversation, judgment.system)
        if system != judgment.system:
            raise ValueError(
                f"judgment {index}: conversation {judgment.conversation!r} belongs to both "
                f"{system!r} and {judgment.system!r}"
            )
        key = (judgment.conversation, judgment.turn, judgment.annotation, judgment.label)
        if key in seen:
            raise ValueError(
                f"judgment {index}: annotation {judgment.annotation!r} judged turn "
                f"{judgment.turn!r} of {judgment.conversation!r} twice for {judgment.label!r}"
            )
        seen.add(key)
        checked.append(judgment)
    return checked


def _selected(judgments: list[BehaviourJudgment], use: AnnotationUse) -> list[BehaviourJudgment]:
    if use not in _USES:
        raise ValueError(f"use must be one of {_USES}, got {use!r}")
    if use == "all":
        return judgments
    first: dict[tuple[Hashable, str], Hashable] = {}
    for judgment in judgments:
        first.setdefault((judgment.conversation, judgment.label), judgment.annotation)
    return [j for j in judgments if first[j.conversation, j.label] == j.annotation]


def behaviour_rates(
    judgments: Iterable[BehaviourJudgment],
    *,
    use: AnnotationUse = "all",
    confidence: float = 0.95,
) -> tuple[BehaviourRate, ...]:
    """Per system and label: bot turns judged, turns with the behaviour, rate, Wilson interval.

    Sorted by system, then label. Raises ValueError when a conversation is attributed to two
    systems or an annotation judges the same turn twice for a label.
    """
    counts: dict[tuple[str, str], list[int]] = {}
    for judgment in _selected(_validated(judgments), use):
        cell = counts.setdefault((judgment.system, judgment.label), [0, 0])
        cell[0] += 1
        cell[1] += bool(judgment.present)
    keys = sorted(counts)
    if not keys:
        return ()
    n_turns = np.array([counts[k][0] for k in keys])
    n_present = np.array([counts[k][1] for k in keys])
    interval = wilson_interval(n_present, n_turns, confidence)
    rates = np.atleast_1d(interval.proportion)
    lows = np.atleast_1d(interval.confidence_interval.low)
    highs = np.atleast_1d(interval.confidence_interval.high)
    return tuple(
        BehaviourRate(
            system=system,
            label=label,
            n_turns=int(n_turns[i]),
            n_present=int(n_present[i]),
            rate=float(rates[i]),
            low=float(lows[i]),
            high=float(highs[i]),
            confidence_level=confidence,
            annotations_used=use,
        )
        for i, (system, label) in enumerate(keys)
    )


def behaviour_comparisons(
    rates: Iterable[BehaviourRate], *, correction: Correction = "holm"
) -> tuple[BehaviourComparison, ...]:
    """Pooled two-proportion z-test for every pair of systems, per label.

    The family corrected for multiplicity (Holm by default, or ``"bonferroni"``/``"none"``)
    is the set of system pairs of one label, as ABC-Eval compares bot pairs label by label.
    ``system_a < system_b`` alphabetically; sorted by label, then pair.
    """
    by_label: dict[str, dict[str, BehaviourRate]] = {}
    for rate in rates:
        by_label.setdefault(rate.label, {})[rate.system] = rate
    comparisons = []
    for label in sorted(by_label):
        systems = by_label[label]
        pairs = list(itertools.combinations(sorted(systems), 2))
        tests = [
            two_proportion_ztest(
                systems[a].n_present, systems[a].n_turns, systems[b].n_present, systems[b].n_turns
            )
            for a, b in pairs
        ]
        adjusted = adjust_pvalues([t.pvalue for t in tests], correction)
        comparisons.extend(
            BehaviourComparison(
                metric=label,
                system_a=a,
                system_b=b,
                rate_a=test.proportion_a,
                rate_b=test.proportion_b,
                statistic=test.statistic,
                pvalue=test.pvalue,
                pvalue_adjusted=float(p_adjusted),
                correction=correction,
            )
            for (a, b), test, p_adjusted in zip(pairs, tests, adjusted, strict=True)
        )
    return tuple(comparisons)


def _turn_matrix(judgments: list[BehaviourJudgment]) -> tuple[np.ndarray, list[Hashable]]:
    """Annotation-slot x bot-turn matrix of 0/1 (NaN: no such judgment), and each turn's
    conversation. Rows are slots (a turn's first, second, ... judgment), not annotators:
    alpha depends only on the values within each unit."""
    turns: dict[tuple[Hashable, Hashable], list[float]] = {}
    for judgment in judgments:
        turns.setdefault((judgment.conversation, judgment.turn), []).append(
            float(bool(judgment.present))
        )
    matrix = np.full((max(map(len, turns.values())), len(turns)), np.nan)
    for column, decisions in enumerate(turns.values()):
        matrix[: len(decisions), column] = decisions
    return matrix, [conversation for conversation, _ in turns]


def behaviour_agreement(
    judgments: Iterable[BehaviourJudgment],
    *,
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    rng: int | np.random.Generator = 0,
) -> dict[str, BehaviourAgreement]:
    """Per label: nominal alpha over bot turns of conversations annotated at least twice.

    Units are bot turns (present/absent as nominal values, one value per annotation of the
    turn); turns judged once do not enter alpha. The BCa interval is
    :func:`evalstats.agreement.krippendorff_alpha_bca` with the conversations as
    clusters: whole conversations are resampled, since turns of one conversation are not
    independent. A label without variation (all absent, say) has alpha NaN and a NaN
    interval; labels with fewer than two such conversations are left out. Keyed by label in
    sorted order.
    """
    by_label: dict[str, list[BehaviourJudgment]] = {}
    for judgment in _validated(judgments):
        by_label.setdefault(judgment.label, []).append(judgment)
    results = {}
    for label in sorted(by_label):
        matrix, conversations = _turn_matrix(by_label[label])
        paired = (~np.isnan(matrix)).sum(axis=0) >= 2
        n_conversations = len({c for c, keep in zip(conversations, paired, strict=True) if keep})
        if n_conversations < 2:
            continue
        results[label] = BehaviourAgreement(
            label=label,
            n_conversations=n_conversations,
            n_turns=int(paired.sum()),
            n_positive=int(np.nansum(matrix[:, paired])),
            alpha=krippendorff_alpha_bca(
                matrix,
                "nominal",
                clusters=conversations,
                confidence_level=confidence_level,
                n_resamples=n_resamples,
                rng=rng,
            ),
        )
    return results
