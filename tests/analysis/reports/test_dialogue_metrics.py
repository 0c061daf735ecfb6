"""The Alexa Prize metrics report on a small hand-made example (the logic of Table 2)."""

import pytest
from scipy import stats

from analysis.reports import NothingToAnalyse
from analysis.reports.dialogue_metrics import dialogue_metrics_report
from evalstats.dialogue_metrics import Conversation, Turn

SCOPE = {"kind": "domain", "name": "chitchat"}


def talk(id, system, topics, errors, rating=None):
    """Alternating user and bot turns on the given topics; ``errors`` per bot turn."""
    flags = iter(errors)
    turns = []
    for n, topic in enumerate(topics):
        bot = n % 2 == 1
        turns.append(
            Turn(
                "bot" if bot else "user",
                f"turn {n}",
                topic=topic,
                error=next(flags) if bot else None,
            )
        )
    return Conversation(id, system, tuple(turns), rating)


# A: deep (one topic throughout), no errors, rated 5 and 4.
# B: two topics per conversation, one error in four responses, rated 3 and 2.
# C: unrated, its responses unjudged, three topics.
CONVERSATIONS = [
    talk("a1", "A", ["music"] * 4, [False, False], 5),
    talk("a2", "A", ["music"] * 4, [False, False], 4),
    talk("b1", "B", ["sports", "sports", "music", "music"], [True, False], 3),
    talk("b2", "B", ["sports", "sports", "music", "music"], [False, False], 2),
    talk("c1", "C", ["food", "pets", "travel", "travel"], [None, None]),
]


@pytest.fixture(scope="module")
def result():
    return dialogue_metrics_report(CONVERSATIONS, scope=SCOPE, error_labels=["ignore"])


def system(result, name):
    return next(row for row in result["systems"] if row["system"] == name)


def scores(result, ranking, metric):
    rows = result["rankings"][ranking]["rows"]
    return {row["system"]: row["scores"][metric] for row in rows}


def test_per_system_values_and_intervals(result):
    a = system(result, "A")["mean_rating"]
    # Ratings 5 and 4: mean 4.5, t interval 4.5 ± t(0.975, 1) * s / sqrt(2), s = sqrt(0.5).
    half = stats.t.ppf(0.975, 1) * 0.5**0.5 / 2**0.5
    assert a["value"] == 4.5 and a["n"] == 2
    assert a["low"] == pytest.approx(4.5 - half) and a["high"] == pytest.approx(4.5 + half)
    assert system(result, "B")["response_error_rate"]["value"] == 0.25  # 1 of 4 responses
    assert system(result, "C")["response_error_rate"]["value"] is None  # nothing judged
    assert system(result, "A")["mean_depth"]["value"] == 4  # one run of 4 turns
    assert system(result, "B")["mean_depth"]["value"] == 2  # runs of 2 and 2
    assert system(result, "C")["topic_vocabulary"]["value"] == 3


def test_per_conversation_rows(result):
    rows = {row["conversation"]: row for row in result["per_conversation"]}
    assert len(rows) == 5 and result["conversations"] == 5
    assert rows["b1"]["n_erroneous_judgments"] == 1 and rows["b1"]["n_judged_responses"] == 2
    assert rows["b1"]["n_response_judgments"] == 2 and result["response_error_rate_per"] == (
        "annotation"
    )
    assert rows["c1"]["dominant_domain"] == "travel"  # the longest run
    assert rows["a1"]["duration_seconds"] is None  # no timestamps


def test_stack_ranking_gives_n_points_to_the_best_and_missing_values_rank_last(result):
    assert scores(result, "stack", "mean_rating") == {"A": 3, "B": 2, "C": 1}
    assert scores(result, "stack", "response_error_rate") == {"A": 3, "B": 2, "C": 1}
    assert scores(result, "stack", "mean_depth") == {"A": 3, "B": 2, "C": 1}
    assert scores(result, "stack", "topic_vocabulary") == {"A": 1, "B": 2, "C": 3}
    rows = result["rankings"]["stack"]["rows"]
    assert rows[0]["system"] == "A" and rows[0]["position"] == 1
    assert [r["total"] for r in rows] == sorted((r["total"] for r in rows), reverse=True)


def test_metrics_without_any_value_are_not_ranked(result):
    ranked = {m["name"]: m["ranked"] for m in result["metrics"]}
    assert ranked["median_duration"] is False and ranked["mean_rating"] is True
    assert "median_duration" not in result["rankings"]["stack"]["metrics"]
    assert any("median duration" in w for w in result["warnings"])


def test_the_winners_are_the_two_best_rated_and_score_one(result):
    assert result["winners"] == ["A", "B"]
    circle = result["rankings"]["winners_circle"]
    assert circle["benchmarks"]["mean_rating"] == ["A", "B"]
    # The winners reach themselves; C has no rating, so it is never within reach.
    assert scores(result, "winners_circle", "mean_rating") == {"A": 1, "B": 1, "C": 0}
    # RER: A has 0 errors, B 1 in 4; C has none judged: 0.
    assert scores(result, "winners_circle", "response_error_rate")["C"] == 0


def test_confidence_bands_use_each_metrics_own_top_two(result):
    bands = result["rankings"]["confidence_bands"]
    assert bands["benchmarks"]["topic_vocabulary"] == ["C", "B"]
    assert scores(result, "confidence_bands", "topic_vocabulary") == {"A": 0, "B": 1, "C": 1}


def test_without_ratings_there_is_no_winners_circle():
    unrated = [talk(f"x{i}", s, ["music"] * 2, [False]) for i, s in enumerate("XYZ")]
    result = dialogue_metrics_report(unrated, scope=SCOPE)
    assert result["rankings"]["winners_circle"] is None and result["winners"] == []
    assert any("winners' circle" in w for w in result["warnings"])


