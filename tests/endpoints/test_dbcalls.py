"""The streams' database calls: run on the process's few stream threads (never the event
loop's), their result or error handed back; a request's connection released."""

import asyncio
import threading

import pytest
from django.db import connection, connections

from endpoints import dbcalls
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_call_runs_on_a_stream_thread_and_gives_back_its_result():
    user = factories.user()

    def where_and_who(pk):
        return threading.current_thread().name, type(user).objects.get(pk=pk).username

    name, username = asyncio.run(dbcalls.database(where_and_who, user.pk))
    assert username == user.username
    # PostgreSQL: the stream threads; SQLite: asgiref's one thread-sensitive thread.
    assert name.startswith("stream-db") == (connection.vendor != "sqlite")


def test_a_call_error_reaches_the_stream():
    def missing():
        return type(factories.user()).objects.get(pk=-1)

    with pytest.raises(Exception, match="does not exist"):
        asyncio.run(dbcalls.database(missing))


def test_every_stream_of_a_process_shares_the_few_threads():
    async def many():
        return await asyncio.gather(
            *(dbcalls.database(lambda: threading.current_thread().name) for _ in range(50))
        )

    names = set(asyncio.run(many()))
    # SQLite (the tests' database): one thread, so its writers never lock each other out.
    assert len(names) <= (1 if connection.vendor == "sqlite" else dbcalls.THREADS)


def closes_recorded(monkeypatch) -> list:
    """This thread's connection's close() calls (SQLite's in-memory test database ignores
    them: the call is what is checked)."""
    closed = []
    monkeypatch.setattr(connections["default"], "close", lambda: closed.append(True))
    return closed


def test_the_request_connection_is_released_outside_a_transaction(monkeypatch):
    factories.user()  # opens this thread's connection
    closed = closes_recorded(monkeypatch)
    dbcalls.release_request_connection()
    assert closed == [True]


@pytest.mark.django_db(transaction=False)
def test_the_request_connection_is_kept_inside_a_transaction(monkeypatch):
    factories.user()
    closed = closes_recorded(monkeypatch)
    dbcalls.release_request_connection()
    assert closed == [] and connection.in_atomic_block


def test_a_request_served_under_asgi_releases_its_connection(monkeypatch):
    from django.core.handlers.asgi import ASGIHandler
    from django.core.signals import request_finished

    released = []
    monkeypatch.setattr(dbcalls, "release_request_connection", lambda: released.append(True))
    request_finished.send(sender=ASGIHandler)
    assert released == [True]


def test_a_request_served_under_wsgi_keeps_its_connection(monkeypatch):
    from django.core.handlers.wsgi import WSGIHandler

    released = []
    monkeypatch.setattr(dbcalls, "release_request_connection", lambda: released.append(True))
    dbcalls.close_asgi_request_connection(sender=WSGIHandler)
    assert released == []
