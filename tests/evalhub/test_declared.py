"""evalhub.declared: the base of every declared config and its messages."""

from typing import ClassVar, Literal

import pytest
from pydantic import Field

from evalhub.declared import Declared, DeclaredInvalid, check, describe, help_text


class Sample(Declared):
    noun: ClassVar[str] = "sample setting"

    size: int = Field(3, ge=1, le=9, description="How many.")
    share: float = Field(0.5, gt=0, lt=1, description="How much.")
    mode: Literal["fast", "slow"] = Field("fast", description="How.")
    names: list[str] = Field(default_factory=lambda: ["x"], max_length=2, description="Who.")


def errors(data):
    with pytest.raises(DeclaredInvalid) as raised:
        check(Sample, data)
    return raised.value.errors


def test_defaults_fill_what_is_left_out():
    assert check(Sample, {"size": 4}) == {"size": 4, "share": 0.5, "mode": "fast", "names": ["x"]}


def test_an_unknown_key_is_named_with_the_allowed_ones():
    assert errors({"sise": 4}) == {
        "sise": "'sise' is an unknown sample setting; allowed: size, share, mode, names."
    }


def test_types_are_strict():
    assert errors({"size": "4"}) == {"size": "size must be a whole number, got '4'."}
    assert errors({"size": True}) == {"size": "size must be a whole number, got True."}
    assert errors({"names": "x"}) == {"names": "names must be a list, got 'x'."}


def test_ranges_name_the_field_and_the_range():
    assert errors({"size": 10}) == {"size": "size must be from 1 to 9, got 10."}
    assert errors({"share": 1}) == {"share": "share must be between 0 and 1 (exclusive), got 1."}
    assert errors({"mode": "warp"}) == {"mode": "mode must be 'fast' or 'slow', not 'warp'."}
    assert errors({"names": ["a", "b", "c"]}) == {"names": "names must have at most 2 entries."}


def test_every_problem_is_reported_at_once():
    assert set(errors({"size": 0, "share": 2, "typo": 1})) == {"size", "share", "typo"}


def test_a_config_that_is_not_an_object_is_refused():
    assert errors([1]) == {"": "The sample settings must be an object {key: value}."}


def test_the_description_default_and_range_are_shown():
    rows = {row["name"]: row for row in describe(Sample)}
    assert rows["size"] == {
        "name": "size",
        "description": "How many.",
        "required": False,
        "default": "3",
        "range": "from 1 to 9",
    }
    assert help_text(Sample, "size") == "How many. Range from 1 to 9. Default 3."
    assert help_text(Sample, "names") == "Who. Default x."
