"""A stream's database call that SQLite refuses for a moment is tried again."""

import pytest
from django.db import OperationalError

from arenas import patience


def flaky(failures: int, message: str):
    calls = []

    def call(value):
        calls.append(value)
        if len(calls) <= failures:
            raise OperationalError(message)
        return value * 2

    return call, calls


def test_a_locked_table_is_tried_again(monkeypatch):
    monkeypatch.setattr(patience, "PAUSE_SECONDS", 0)
    call, calls = flaky(3, "database table is locked: arenas_battleanswer")
    assert patience.patiently(call, 21) == 42
    assert len(calls) == 4


def test_other_errors_and_lasting_locks_are_raised(monkeypatch):
    monkeypatch.setattr(patience, "PAUSE_SECONDS", 0)
    call, calls = flaky(1, "no such table: nowhere")
    with pytest.raises(OperationalError, match="no such table"):
        patience.patiently(call, 1)
    assert len(calls) == 1
    call, calls = flaky(100, "database is locked")
    with pytest.raises(OperationalError, match="locked"):
        patience.patiently(call, 1)
    assert len(calls) == patience.TRIES
