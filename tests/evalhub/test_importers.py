"""The response and prompt parsers: every bad file is refused with the line and the reason."""

import json

import pytest

from evalhub import limits
from evalhub.importers.problems import SHOWN_PROBLEMS, InvalidUpload
from evalhub.importers.prompts import parse_prompts
from evalhub.importers.responses import PromptRef, parse_responses

PROMPTS = [PromptRef(0, "1"), PromptRef(1, "2"), PromptRef(2, "3")]
LIMIT = 20 * 1024 * 1024


def problems_of(data: bytes, fmt=None, filename="r.txt", prompts=PROMPTS, limit=LIMIT):
    with pytest.raises(InvalidUpload) as raised:
        parse_responses(data, fmt, filename, prompts, limit)
    return [str(p) for p in raised.value.problems]


def test_txt_maps_line_i_to_prompt_i():
    parsed = parse_responses(b"a .\r\nb .\nc .\n", None, "r.txt", PROMPTS, LIMIT)
    assert parsed.texts == {0: "a .", 1: "b .", 2: "c ."}
    assert parsed.empty_lines == []


def test_txt_with_wrong_number_of_lines():
    assert problems_of(b"a\nb\n") == [
        "Expected 3 lines, one response per prompt in order; the file has 2."
    ]


def test_txt_with_an_empty_line_keeps_it_and_names_it():
    parsed = parse_responses(b"a\n  \nc\n", None, "r.txt", PROMPTS, LIMIT)
    assert parsed.texts == {0: "a", 1: "", 2: "c"}
    assert parsed.empty_lines == [2]
    assert [str(w) for w in parsed.warnings] == [
        "line 2: empty response (stored; counted as zero tokens)."
    ]


def test_jsonl_and_csv_empty_responses_are_kept_with_their_lines():
    jsonl = (
        b'{"prompt": "2", "response": ""}\n{"prompt": "1", "response": "a"}\n'
        b'{"prompt": "3", "response": " "}\n'
    )
    parsed = parse_responses(jsonl, None, "r.jsonl", PROMPTS, LIMIT)
    assert parsed.texts == {1: "", 0: "a", 2: ""}
    assert parsed.empty_lines == [1, 3]
    parsed = parse_responses(b'prompt,response\n1,a\n2,""\n3,c\n', None, "r.csv", PROMPTS, LIMIT)
    assert parsed.texts == {0: "a", 1: "", 2: "c"}
    assert parsed.empty_lines == [3]


def test_a_missing_answer_stays_an_error():
    data = b'{"prompt": "1", "response": "a"}\n{"prompt": "2"}\n{"prompt": "3", "response": "c"}\n'
    assert problems_of(data, filename="r.jsonl") == [
        "line 2: the response must be a string ('response')."
    ]


def test_jsonl_by_prompt_id_in_any_order():
    data = b'{"prompt": "3", "response": "c"}\n{"prompt": 1, "response": "a"}\n{"prompt": "2", "response": "b"}\n'
    assert parse_responses(data, None, "r.jsonl", PROMPTS, LIMIT).texts == {2: "c", 0: "a", 1: "b"}


def test_jsonl_unknown_duplicate_empty_and_missing():
    data = (
        b'{"prompt": "1", "response": "a"}\n'
        b'{"prompt": "9", "response": "x"}\n'
        b'{"prompt": "1", "response": "again"}\n'
        b'{"prompt": "2", "response": "   "}\n'
    )
    # The empty response on line 4 is no problem; the others still refuse the file.
    assert problems_of(data, filename="r.jsonl") == [
        "line 2: unknown prompt id '9'.",
        "line 3: duplicate prompt id '1' (already answered on line 1).",
        "No response for 1 of 3 prompts: 3.",
    ]


def test_jsonl_that_is_not_json_lines():
    found = problems_of(b"prompt,response\n1,a\n", filename="r.jsonl")
    assert found[0] == "The file is not in the JSON lines format."
    assert found[1].startswith("line 1: not valid JSON")


def test_jsonl_line_that_is_not_an_object():
    found = problems_of(b'{"prompt": "1", "response": "a"}\n["2", "b"]\n', filename="r.jsonl")
    assert "line 2: each line must be a JSON object {...}." in found


def test_csv_with_header_and_quoted_newlines_keeps_line_numbers():
    data = b'prompt,response\n1,"a\nsecond line"\n2,b\n3,\n'
    assert parse_responses(data, None, "r.csv", PROMPTS, LIMIT).empty_lines == [5]
    assert problems_of(data + b"9,x\n", filename="r.csv") == ["line 6: unknown prompt id '9'."]


def test_csv_without_the_required_header():
    assert problems_of(b"id,text\n1,a\n", filename="r.csv") == [
        "line 1: the header must name the columns prompt,response; found id, text."
    ]


def test_csv_good_file():
    data = b'prompt,response\n1,a\n2,"b, with comma"\n3,c\n'
    assert parse_responses(data, None, "r.csv", PROMPTS, LIMIT).texts == {
        0: "a",
        1: "b, with comma",
        2: "c",
    }


def test_not_utf8_names_the_line():
    assert problems_of(b"a\n\xff\xfe b\nc\n") == [
        "line 2: the file is not UTF-8 (byte 0xff cannot be decoded)."
    ]


def test_utf8_bom_is_accepted():
    assert (
        parse_responses("\ufeffa\nb\nc\n".encode(), None, "r.txt", PROMPTS, LIMIT).texts[0] == "a"
    )


