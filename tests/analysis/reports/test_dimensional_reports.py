"""The dimensional reports as pure functions: plain arrays in, the documented sections out."""

import pytest

from analysis.reports import (
    BehaviourData,
    ComparativeData,
    LikertData,
    NothingToAnalyse,
    StudyData,
    build_report,
)

FAST = {"alpha_resamples": 50}


def behaviours(rows) -> BehaviourData:
    """rows: (conversation, system, turn, annotation, label, present)."""
    columns = list(zip(*rows, strict=True)) if rows else [()] * 6
    return BehaviourData("s", *map(tuple, columns))


def likert(rows) -> LikertData:
    """rows: (conversation, system, annotation, dimension, score, turn)."""
    return LikertData("s", *map(tuple, zip(*rows, strict=True)))


def comparative(rows) -> ComparativeData:
    """rows: (item, annotation, system_a, system_b, dimension, choice)."""
    item, annotation, a, b, dimension, choice = map(tuple, zip(*rows, strict=True))
    return ComparativeData("s", item, annotation, item, item, a, b, dimension, choice)


def test_an_empty_campaign_has_nothing_to_analyse():
    with pytest.raises(NothingToAnalyse):
        build_report(behaviours([]), FAST)


def test_behaviour_labels_are_grouped_as_in_figures_4_and_5():
    rows = [
        (c, "x" if c < 2 else "y", t, c, label, (c + t) % 2 == 0)
        for c in range(4)
        for t in range(3)
        for label in ("ignore", "fact usage")
    ]
    result = build_report(behaviours(rows), FAST)
    groups = {row["label"]: row["group"] for row in result["behaviours"]["labels"]}
    assert groups == {"fact usage": "desirable", "ignore": "undesirable"}
    [x_ignore] = [
        r for r in result["behaviours"]["rates"] if (r["system"], r["label"]) == ("x", "ignore")
    ]
    # x: conversations 0 and 1, turns 0-2: present where c + t is even -> 3 of 6.
    assert (x_ignore["n_turns"], x_ignore["n_present"]) == (6, 3)
    assert result["behaviours"]["agreement"] == []  # no conversation annotated twice


def test_turn_ratings_are_averaged_per_conversation_by_default():
    rows = [
        (c, sys, 1, "relevance", score, turn)
        for c, sys in ((1, "x"), (2, "x"), (3, "y"), (4, "y"))
        for turn, score in ((0, 2), (1, 4), (2, 3))
    ]
    result = build_report(likert(rows), FAST)["likert"]
    [x] = [m for m in result["means"] if m["system"] == "x"]
    assert (x["level"], x["n"], x["mean"]) == ("turn", 2, pytest.approx(3.0))
    per_turn = build_report(likert(rows), {**FAST, "likert_turn_unit": "turn"})["likert"]
    assert [m["n"] for m in per_turn["means"] if m["system"] == "x"] == [6]


def test_comparative_verdicts_between_one_systems_conversations_are_left_out():
    rows = [
        (1, 10, "x", "y", "quality", "a"),
        (1, 11, "x", "y", "quality", "a"),
        (2, 12, "x", "y", "quality", "b"),
        (2, 13, "x", "y", "quality", "b"),
        (3, 14, "x", "x", "quality", "a"),
    ]
    result = build_report(comparative(rows), FAST)
    [row] = result["comparative"]["results"]
    # Items 1 and 2 were judged twice: two pairs, four judgments.
    assert (row["n"], row["judgments"]) == (2, 4)
    assert (row["wins"]["count"], row["losses"]["count"]) == (1, 1)
    assert any("same system" in warning for warning in result["warnings"])
    [alpha] = result["comparative"]["agreement"]
    assert alpha["alpha"] == pytest.approx(1.0) and alpha["units"] == 2


def test_table_5_counts_corrected_p_values_on_request():
    rows = [
        (c, sys, t, c, "ignore", t < present)
        for c, (sys, present) in enumerate([("x", 1), ("x", 1), ("y", 3), ("y", 3), ("z", 2)] * 4)
        for t in range(4)
    ]
    raw = build_report(behaviours(rows), FAST)["behaviours"]["sensitivity"]
    corrected = build_report(behaviours(rows), {**FAST, "sensitivity_adjusted": True})
    adjusted = corrected["behaviours"]["sensitivity"]
    assert all(not row["adjusted"] for row in raw) and all(row["adjusted"] for row in adjusted)
    significant = {row["alpha"]: row["significant"] for row in raw}
    assert [significant[a] for a in (0.01, 0.05, 0.1)] == sorted(significant.values())
    assert sum(r["significant"] for r in adjusted) <= sum(r["significant"] for r in raw)


