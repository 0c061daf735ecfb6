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

Counting convention, as the paper's design: rates come from one annotation per conversation
(``use="first"``, the first annotation of the conversation for the label in input order: pass
judgments sorted by submission time); the paper's second annotations of a subset of
conversations served agreement only. ``use="all"`` counts every annotation of a bot turn, and
then the annotations of one turn are not independent observations: intervals and tests use
the design effect of the clusters (:mod:`evalstats.clustered`, Rao & Scott 1992), so that a
turn annotated twice weighs about as much as a turn annotated once. ``clusters="conversation"``
also treats the turns of one conversation as correlated (the paper treats turns as
independent); with one annotation per turn and ``clusters="turn"`` every observation is its
own cluster and the analysis is the paper's (Wilson intervals and pooled z-tests over turns).
Results state which annotations and clusters were used.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from evalstats.agreement import AlphaBootstrapResult, krippendorff_alpha_bca
from evalstats.clustered import design_effects
from evalstats.pairwise import Correction, adjust_pvalues
from evalstats.proportions import wilson_interval

__all__ = [
    "BehaviourAgreement",
    "BehaviourComparison",
    "BehaviourJudgment",
    "BehaviourRate",
    "RateClusters",
    "behaviour_agreement",
    "behaviour_comparisons",
    "behaviour_rates",
    "rate_clusters",
    "rates_of",
]

AnnotationUse = Literal["all", "first"]
_USES = ("all", "first")
Clusters = Literal["turn", "conversation"]
_CLUSTERS = ("turn", "conversation")


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
    """Share of annotated bot turns of ``system`` showing ``label``, with a Wilson interval.

    ``n_turns`` counts (bot turn, annotation) observations, ``n_clusters`` the clusters they
    fall in (bot turns, or conversations); the interval is Wilson's on the effective counts
    ``n_present / design_effect`` of ``effective_n = n_turns / design_effect``
    (:mod:`evalstats.clustered`), which is the plain Wilson interval when each cluster holds
    one observation (``design_effect == 1``).
    """

    system: str
    label: str
    n_turns: int
    n_present: int
    rate: float
    low: float
    high: float
    confidence_level: float
    annotations_used: AnnotationUse
    clusters: Clusters = "turn"
    n_clusters: int = 0
    design_effect: float = 1.0
    effective_n: float = 0.0


@dataclass(frozen=True)
class BehaviourComparison:
    """Pooled z-test of equal rates of ``metric`` (a label) between two systems, on the
    effective counts of each (Rao & Scott 1992; the classical test when no cluster holds
    more than one observation)."""

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


@dataclass(frozen=True)
class RateClusters:
    """Behaviour observations summed per cluster, to analyse whole or by subsets of
    conversations (``evalstats.sensitivity`` draws conversations many times).

    Cluster ``k`` belongs to group ``keys[group[k]]`` (a (system, label) pair) and to
    conversation ``conversations[conversation[k]]``; ``totals[k]`` of its ``sizes[k]``
    observations show the behaviour.
    """

    keys: tuple[tuple[str, str], ...]
    conversations: tuple[Hashable, ...]
    group: np.ndarray
    conversation: np.ndarray
    totals: np.ndarray
    sizes: np.ndarray
    annotations_used: AnnotationUse
    clusters: Clusters

    def conversations_of(self) -> dict[str, list[Hashable]]:
        """Each system's conversations, in order of appearance."""
        systems: dict[str, dict[Hashable, None]] = {}
        for group, conversation in zip(
            self.group.tolist(), self.conversation.tolist(), strict=True
        ):
            systems.setdefault(self.keys[group][0], {})[self.conversations[conversation]] = None
        return {system: list(found) for system, found in sorted(systems.items())}


def rate_clusters(
    judgments: Iterable[BehaviourJudgment],
    *,
    use: AnnotationUse = "first",
    clusters: Clusters = "turn",
) -> RateClusters:
    """The clusters of :func:`behaviour_rates`: ``use`` picks the annotations counted (see the
    module's counting convention) and ``clusters`` what an observation is correlated with:
    the other annotations of its bot turn (``"turn"``) or every observation of its
    conversation (``"conversation"``). Raises ValueError when a conversation is attributed to
    two systems or an annotation judges the same turn twice for a label."""
    if clusters not in _CLUSTERS:
        raise ValueError(f"clusters must be one of {_CLUSTERS}, got {clusters!r}")
    selected = _selected(_validated(judgments), use)
    keys = sorted({(j.system, j.label) for j in selected})
    key_code = {key: code for code, key in enumerate(keys)}
    conversation_code: dict[Hashable, int] = {}
    cells: dict[tuple, list[int]] = {}
    by_turn = clusters == "turn"
    for j in selected:
        conversation = conversation_code.setdefault(j.conversation, len(conversation_code))
        cluster = (j.label, conversation, j.turn if by_turn else None)
        cell = cells.setdefault(cluster, [key_code[j.system, j.label], conversation, 0, 0])
        cell[2] += bool(j.present)
        cell[3] += 1
    table = np.array(list(cells.values()), dtype=np.int64).reshape(-1, 4)
    return RateClusters(
        keys=tuple(keys),
        conversations=tuple(conversation_code),
        group=table[:, 0],
        conversation=table[:, 1],
        totals=table[:, 2],
        sizes=table[:, 3],
        annotations_used=use,
        clusters=clusters,
    )


