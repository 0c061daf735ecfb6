"""Telling the streams of an event loop that their voter pressed stop.

The stop button's request may reach another process than the one streaming the answer, so
the flag lives in the database (`BattleAnswer.stop_requested`). Rather than every stream
asking for its own flag between tokens (a query per stream every `POLL_SECONDS`, each able
to delay the stream's next token), one watcher per event loop asks for the flags of every
answer the loop is streaming, in one query every `POLL_SECONDS`, off the token path, and
hands each stopped answer's stream a callback. It runs only while a stream is watched.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Callable

from endpoints.dbcalls import database

from .models import BattleAnswer

logger = logging.getLogger(__name__)

POLL_SECONDS = 0.5


def stopped_among(answer_ids: list[int]) -> set[int]:
    return set(
        BattleAnswer.objects.filter(pk__in=answer_ids, stop_requested=True).values_list(
            "pk", flat=True
        )
    )


class _Watcher:
    def __init__(self):
        self.streams: dict[int, Callable[[], None]] = {}
        self.task: asyncio.Task | None = None

    async def run(self) -> None:
        while self.streams:
            await asyncio.sleep(POLL_SECONDS)
            ids = list(self.streams)
            if not ids:
                break
            try:
                stopped = await database(stopped_among, ids)
            except Exception:  # the next look may work; a stream must not die of it
                logger.exception("Looking for stopped arena answers failed")
                continue
            for answer_id in stopped:
                tell = self.streams.pop(answer_id, None)
                if tell is not None:
                    tell()
        self.task = None


_watchers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def watch(answer_id: int, on_stop: Callable[[], None]) -> None:
    """Call `on_stop()` (on this loop) once the answer's stop is requested."""
    loop = asyncio.get_running_loop()
    watcher = _watchers.setdefault(loop, _Watcher())
    watcher.streams[answer_id] = on_stop
    if watcher.task is None or watcher.task.done():
        watcher.task = loop.create_task(watcher.run())


def unwatch(answer_id: int) -> None:
    watcher = _watchers.get(asyncio.get_running_loop())
    if watcher is None:
        return
    watcher.streams.pop(answer_id, None)
    if not watcher.streams and watcher.task is not None:
        # No sleeping task left behind on a loop about to close (a WSGI stream's own loop).
        watcher.task.cancel()
        watcher.task = None
