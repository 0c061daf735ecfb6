"""Relaying a model's answer to the browser as server-sent events, under ASGI or WSGI: the
arena's battles (arenas/relay.py) and the chat campaigns' replies (annotation/chat_replies.py)
both stream through here.

A caller hands over a factory of an async iterator of `Piece`s (text as the model wrote
it) ending with one `Settled` (how the answer ended, as stored). Events
(``text/event-stream``), one JSON object each:

- ``piece``: ``{"text": "..."}``, a piece of the answer as the model wrote it;
- ``end``: ``{"status": "...", "text": "...", "error": "...", **extra}``, how the answer
  ended, as stored (the whole text, so the page shows what was kept), with whatever else
  the page needs to redraw (`Settled.extra`);
- a comment line (``: keep-alive``) every `KEEPALIVE_SECONDS` while the model is silent,
  so that proxies keep the connection and a browser that left is noticed.

Under ASGI (uvicorn: the production ``arena`` service) the view returns the async
iterator itself: one event loop relays every stream, no thread is held, and Django cancels
it when the browser disconnects. Under WSGI (``manage.py runserver``: ``make run``, and the
test server) a response must be a plain iterator: `ThreadedEvents` runs the same async
iterator on an event loop in a thread of its own and hands each event over through a
queue; when the browser goes away the WSGI server closes the response, which cancels the
loop's task. Either way the upstream request is closed as soon as the browser leaves.
"""

from __future__ import annotations

import asyncio
import json
import queue
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import StreamingHttpResponse

from .dbcalls import release_request_connection

KEEPALIVE_SECONDS = 15.0
KEEPALIVE = b": keep-alive\n\n"


@dataclass(frozen=True)
class Piece:
    text: str


@dataclass(frozen=True)
class Settled:
    status: str
    text: str
    error: str = ""
    extra: dict = field(default_factory=dict)


Events = Callable[[], AsyncIterator[Piece | Settled]]


def event(name: str, data: dict) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def end_event(settled: Settled) -> bytes:
    body = {**settled.extra, "status": settled.status, "text": settled.text}
    return event("end", {**body, "error": settled.error})


async def event_stream(make: Events) -> AsyncIterator[bytes]:
    """The answer's server-sent events, with keep-alives while the model is silent.

    One task per stream reads the events into a queue; one timer per `KEEPALIVE_SECONDS`
    (not one per piece) puts a keep-alive there when nothing came meanwhile. The events
    ready at once are written together."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Queue = asyncio.Queue()
    heard = [loop.time()]

    async def read() -> None:
        try:
            async with aclosing(make()) as events:
                async for item in events:
                    heard[0] = loop.time()
                    ready.put_nowait(item)
        except BaseException as error:  # handed to the response's task, which raises it
            ready.put_nowait(_Failed(error))
            if isinstance(error, asyncio.CancelledError):
                raise
        else:
            ready.put_nowait(_END)

    def keep_alive() -> None:
        nonlocal timer
        silent = loop.time() - heard[0]
        if silent >= KEEPALIVE_SECONDS:
            ready.put_nowait(KEEPALIVE)
            heard[0] = loop.time()
            silent = 0.0
        timer = loop.call_later(KEEPALIVE_SECONDS - silent, keep_alive)

    reader = asyncio.create_task(read())
    timer = loop.call_later(KEEPALIVE_SECONDS, keep_alive)
    try:
        while True:
            items = [await ready.get()]
            while not ready.empty():
                items.append(ready.get_nowait())
            out = bytearray()
            finished = False
            for item in items:
                if item is _END:
                    finished = True
                    break
                if isinstance(item, _Failed):
                    if out:
                        yield bytes(out)
                    raise item.error
                if item is KEEPALIVE:
                    if not out and len(items) == 1:
                        yield KEEPALIVE  # only when nothing else is written
                    continue
                out += _encoded(item)
            if out:
                yield bytes(out)
            if finished:
                return
    finally:
        timer.cancel()
        if not reader.done():
            reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)


@dataclass(frozen=True)
class _Failed:
    error: BaseException


def _encoded(item: Piece | Settled) -> bytes:
    if isinstance(item, Piece):
        return event("piece", {"text": item.text})
    return end_event(item)


async def drain(make: Events) -> Settled | None:
    """Read an answer to its end without relaying it (a page without JavaScript waits for
    the whole answer): how it ended."""
    settled = None
    async with aclosing(make()) as events:
        async for item in events:
            if isinstance(item, Settled):
                settled = item
    return settled


_END = object()


class ThreadedEvents:
    """A plain iterator over an async iterator that runs on its own event loop thread."""

    def __init__(self, make: Callable[[], AsyncIterator[bytes]]):
        self._make = make
        self._items: queue.Queue = queue.Queue()
        self._loop = asyncio.new_event_loop()
        self._task: asyncio.Task | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="event stream", daemon=True)
        self._thread.start()
        self._ready.wait()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._task = self._loop.create_task(self._pump())
        self._ready.set()
        try:
            self._loop.run_until_complete(self._task)
        except asyncio.CancelledError:
            pass
        finally:
            self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            self._loop.close()

    async def _pump(self) -> None:
        # The database calls of every stream relayed this way run on the process's stream
        # threads (endpoints/dbcalls.py): one with SQLite, so under a development server
        # streams never write at the same moment from two connections.
        try:
            async with aclosing(self._make()) as items:
                async for item in items:
                    self._items.put(item)
        finally:
            self._items.put(_END)

    def __iter__(self):
        return self

    def __next__(self) -> bytes:
        item = self._items.get()
        if item is _END:
            raise StopIteration
        return item

    def close(self) -> None:
        """The WSGI server is done with the response (finished, or the browser left)."""
        if self._task is not None and not self._task.done():
            self._loop.call_soon_threadsafe(self._task.cancel)
        self._thread.join(timeout=30)


async def _without_request_connection(events: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """Under ASGI the response is iterated in the request's thread context: its database
    connection (the session, the voter) is closed before the stream, not held through it
    (endpoints/dbcalls.py)."""
    await sync_to_async(release_request_connection)()
    async with aclosing(events) as relayed:
        async for chunk in relayed:
            yield chunk


def event_stream_response(request, make: Events) -> StreamingHttpResponse:
    """The events of `make()` as the response to `request`, under either server."""
    if isinstance(request, ASGIRequest):
        content = _without_request_connection(event_stream(make))
    else:
        content = ThreadedEvents(lambda: event_stream(make))
    response = StreamingHttpResponse(content, content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # nginx: pass each event on at once
    return response