def rates_of(
    table: RateClusters,
    *,
    conversations: Iterable[Hashable] | None = None,
    confidence: float = 0.95,
) -> tuple[BehaviourRate, ...]:
    """:func:`behaviour_rates` from its clusters, over all conversations or the given ones.

    Groups with no observation left are not reported. Sorted by system, then label.
    """
    keep = np.ones(len(table.group), dtype=bool)
    if conversations is not None:
        wanted = set(conversations)
        codes = [code for code, name in enumerate(table.conversations) if name in wanted]
        keep = np.isin(table.conversation, codes)
    count, nobs, n_clusters, effect = design_effects(
        table.totals[keep], table.sizes[keep], table.group[keep], len(table.keys)
    )
    present = np.flatnonzero(nobs > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        effective_n = nobs[present] / effect[present]
        effective_count = count[present] / effect[present]
    defined = np.isfinite(effective_n)
    interval = wilson_interval(
        np.where(defined, effective_count, 0.0), np.where(defined, effective_n, 0.0), confidence
    )
    lows = np.atleast_1d(interval.confidence_interval.low)
    highs = np.atleast_1d(interval.confidence_interval.high)
    return tuple(
        BehaviourRate(
            system=table.keys[k][0],
            label=table.keys[k][1],
            n_turns=int(nobs[k]),
            n_present=int(count[k]),
            rate=float(count[k] / nobs[k]),
            low=float(lows[i]),
            high=float(highs[i]),
            confidence_level=confidence,
            annotations_used=table.annotations_used,
            clusters=table.clusters,
            n_clusters=int(n_clusters[k]),
            design_effect=float(effect[k]),
            effective_n=float(effective_n[i]),
        )
        for i, k in enumerate(present.tolist())
    )


def behaviour_rates(
    judgments: Iterable[BehaviourJudgment],
    *,
    use: AnnotationUse = "first",
    clusters: Clusters = "turn",
    confidence: float = 0.95,
) -> tuple[BehaviourRate, ...]:
    """Per system and label: bot turns judged, turns with the behaviour, rate, Wilson interval.

    The clusters and their design effect are :func:`rate_clusters`'; the interval is
    Wilson's on the effective counts. Sorted by system, then label. Raises ValueError when a
    conversation is attributed to two systems or an annotation judges the same turn twice
    for a label.
    """
    return rates_of(rate_clusters(judgments, use=use, clusters=clusters), confidence=confidence)


def behaviour_comparisons(
    rates: Iterable[BehaviourRate], *, correction: Correction = "holm"
) -> tuple[BehaviourComparison, ...]:
    """Pooled two-proportion z-test for every pair of systems, per label.

    The test is on each rate's effective counts (``rate * effective_n`` of ``effective_n``):
    the Rao-Scott adjusted test, which is the pooled z-test itself when the design effects
    are 1; a rate whose design effect is undefined gives NaN. The family corrected for
    multiplicity (Holm by default, or ``"bonferroni"``/``"none"``) is the set of system
    pairs of one label, as ABC-Eval compares bot pairs label by label.
    ``system_a < system_b`` alphabetically; sorted by label, then pair.
    """
    by_label: dict[str, dict[str, BehaviourRate]] = {}
    for rate in rates:
        by_label.setdefault(rate.label, {})[rate.system] = rate
    pairs = [
        (label, by_label[label][a], by_label[label][b])
        for label in sorted(by_label)
        for a, b in itertools.combinations(sorted(by_label[label]), 2)
    ]
    z, p = _rate_tests([a for _, a, _ in pairs], [b for _, _, b in pairs])
    adjusted = np.full(len(pairs), np.nan)
    for label in by_label:
        family = [i for i, (name, _, _) in enumerate(pairs) if name == label]
        adjusted[family] = _adjusted(p[family].tolist(), correction)
    return tuple(
        BehaviourComparison(
            metric=label,
            system_a=a.system,
            system_b=b.system,
            rate_a=a.rate,
            rate_b=b.rate,
            statistic=float(z[i]),
            pvalue=float(p[i]),
            pvalue_adjusted=float(adjusted[i]),
            correction=correction,
        )
        for i, (label, a, b) in enumerate(pairs)
    )


def _rate_tests(a: list[BehaviourRate], b: list[BehaviourRate]) -> tuple[np.ndarray, np.ndarray]:
    """(z, p) of the pooled z-test on each pair's effective counts, as
    :func:`evalstats.proportions.two_proportion_ztest` (z = 0 and p = 1 when the pooled rate
    is 0 or 1), vectorised over the pairs; NaN where a design effect is undefined."""
    n_a = np.array([r.effective_n for r in a], dtype=float)
    n_b = np.array([r.effective_n for r in b], dtype=float)
    p_a = np.array([r.rate for r in a], dtype=float)
    p_b = np.array([r.rate for r in b], dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        pooled = (p_a * n_a + p_b * n_b) / (n_a + n_b)
        variance = pooled * (1 - pooled) * (1 / n_a + 1 / n_b)
        z = np.where(variance == 0, 0.0, (p_a - p_b) / np.sqrt(variance))
    p = 2 * stats.norm.sf(np.abs(z))
    return z, p


def _adjusted(pvalues: list[float], correction: Correction) -> np.ndarray:
    """Corrected p-values over the defined ones; NaN stays NaN (untested)."""
    raw = np.array(pvalues, dtype=float)
    adjusted = np.full(raw.shape, np.nan)
    defined = ~np.isnan(raw)
    if defined.any():
        adjusted[defined] = adjust_pvalues(raw[defined], correction)
    return adjusted


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