def test_weights_multiply_the_stack_scores():
    result = dialogue_metrics_report(
        CONVERSATIONS, scope=SCOPE, weights={"mean_rating": 0, "topic_vocabulary": 10}
    )
    top = result["rankings"]["stack"]["rows"][0]
    assert top["system"] == "C"  # 10 x 3 points for the largest topic vocabulary


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"weights": {"charm": 1}}, "Unknown metric in weights: charm"),
        ({"topics": "llm"}, "topics must be one of"),
        ({"winners": ["nobody"]}, "winners must be known systems"),
    ],
)
def test_bad_arguments_are_refused(kwargs, error):
    with pytest.raises(ValueError, match=error):
        dialogue_metrics_report(CONVERSATIONS, scope=SCOPE, **kwargs)


def test_no_conversation_is_nothing_to_analyse():
    with pytest.raises(NothingToAnalyse):
        dialogue_metrics_report([], scope=SCOPE)


def test_the_bot_turns_text_is_measured_per_system_without_a_model():
    # Hand-worked: bot "a" says "hi there" then "hi there" (4 tokens, 2 types, one repeated
    # turn, distinct-2 = 2 bigrams "hi there" twice -> 1 distinct / 4 tokens = 0.25);
    # bot "b" says "one two three" once (3 tokens, all distinct). User turns never count.
    talks = [
        Conversation(
            "c-a",
            "a",
            (
                Turn("user", "hello hello hello"),
                Turn("bot", "Hi  there"),
                Turn("user", "again"),
                Turn("bot", "hi there"),
            ),
        ),
        Conversation("c-b", "b", (Turn("user", "x"), Turn("bot", "one two three"))),
    ]
    text = dialogue_metrics_report(talks, scope={"kind": "domain", "name": "d"})["text"]
    a, b = text
    assert (a["system"], a["n_conversations"]) == ("a", 1)
    assert a["mean_turn_length"] == 2 and a["type_token_ratio"] == 0.5
    assert a["distinct_1"] == 0.5 and a["distinct_2"] == 0.25 and a["repeated_turns"] == 1
    assert a["self_repetition"] is None  # no turn has a trigram
    assert b["mean_turn_length"] == 3 and b["distinct_1"] == 1 and b["repeated_turns"] == 0


# The paper's Tables 3 and 4 on the study's own ratings: six rated systems.
RATED = [
    talk(f"{name}{k}", name, topics, errors, rating)
    for name, topics, errors, ratings in [
        ("P", ["music"] * 6, [False, False, False], (5, 5)),
        ("Q", ["music"] * 4 + ["sports"] * 2, [False, False, True], (4, 5)),
        ("R", ["sports", "sports", "food", "food"], [True, False], (4, 3)),
        ("S", ["food", "pets", "pets", "travel"], [True, False], (3, 2)),
        ("T", ["pets", "food", "travel", "music"], [True, True], (2, 2)),
        ("U", ["travel", "food"], [True], (1, 2)),
    ]
    for k, rating in enumerate(ratings)
]


@pytest.fixture(scope="module")
def rated():
    return dialogue_metrics_report(RATED, scope=SCOPE)


def reference(x, y) -> dict:
    pearson, spearman = stats.pearsonr(x, y), stats.spearmanr(x, y)
    return {
        "pearson": pytest.approx(pearson.statistic, abs=1e-12),
        "pearson_p": pytest.approx(pearson.pvalue, abs=1e-12),
        "spearman": pytest.approx(spearman.statistic, abs=1e-12),
        "spearman_p": pytest.approx(spearman.pvalue, abs=1e-12),
        "n": len(x),
    }


def test_each_metric_is_correlated_with_the_mean_rating_over_systems_as_table_3(rated):
    means = [row["mean_rating"]["value"] for row in rated["systems"]]
    by_metric = {row.pop("metric"): row for row in rated["validity"]["systems"]}
    for name in ("response_error_rate", "median_turns", "mean_depth", "topic_vocabulary"):
        values = [row[name]["value"] for row in rated["systems"]]
        assert by_metric[name] == reference(values, means)
    assert by_metric["response_error_rate"]["pearson"] < -0.8  # more errors, worse ratings


def test_each_conversation_metric_is_correlated_with_its_rating(rated):
    rows = rated["per_conversation"]
    by_metric = {row.pop("metric"): row for row in rated["validity"]["conversations"]}
    ratings = [row["rating"] for row in rows]
    for field in ("n_turns", "response_error_rate", "depth"):
        assert by_metric[field] == reference([row[field] for row in rows], ratings)


def test_each_unified_total_is_correlated_with_the_mean_rating_as_table_4(rated):
    means = {row["system"]: row["mean_rating"]["value"] for row in rated["systems"]}
    for entry in rated["validity"]["unified"]:
        rows = rated["rankings"][entry.pop("ranking")]["rows"]
        totals = [row["total"] for row in rows]
        assert entry == reference(totals, [means[row["system"]] for row in rows])
    assert len(rated["validity"]["unified"]) == 3


def test_without_ratings_there_is_no_validity_section():
    unrated = [talk("c1", "C", ["food"] * 2, [None]), talk("d1", "D", ["pets"] * 2, [None])]
    report = dialogue_metrics_report(unrated, scope=SCOPE)
    assert report["validity"] == {"systems": [], "conversations": [], "unified": []}


def test_every_metric_says_its_method_and_how_the_paper_differs(result):
    metrics = {row["name"]: row for row in result["metrics"]}
    assert all(row["method"] and row["paper"] for row in metrics.values())
    assert "keywords" in metrics["topic_vocabulary"]["paper"]
    assert "26-domain" in metrics["r_cov"]["paper"] and "ambiguous" in metrics["r_cov"]["paper"]
