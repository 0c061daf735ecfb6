"""Conversation text metrics against hand-counted examples."""

import pytest

from evalstats.conversation_text import conversation_text_metrics

# bot: "i like cats a lot" / "i like cats a lot" (again) / "dogs are fine too i like cats"
CONVERSATION = [
    ("user", "Do you have pets?"),
    ("bot", "I like cats a lot"),
    ("user", "Why?"),
    ("bot", "I  like CATS a lot"),
    ("user", "And dogs?"),
    ("bot", "Dogs are fine too I like cats"),
]


def test_the_bot_turns_by_hand():
    m = conversation_text_metrics(CONVERSATION, speaker="bot")
    # 5 + 5 + 7 tokens over 3 turns
    assert (m.n_turns, m.n_tokens, m.mean_turn_length) == (3, 17, pytest.approx(17 / 3))
    # types: i like cats a lot dogs are fine too = 9
    assert m.type_token_ratio == pytest.approx(9 / 17)
    assert m.distinct_1 == pytest.approx(9 / 17)
    # bigrams: (i like)(like cats)(cats a)(a lot) + (dogs are)(are fine)(fine too)(too i) = 8
    assert m.distinct_2 == pytest.approx(8 / 17)
    # turn 2 repeats turn 1 (case and spacing ignored)
    assert m.repeated_turns == 1
    # later trigrams: turn 2 has 3 (all seen), turn 3 has 5 of which "i like cats" seen
    assert m.self_repetition == pytest.approx(4 / 8)


def test_the_whole_conversation_measures_repetition_within_each_speaker():
    m = conversation_text_metrics(CONVERSATION)
    assert (m.n_turns, m.n_tokens) == (6, 17 + 4 + 1 + 2)
    assert m.repeated_turns == 1
    # the user's later turns have no trigram: only the bot's count
    assert m.self_repetition == pytest.approx(4 / 8)


def test_a_speaker_repeating_another_is_not_self_repetition():
    turns = [("a", "the same words here"), ("b", "the same words here")]
    m = conversation_text_metrics(turns)
    assert (m.repeated_turns, m.self_repetition) == (0, None)


def test_an_empty_conversation_has_zeros_and_no_repetition_rate():
    m = conversation_text_metrics([])
    assert m.as_dict() == {
        "n_turns": 0,
        "n_tokens": 0,
        "mean_turn_length": 0.0,
        "type_token_ratio": 0.0,
        "distinct_1": 0.0,
        "distinct_2": 0.0,
        "repeated_turns": 0,
        "self_repetition": None,
    }


def test_empty_turns_are_not_repetitions():
    m = conversation_text_metrics([("bot", ""), ("bot", "  "), ("bot", "hi")])
    assert (m.n_turns, m.n_tokens, m.repeated_turns) == (3, 1, 0)
