"""The stop watcher: one look at the flags for every stream of a loop, each stopped
stream told once, an unwatched stream never."""

import asyncio

import pytest

from arenas import battles, stopping
from arenas.models import BattleAnswer
from tests.arenas.streaming_setup import answer, battle_between
from tests.endpoints import sse_fake

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def battle():
    with sse_fake.StreamingPool() as pool:
        yield battle_between(pool.start(sse_fake.words("a")), pool.start(sse_fake.words("b")))


def streaming(battle, side):
    row = answer(battle, side)
    BattleAnswer.objects.filter(pk=row.pk).update(status=BattleAnswer.Status.STREAMING)
    return row


def test_only_the_stopped_stream_is_told(battle, monkeypatch):
    monkeypatch.setattr(stopping, "POLL_SECONDS", 0.02)
    a, b = streaming(battle, "a"), streaming(battle, "b")
    battles.request_stop(a)

    async def watched():
        told = []
        stopping.watch(a.pk, lambda: told.append("a"))
        stopping.watch(b.pk, lambda: told.append("b"))
        await asyncio.sleep(0.3)
        stopping.unwatch(b.pk)
        return told

    assert asyncio.run(watched()) == ["a"]


def test_an_unwatched_stream_is_not_told_and_the_watcher_ends(battle, monkeypatch):
    monkeypatch.setattr(stopping, "POLL_SECONDS", 0.02)
    a = streaming(battle, "a")
    battles.request_stop(a)

    async def unwatched():
        told = []
        stopping.watch(a.pk, lambda: told.append("a"))
        stopping.unwatch(a.pk)
        await asyncio.sleep(0.1)
        watcher = stopping._watchers[asyncio.get_running_loop()]
        return told, watcher.task

    assert asyncio.run(unwatched()) == ([], None)


def test_the_flags_of_every_stream_are_read_in_one_query(battle, django_assert_num_queries):
    a, b = streaming(battle, "a"), streaming(battle, "b")
    battles.request_stop(b)
    with django_assert_num_queries(1):
        assert stopping.stopped_among([a.pk, b.pk]) == {b.pk}
