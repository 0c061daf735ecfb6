"""Likert ratings per system and dimension: means, t-tests and ordinal agreement.

ABC-Eval (Finch et al., 2023) collects Dialogue Likert (one 1-5 rating per conversation and
dimension) and Turn Likert (one rating per bot turn) and reports, per bot and dimension, the
mean with a Student's t interval (Figures 6 and 8), t-tests between bots (Table 5), and
Krippendorff's alpha per dimension on doubly annotated conversations (Figure 1; ordinal for
ratings).

Independence: a t interval needs independent observations, one per unit. The paper's design
rates each conversation once (a second rating of a subset served agreement only), so by
default (``use="first"``) only the first annotation of each conversation counts, in input
order (pass scores sorted by submission time). ``use="all"`` uses every annotation and
averages the annotations of each unit into one observation (the analysis of cluster means):
a dialogue rated three times is one observation, not three. Turn ratings of one
conversation are not independent either, so by default (``turn_unit="conversation"``) the
turn ratings of a conversation are averaged (per annotation, then over its annotations) and
the interval is over those averages; ``turn_unit="turn"`` treats every rated turn as an
observation (narrower, anti-conservative intervals). ``LikertMean.unit`` says which unit an
observation is, ``n`` how many there are and ``ratings`` how many ratings they summarise.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from evalstats.agreement import AlphaBootstrapResult, krippendorff_alpha_bca
from evalstats.pairwise import Correction, adjust_pvalues
from evalstats.proportions import mean_t_interval

__all__ = [
    "LikertAgreement",
    "LikertComparison",
    "LikertMean",
    "LikertScore",
    "UnitObservations",
    "comparisons_of",
    "likert_agreement",
    "likert_comparisons",
    "likert_means",
    "likert_units",
]

Level = Literal["dialogue", "turn"]
TurnUnit = Literal["conversation", "turn"]
AnnotationUse = Literal["all", "first"]
_USES = ("all", "first")


@dataclass(frozen=True)
class LikertScore:
    """One rating: ``turn`` is None for a dialogue-level rating, else the rated bot turn."""

    conversation: Hashable
    system: str
    annotation: Hashable
    dimension: str
    score: float
    turn: Hashable | None = None


@dataclass(frozen=True)
class LikertMean:
    """Mean rating of ``system`` on ``dimension`` at ``level`` with its t interval.

    ``n`` is the number of observations behind the interval (see ``unit``: a conversation or
    a bot turn), ``ratings`` the ratings they summarise; ``low``/``high`` are NaN when fewer
    than two observations exist.
    """

    system: str
    dimension: str
    level: Level
    unit: str
    n: int
    mean: float
    standard_deviation: float
    low: float
    high: float
    confidence_level: float
    ratings: int = 0
    annotations_used: AnnotationUse = "first"


@dataclass(frozen=True)
class LikertComparison:
    """Two-sample t-test of the mean rating of ``metric`` (a dimension) between two systems."""

    metric: str
    level: Level
    system_a: str
    system_b: str
    mean_a: float
    mean_b: float
    statistic: float
    df: float
    pvalue: float
    pvalue_adjusted: float
    equal_var: bool
    correction: str


@dataclass(frozen=True)
class LikertAgreement:
    """Ordinal alpha of one dimension over the ``n_units`` (conversation[, turn]) units rated
    at least twice; its interval resamples conversations (``alpha.n_units`` of them)."""

    dimension: str
    level: Level
    n_units: int
    alpha: AlphaBootstrapResult


def _check_scores(scores: Iterable[LikertScore]) -> list[LikertScore]:
    checked = []
    seen: set[tuple[Hashable, Hashable, Hashable, str]] = set()
    for index, score in enumerate(scores):
        if not np.isfinite(score.score):
            raise ValueError(f"score {index}: rating must be a finite number, got {score.score!r}")
        key = (score.conversation, score.turn, score.annotation, score.dimension)
        if key in seen:
            raise ValueError(
                f"score {index}: annotation {score.annotation!r} rated {score.dimension!r} of "
                f"{score.conversation!r} (turn {score.turn!r}) twice"
            )
        seen.add(key)
        checked.append(score)
    return checked


def _first_annotations(scores: list[LikertScore]) -> list[LikertScore]:
    """The scores of the first annotation of each conversation per dimension and level."""
    first: dict[tuple[Hashable, str, bool], Hashable] = {}
    for score in scores:
        first.setdefault(
            (score.conversation, score.dimension, score.turn is None), score.annotation
        )
    return [s for s in scores if first[s.conversation, s.dimension, s.turn is None] == s.annotation]


@dataclass(frozen=True)
class UnitObservations:
    """The observations of one (system, dimension, level), one per unit, with the
    conversation of each (to analyse subsets of conversations) and the ratings behind them."""

    values: tuple[float, ...]
    conversations: tuple[Hashable, ...]
    ratings: int


def likert_units(
    scores: Iterable[LikertScore],
    *,
    turn_unit: TurnUnit = "conversation",
    use: AnnotationUse = "first",
) -> dict[tuple[str, str, Level], UnitObservations]:
    """Per (system, dimension, level): one observation per unit, and the ratings behind them.

    A unit is a conversation (dialogue ratings; turn ratings with ``turn_unit="conversation"``)
    or a bot turn; its observation is the mean over its annotations of each annotation's mean
    rating of the unit (one annotation with ``use="first"``). Units keep the input order.
    """
    if turn_unit not in ("conversation", "turn"):
        raise ValueError(f"turn_unit must be 'conversation' or 'turn', got {turn_unit!r}")
    if use not in _USES:
        raise ValueError(f"use must be one of {_USES}, got {use!r}")
    checked = _check_scores(scores)
    if use == "first":
        checked = _first_annotations(checked)
    # unit key -> annotation -> ratings; insertion order keeps the input order.
    units: dict[tuple, dict[Hashable, list[float]]] = {}
    for score in checked:
        level: Level = "dialogue" if score.turn is None else "turn"
        turn = score.turn if level == "turn" and turn_unit == "turn" else None
        key = (score.system, score.dimension, level, score.conversation, turn)
        units.setdefault(key, {}).setdefault(score.annotation, []).append(float(score.score))
    collected: dict[tuple[str, str, Level], tuple[list[float], list[Hashable], list[int]]] = {}
    for (system, dimension, level, conversation, _), by_annotation in units.items():
        values, conversations, ratings = collected.setdefault(
            (system, dimension, level), ([], [], [])
        )
        values.append(float(np.mean([np.mean(r) for r in by_annotation.values()])))
        conversations.append(conversation)
        ratings.append(sum(map(len, by_annotation.values())))
    return {
        key: UnitObservations(tuple(values), tuple(conversations), sum(ratings))
        for key, (values, conversations, ratings) in collected.items()
    }


def likert_means(
    scores: Iterable[LikertScore],
    *,
    turn_unit: TurnUnit = "conversation",
    use: AnnotationUse = "first",
    confidence: float = 0.95,
) -> tuple[LikertMean, ...]:
    """Mean rating with a Student's t interval per system, dimension and level, over one
    observation per unit (see the module's note on independence).

    Sorted by level (dialogue first), dimension, system.
    """
    results = []
    for (system, dimension, level), observed in likert_units(
        scores, turn_unit=turn_unit, use=use
    ).items():
        sample = np.asarray(observed.values)
        if sample.size >= 2:
            interval = mean_t_interval(sample, confidence)
            low, high = interval.confidence_interval
            sd = float(sample.std(ddof=1))
        else:
            low = high = sd = float("nan")
        results.append(
            LikertMean(
                system=system,
                dimension=dimension,
                level=level,
                unit="turn" if level == "turn" and turn_unit == "turn" else "conversation",
                n=int(sample.size),
                mean=float(sample.mean()),
                standard_deviation=sd,
                low=float(low),
                high=float(high),
                confidence_level=confidence,
                ratings=observed.ratings,
                annotations_used=use,
            )
        )
    return tuple(sorted(results, key=lambda m: (m.level != "dialogue", m.dimension, m.system)))


def likert_comparisons(
    scores: Iterable[LikertScore],
    *,
    equal_var: bool = True,
    correction: Correction = "holm",
    turn_unit: TurnUnit = "conversation",
    use: AnnotationUse = "first",
) -> tuple[LikertComparison, ...]:
    """Two-sample t-test between every pair of systems per dimension and level, over the
    observations of :func:`likert_means` (one per unit).

    ``equal_var=False`` uses Welch's test. The multiplicity family is the system pairs of one
    (dimension, level). Pairs where either system has fewer than two observations are skipped.
    Sorted by level, dimension, pair.
    """
    return comparisons_of(
        likert_units(scores, turn_unit=turn_unit, use=use),
        equal_var=equal_var,
        correction=correction,
    )


def comparisons_of(
    units: dict[tuple[str, str, Level], UnitObservations],
    *,
    conversations: Iterable[Hashable] | None = None,
    equal_var: bool = True,
    correction: Correction = "holm",
) -> tuple[LikertComparison, ...]:
    """:func:`likert_comparisons` from :func:`likert_units`, over all conversations or the
    observations of the given ones."""
    wanted = None if conversations is None else set(conversations)
    families: dict[tuple[Level, str], dict[str, list[float]]] = {}
    for (system, dimension, level), observed in units.items():
        values = [
            value
            for value, conversation in zip(observed.values, observed.conversations, strict=True)
            if wanted is None or conversation in wanted
        ]
        if len(values) >= 2:
            families.setdefault((level, dimension), {})[system] = values
    pairs = [
        (level, dimension, a, b)
        for level, dimension in sorted(families, key=lambda k: (k[0] != "dialogue", k[1]))
        for a, b in itertools.combinations(sorted(families[level, dimension]), 2)
    ]
    samples = {
        (level, dimension, system): np.asarray(values, dtype=float)
        for (level, dimension), systems in families.items()
        for system, values in systems.items()
    }
    statistic, df, pvalue, mean_a, mean_b = _t_tests(
        [samples[level, dimension, a] for level, dimension, a, _ in pairs],
        [samples[level, dimension, b] for level, dimension, _, b in pairs],
        equal_var,
    )
    adjusted = np.full(len(pairs), np.nan)
    for level, dimension in families:
        family = [i for i, pair in enumerate(pairs) if pair[:2] == (level, dimension)]
        if family:
            adjusted[family] = adjust_pvalues(pvalue[family], correction)
    comparisons = [
        LikertComparison(
            metric=dimension,
            level=level,
            system_a=a,
            system_b=b,
            mean_a=float(mean_a[i]),
            mean_b=float(mean_b[i]),
            statistic=float(statistic[i]),
            df=float(df[i]),
            pvalue=float(pvalue[i]),
            pvalue_adjusted=float(adjusted[i]),
            equal_var=equal_var,
            correction=correction,
        )
        for i, (level, dimension, a, b) in enumerate(pairs)
    ]
    return tuple(comparisons)


def _t_tests(a: list[np.ndarray], b: list[np.ndarray], equal_var: bool):
    """Two-sided two-sample t-tests of each pair of samples, vectorised over the pairs:
    the statistic, df and p-value of :func:`evalstats.proportions.two_sample_t_test`
    (Student's pooled test, or Welch's), NaN when both samples have zero variance."""
    n_a = np.array([x.size for x in a], dtype=float)
    n_b = np.array([y.size for y in b], dtype=float)
    mean_a = np.array([x.mean() for x in a])
    mean_b = np.array([y.mean() for y in b])
    var_a = np.array([x.var(ddof=1) for x in a])
    var_b = np.array([y.var(ddof=1) for y in b])
    with np.errstate(invalid="ignore", divide="ignore"):
        if equal_var:
            df = n_a + n_b - 2
            pooled = ((n_a - 1) * var_a + (n_b - 1) * var_b) / df
            standard_error = np.sqrt(pooled * (1 / n_a + 1 / n_b))
        else:
            share_a, share_b = var_a / n_a, var_b / n_b
            standard_error = np.sqrt(share_a + share_b)
            df = (share_a + share_b) ** 2 / (share_a**2 / (n_a - 1) + share_b**2 / (n_b - 1))
        statistic = np.where(standard_error > 0, (mean_a - mean_b) / standard_error, np.nan)
    pvalue = 2 * stats.t.sf(np.abs(statistic), df)
    return statistic, df, pvalue, mean_a, mean_b


def likert_agreement(
    scores: Iterable[LikertScore],
    *,
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    rng: int | np.random.Generator = 0,
) -> tuple[LikertAgreement, ...]:
    """Ordinal Krippendorff's alpha per dimension and level, with a BCa interval over units.

    A unit is a conversation (dialogue level) or a (conversation, turn) pair (turn level);
    its values are the ratings of the different annotations. Units rated once are dropped;
    dimensions with fewer than two conversations rated twice are left out. Uses
    :func:`evalstats.agreement.krippendorff_alpha_bca` resampling conversations (at
    turn level, the turns of one conversation are not independent), so ``alpha.n_units``
    counts conversations while ``n_units`` counts the units alpha is computed on.
    """
    units: dict[tuple[Level, str], dict[tuple[Hashable, Hashable], list[float]]] = {}
    for score in _check_scores(scores):
        level: Level = "dialogue" if score.turn is None else "turn"
        group = units.setdefault((level, score.dimension), {})
        group.setdefault((score.conversation, score.turn), []).append(float(score.score))
    results = []
    for level, dimension in sorted(units, key=lambda k: (k[0] != "dialogue", k[1])):
        paired = [
            (key, ratings) for key, ratings in units[level, dimension].items() if len(ratings) >= 2
        ]
        conversations = [conversation for (conversation, _), _ in paired]
        if len(set(conversations)) < 2:
            continue
        matrix = np.full((max(len(r) for _, r in paired), len(paired)), np.nan)
        for column, (_, ratings) in enumerate(paired):
            matrix[: len(ratings), column] = ratings
        results.append(
            LikertAgreement(
                dimension=dimension,
                level=level,
                n_units=len(paired),
                alpha=krippendorff_alpha_bca(
                    matrix,
                    "ordinal",
                    clusters=conversations,
                    confidence_level=confidence_level,
                    n_resamples=n_resamples,
                    rng=rng,
                ),
            )
        )
    return tuple(results)