def test_a_study_without_likert_has_no_likert_validity():
    def relevance(item, quality):
        # Mostly the same verdict as quality, but not always (no perfect separation).
        if item == 5:
            return "neither"
        flipped = {"a": "b", "b": "a"}[quality]
        return flipped if item in (3, 8) else quality

    rows = []
    for item in range(12):
        quality = "a" if item % 2 else "b"
        for k in range(2):
            rows.append((item, item * 10 + k, "x", "y", "quality", quality))
            rows.append((item, item * 10 + k, "x", "y", "relevance", relevance(item, quality)))
    data = StudyData("s", (("c", "comparative", 24),), None, None, comparative(rows))
    result = build_report(data, FAST)
    assert result["behaviours"] is None and result["likert"] is None
    [row] = result["validity"]["predictive"]
    assert (row["method"], row["model"], row["metric"], row["n"]) == (
        "comparative",
        "symmetric-logistic",
        "relevance",
        24,
    )
    assert 0 < row["fit"] < 1
    # The same verdicts with the odd items shown the other way round: the same fit.
    swap = {"a": "b", "b": "a", "neither": "neither"}
    turned = [
        (item, annotation, b, a, dimension, swap[choice]) if item % 2 else row
        for row in rows
        for item, annotation, a, b, dimension, choice in [row]
    ]
    data = StudyData("s", (("c", "comparative", 24),), None, None, comparative(turned))
    [again] = build_report(data, FAST)["validity"]["predictive"]
    assert again["fit"] == pytest.approx(row["fit"], rel=1e-10)


def _three_methods():
    """Bots x (4 conversations) and y (6), 3 bot turns each; Likert per dialogue and per turn;
    pairs of one x and one y conversation judged on quality (5 pairs)."""
    conversations = [(c, "x") for c in range(4)] + [(c, "y") for c in range(4, 10)]
    flags = [
        (c, sys, t, c, "ignore", (c + t) % 3 == 0 if sys == "x" else t > 0)
        for c, sys in conversations
        for t in range(3)
    ]
    ratings = [
        (c, sys, c, "quality", 2 + c % 2 if sys == "x" else 4, None) for c, sys in conversations
    ]
    ratings += [
        (c, sys, c, "relevance", 1 + (c + t) % 5, t) for c, sys in conversations for t in range(3)
    ]
    verdicts = [(item, 100 + item, "x", "y", "quality", "b" if item else "a") for item in range(5)]
    return StudyData(
        "s",
        (("b", "abc_eval", 10), ("l", "likert", 10), ("c", "comparative", 5)),
        behaviours(flags),
        likert(ratings),
        comparative(verdicts),
    )


def test_table_5_downsamples_every_method_to_the_fewest_units_of_any_group():
    result = build_report(_three_methods(), {**FAST, "sensitivity_draws": 40})
    # x has 4 conversations, the x-y bot pair 5 compared pairs: 4 per group for every method.
    for name in ("behaviours", "likert", "comparative"):
        downsampled = result[name]["sensitivity_downsampled"]
        assert (downsampled["requested"], downsampled["per_group"]) == (32, 4), name
        assert set(downsampled["rows"][0]) == {
            "metric",
            "alpha",
            "pairs",
            "mean",
            "low",
            "high",
            "min",
            "max",
            "adjusted",
        }
    assert result["comparative"]["sensitivity_downsampled"]["group"] == "bot pair"
    assert result["behaviours"]["sensitivity_downsampled"]["group"] == "bot"
    # y's 6 conversations are drawn 4 at a time: 40 draws; x's 4 always whole.
    assert result["behaviours"]["sensitivity_downsampled"]["draws"] == 40
    metrics = {row["metric"] for row in result["likert"]["sensitivity_downsampled"]["rows"]}
    assert metrics == {"quality", "relevance (turn)"}


def test_table_5_as_the_data_comes_when_nothing_is_larger_than_the_draw():
    # The comparative section alone: its one bot pair has 5 compared pairs, all in a draw.
    result = build_report(
        StudyData("s", (("c", "comparative", 5),), None, None, _three_methods().comparative),
        {**FAST, "sensitivity_conversations": 5},
    )
    section = result["comparative"]
    assert section["sensitivity_downsampled"]["draws"] == 1
    whole = {(r["metric"], r["alpha"]): r["significant"] for r in section["sensitivity"]}
    assert {
        (r["metric"], r["alpha"]): (r["mean"], r["low"], r["high"])
        for r in section["sensitivity_downsampled"]["rows"]
    } == {key: (count, count, count) for key, count in whole.items()}


def test_table_5_downsampling_can_be_turned_off():
    result = build_report(_three_methods(), {**FAST, "sensitivity_downsample": False})
    assert result["behaviours"]["sensitivity_downsampled"] is None
    assert result["likert"]["sensitivity"]  # the counts as the data comes stay
