"""Alexa Prize conversation metrics and their unified rankings.

Venkatesh et al. (2018), "On Evaluating and Comparing Open Domain Dialog Systems", section 4:

* engagement (4.3): number of turns, conversation duration, and the user's rating;
* coherence (4.4): response error rate, RER = erroneous responses / responses (here the bot
  responses whose error status is known, from behaviour labels or error flags). A response
  judged by several annotations is counted **per annotation**: each annotation of it is one
  observation, erroneous when that annotation flagged it, so the rate estimates what one
  annotation finds and does not grow with the number of annotators (counting a response as
  erroneous when any annotation flagged it would); the system's Wilson interval uses the
  design effect of the responses (:mod:`evalstats.clustered`), so that a response's
  annotations are not counted as independent responses;
* domain coverage (4.5): a conversation's domain is the topic with the longest run of
  consecutive turns; the entropy of the distribution of conversations over domains, and the
  reverse coefficient of variation R-COV = mean / standard deviation of the per-conversation
  topic entropies ("the ratio of mean domain distribution based entropy across the
  conversations for each socialbot and corresponding standard deviation");
* conversational depth (4.6): the mean number of consecutive turns on the same topic;
* topical breadth (4.7): the number of distinct topics ("topical vocabulary size") and the
  entropy of the system's topic distribution over turns;
* unification (4.8, Table 2): stack ranking (optionally weighted), the winners' circle and
  confidence bands;
* validation (section 5, Tables 3 and 4): the correlation of each metric, and of each
  unified score, with the ratings (:func:`rating_correlation`).

Topics come from each turn's ``topic`` when set, else from a
:class:`evalstats.topics.TopicClassifier`; turns without a topic break runs and are left
out of topic statistics. Entropies are in bits (log base 2).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats
from scipy.special import stdtr

from evalstats.clustered import design_effects
from evalstats.proportions import mean_t_interval, wilson_interval
from evalstats.topics import TopicClassifier

__all__ = [
    "ALEXA_DIRECTIONS",
    "Conversation",
    "ConversationMetrics",
    "Estimate",
    "RankingRow",
    "SystemMetrics",
    "Turn",
    "UnifiedRanking",
    "confidence_bands",
    "conversation_metrics",
    "metric_table",
    "rating_correlation",
    "stack_ranking",
    "system_metrics",
    "top_systems",
    "winners_circle",
]


@dataclass(frozen=True)
class Turn:
    """One utterance. ``timestamp`` in seconds; ``error`` only for bot turns: None if
    unjudged, else whether it is erroneous, one flag per annotation that judged it (a tuple)
    or one annotation's flag (a bool)."""

    speaker: Literal["user", "bot"]
    text: str = ""
    timestamp: float | None = None
    topic: str | None = None
    error: bool | tuple[bool, ...] | None = None

    def error_flags(self) -> tuple[bool, ...]:
        """The annotations' flags: empty when unjudged."""
        if self.error is None:
            return ()
        if isinstance(self.error, tuple):
            return tuple(bool(flag) for flag in self.error)
        return (bool(self.error),)


@dataclass(frozen=True)
class Conversation:
    id: Hashable
    system: str
    turns: tuple[Turn, ...]
    rating: float | None = None


@dataclass(frozen=True)
class ConversationMetrics:
    """Section 4 metrics of one conversation (None where the data do not allow them).

    ``n_judged_responses`` bot turns have an error status, from ``n_response_judgments``
    annotations of them, ``n_erroneous_judgments`` of which flagged an error; the RER is
    their share (per annotation). ``error_clusters`` keeps (flagged, judgments) per
    response for the system's clustered interval."""

    conversation: Hashable
    system: str
    n_turns: int
    n_bot_turns: int
    duration_seconds: float | None
    rating: float | None
    n_judged_responses: int
    n_response_judgments: int
    n_erroneous_judgments: int
    response_error_rate: float | None
    depth: float | None
    dominant_domain: str | None
    topic_counts: Mapping[str, int]
    topic_entropy: float | None
    error_clusters: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class Estimate:
    """A metric value with its 95% interval (NaN bounds when none applies) and sample size."""

    value: float
    low: float
    high: float
    n: int


