"""The Alexa Prize conversation metrics of a set of conversations, and their unified rankings.

Venkatesh et al. (2018), section 4: per conversation and per system engagement (turns,
duration, user rating), coherence (response error rate), conversational depth, topical
breadth and domain coverage; section 4.8 and Table 2: stack ranking, the winners' circle and
confidence bands, each a per-system table of 0/1 (or rank) scores per metric with a total.

Pure: :mod:`evalstats.dialogue_metrics` does the statistics; this module chooses what
to rank and writes the result contract. ``analysis.inputs.dialogue`` reads the database.

Result contract (every number a JSON number or ``null``)::

    {"kind": "dialogue_metrics",
     "scope": {"kind": "domain" | "tournament" | "study" | "campaign", "name": text},
     "conversations": n,            # system-conversations analysed (a bot-bot conversation
                                    # counts once for each of its systems)
     "skipped": n,                  # conversations without a bot speaker
     "topics": "labels" | "labels+keywords",
     "error_labels": [label, ...],  # the ABC-Eval labels whose flags mark a response erroneous
     "response_error_rate_per": "annotation",  # an observation is one annotation of a
                                    # response (one judgment of each error label), erroneous
                                    # when it flags one; its n counts annotations
     "metrics": [{"name", "label", "higher_is_better", "ranked", "method", "paper"}],
                                    # ranked: false when no system has a value; method: how
                                    # EvalHub computes it; paper: how the paper did, and
                                    # where the two differ
     "systems": [{"system", "n_conversations",
                  <metric name>: {"value", "low", "high", "n"}, ...}],
                                    # every SystemMetrics field; low/high: 95% interval
     "per_conversation": [{"conversation", "system", "n_turns", "n_bot_turns",
                           "duration_seconds", "rating", "n_judged_responses",
                           "n_response_judgments", "n_erroneous_judgments",
                           "response_error_rate", "depth",
                           "dominant_domain", "topic_entropy"}],
     "rankings": {"stack": <ranking>, "winners_circle": <ranking> | null,
                  "confidence_bands": <ranking>},
                  # <ranking>: {"metrics": [name, ...], "benchmarks": {metric: [system]},
                  #             "rows": [{"system", "scores": {metric: score}, "total",
                  #                       "position", "band"}]}   # best first
     "winners": [system, ...],      # the winners' circle benchmarks (best user ratings)
     "validity": {"systems": [<correlation> + {"metric"}],
                  "conversations": [<correlation> + {"metric"}],
                  "unified": [<correlation> + {"ranking"}]},
                  # the paper's Table 3 (each metric's correlation with the mean rating,
                  # one point per system; and per conversation for the metrics a
                  # conversation has) and Table 4 (each unified total with the mean rating);
                  # <correlation>: {"pearson", "pearson_p", "spearman", "spearman_p", "n"}
     "text": [{"system", "n_conversations", "mean_turn_length", "type_token_ratio",
               "distinct_1", "distinct_2", "repeated_turns", "self_repetition"}],
                  # model-free metrics of the bot's own turns (evalstats.conversation_text),
                  # each the mean over the system's conversations (self_repetition over those
                  # that have one; null when none has)
     "warnings": [text, ...]}
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict

from analysis.reports.common import json_safe
from analysis.reports.data import NothingToAnalyse
from evalstats.conversation_text import conversation_text_metrics
from evalstats.dialogue_metrics import (
    ALEXA_DIRECTIONS,
    Conversation,
    UnifiedRanking,
    confidence_bands,
    conversation_metrics,
    metric_table,
    rating_correlation,
    stack_ranking,
    system_metrics,
    top_systems,
    winners_circle,
)
from evalstats.topics import KeywordTopicClassifier

# Table 2's metric names, for the page and the JSON (same order as ALEXA_DIRECTIONS).
METRIC_LABELS = {
    "mean_rating": "CUX: mean user rating",
    "response_error_rate": "Coherence: response error rate (per annotation)",
    "median_duration": "Engagement: median duration (s)",
    "median_turns": "Engagement: median turns",
    "r_cov": "Domain coverage: R-COV",
    "topic_vocabulary": "Topical diversity: topic vocabulary size",
    "topic_entropy": "Topical diversity: topic entropy (bits)",
    "domain_entropy": "Domain coverage: domain entropy (bits)",
    "mean_depth": "Conversational depth: mean depth",
}
# How EvalHub computes each metric, and how the paper did: a page or a JSON reader must not
# take one for the other (issue 25: the topics and R-COV are not the paper's).
METRIC_METHODS = {
    "mean_rating": (
        "Mean of the conversations' ratings (1-5), with a t interval.",
        "Same definition; the paper's raters were Alexa users rating their own conversation.",
    ),
    "response_error_rate": (
        "Share of the annotations of judged bot responses that flag an error (an error label "
        "of error_labels, or an imported error flag), pooled over the system's conversations: "
        "per annotation, so that it does not grow with the number of annotators; its interval "
        "counts a response's annotations as one cluster (design effect).",
        "The paper annotated sampled interactions for incorrect, irrelevant or inappropriate "
        "responses; here the study's own labels stand in for those annotations.",
    ),
    "median_duration": (
        "Median of last minus first turn timestamp per conversation.",
        "Same definition (the paper's conversations were spoken).",
    ),
    "median_turns": ("Median number of turns per conversation.", "Same definition."),
    "r_cov": (
        "Mean over conversations of the entropy of their topic distribution, divided by its "
        "standard deviation.",
        "One reading of an ambiguous passage (section 4.5 also speaks of the standard "
        "deviation of ratings across five domains); topics come from a 9-domain keyword "
        "list, not the paper's 26-domain DAN classifier.",
    ),
    "topic_vocabulary": (
        "Number of distinct topic domains the system's turns touch.",
        "The paper counts fine-grained topical keywords (e.g. 'obama', 'nba'); EvalHub counts "
        "its coarse domains (at most 9), so the figure is not comparable with the paper's.",
    ),
    "topic_entropy": (
        "Entropy (bits) of the system's turns over topic domains.",
        "The paper's topic frequency uses its keyword topics; here the coarse domains.",
    ),
    "domain_entropy": (
        "Entropy (bits) of the system's conversations over their dominant domain (the "
        "domain of the longest run of consecutive turns).",
        "The paper's definition, over the 9-domain keyword list instead of 26 domains.",
    ),
    "mean_depth": (
        "Mean length of runs of consecutive turns on one domain.",
        "The paper's definition, over the 9-domain keyword list instead of 26 domains.",
    ),
}
# Per-conversation values correlated with the conversation's rating (validity section).
CONVERSATION_METRICS = {
    "n_turns": "median_turns",
    "duration_seconds": "median_duration",
    "response_error_rate": "response_error_rate",
    "depth": "mean_depth",
    "topic_entropy": "topic_entropy",
}
TOPIC_SOURCES = ("labels", "labels+keywords")
SYSTEM_FIELDS = (
    "mean_turns",
    "median_turns",
    "mean_duration",
    "median_duration",
    "mean_rating",
    "response_error_rate",
    "mean_depth",
    "topic_vocabulary",
    "topic_entropy",
    "domain_entropy",
    "r_cov",
)


def _ranking(ranking: UnifiedRanking) -> dict:
    return {
        "metrics": list(ranking.metrics),
        "benchmarks": {m: list(s) for m, s in ranking.benchmarks.items()},
        "rows": [
            {
                "system": row.system,
                "scores": dict(row.scores),
                "total": row.total,
                "position": row.position,
                "band": row.band,
            }
            for row in ranking.rows
        ],
    }


def dialogue_metrics_report(
    conversations: Sequence[Conversation],
    *,
    scope: Mapping[str, str],
    skipped: int = 0,
    topics: str = "labels+keywords",
    error_labels: Sequence[str] = (),
    weights: Mapping[str, float] | None = None,
    winners: Sequence[str] | None = None,
    top: int = 2,
) -> dict:
    """The result contract (module docstring) for ``conversations``, JSON-safe.

    ``topics``: "labels" uses only the turns' stored topic labels; "labels+keywords" asks the
    :class:`KeywordTopicClassifier` for turns without one. ``winners`` default to the two
    systems with the best mean user rating (the paper's choice); without any user rating the
    winners' circle is left out (null) with a warning. Metrics that no system has a value
    for (no timestamps, no judged responses) are left out of the rankings. Raises
    NothingToAnalyse for no conversations, ValueError for bad arguments.
    """
    if topics not in TOPIC_SOURCES:
        raise ValueError(f"topics must be one of {', '.join(TOPIC_SOURCES)}, got {topics!r}")
    if not conversations:
        raise NothingToAnalyse("No conversation with a bot speaker to analyse.")
    classifier = KeywordTopicClassifier() if topics == "labels+keywords" else None
    per_conversation = [conversation_metrics(c, classifier) for c in conversations]
    systems = system_metrics(per_conversation)
    table = metric_table(systems)
    warnings = []
    ranked = {
        name: direction
        for name, direction in ALEXA_DIRECTIONS.items()
        if any(not math.isnan(table[s][name].value) for s in table)
    }
    unranked = [METRIC_LABELS[n] for n in ALEXA_DIRECTIONS if n not in ranked]
    if unranked:
        warnings.append(f"No system has a value for: {', '.join(unranked)}; not ranked.")
    if not ranked:
        raise NothingToAnalyse("No metric has a value: the conversations have no turns.")
    unknown = sorted(set(weights or {}) - set(ALEXA_DIRECTIONS))
    if unknown:
        raise ValueError(f"Unknown metric in weights: {', '.join(unknown)}.")
    weights = None if weights is None else {m: w for m, w in weights.items() if m in ranked}
    rankings: dict = {"stack": _ranking(stack_ranking(table, ranked, weights))}
    if winners is None and "mean_rating" in ranked:
        winners = top_systems(table, "mean_rating", top)
    if winners:
        rankings["winners_circle"] = _ranking(winners_circle(table, winners, ranked))
    else:
        rankings["winners_circle"] = None
        warnings.append("No user ratings: the winners' circle needs them to pick its winners.")
    rankings["confidence_bands"] = _ranking(confidence_bands(table, ranked, top))
    report = {
        "kind": "dialogue_metrics",
        "scope": dict(scope),
        "conversations": len(per_conversation),
        "skipped": skipped,
        "topics": topics,
        "error_labels": list(error_labels),
        "response_error_rate_per": "annotation",
        "metrics": [
            {
                "name": name,
                "label": METRIC_LABELS[name],
                "higher_is_better": direction,
                "ranked": name in ranked,
                "method": METRIC_METHODS[name][0],
                "paper": METRIC_METHODS[name][1],
            }
            for name, direction in ALEXA_DIRECTIONS.items()
        ],
        "systems": [
            {
                "system": s.system,
                "n_conversations": s.n_conversations,
                **{name: asdict(getattr(s, name)) for name in SYSTEM_FIELDS},
            }
            for s in systems
        ],
        "per_conversation": [
            {
                key: value
                for key, value in asdict(m).items()
                if key not in ("topic_counts", "error_clusters")
            }
            | {"conversation": str(m.conversation)}
            for m in per_conversation
        ],
        "rankings": rankings,
        "winners": list(winners or []),
        "validity": validity(table, per_conversation, rankings),
        "text": text_metrics(conversations),
        "warnings": warnings,
    }
    return json_safe(report)


def validity(table, per_conversation, rankings: Mapping) -> dict:
    """The paper's Tables 3 and 4 on this study's own ratings: each metric (per system, and
    per conversation where a conversation has it) and each unified total against the mean
    rating. Empty lists without ratings. The unified totals count the rating itself as one
    of their metrics, as the paper's Table 2 does."""
    systems = sorted(table)
    mean_rating = [table[s]["mean_rating"].value for s in systems]
    if all(math.isnan(value) for value in mean_rating):
        return {"systems": [], "conversations": [], "unified": []}
    by_system = [
        {"metric": name}
        | asdict(rating_correlation([table[s][name].value for s in systems], mean_rating))
        for name in ALEXA_DIRECTIONS
        if name != "mean_rating"
    ]
    rating = [math.nan if m.rating is None else m.rating for m in per_conversation]
    by_conversation = [
        {"metric": field}
        | asdict(
            rating_correlation(
                [
                    math.nan if getattr(m, field) is None else float(getattr(m, field))
                    for m in per_conversation
                ],
                rating,
            )
        )
        for field in CONVERSATION_METRICS
    ]
    unified = []
    for key, ranking in rankings.items():
        if ranking is None:
            continue
        total = {row["system"]: row["total"] for row in ranking["rows"]}
        unified.append(
            {"ranking": key}
            | asdict(rating_correlation([total.get(s, math.nan) for s in systems], mean_rating))
        )
    return {"systems": by_system, "conversations": by_conversation, "unified": unified}


TEXT_FIELDS = (
    "mean_turn_length",
    "type_token_ratio",
    "distinct_1",
    "distinct_2",
    "repeated_turns",
    "self_repetition",
)


def _mean(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def text_metrics(conversations: Sequence[Conversation]) -> list[dict]:
    """Per system, the mean over its conversations of the bot turns' model-free metrics."""
    by_system: dict[str, list] = {}
    for c in conversations:
        turns = [(t.speaker, t.text) for t in c.turns]
        by_system.setdefault(c.system, []).append(conversation_text_metrics(turns, "bot"))
    return [
        {
            "system": system,
            "n_conversations": len(rows),
            **{f: _mean([getattr(r, f) for r in rows]) for f in TEXT_FIELDS},
        }
        for system, rows in sorted(by_system.items())
    ]
