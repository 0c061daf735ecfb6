"""Answers are parsed by a Django form of AnswerFields: each error is keyed by its field."""

import pytest
from django.http import QueryDict

from annotation.kinds.base import AnswerField, PayloadInvalid, choice_field, parse_answers

FIELDS = {
    "colour": choice_field({"r": "red", "g": "green"}, "the colour"),
    "size": AnswerField({"1": 1, "2": 2}, missing=None, invalid="'{value}' is no size"),
}


def test_answers_are_mapped_to_their_stored_values():
    assert parse_answers(QueryDict("colour=g&size=2"), FIELDS) == {"colour": "green", "size": 2}


def test_an_optional_answer_left_out_is_none():
    assert parse_answers(QueryDict("colour=r"), FIELDS) == {"colour": "red", "size": None}


def test_every_error_sits_next_to_its_field_at_once():
    with pytest.raises(PayloadInvalid) as raised:
        parse_answers(QueryDict("size=9"), FIELDS)
    assert raised.value.errors == {
        "colour": "Choose an answer for the colour.",
        "size": "'9' is no size",
    }


def test_a_bad_answer_names_what_was_sent():
    with pytest.raises(PayloadInvalid) as raised:
        parse_answers(QueryDict("colour=blue"), FIELDS)
    assert raised.value.errors == {"colour": "'blue' is not a possible answer for the colour."}


def test_keys_the_form_does_not_have_are_a_general_error():
    def unexpected(keys):
        return f"Unknown: {', '.join(keys)}." if keys else ""

    with pytest.raises(PayloadInvalid) as raised:
        parse_answers(QueryDict("colour=r&shape=round&aaa=1"), FIELDS, unexpected)
    assert raised.value.errors == {"": "Unknown: aaa, shape."}
    assert parse_answers(QueryDict("colour=r"), FIELDS, unexpected)["colour"] == "red"
