"""A stream's database call that SQLite refuses for a moment is tried again."""

from types import SimpleNamespace

import pytest
from django.db import OperationalError

from endpoints import patience


@pytest.fixture(autouse=True)
def _on_sqlite_without_pauses(monkeypatch):
    # What SQLite answers is what is tried again, whatever database the tests run on.
    monkeypatch.setattr(patience, "connection", SimpleNamespace(vendor="sqlite"))
    monkeypatch.setattr(patience, "PAUSE_SECONDS", 0)


def flaky(failures: int, message: str):
    calls = []

    def call(value):
        calls.append(value)
        if len(calls) <= failures:
            raise OperationalError(message)
        return value * 2

    return call, calls


def test_a_locked_table_is_tried_again():
    call, calls = flaky(3, "database table is locked: arenas_battleanswer")
    assert patience.patiently(call, 21) == 42
    assert len(calls) == 4


def test_other_errors_and_lasting_locks_are_raised():
    call, calls = flaky(1, "no such table: nowhere")
    with pytest.raises(OperationalError, match="no such table"):
        patience.patiently(call, 1)
    assert len(calls) == 1
    call, calls = flaky(100, "database is locked")
    with pytest.raises(OperationalError, match="locked"):
        patience.patiently(call, 1)
    assert len(calls) == patience.TRIES


def test_other_databases_are_not_tried_again(monkeypatch):
    monkeypatch.setattr(patience, "connection", SimpleNamespace(vendor="postgresql"))
    call, calls = flaky(1, "database is locked")
    with pytest.raises(OperationalError):
        patience.patiently(call, 1)
    assert len(calls) == 1