@dataclass(frozen=True)
class SystemMetrics:
    """Section 4 metrics of one system; each an :class:`Estimate`.

    Means have t intervals over conversations, the RER a Wilson interval over responses;
    medians, counts, entropies and R-COV have no interval (NaN bounds).
    """

    system: str
    n_conversations: int
    mean_turns: Estimate
    median_turns: Estimate
    mean_duration: Estimate
    median_duration: Estimate
    mean_rating: Estimate
    response_error_rate: Estimate
    mean_depth: Estimate
    topic_vocabulary: Estimate
    topic_entropy: Estimate
    domain_entropy: Estimate
    r_cov: Estimate


_SPEAKERS = ("user", "bot")


def _topics(conversation: Conversation, classifier: TopicClassifier | None) -> list[str | None]:
    topics = []
    for index, turn in enumerate(conversation.turns):
        if turn.speaker not in _SPEAKERS:
            raise ValueError(
                f"conversation {conversation.id!r}, turn {index}: speaker must be 'user' or "
                f"'bot', got {turn.speaker!r}"
            )
        if turn.topic is not None:
            topics.append(turn.topic)
        elif classifier is not None:
            topics.append(classifier.classify(turn.text))
        else:
            topics.append(None)
    return topics


def _runs(topics: Sequence[str | None]) -> list[tuple[str, int]]:
    """Maximal runs of consecutive turns with the same topic; untopical turns break runs."""
    runs: list[tuple[str, int]] = []
    previous = None
    for topic in topics:
        if topic is not None and topic == previous:
            runs[-1] = (topic, runs[-1][1] + 1)
        elif topic is not None:
            runs.append((topic, 1))
        previous = topic
    return runs


def _entropy(counts: Iterable[int]) -> float:
    values = np.array([c for c in counts if c > 0], dtype=float)
    return float(stats.entropy(values, base=2)) if values.size else float("nan")


def _duration(conversation: Conversation) -> float | None:
    stamps = [t.timestamp for t in conversation.turns if t.timestamp is not None]
    if len(stamps) < 2:
        return None
    duration = max(stamps) - min(stamps)
    if not np.isfinite(duration):
        raise ValueError(f"conversation {conversation.id!r}: timestamps must be finite")
    return float(duration)


def conversation_metrics(
    conversation: Conversation, classifier: TopicClassifier | None = None
) -> ConversationMetrics:
    """Engagement, RER, depth, dominant domain and topic entropy of one conversation.

    Duration is last minus first timestamp (None with fewer than two). The dominant domain is
    the topic of the longest run (ties: more turns on the topic overall, then first run).
    """
    topics = _topics(conversation, classifier)
    bot_turns = [t for t in conversation.turns if t.speaker == "bot"]
    flags = [t.error_flags() for t in bot_turns]
    clusters = tuple((sum(f), len(f)) for f in flags if f)
    n_judgments = sum(size for _, size in clusters)
    n_errors = sum(flagged for flagged, _ in clusters)
    runs = _runs(topics)
    counts = Counter(t for t in topics if t is not None)
    dominant = None
    if runs:
        order = {topic: i for i, (topic, _) in reversed(list(enumerate(runs)))}
        longest = {}
        for topic, length in runs:
            longest[topic] = max(longest.get(topic, 0), length)
        dominant = max(longest, key=lambda t: (longest[t], counts[t], -order[t]))
    return ConversationMetrics(
        conversation=conversation.id,
        system=conversation.system,
        n_turns=len(conversation.turns),
        n_bot_turns=len(bot_turns),
        duration_seconds=_duration(conversation),
        rating=None if conversation.rating is None else float(conversation.rating),
        n_judged_responses=len(clusters),
        n_response_judgments=n_judgments,
        n_erroneous_judgments=n_errors,
        response_error_rate=n_errors / n_judgments if n_judgments else None,
        depth=float(np.mean([length for _, length in runs])) if runs else None,
        dominant_domain=dominant,
        topic_counts=dict(sorted(counts.items())),
        topic_entropy=_entropy(counts.values()) if counts else None,
        error_clusters=clusters,
    )


_NO_VALUE = Estimate(float("nan"), float("nan"), float("nan"), 0)


def _point(value: float, n: int) -> Estimate:
    return Estimate(float(value), float("nan"), float("nan"), n)


