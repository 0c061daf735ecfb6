"""Every task kind's config is a declared schema: typos, wrong types and out-of-range values
are refused with a message naming the key; what is left out takes the documented default."""

import pytest

from annotation.kinds import KIND_KEYS, get_kind
from annotation.kinds.base import ConfigInvalid
from evalhub.declared import describe

# (kind, config, words the message must contain)
UNKNOWN_KEY = [
    ("ab", {"left_first": True}, ["'left_first' is an unknown config key", "none, leave it {}"]),
    (
        "likert",
        {"levle": "turn"},
        ["'levle' is an unknown Likert config key", "allowed: level, dimensions"],
    ),
    (
        "abc_eval",
        {"behaviour_task": "empathy", "behavior_task": "empathy"},
        ["'behavior_task' is an unknown ABC-Eval config key", "allowed: behaviour_task"],
    ),
    (
        "spot_the_bot",
        {"segment_length": [2]},
        ["'segment_length' is an unknown Spot The Bot config key", "segment_lengths"],
    ),
    (
        "comparative",
        {"max_pair": 10},
        ["'max_pair' is an unknown comparative config key", "max_pairs"],
    ),
    (
        "chat",
        {"max_turn": 10},
        ["'max_turn' is an unknown chat config key", "max_turns"],
    ),
    ("arena", {"arena": "x"}, ["'arena' is an unknown config key", "none, leave it {}"]),
    (
        "ranking",
        {"allow_tie": True},
        ["'allow_tie' is an unknown ranking config key", "allow_ties"],
    ),
    (
        "conversation_ranking",
        {"group": "round"},
        ["'group' is an unknown conversation ranking config key", "group_by"],
    ),
]
WRONG_TYPE = [
    ("likert", {"level": 2}, ["level must be 'dialogue' or 'turn', not 2"]),
    ("abc_eval", {"behaviour_task": 3}, ["Choose a behaviour_task"]),
    ("spot_the_bot", {"segment_lengths": "2, 3"}, ["segment_lengths must be a list"]),
    ("spot_the_bot", {"segment_lengths": [2.0]}, ["segment_lengths must be a list"]),
    ("comparative", {"max_pairs": "200"}, ["max_pairs must be a whole number, got '200'"]),
    ("comparative", {"human_name": 5}, ["human_name must be text"]),
    ("chat", {"min_turns": "3"}, ["min_turns must be a whole number"]),
    ("ranking", {"allow_ties": "maybe"}, ["allow_ties"]),
]
OUT_OF_RANGE = [
    ("chat", {"max_turns": 51}, ["max_turns must be from 1 to 50, got 51"]),
    ("likert", {"dimensions": ["quality"] * 9}, ["dimensions must be a non-empty list"]),
    ("spot_the_bot", {"segment_lengths": [51]}, ["at most 50"]),
    ("spot_the_bot", {"segment_lengths": list(range(1, 12))}, ["at most 10 of them"]),
    ("spot_the_bot", {"features": [f"f{n}" for n in range(13)]}, ["at most 12"]),
    ("comparative", {"max_pairs": 0}, ["max_pairs must be from 1 to 10000, got 0"]),
    ("comparative", {"max_pairs": 10_001}, ["max_pairs must be from 1 to 10000, got 10001"]),
    (
        "comparative",
        {"gold_pairs": [{"a": "x", "b": "y", "choices": {"quality": "a"}, "why": "?"}]},
        ["gold_pairs[1]: unknown key 'why'"],
    ),
]


@pytest.mark.parametrize(("key", "config", "words"), UNKNOWN_KEY + WRONG_TYPE + OUT_OF_RANGE)
def test_a_bad_config_is_refused_with_a_message_naming_the_key(key, config, words):
    with pytest.raises(ConfigInvalid) as raised:
        get_kind(key).clean_config(config)
    for word in words:
        assert word in str(raised.value)


def test_every_kind_refuses_an_unknown_key():
    assert {key for key, _, _ in UNKNOWN_KEY} == set(KIND_KEYS)


def test_the_likert_typo_no_longer_falls_back_to_dialogue_level():
    with pytest.raises(ConfigInvalid, match="'levle' is an unknown Likert config key"):
        get_kind("likert").clean_config({"levle": "turn"})
    assert get_kind("likert").clean_config({"level": "turn"})["level"] == "turn"


@pytest.mark.parametrize(
    ("key", "given", "expected"),
    [
        ("ab", {}, {}),
        ("likert", {}, {"level": "dialogue"}),
        ("abc_eval", {"behaviour_task": "empathy"}, {"behaviour_task": "empathy"}),
        (
            "spot_the_bot",
            {"segment_lengths": [4]},
            {"segment_lengths": [4], "speaker_names": ["Speaker 1", "Speaker 2"]},
        ),
        ("comparative", {}, {"max_pairs": 200, "pairs": None, "human_name": "Human"}),
    ],
)
def test_defaults_are_filled_in(key, given, expected):
    config = get_kind(key).clean_config(given)
    assert set(config) == set(get_kind(key).config_schema.model_fields)
    for name, value in expected.items():
        assert config[name] == value


def test_a_clean_config_is_accepted_again_unchanged():
    # Stored configs are cleaned on every page; cleaning must be idempotent.
    for key in KIND_KEYS:
        kind = get_kind(key)
        given = {"behaviour_task": "knowledge"} if key == "abc_eval" else {}
        once = kind.clean_config(given)
        assert kind.clean_config(once) == once


def test_every_key_is_documented_with_its_default():
    for key in KIND_KEYS:
        for row in describe(get_kind(key).config_schema):
            assert row["description"], (key, row["name"])
            assert row["required"] or row["default"] != "", (key, row["name"])
