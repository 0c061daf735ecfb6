"""Uploads are checked line by line in bounded memory, and input that no database can
store, or that breaks a parser, is a line-numbered problem, never a server error."""

import json
import tracemalloc

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from evalhub.importers.conversations import parse_conversations
from evalhub.importers.problems import (
    MAX_JSON_DEPTH,
    InvalidUpload,
    json_lines,
    parse_json_line,
    unstorable,
)
from evalhub.importers.prompts import parse_prompts
from evalhub.importers.responses import PromptRef, parse_responses
from evalhub.models import Response, Submission
from tests import factories

PROMPTS = [PromptRef(0, "1"), PromptRef(1, "2")]
LIMIT = 21 * 1024 * 1024


def refused(data: bytes, fmt="jsonl") -> InvalidUpload:
    with pytest.raises(InvalidUpload) as caught:
        parse_responses(data, fmt, f"r.{fmt}", PROMPTS, LIMIT)
    return caught.value


def lines(*rows) -> bytes:
    return "\n".join(rows).encode() + b"\n"


def test_ten_million_bad_lines_are_checked_in_bounded_memory():
    data = b"x\n" * 10_000_000  # 20 MB
    tracemalloc.start()
    try:
        error = refused(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 200 * 1024 * 1024
    # The first twenty problems are kept, every one is counted.
    assert len(error.problems) == 20
    assert error.total == 10_000_001  # each line, and "not in the JSON lines format"
    assert [p.line for p in error.problems[1:4]] == [1, 2, 3]
    assert error.as_dict()["error_count"] == 10_000_001
    assert error.more_note() == "... and 9999981 more problems."


def test_the_shown_problems_are_the_first_lines_and_blank_lines_are_not_counted():
    data = b"\n".join([b"x", b"", b'{"prompt": "1", "response": "a"}'] + [b"yy", b""] * 30)
    error = refused(data)
    assert error.total == 32  # 31 bad lines and the prompt without a response
    assert [p.line for p in error.problems] == [1] + list(range(4, 42, 2))


def test_a_conversation_file_of_bad_lines_is_counted_not_kept():
    data = b"nope\n" * 100_000
    with pytest.raises(InvalidUpload) as caught:
        parse_conversations(data, "c.jsonl", LIMIT)
    assert caught.value.total == 100_000
    assert len(caught.value.problems) == 20


def test_a_raw_nul_byte_is_a_problem_on_its_line():
    error = refused(b"first\nsec\x00ond\n", fmt="txt")
    assert [(p.line, p.message) for p in error.problems] == [
        (2, "the line holds a NUL character (\\0).")
    ]


def test_an_escaped_nul_in_json_is_a_problem_on_its_line():
    error = refused(
        lines(
            json.dumps({"prompt": "1", "response": "fine"}),
            json.dumps({"prompt": "2", "response": "bad\u0000"}),
        )
    )
    assert (error.problems[0].line, error.problems[0].message) == (
        2,
        "a string holds a NUL character (\\u0000), which cannot be stored.",
    )


def test_a_nul_in_a_key_is_refused_too():
    rows, problems = json_lines('{"a\\u0000": 1}\n')
    assert rows == []
    assert [p.line for p in problems] == [1]


def test_a_lone_surrogate_is_a_problem_on_its_line():
    error = refused(
        lines('{"prompt": "1", "response": "ok"}', '{"prompt": "2", "response": "\\ud83d"}')
    )
    assert error.problems[0].line == 2
    assert "lone surrogate (\\ud83d)" in error.problems[0].message


def test_a_surrogate_pair_is_text():
    rows, problems = json_lines('{"response": "\\ud83d\\ude00"}\n')
    assert rows == [(1, {"response": "\U0001f600"})]
    assert not problems


def test_json_deeper_than_the_limit_is_a_problem_on_its_line():
    deep = "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)
    error = refused(lines('{"prompt": "1", "response": "a"}', f'{{"prompt": "2", "x": {deep}}}'))
    assert (error.problems[0].line, error.problems[0].message) == (
        2,
        f"the JSON is nested deeper than {MAX_JSON_DEPTH} levels.",
    )


def test_json_deep_enough_to_break_the_parser_is_a_problem_not_a_recursion_error():
    deep = "[" * 200_000
    with pytest.raises(InvalidUpload) as caught:
        parse_conversations(lines("x", f'{{"id": {deep}'), "c.jsonl", LIMIT)
    assert [(p.line, p.message) for p in caught.value.problems] == [
        (1, "not valid JSON (Expecting value, column 1)."),
        (2, f"the JSON is nested deeper than {MAX_JSON_DEPTH} levels."),
    ]


def test_an_integer_too_long_to_read_is_a_problem_on_its_line():
    error = refused(lines('{"prompt": "1", "response": "a"}', '{"prompt": ' + "9" * 5000 + "}"))
    assert (error.problems[0].line, error.problems[0].message) == (
        2,
        "a number is too long to read (more than 4300 digits).",
    )


def test_prompt_files_refuse_nul_with_its_line():
    with pytest.raises(InvalidUpload) as caught:
        parse_prompts(b'{"id": "1", "context": ["a\\u0000"]}\n', "p.jsonl", LIMIT)
    assert caught.value.problems[0].line == 1


@pytest.mark.django_db
@pytest.mark.postgres
def test_a_nul_upload_is_a_400_on_postgresql_and_stores_nothing(client):
    owner = factories.user()
    system = factories.system(owner)
    prompt_set = factories.prompt_set(2)
    client.force_login(owner)
    for name, data in [
        (
            "r.jsonl",
            lines('{"prompt": "1", "response": "a"}', '{"prompt": "2", "response": "\\u0000"}'),
        ),
        ("r.txt", b"a\nb\x00\n"),
    ]:
        response = client.post(
            reverse("system-submit", args=[system.slug]),
            {"prompt_set": prompt_set.slug, "file": SimpleUploadedFile(name, data)},
        )
        assert response.status_code == 400, name
        assert "line 2: " in response.content.decode()
    assert Submission.objects.count() == 0
    assert Response.objects.count() == 0


def nested(depth: int, leaf: str = "1") -> str:
    return "[" * depth + leaf + "]" * depth


@pytest.mark.parametrize(
    "line",
    [
        nested(MAX_JSON_DEPTH - 1),
        nested(MAX_JSON_DEPTH),
        nested(MAX_JSON_DEPTH + 1),
        nested(MAX_JSON_DEPTH - 1, '{"a": 1}'),
        json.dumps({"response": "[" * 40 + "brackets in text are not depth"}),
        json.dumps({"response": "a backslash then u0000: \\u0000"}),
        json.dumps({"response": "escaped \u0000 NUL"}),
        json.dumps({"response": "escaped \ud83d lone surrogate"}),
        json.dumps({"response": "a real pair \U0001f916"}),
        json.dumps({"response": "a real pair \U0001f916"}, ensure_ascii=False),
        '{"response": "raw \ud83d surrogate"}',
        '{"key \\u0000": "in the key"}',
    ],
)
def test_the_quick_check_of_a_line_agrees_with_walking_its_value(line):
    value = json.loads(line)
    assert parse_json_line(line) == (value, unstorable(value))