def _mean(values: Sequence[float]) -> Estimate:
    if not values:
        return _NO_VALUE
    if len(values) < 2 or np.ptp(values) == 0:
        return Estimate(float(np.mean(values)), float("nan"), float("nan"), len(values))
    interval = mean_t_interval(values)
    low, high = interval.confidence_interval
    return Estimate(interval.mean, float(low), float(high), len(values))


def _median(values: Sequence[float]) -> Estimate:
    return _point(float(np.median(values)), len(values)) if values else _NO_VALUE


def system_metrics(
    conversations: Iterable[ConversationMetrics],
) -> tuple[SystemMetrics, ...]:
    """Aggregate per-conversation metrics per system, sorted by system.

    Means over conversations carry 95% t intervals; the RER pools the annotations of
    responses over the system's conversations, with a Wilson interval on their effective
    number (annotations / design effect of the responses; ``n`` counts annotations); topic vocabulary and entropy pool the
    system's topical turns; domain entropy is over the dominant domains of its
    conversations; R-COV is mean / sample standard deviation (ddof=1) of the per-conversation
    topic entropies (NaN with fewer than two conversations or no spread).
    """
    by_system: dict[str, list[ConversationMetrics]] = {}
    for metrics in conversations:
        by_system.setdefault(metrics.system, []).append(metrics)
    results = []
    for system in sorted(by_system):
        group = by_system[system]
        durations = [m.duration_seconds for m in group if m.duration_seconds is not None]
        ratings = [m.rating for m in group if m.rating is not None]
        rer = _response_error_rate([c for m in group for c in m.error_clusters])
        topics: Counter[str] = Counter()
        for m in group:
            topics.update(m.topic_counts)
        domains = Counter(m.dominant_domain for m in group if m.dominant_domain is not None)
        entropies = np.array([m.topic_entropy for m in group if m.topic_entropy is not None])
        spread = float(entropies.std(ddof=1)) if entropies.size >= 2 else 0.0
        r_cov = float(entropies.mean() / spread) if spread > 0 else float("nan")
        results.append(
            SystemMetrics(
                system=system,
                n_conversations=len(group),
                mean_turns=_mean([m.n_turns for m in group]),
                median_turns=_median([m.n_turns for m in group]),
                mean_duration=_mean(durations),
                median_duration=_median(durations),
                mean_rating=_mean(ratings),
                response_error_rate=rer,
                mean_depth=_mean([m.depth for m in group if m.depth is not None]),
                topic_vocabulary=_point(len(topics), sum(topics.values())),
                topic_entropy=_point(_entropy(topics.values()), sum(topics.values())),
                domain_entropy=_point(_entropy(domains.values()), sum(domains.values())),
                r_cov=_point(r_cov, int(entropies.size)),
            )
        )
    return tuple(results)


def _response_error_rate(clusters: list[tuple[int, int]]) -> Estimate:
    """Flagged annotations over annotations, with a Wilson interval on the effective counts
    (the responses are the clusters)."""
    if not clusters:
        return _NO_VALUE
    totals, sizes = (np.array(column) for column in zip(*clusters, strict=True))
    count, nobs, _, effect = design_effects(totals, sizes, np.zeros(len(sizes), int), 1)
    if not np.isfinite(effect[0]):
        return _point(count[0] / nobs[0], int(nobs[0]))
    interval = wilson_interval(count[0] / effect[0], nobs[0] / effect[0])
    low, high = interval.confidence_interval
    return Estimate(float(count[0] / nobs[0]), float(low), float(high), int(nobs[0]))


# --- unified rankings (section 4.8, Table 2) -------------------------------------------------

# Whether a larger value is better, for every metric of SystemMetrics (RER: fewer errors).
ALEXA_DIRECTIONS: Mapping[str, bool] = {
    "mean_rating": True,
    "response_error_rate": False,
    "median_duration": True,
    "median_turns": True,
    "r_cov": True,
    "topic_vocabulary": True,
    "topic_entropy": True,
    "domain_entropy": True,
    "mean_depth": True,
}


def metric_table(
    systems: Iterable[SystemMetrics], metrics: Iterable[str] = tuple(ALEXA_DIRECTIONS)
) -> dict[str, dict[str, Estimate]]:
    """``{system: {metric: Estimate}}`` for the unified rankings, from :func:`system_metrics`."""
    names = tuple(metrics)
    return {s.system: {name: getattr(s, name) for name in names} for s in systems}