def test_file_over_the_size_limit():
    assert problems_of(b"a\nb\nc\n", limit=4) == ["The file is 6 bytes; the limit is 4 bytes."]


def test_unknown_extension_without_declared_format():
    assert problems_of(b"a\nb\nc\n", filename="r.docx")[0].startswith("Cannot tell the format")


def test_declared_format_wins_over_the_extension():
    data = b'{"prompt": "1", "response": "a"}\n{"prompt": "2", "response": "b"}\n{"prompt": "3", "response": "c"}\n'
    assert parse_responses(data, "jsonl", "responses.txt", PROMPTS, LIMIT).texts == {
        0: "a",
        1: "b",
        2: "c",
    }


def test_empty_file():
    assert problems_of(b"\n\n") == ["The file is empty."]


def test_all_problems_are_counted_but_only_the_first_twenty_shown():
    prompts = [PromptRef(i, str(i + 1)) for i in range(30)]
    data = "".join(f'{{"prompt": "{i + 1}", "response": 5}}\n' for i in range(29))
    data += '{"prompt": "30", "response": "x"}\n'
    with pytest.raises(InvalidUpload) as raised:
        parse_responses(data.encode(), None, "r.jsonl", prompts, LIMIT)
    assert raised.value.total == 29
    assert len(raised.value.shown) == SHOWN_PROBLEMS
    assert raised.value.as_dict()["errors"][0] == {
        "line": 1,
        "message": "the response must be a string ('response').",
    }


def test_prompts_from_txt():
    prompts = parse_prompts(b"hi\nhow are you ?\n", "p.txt", LIMIT)
    assert [(p.external_id, p.context) for p in prompts] == [
        ("1", ["hi"]),
        ("2", ["how are you ?"]),
    ]


def test_prompts_from_jsonl_with_references():
    data = b'{"id": "a", "context": ["hi", "hello"], "references": ["hey"]}\n'
    (prompt,) = parse_prompts(data, "p.jsonl", LIMIT)
    assert (prompt.external_id, prompt.context, prompt.references) == (
        "a",
        ["hi", "hello"],
        ["hey"],
    )


def test_prompts_jsonl_problems():
    data = (
        b'{"id": "a", "context": ["hi"]}\n'
        b'{"id": "a", "context": ["again"]}\n'
        b'{"id": "b", "context": []}\n'
        b'{"id": "c", "context": ["x"], "references": "not a list"}\n'
        b'{"context": ["x"]}\n'
    )
    with pytest.raises(InvalidUpload) as raised:
        parse_prompts(data, "p.jsonl", LIMIT)
    assert [str(p) for p in raised.value.problems] == [
        "line 2: duplicate id 'a' (first on line 1).",
        "line 3: 'context' must be a list of one or more non-empty utterances.",
        "line 4: 'references' must be a list of non-empty strings.",
        "line 5: missing the prompt id ('id').",
    ]


def test_prompts_wrong_extension():
    with pytest.raises(InvalidUpload, match="Upload prompts as a .txt or a .jsonl file"):
        parse_prompts(b"hi\n", "p.csv", LIMIT)


# Issue 23, finding 9: no text over its limit (evalhub/limits.py) ---------------------------

TOO_LONG = "x" * (limits.TEXT_CHARS + 1)
SAYS_TOO_LONG = (
    f"the response has {limits.TEXT_CHARS + 1:,} characters; at most {limits.TEXT_CHARS:,} "
    "are allowed."
)


def test_a_txt_response_over_the_text_limit_is_refused_with_its_line():
    assert problems_of(f"a\n{TOO_LONG}\nc\n".encode()) == [f"line 2: {SAYS_TOO_LONG}"]


def test_a_jsonl_response_over_the_text_limit_is_refused_with_its_line():
    data = "".join(
        json.dumps({"prompt": str(n), "response": TOO_LONG if n == 3 else "ok"}) + "\n"
        for n in (1, 2, 3)
    ).encode()
    assert problems_of(data, filename="r.jsonl") == [f"line 3: {SAYS_TOO_LONG}"]


def test_a_response_at_the_text_limit_is_kept():
    at_limit = "x" * limits.TEXT_CHARS
    parsed = parse_responses(f"a\n{at_limit}\nc\n".encode(), None, "r.txt", PROMPTS, LIMIT)
    assert parsed.texts[1] == at_limit


def test_a_prompt_utterance_over_the_text_limit_is_refused_with_its_line():
    data = (json.dumps({"id": "p1", "context": ["hi", TOO_LONG]}) + "\n").encode()
    with pytest.raises(InvalidUpload) as refused:
        parse_prompts(data, "p.jsonl", LIMIT)
    assert [str(p) for p in refused.value.problems] == [
        f"line 1: an utterance has {limits.TEXT_CHARS + 1:,} characters; at most "
        f"{limits.TEXT_CHARS:,} are allowed."
    ]


def test_a_prompt_id_longer_than_the_column_is_refused_with_its_line():
    data = (json.dumps({"id": "p" * 101, "context": ["hi"]}) + "\n").encode()
    with pytest.raises(InvalidUpload) as refused:
        parse_prompts(data, "p.jsonl", LIMIT)
    assert [str(p) for p in refused.value.problems] == [
        "line 1: the id has 101 characters; at most 100 are allowed."
    ]
