import math

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.proportion import proportion_confint
from statsmodels.stats.weightstats import DescrStatsW

from evalstats.dialogue_metrics import (
    Conversation,
    Estimate,
    Turn,
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


def _conversation(cid="c1", system="bot-a", rating=4.0):
    return Conversation(
        cid,
        system,
        (
            Turn("user", "I love this song by my favourite band", 0.0),
            Turn("bot", "Music is great", 4.0, topic="music", error=False),
            Turn("user", "Did you see the football match?", 10.0),
            Turn("bot", "Hello!", 12.0, error=True),
            Turn("user", "The match was great, my team won the game", 20.0),
            Turn("bot", "Your team played well", 25.0, topic="sports", error=False),
            Turn("user", "Let's talk about a song instead", 31.5),
        ),
        rating,
    )


def test_conversation_metrics_hand_worked():
    """Topics (stored, else keywords): music, music, sports, None, sports, sports, music.

    Runs: music 2, sports 1, sports 2, music 1 -> depth (2 + 1 + 2 + 1) / 4 = 1.5. Longest runs
    music 2 and sports 2, both 3 turns in all, so the first run decides: music. Topic entropy
    of (3, 3) is 1 bit. Two of three bot turns judged correct: RER 1/3. Duration 31.5 s.
    """
    metrics = conversation_metrics(_conversation(), KeywordTopicClassifier())
    assert (metrics.n_turns, metrics.n_bot_turns) == (7, 3)
    assert metrics.duration_seconds == 31.5
    assert metrics.rating == 4.0
    assert (metrics.n_judged_responses, metrics.n_response_judgments) == (3, 3)
    assert metrics.n_erroneous_judgments == 1
    assert metrics.response_error_rate == pytest.approx(1 / 3)
    assert metrics.depth == 1.5
    assert metrics.dominant_domain == "music"
    assert metrics.topic_counts == {"music": 3, "sports": 3}
    assert metrics.topic_entropy == pytest.approx(1.0)


def test_without_classifier_only_stored_topics_count():
    metrics = conversation_metrics(_conversation())
    assert metrics.topic_counts == {"music": 1, "sports": 1}
    assert metrics.depth == 1.0
    empty = conversation_metrics(Conversation("e", "s", (Turn("user", "hi"),)))
    assert empty.depth is None and empty.duration_seconds is None
    assert empty.response_error_rate is None and empty.dominant_domain is None


def test_the_error_rate_counts_each_annotation_of_a_response_once():
    """Three responses, two annotations each: (error, fine), (fine, fine), (error, error).

    Per annotation 3 of 6 observations are errors (0.5); "flagged by any annotation" would
    call 2 of 3 responses erroneous (0.667), and more so with more annotators."""
    flags = [(True, False), (False, False), (True, True)]
    turns = tuple(
        turn
        for n, error in enumerate(flags)
        for turn in (Turn("user", f"u{n}"), Turn("bot", f"b{n}", error=error))
    )
    metrics = conversation_metrics(Conversation("c", "s", turns))
    assert (metrics.n_judged_responses, metrics.n_response_judgments) == (3, 6)
    assert metrics.n_erroneous_judgments == 3 and metrics.response_error_rate == 0.5


def test_the_system_error_rate_interval_counts_a_responses_annotations_as_a_cluster():
    rng = np.random.default_rng(8)
    conversations, observations, clusters = [], [], []
    for c in range(12):
        turns = []
        for t in range(5):
            error = rng.random() < 0.3
            # Two annotations that mostly agree, a few judged once.
            flags = (error, error ^ (rng.random() < 0.2)) if (c + t) % 4 else (error,)
            turns += [Turn("user", "u"), Turn("bot", "b", error=flags)]
            observations += flags
            clusters += [c * 10 + t] * len(flags)
        conversations.append(conversation_metrics(Conversation(c, "bot-a", tuple(turns))))
    (system,) = system_metrics(conversations)
    y = np.array(observations, dtype=float)
    model = sm.OLS(y, np.ones(y.size))
    effect = (
        model.fit(cov_type="cluster", cov_kwds={"groups": np.array(clusters)}).bse[0] ** 2
        / model.fit().bse[0] ** 2
    )
    low, high = proportion_confint(y.sum() / effect, y.size / effect, method="wilson")
    rate = system.response_error_rate
    assert (rate.value, rate.n) == (pytest.approx(y.mean()), y.size)
    assert (rate.low, rate.high) == pytest.approx((low, high), rel=1e-10)
    naive_low, naive_high = proportion_confint(y.sum(), y.size, method="wilson")
    assert rate.high - rate.low > naive_high - naive_low


def test_bad_speaker_is_rejected_with_the_turn():
    with pytest.raises(ValueError, match="conversation 'x', turn 0: speaker must be"):
        conversation_metrics(Conversation("x", "s", (Turn("robot", "hi"),)))


def _system_data():
    rng = np.random.default_rng(4)
    topics = ("music", "sports", "movies", "food")
    conversations = []
    for c in range(9):
        n = int(rng.integers(4, 12))
        turns = tuple(
            Turn(
                "user" if t % 2 == 0 else "bot",
                timestamp=float(5 * t + rng.integers(0, 3)),
                topic=str(rng.choice(topics[: 1 + c % 4])),
                error=None if t % 2 == 0 else bool(rng.random() < 0.2),
            )
            for t in range(n)
        )
        conversations.append(Conversation(c, "bot-a", turns, float(rng.integers(1, 6))))
    return [conversation_metrics(c) for c in conversations]


def test_system_metrics_match_independent_references():
    per_conversation = _system_data()
    (system,) = system_metrics(per_conversation)
    turns = np.array([m.n_turns for m in per_conversation], dtype=float)
    low, high = DescrStatsW(turns).tconfint_mean()
    assert (system.mean_turns.value, system.mean_turns.low, system.mean_turns.high) == (
        pytest.approx((turns.mean(), low, high), rel=1e-12)
    )
    assert system.median_turns.value == np.median(turns)
    judged = sum(m.n_judged_responses for m in per_conversation)
    errors = sum(m.n_erroneous_judgments for m in per_conversation)
    rer_low, rer_high = proportion_confint(errors, judged, method="wilson")
    assert system.response_error_rate.value == pytest.approx(errors / judged)
    assert (system.response_error_rate.low, system.response_error_rate.high) == pytest.approx(
        (rer_low, rer_high), abs=1e-12
    )
    entropies = np.array([m.topic_entropy for m in per_conversation])
    assert system.r_cov.value == pytest.approx(entropies.mean() / entropies.std(ddof=1))
    domains = {}
    for m in per_conversation:
        domains[m.dominant_domain] = domains.get(m.dominant_domain, 0) + 1
    assert system.domain_entropy.value == pytest.approx(
        stats.entropy(list(domains.values()), base=2)
    )
    assert system.topic_vocabulary.value == 4
    depth = [m.depth for m in per_conversation]
    assert system.mean_depth.value == pytest.approx(np.mean(depth))
    assert system.mean_rating.n == 9


def _table():
    def e(value, low, high):
        return Estimate(value, low, high, 100)

    return {
        "A": {"rating": e(4.0, 3.8, 4.2), "rer": e(0.10, 0.08, 0.12), "depth": e(2.0, 1.8, 2.2)},
        "B": {"rating": e(3.9, 3.7, 4.1), "rer": e(0.15, 0.13, 0.17), "depth": e(2.5, 2.3, 2.7)},
        "C": {"rating": e(3.4, 3.3, 3.5), "rer": e(0.11, 0.09, 0.13), "depth": e(3.0, 2.9, 3.1)},
        "D": {"rating": e(3.0, 2.8, 3.2), "rer": e(0.30, 0.25, 0.35), "depth": e(1.7, 1.5, 1.9)},
    }


DIRECTIONS = {"rating": True, "rer": False, "depth": True}


def _by_system(ranking):
    return {row.system: row for row in ranking.rows}


def test_winners_circle_reproduces_table_2_logic():
    """Winners by user rating: A and B (top two). A system scores 1 on a metric when its 95%
    interval reaches a winner's (higher-better: its high >= a winner's low; lower-better: its
    low <= a winner's high), else 0.

    rating: C high 3.5 < B low 3.7 -> 0; D high 3.2 -> 0.          A 1, B 1, C 0, D 0
    rer:    C low 0.09 <= A high 0.12 -> 1; D low 0.25 > 0.17 -> 0. A 1, B 1, C 1, D 0
    depth:  C high 3.1 >= 1.8 (better) -> 1; D high 1.9 >= A low 1.8 -> 1. all 1
    Totals A 3, B 3, C 2, D 1: positions 1, 1, 3, 4 and bands 1, 1, 2, 3.
    """
    table = _table()
    assert top_systems(table, "rating", 2) == ("A", "B")
    ranking = winners_circle(table, ("A", "B"), DIRECTIONS)
    rows = _by_system(ranking)
    assert {s: rows[s].scores for s in rows} == {
        "A": {"rating": 1, "rer": 1, "depth": 1},
        "B": {"rating": 1, "rer": 1, "depth": 1},
        "C": {"rating": 0, "rer": 1, "depth": 1},
        "D": {"rating": 0, "rer": 0, "depth": 1},
    }
    assert [(r.system, r.total, r.position, r.band) for r in ranking.rows] == [
        ("A", 3, 1, 1),
        ("B", 3, 1, 1),
        ("C", 2, 3, 2),
        ("D", 1, 4, 3),
    ]
    assert ranking.benchmarks["rer"] == ("A", "B")


def test_confidence_bands_use_each_metric_own_top_two():
    """Benchmarks: rating A, B; rer (lowest) A 0.10, C 0.11; depth C 3.0, B 2.5.

    rating: A 1, B 1, C 0, D 0 (as above).
    rer:    B low 0.13 <= C high 0.13 -> 1; D 0.25 -> 0.       A 1, B 1, C 1, D 0
    depth:  A high 2.2 < B low 2.3 and < C low 2.9 -> 0; D 0.  A 0, B 1, C 1, D 0
    Totals B 3, A 2, C 2, D 0: positions 1, 2, 2, 4; bands 1, 2, 2, 3.
    """
    ranking = confidence_bands(_table(), DIRECTIONS)
    assert ranking.benchmarks == {"rating": ("A", "B"), "rer": ("A", "C"), "depth": ("C", "B")}
    assert [(r.system, r.total, r.position, r.band) for r in ranking.rows] == [
        ("B", 3, 1, 1),
        ("A", 2, 2, 2),
        ("C", 2, 2, 2),
        ("D", 0, 4, 3),
    ]


def test_stack_ranking_plain_and_weighted_hand_worked():
    """Points n - rank + 1 of 4 systems:
    rating A 4, B 3, C 2, D 1; rer (lower better) A 4, C 3, B 2, D 1; depth C 4, B 3, A 2, D 1.
    Totals A 10, C 9, B 8, D 3. Weights rating 2: A 14, B 11, C 11, D 4.
    """
    ranking = stack_ranking(_table(), DIRECTIONS)
    assert [(r.system, r.total, r.position) for r in ranking.rows] == [
        ("A", 10, 1),
        ("C", 9, 2),
        ("B", 8, 3),
        ("D", 3, 4),
    ]
    weighted = stack_ranking(_table(), DIRECTIONS, {"rating": 2, "rer": 1, "depth": 1})
    assert [(r.system, r.total, r.position) for r in weighted.rows] == [
        ("A", 14, 1),
        ("B", 11, 2),
        ("C", 11, 2),
        ("D", 4, 4),
    ]


def test_missing_values_rank_last_and_never_reach_a_benchmark():
    table = _table()
    table["D"]["depth"] = Estimate(math.nan, math.nan, math.nan, 0)
    assert _by_system(stack_ranking(table, DIRECTIONS)).get("D").scores["depth"] == 1
    assert _by_system(winners_circle(table, ("A", "B"), DIRECTIONS))["D"].scores["depth"] == 0


def test_rankings_from_system_metrics_and_invalid_input():
    systems = system_metrics(_system_data())
    table = metric_table(systems)
    assert set(table["bot-a"]) >= {"mean_rating", "response_error_rate", "r_cov"}
    assert stack_ranking(table).rows[0].system == "bot-a"
    with pytest.raises(ValueError, match="winners must be known systems"):
        winners_circle(table, ("nobody",))
    with pytest.raises(ValueError, match="has no value for"):
        stack_ranking({"x": {}}, DIRECTIONS)
    with pytest.raises(ValueError, match="weights must be non-negative"):
        stack_ranking(_table(), DIRECTIONS, {"rating": -1})


# --- validation against ratings (Tables 3 and 4) --------------------------------------------


def test_rating_correlation_equals_scipy_with_ties_and_missing_values():
    values = [0.1, 0.4, 0.4, math.nan, 0.9, 0.2, 0.7, 0.7]
    ratings = [1.0, 3.0, 2.0, 5.0, 5.0, 1.0, 4.0, math.nan]
    kept = [(v, r) for v, r in zip(values, ratings, strict=True) if not math.isnan(v + r)]
    x, y = zip(*kept, strict=True)
    result = rating_correlation(values, ratings)
    pearson, spearman = stats.pearsonr(x, y), stats.spearmanr(x, y)
    assert result.n == 6
    assert result.pearson == pytest.approx(pearson.statistic, abs=1e-12)
    assert result.pearson_p == pytest.approx(pearson.pvalue, abs=1e-12)
    assert result.spearman == pytest.approx(spearman.statistic, abs=1e-12)
    assert result.spearman_p == pytest.approx(spearman.pvalue, abs=1e-12)


def test_rating_correlation_is_undefined_for_too_few_points_or_no_spread():
    assert math.isnan(rating_correlation([1.0, 2.0], [3.0, 4.0]).pearson)
    flat = rating_correlation([1.0, 1.0, 1.0], [1.0, 2.0, 3.0])
    assert math.isnan(flat.pearson) and math.isnan(flat.spearman_p) and flat.n == 3
