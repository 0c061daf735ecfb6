"""Reading clean battles: each field checked with its line, keys for idempotency, repeats
found in bounded memory."""

import io
import json

from hypothesis import given
from hypothesis import strategies as st

from arenas.interchange import reading
from tests.arenas.clean_battles import conversation, line, stream


def problems_of(*rows):
    return [(p.line, p.message) for p in reading.check(stream(*rows)).problems]


def test_a_full_line_is_read_with_its_metadata_and_conversations():
    metadata = {
        "sum_assistant_a_tokens": 12,
        "sum_assistant_b_tokens": 30,
        "header_count_a": {"h1": 1, "h2": 0, "h3": 0, "h4": 0, "h5": 0, "h6": 0},
        "list_count_b": {"ordered": 2, "unordered": 0},
        "bold_count_b": {"**": 1, "__": 0},
        "sum_user_tokens": 5,
    }
    row = line(
        winner="tie (bothbad)",
        conv_metadata=metadata,
        is_code=False,
        category_tag={"math": True},
        **conversation(("Hi?", "Hello.", "Hey.")),
    )
    [battle] = reading.battles(stream(row))
    assert (battle.line, battle.question_id, battle.vote) == (1, "q1", "both_bad")
    assert (battle.model_a, battle.model_b, battle.judge) == (
        "gpt-4-0613",
        "vicuna-13b",
        "arena_user_1",
    )
    assert (battle.tokens_a, battle.tokens_b) == (12, 30)
    assert battle.style_a == {"header_count": metadata["header_count_a"]}
    assert battle.style_b["list_count"] == {"ordered": 2, "unordered": 0}
    assert battle.exchanges == (("Hi?", "Hello.", "Hey."),)
    assert battle.extra == {
        "is_code": False,
        "category_tag": {"math": True},
        "conv_metadata": {"sum_user_tokens": 5},
    }
    assert (battle.turns, battle.language, battle.tstamp) == (1, "English", 1682351591.5)


def test_each_winner_maps_to_a_vote():
    rows = [line(f"q{i}", winner=w) for i, w in enumerate(reading.WINNERS)]
    votes = [b.vote for b in reading.battles(stream(*rows))]
    assert votes == ["a_better", "b_better", "tie", "both_bad"]


def test_an_unknown_winner_a_malformed_line_and_a_repeat_are_refused_with_their_lines():
    found = problems_of(
        line("q1"),
        line("q2", winner="draw"),
        '{"model_a": "x", ',
        line("q1", winner="model_b"),
    )
    assert found == [
        (2, '"winner" must be one of "model_a", "model_b", "tie", "tie (bothbad)", not "draw".'),
        (3, "not valid JSON (Expecting property name enclosed in double quotes, column 18)."),
        (4, "the same battle as line 1 (the same question_id or content)."),
    ]


def test_missing_and_wrong_fields_are_each_named():
    found = problems_of(
        {"model_a": "a", "winner": "tie"},
        line(model_b="gpt-4-0613"),
        line(turn=0, anony="yes", tstamp=-5, language=7),
        line(conv_metadata={"list_count_a": {"ordered": -1}}),
        line(**conversation(("a", "b", "c")), turn=2),
        line(conversation_a=[{"role": "user", "content": "x"}]),
        "[1, 2]",
    )
    lines = [number for number, _ in found]
    assert lines == sorted(lines)
    assert (1, '"model_b" is missing.') in found
    assert (2, '"model_a" and "model_b" must be two different models.') in found
    assert (3, '"turn" must be a whole number from 1 to 1000.') in found
    assert (3, '"anony" must be true or false.') in found
    assert (3, '"language" must be a non-empty string.') in found
    assert any(number == 3 and "tstamp" in text for number, text in found)
    assert any(number == 4 and "list_count_a" in text for number, text in found)
    assert (5, '"turn" says 2 but the conversations have 1.') in found
    assert (6, '"conversation_a" and "conversation_b" come together or not at all.') in found
    assert (7, "each line must be a JSON object {...}.") in found


def test_conversations_with_different_user_turns_are_refused():
    row = line(
        conversation_a=[{"role": "user", "content": "one"}, {"role": "assistant", "content": "x"}],
        conversation_b=[{"role": "user", "content": "two"}, {"role": "assistant", "content": "y"}],
    )
    assert problems_of(row) == [
        (1, "the two conversations must have the same user turns, at least one.")
    ]


def test_a_line_without_question_id_is_known_by_its_content():
    row = line(question_id=None)
    reordered = dict(reversed(list(row.items())))
    [first] = reading.battles(stream(row))
    [second] = reading.battles(stream(reordered))
    assert first.question_id == second.question_id
    assert first.question_id.startswith("sha256-")
    assert problems_of(row, reordered) == [
        (2, "the same battle as line 1 (the same question_id or content).")
    ]


