"""The categories of a battle (arenas/categories.py): Chatbot Arena's built-in ones and the
owner's rules, and the patterns an owner may not use."""

import re

import pytest

from arenas.categories import (
    BattleFacts,
    Rule,
    categories_of,
    language_category,
    looks_like_code,
    pattern_problem,
)


def facts(**fields):
    values = {"language": "", "turns": 1, "user_tokens": 10, "code": False, "prompts": "hi"}
    return BattleFacts(**{**values, **fields})


@pytest.mark.parametrize(
    ("stored", "category"),
    [("en", "english"), ("English", "english"), ("zh", "chinese"), ("Chinese", "chinese"),
     ("pt", "portuguese"), ("", "")],
)  # fmt: skip
def test_a_language_is_its_english_name_lowercased(stored, category):
    assert language_category(stored) == category


def test_the_built_in_categories_as_chatbot_arena_names_them():
    assert categories_of(facts(language="en")) == ["english"]
    assert categories_of(facts(turns=2)) == ["multiturn"]
    assert categories_of(facts(user_tokens=499)) == []
    assert categories_of(facts(user_tokens=500)) == ["long_user"]
    assert categories_of(facts(code=True)) == ["coding"]


@pytest.mark.parametrize(
    "text",
    [
        "Fix this:\n```\nprint(1)\n```",
        "How do I reverse a list in Python?",
        "from collections import Counter",
        "#include <stdio.h>",
        "pip install requests fails",
    ],
)
def test_code_is_recognised_in_prompts_and_answers(text):
    assert looks_like_code(text)


@pytest.mark.parametrize("text", ["Write me a poem about spring.", "What is 2 + 2?"])
def test_prose_is_not_code(text):
    assert not looks_like_code(text)


def test_an_owners_rule_needs_every_condition():
    rule = Rule(
        name="german-math", language="german", max_turns=1, pattern=re.compile(r"(?i)integral")
    )
    assert categories_of(facts(language="de", prompts="Ein Integral bitte"), [rule]) == [
        "german",
        "german-math",
    ]
    assert "german-math" not in categories_of(facts(language="en", prompts="integral"), [rule])
    assert "german-math" not in categories_of(
        facts(language="de", turns=2, prompts="integral"), [rule]
    )


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [("(a+)+$", "Nested repetition"), (r"(x)\1", "backreferences"), ("[", "Not a regular"),
     ("x" * 201, "at most 200")],
)  # fmt: skip
def test_patterns_that_could_hang_the_task_or_do_not_compile_are_refused(pattern, problem):
    assert problem in pattern_problem(pattern, 200)


def test_a_plain_pattern_is_accepted():
    assert pattern_problem(r"(?i)\b(integral|derivative)s?\b", 200) is None