@dataclass(frozen=True)
class RankingRow:
    """One system's line of Table 2: its score per metric, total, position (1 = best, equal
    totals share it, the next position skips) and band (equal totals, bands numbered 1, 2, 3
    without gaps: the paper's "bands of socialbots")."""

    system: str
    scores: Mapping[str, float]
    total: float
    position: int
    band: int


@dataclass(frozen=True)
class UnifiedRanking:
    """A unified ranking: ``rows`` sorted by position, then system; ``benchmarks`` per metric
    lists the systems others were compared with (winners' circle, confidence bands)."""

    method: Literal["stack", "winners_circle", "confidence_bands"]
    metrics: tuple[str, ...]
    rows: tuple[RankingRow, ...]
    benchmarks: Mapping[str, tuple[str, ...]]


def _check_table(
    table: Mapping[str, Mapping[str, Estimate]], directions: Mapping[str, bool]
) -> tuple[str, ...]:
    if not table:
        raise ValueError("the unified rankings need at least one system")
    metrics = tuple(directions)
    for system, row in table.items():
        missing = [m for m in metrics if m not in row]
        if missing:
            raise ValueError(f"system {system!r} has no value for {missing}")
    return metrics


def _rows(scores: dict[str, dict[str, float]], totals: dict[str, float]) -> tuple[RankingRow, ...]:
    # Competition positions: systems with equal totals share the better position.
    ordered = sorted(totals, key=lambda s: (-totals[s], s))
    positions = {s: 1 + sum(totals[o] > totals[s] for o in totals) for s in ordered}
    distinct = sorted(set(totals.values()), reverse=True)
    return tuple(
        RankingRow(s, scores[s], totals[s], positions[s], 1 + distinct.index(totals[s]))
        for s in ordered
    )


def _oriented(value: float, higher_is_better: bool) -> float:
    # Missing values rank last whatever the direction.
    if np.isnan(value):
        return -np.inf
    return value if higher_is_better else -value


def stack_ranking(
    table: Mapping[str, Mapping[str, Estimate]],
    directions: Mapping[str, bool] = ALEXA_DIRECTIONS,
    weights: Mapping[str, float] | None = None,
) -> UnifiedRanking:
    """Stack ranking: per metric, ``n - rank + 1`` points (the best of n systems gets n,
    ties share the average rank, a missing value ranks last), summed with optional weights.

    ``directions`` names the metrics used and whether higher is better.
    """
    metrics = _check_table(table, directions)
    weights = dict.fromkeys(metrics, 1.0) if weights is None else dict(weights)
    unknown = set(weights) - set(metrics)
    if unknown or any(not np.isfinite(w) or w < 0 for w in weights.values()):
        raise ValueError(f"weights must be non-negative and name known metrics, got {weights}")
    systems = sorted(table)
    scores: dict[str, dict[str, float]] = {s: {} for s in systems}
    for metric in metrics:
        oriented = [_oriented(table[s][metric].value, directions[metric]) for s in systems]
        ranks = stats.rankdata([-v for v in oriented], method="average")
        for system, rank in zip(systems, ranks, strict=True):
            scores[system][metric] = float(len(systems) - rank + 1)
    totals = {s: float(sum(weights.get(m, 0.0) * scores[s][m] for m in metrics)) for s in systems}
    return UnifiedRanking("stack", metrics, _rows(scores, totals), {})


def _within_reach(candidate: Estimate, benchmark: Estimate, higher_is_better: bool) -> bool:
    """The candidate's interval reaches the benchmark's (or it is better).

    Without an interval an estimate is its point value. A missing value is never within reach.
    """
    if np.isnan(candidate.value) or np.isnan(benchmark.value):
        return False

    def bound(estimate: Estimate, upper: bool) -> float:
        value = estimate.high if upper else estimate.low
        return estimate.value if np.isnan(value) else value

    if higher_is_better:
        return bound(candidate, True) >= bound(benchmark, False)
    return bound(candidate, False) <= bound(benchmark, True)