def test_bytes_that_are_not_utf8_are_named_by_line():
    data = io.BytesIO(b'{"a": 1}\n' + b"\xff\xfe\n")
    [(number, message)] = [(p.line, p.message) for p in reading.check(data).problems if p.line == 2]
    assert number == 2 and "not UTF-8" in message


def test_an_empty_file_holds_no_battles():
    assert [p.message for p in reading.check(io.BytesIO(b"\n\n")).problems] == [
        "The file holds no battles."
    ]


def test_only_the_first_problems_are_kept_and_all_are_counted():
    rows = [line(f"q{i}", winner="nobody") for i in range(500)]
    checked = reading.check(stream(*rows))
    assert checked.problems.total == 500 and len(checked.problems.kept) == 20
    assert [p.line for p in checked.problems.kept] == list(range(1, 21))


def test_model_names_become_catalog_slugs():
    assert reading.name_slug("Llama-3.1-405B-Instruct") == "llama-3-1-405b-instruct"
    assert reading.name_slug("gpt-4-0613") == "gpt-4-0613"
    assert reading.name_slug("claude_v1 (beta)") == "claude-v1-beta"
    assert reading.name_slug("...") == ""


def test_a_winner_that_is_not_a_string_is_refused_with_its_line():
    [(number, message)] = problems_of(line(winner=["model_a"]))
    assert number == 1 and message.startswith('"winner" must be one of')


def mostly(good, *bad):
    """`good` four times in five or so, else one of `bad`."""
    return st.sampled_from([good] * 4 * len(bad) + list(bad))


COUNT = st.one_of(st.integers(0, 3), mostly(1, -1, 10**9 + 1, True, None, 1.0))
VALUE = st.one_of(st.booleans(), st.integers(-1, 2), st.text(max_size=3), st.none())


@st.composite
def clean_battle_rows(draw):
    """Lines mostly valid, each field sometimes wrong in a way the plain path must hand on."""
    row = line(
        question_id=draw(mostly("q1", " ", None, "q" * 101)),
        model_a=draw(mostly("gpt-4", " ", "", "vicuna")),
        model_b=draw(mostly("vicuna", "claude", 7)),
        winner=draw(st.sampled_from([*reading.WINNERS, *reading.WINNERS, "draw", 1])),
        turn=draw(mostly(1, None, 0, 2, True, 1.0)),
        anony=draw(mostly(True, False, 1, "yes")),
        language=draw(mostly("English", None, 3, "x" * 41)),
        judge=draw(mostly("arena_user_2", None, "", 0)),
        tstamp=draw(
            st.one_of(
                mostly(1682351591.5, None, 17, True, -1, 2 * 10**10),
                st.floats(allow_nan=True, allow_infinity=True),
            )
        ),
        is_code=draw(VALUE),
    )
    if draw(st.booleans()):
        metadata = {}
        for side in "ab":
            if draw(st.booleans()):
                metadata[f"sum_assistant_{side}_tokens"] = draw(COUNT)
            for group, keys in reading.COUNT_GROUPS.items():
                if draw(st.booleans()):
                    chosen = draw(st.lists(mostly(keys[0], *keys[1:], "h9"), unique=True))
                    metadata[f"{group}_{side}"] = {key: draw(COUNT) for key in chosen}
        metadata["sum_user_tokens"] = draw(VALUE)
        row["conv_metadata"] = draw(mostly(metadata, [], None))
    return row


@given(clean_battle_rows())
def test_the_plain_path_reads_a_line_as_the_full_checks_do(row):
    plain = reading.plain_battle(7, row)
    full, problems = reading.full_battle(7, row)
    if plain is not None:
        assert problems == [] and plain == full
        assert (json.loads(plain.extra_json) if plain.extra else None) == (plain.extra or None)
        assert [type(v) for v in vars(plain).values()] == [type(v) for v in vars(full).values()]


def test_a_typical_line_takes_the_plain_path():
    metadata = {
        "sum_assistant_a_tokens": 12,
        "header_count_a": {f"h{i}": 0 for i in range(1, 7)},
        "list_count_b": {"unordered": 2},
        "turns": 1,
    }
    battle = reading.plain_battle(1, line(conv_metadata=metadata, is_code=True))
    assert battle is not None and battle.style_b == {"list_count": {"ordered": 0, "unordered": 2}}
    assert battle.extra == {"is_code": True, "conv_metadata": {"turns": 1}}


def test_json_for_postgresql_keeps_integers_beyond_64_bits():
    assert (
        reading.to_json({"a": [1, "é"], "n": 2**70})
        == '{"a": [1, "é"], "n": 1180591620717411303424}'
    )
    assert json.loads(reading.to_json({"a": [1, "é"], "n": 2**63 - 1})) == {
        "a": [1, "é"],
        "n": 2**63 - 1,
    }
