"""evalhub/text.py: where a NUL sits in a value, the message refusing it, and a value
without its NULs (for what models answer)."""

import json

from evalhub.text import find_nul, nul_refused, shown, without_nul


def test_a_value_without_nul_has_none():
    assert find_nul({"a": ["b", 1, None, 2.5, {"c": "d"}]}) is None
    assert find_nul("plain") is None and find_nul(7) is None


def test_the_place_of_the_first_nul_is_named():
    assert find_nul("a\x00b") == ""
    assert find_nul("a\x00b", "text") == "text"
    assert find_nul({"turns": [{"text": "ok"}, {"text": "b\x00"}]}) == "turns.1.text"
    assert find_nul({"a": "ok", "b": ["x", "\x00"]}, "body") == "body.b.1"
    assert find_nul(("x", "\x00")) == "1"


def test_a_nul_in_a_key_is_found():
    assert find_nul({"ok": 1, "k\x00": 2}) == "k\x00"


def test_depth_cannot_break_the_walk():
    value = "\x00"
    for _ in range(20_000):
        value = [value]
    assert find_nul(value) == ".".join(["0"] * 20_000)
    cleaned = without_nul(value)
    for _ in range(20_000):
        cleaned = cleaned[0]
    assert cleaned == ""


def test_the_message_quotes_the_place_with_the_nul_written_out():
    assert nul_refused("turns.0.text") == (
        "'turns.0.text' holds a NUL character (\\0 or \\u0000), which cannot be stored; "
        "remove it and send it again."
    )
    assert nul_refused().startswith("The value holds a NUL")
    assert nul_refused(subject="The address").startswith("The address holds a NUL")
    assert nul_refused("k\x00").startswith("'k\\0' holds") and shown("a\x00") == "a\\0"


def test_without_nul_drops_them_from_strings_keys_and_nested_values():
    assert without_nul("\x00hi\x00 there") == "hi there"
    value = {"a\x00": ["x\x00y", 1, None, {"k": "\x00"}], "b": True}
    assert without_nul(value) == {"a": ["xy", 1, None, {"k": ""}], "b": True}
    assert list(without_nul(value)) == ["a", "b"]  # the keys keep their order


def test_without_nul_leaves_a_clean_value_as_it_is():
    value = {"a": ["b", {"c": 1.5}]}
    assert without_nul(value) is value
    assert without_nul(json.loads('"\\\\u0000 is six characters"')) == "\\u0000 is six characters"