def _circle(
    table: Mapping[str, Mapping[str, Estimate]],
    directions: Mapping[str, bool],
    benchmarks: Mapping[str, tuple[str, ...]],
    method: Literal["winners_circle", "confidence_bands"],
) -> UnifiedRanking:
    metrics = tuple(directions)
    systems = sorted(table)
    scores = {
        s: {
            m: float(
                any(_within_reach(table[s][m], table[b][m], directions[m]) for b in benchmarks[m])
            )
            for m in metrics
        }
        for s in systems
    }
    totals = {s: float(sum(scores[s].values())) for s in systems}
    return UnifiedRanking(method, metrics, _rows(scores, totals), dict(benchmarks))


def winners_circle(
    table: Mapping[str, Mapping[str, Estimate]],
    winners: Sequence[str],
    directions: Mapping[str, bool] = ALEXA_DIRECTIONS,
) -> UnifiedRanking:
    """Winners' circle: on every metric, 1 point if the system's 95% interval reaches that of
    one of the ``winners`` (or it does better), else 0 (winners score 1 by construction).

    The paper's winners are the two systems with the best user ratings: pass them (e.g.
    ``top_systems(table, "mean_rating", 2)``). Totals form bands of equal position.
    """
    metrics = _check_table(table, directions)
    unknown = [w for w in winners if w not in table]
    if not winners or unknown:
        raise ValueError(f"winners must be known systems, got {list(winners)}")
    return _circle(table, directions, dict.fromkeys(metrics, tuple(winners)), "winners_circle")


def top_systems(
    table: Mapping[str, Mapping[str, Estimate]],
    metric: str,
    count: int = 2,
    higher_is_better: bool = True,
) -> tuple[str, ...]:
    """The ``count`` best systems on ``metric`` (ties broken by name); missing values last."""
    return tuple(
        sorted(table, key=lambda s: (-_oriented(table[s][metric].value, higher_is_better), s))[
            :count
        ]
    )


def confidence_bands(
    table: Mapping[str, Mapping[str, Estimate]],
    directions: Mapping[str, bool] = ALEXA_DIRECTIONS,
    top: int = 2,
) -> UnifiedRanking:
    """Confidence bands: as the winners' circle, but on each metric the benchmarks are that
    metric's own ``top`` systems instead of the overall winners."""
    metrics = _check_table(table, directions)
    benchmarks = {m: top_systems(table, m, top, directions[m]) for m in metrics}
    return _circle(table, directions, benchmarks, "confidence_bands")


# --- validation against ratings (section 5, Tables 3 and 4) -----------------------------------


@dataclass(frozen=True)
class RatingCorrelation:
    """Pearson's r and Spearman's rho of a metric with the ratings over ``n`` units, with
    two-sided p-values (NaN with fewer than three units or no spread on either side)."""

    pearson: float
    pearson_p: float
    spearman: float
    spearman_p: float
    n: int


def _pearson_with_p(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    if x.size < 3:
        return float("nan"), float("nan")
    x, y = x - x.mean(), y - y.mean()
    denominator = np.sqrt((x * x).sum() * (y * y).sum())
    if denominator == 0:
        return float("nan"), float("nan")
    r = float(np.clip((x * y).sum() / denominator, -1.0, 1.0))
    df = x.size - 2
    if abs(r) == 1.0:
        return r, 0.0
    # Under H0 r sqrt(df / (1 - r^2)) follows Student's t with n - 2 degrees of freedom.
    t = abs(r) * np.sqrt(df / (1.0 - r * r))
    return r, float(2.0 * stdtr(df, -t))


def rating_correlation(values: Sequence[float], ratings: Sequence[float]) -> RatingCorrelation:
    """How a metric follows the ratings: the paper's Table 3 (one value and one mean rating
    per system) or the same per conversation.

    Pairs where either side is NaN are left out. Spearman's rho is Pearson's r of the
    average ranks (ties share their mean rank), its p-value from the same t approximation,
    as ``scipy.stats.spearmanr`` computes it.
    """
    x = np.asarray(values, dtype=float)
    y = np.asarray(ratings, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"{x.size} values but {y.size} ratings")
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    pearson, pearson_p = _pearson_with_p(x, y)
    spearman, spearman_p = _pearson_with_p(stats.rankdata(x), stats.rankdata(y))
    return RatingCorrelation(pearson, pearson_p, spearman, spearman_p, int(x.size))
