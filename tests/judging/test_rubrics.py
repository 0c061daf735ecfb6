"""Each kind's rubric: the prompt shows what the worker's page shows (never the hidden
meta), and a reply becomes exactly the payload the kind makes of the same answer given
by a worker, or is refused with the kind's own message."""

import pytest
from django.http import QueryDict

from judging.rubrics import RUBRIC_KINDS, judgeable_kinds, rubric_module
from judging.rubrics.common import (
    AnswerInvalid,
    check_instructions,
    extract_json,
    parse_reply,
    prompt,
    retry_messages,
)
from tests.judging import builders

pytestmark = pytest.mark.django_db


def first_item(campaign):
    return campaign.items.filter(role="task").order_by("position").first()


def setup(campaign):
    kind = campaign.kind
    config = kind.clean_config(campaign.task_config)
    item = first_item(campaign)
    return kind, config, item, kind.item_context(item, config)


def judged(campaign, answer) -> dict:
    kind, config, item, task = setup(campaign)
    text = answer if isinstance(answer, str) else __import__("json").dumps(answer)
    return parse_reply(kind, item, config, task, text)


def by_worker(campaign, form: dict) -> dict:
    kind, config, item, _ = setup(campaign)
    data = QueryDict(mutable=True)
    data.update(form)
    return kind.parse_payload(item, config, data)


def user_message(campaign) -> str:
    kind, config, _, task = setup(campaign)
    rubric = builders.default_rubric(kind.key)
    return prompt(kind.key, rubric.instructions, task, config)[1]["content"]


