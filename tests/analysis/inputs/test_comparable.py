import pytest

from analysis.inputs.comparable import COMPARABLE_KINDS, LEVELS, compare_payload


def test_ab_choice_scores_the_chosen_system():
    content = {"meta": {"system_a": "mine", "system_b": "base", "prompt": 3}}
    labels, scores = compare_payload("ab", 7, {"choice": "b", "left": "a"}, content)
    assert labels == [("choice", "7", "b")]
    assert scores == [("choice", "mine", "7", 0.0), ("choice", "base", "7", 1.0)]


def test_ab_tie_gives_half_to_each():
    content = {"meta": {"system_a": "mine", "system_b": "base"}}
    _, scores = compare_payload("ab", 7, {"choice": "tie", "left": "b"}, content)
    assert [s[3] for s in scores] == [0.5, 0.5]


def test_likert_dialogue_level_rates_each_dimension_once():
    content = {"meta": {"conversation": "c1", "system": "bot"}, "bot_turns": [1, 3]}
    payload = {"ratings": {"quality": 4, "consistent": 2}, "dimension_order": ["quality"]}
    labels, scores = compare_payload("likert", 5, payload, content)
    assert labels == [("consistent", "5", 2), ("quality", "5", 4)]
    assert scores == [("consistent", "bot", "c1", 2.0), ("quality", "bot", "c1", 4.0)]


def test_likert_turn_level_labels_each_bot_turn_and_scores_their_mean():
    content = {"meta": {"conversation": "c1", "system": "bot"}, "bot_turns": [1, 3]}
    labels, scores = compare_payload("likert", 5, {"ratings": {"quality": [2, 5]}}, content)
    assert labels == [("quality", "5:1", 2), ("quality", "5:3", 5)]
    assert scores == [("quality", "bot", "c1", 3.5)]


def test_abc_eval_labels_each_bot_turn_and_scores_the_rate():
    content = {"meta": {"conversation": "c2", "system": "bot"}, "bot_turns": [1, 3, 5, 7]}
    payload = {"labels": {"ignore": [1, 0, 0, 1]}}
    labels, scores = compare_payload("abc_eval", 9, payload, content)
    assert labels == [
        ("ignore", f"9:{t}", f) for t, f in zip([1, 3, 5, 7], [1, 0, 0, 1], strict=True)
    ]
    assert scores == [("ignore", "bot", "c2", 0.5)]


def test_spot_the_bot_scores_not_spotted_and_preferences_for_systems_only():
    content = {"meta": {"conversation": "c3", "speakers": ["target", "human"], "exchanges": 2}}
    payload = {"labels": ["unsure", "human"], "better": {"fluency": 1, "specificity": None}}
    labels, scores = compare_payload("spot_the_bot", 4, payload, content)
    assert labels == [
        ("label", "4:0", "unsure"),
        ("label", "4:1", "human"),
        ("fluency", "4", "1"),
        ("specificity", "4", "none"),
    ]
    # "unsure" is not spotted (Spot The Bot's survival); the person gets no score.
    assert scores == [
        ("label", "target", "c3", 1.0),
        ("fluency", "target", "c3", -1.0),
        ("specificity", "target", "c3", 0.0),
    ]


def test_spot_the_bot_spotted_speaker_scores_zero():
    content = {"meta": {"conversation": "c3", "speakers": ["t", "p"], "exchanges": 2}}
    payload = {"labels": ["bot", "human"], "better": {"fluency": 0}}
    _, scores = compare_payload("spot_the_bot", 4, payload, content)
    assert scores == [
        ("label", "t", "c3", 0.0),
        ("fluency", "t", "c3", 1.0),
        ("label", "p", "c3", 1.0),
        ("fluency", "p", "c3", -1.0),
    ]


def test_comparative_scores_each_conversation_for_its_bots():
    content = {"meta": {"a": "x1", "b": "y1", "systems_a": ["x"], "systems_b": ["y", "z"]}}
    payload = {"choices": {"quality": "a", "consistent": "neither"}, "left": "b"}
    labels, scores = compare_payload("comparative", 2, payload, content)
    assert labels == [("consistent", "2", "neither"), ("quality", "2", "a")]
    assert scores == [
        ("consistent", "x", "x1", 0.5),
        ("consistent", "y+z", "y1", 0.5),
        ("quality", "x", "x1", 1.0),
        ("quality", "y+z", "y1", 0.0),
    ]


def test_only_likert_labels_are_ordinal():
    assert set(COMPARABLE_KINDS) == {"ab", "likert", "abc_eval", "spot_the_bot", "comparative"}
    assert [k for k, level in LEVELS.items() if level == "ordinal"] == ["likert"]


def test_an_unknown_kind_is_refused_with_the_kinds_that_can_be_compared():
    with pytest.raises(ValueError, match="kinds: ab, likert"):
        compare_payload("poll", 1, {}, {"meta": {}})