CASES = {
    "ab": (
        lambda: builders.ab(1),
        {"better": "2"},
        {"choice": "right"},
    ),
    "likert-dialogue": (
        lambda: builders.likert(1),
        {"ratings": {"relevance": 4, "quality": 2}},
        {"rating_relevance": "4", "rating_quality": "2"},
    ),
    "likert-turn": (
        lambda: builders.likert(1, level="turn"),
        {"ratings": {"relevance": [4, 5], "quality": [2, 3]}},
        {
            "rating_relevance_1": "4",
            "rating_relevance_3": "5",
            "rating_quality_1": "2",
            "rating_quality_3": "3",
        },
    ),
    "abc_eval": (
        lambda: builders.abc_eval(1),
        {"turns": {"1": ["empathetic"], "2": ["lack of empathy", "empathetic"]}},
        {
            "reviewed": "1",
            "flag_empathetic_1": "1",
            "flag_empathetic_3": "1",
            "flag_lack_of_empathy_3": "1",
        },
    ),
    "spot_the_bot": (
        lambda: builders.spot_the_bot(1),
        {
            "speakers": {"Speaker 1": "bot", "Speaker 2": "human"},
            "better": {"sensibleness": "Speaker 2", "fluency": "none"},
        },
        {
            "label_0": "bot",
            "label_1": "human",
            "better_sensibleness": "1",
            "better_fluency": "none",
        },
    ),
    "comparative": (
        lambda: builders.comparative(),
        {"choices": {"relevance": "1", "quality": "neither"}},
        {"choice_relevance": "left", "choice_quality": "neither"},
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_a_good_answer_is_the_payload_a_worker_would_give(case):
    make, answer, form = CASES[case]
    campaign = make()
    assert judged(campaign, answer) == by_worker(campaign, form)


@pytest.mark.parametrize("case", CASES)
def test_the_prompt_shows_the_item_and_asks_for_json_without_hidden_meta(case):
    make, answer, _ = CASES[case]
    campaign = make()
    text = user_message(campaign)
    assert "Answer with JSON only" in text and "$" not in text
    item = first_item(campaign)
    hidden = list(system_slugs(item.content["meta"]))
    assert hidden and not any(name in text for name in hidden)


def system_slugs(value):
    """The systems named anywhere in an item's hidden meta."""
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        for part in value:
            yield from system_slugs(part)
    elif isinstance(value, str) and value.startswith(("sys-", "system-")):
        yield value


def test_ab_the_prompt_shows_the_responses_in_page_order():
    campaign = builders.ab(1)
    text = user_message(campaign)
    item = first_item(campaign)
    assert text.index(item.content["left"]) < text.index(item.content["right"])
    assert "A: context 0 ?" in text


def test_likert_turn_prompt_numbers_the_bot_turns_and_defines_the_dimensions():
    text = user_message(builders.likert(1, level="turn"))
    assert "Bot (turn 1): bot turn 1" in text and "Bot (turn 2): bot turn 3" in text
    assert "- relevance (Relevance): The responses are on-topic" in text
    assert "each of the bot's 2 numbered turns" in text


def test_abc_eval_prompt_lists_the_task_labels_with_examples():
    text = user_message(builders.abc_eval(1))
    assert '"empathetic"' in text and '"lack of empathy"' in text and "Applies:" in text
    assert '"fact usage"' not in text


def test_spot_the_bot_prompt_uses_the_neutral_names_and_features():
    text = user_message(builders.spot_the_bot(1))
    assert "Speaker 1: segment turn 0" in text and "- fluency:" in text


@pytest.mark.parametrize(
    ("case", "answer", "message"),
    [
        ("ab", {"better": "3"}, "'3' is not a possible answer for which response is better"),
        ("ab", {"winner": "1"}, 'needs "better"'),
        (
            "likert-dialogue",
            {"ratings": {"relevance": 4}},
            "Choose a rating from 1 to 5 for quality",
        ),
        ("likert-dialogue", {"ratings": {"relevance": 6, "quality": 1}}, "'6' is not a rating"),
        ("likert-dialogue", {"ratings": {"relevance": 4.5, "quality": 1}}, "'4.5' is not a rating"),
        (
            "likert-dialogue",
            {"ratings": {"relevance": True, "quality": 1}},
            "'true' is not a rating",
        ),
        (
            "likert-dialogue",
            {"ratings": {"relevance": 4, "quality": 1, "charm": 3}},
            "ratings this item does not have: rating_charm",
        ),
        ("likert-turn", {"ratings": {"relevance": [4], "quality": [2, 3]}}, "needs a list of 2"),
        ("abc_eval", {"turns": {"1": []}}, "missing turn 2"),
        ("abc_eval", {"turns": {"1": [], "2": [], "3": []}}, "There is no bot turn 3"),
        ("abc_eval", {"turns": {"1": ["fact usage"], "2": []}}, "unknown label 'fact_usage'"),
        ("abc_eval", {"turns": {"1": "empathetic", "2": []}}, "needs a list of label names"),
        (
            "spot_the_bot",
            {"speakers": {"Speaker 1": "bot"}, "better": {}},
            "Choose an answer for Speaker 2",
        ),
        ("spot_the_bot", {"speakers": {"Alice": "bot"}}, "Unknown speaker Alice"),
        ("comparative", {"choices": {"relevance": "3", "quality": "1"}}, "'3' is not a possible"),
        ("comparative", {"choices": ["1", "2"]}, '"choices" must be a JSON object'),
        ("comparative", "no json here at all", "holds no JSON object"),
    ],
)
def test_a_wrong_answer_is_refused_with_the_kinds_message(case, answer, message):
    campaign = CASES[case][0]()
    with pytest.raises(AnswerInvalid, match=message):
        judged(campaign, answer)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"better": "1"}', {"better": "1"}),
        ('```json\n{"better": "tie"}\n```', {"better": "tie"}),
        ('Sure! Here it is: {"better": "2"} Hope it helps {', {"better": "2"}),
        ('[1, 2] then {"a": {"b": 1}}', {"a": {"b": 1}}),
    ],
)
def test_the_json_object_is_found_in_prose_and_fences(text, expected):
    assert extract_json(text) == expected


def test_a_json_object_nested_too_deeply_is_an_invalid_answer_not_a_crash():
    with pytest.raises(AnswerInvalid, match="nested too deeply"):
        extract_json('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")


def test_a_retry_sends_the_reply_and_the_problem_back():
    base = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    messages = retry_messages(base, "x" * 5000, "The reply holds no JSON object.")
    assert messages[:2] == base and len(messages[2]["content"]) == 4000
    assert messages[3]["content"].startswith("That answer could not be used: The reply holds")


def test_rubric_templates_are_checked_for_unknown_and_missing_placeholders():
    assert check_instructions("ab", rubric_module("ab").DEFAULT) == []
    problems = check_instructions("ab", "Judge $context and $response_1 $oops\n$answer_format")
    assert problems == [
        "Unknown placeholder $oops; this kind knows $answer_format, $context, $response_1, "
        "$response_2.",
        "The rubric must show the judge $response_2 (what to judge and how to answer).",
    ]


def test_every_judgeable_kind_ships_a_default_rubric_that_checks():
    assert sorted([*judgeable_kinds(), "arena"]) == sorted(RUBRIC_KINDS)
    for kind in RUBRIC_KINDS:
        assert check_instructions(kind, rubric_module(kind).DEFAULT) == []
        assert builders.default_rubric(kind).instructions == rubric_module(kind).DEFAULT


def test_a_kind_without_a_rubric_is_named():
    with pytest.raises(KeyError, match="No judge rubric for the task kind 'chat'"):
        rubric_module("chat")
