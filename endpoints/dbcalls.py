"""The few database calls of a stream (its claim, its stored answer, its budget and call
record), run on a small pool of threads of the process instead of the request's thread.

Under ASGI each request's sync calls run on a thread of its own, whose connection stays
open until the response ends: a stream that wrote its claim from there would hold a
database connection (and a thread) for the whole answer, a thousand of them for a thousand
open streams (PostgreSQL refuses connections past `max_connections`; SQLite's writers lock
each other out). Here every stream of the process shares `THREADS` connections, each kept
as the settings ask (``EVALHUB_CONN_MAX_AGE``, checked before and after every call, as a
request would), and nothing holds one while a model is being waited on. With SQLite the
calls go to asgiref's thread-sensitive thread: one writer in the process, as SQLite wants.

`release_request_connection` closes the connection the request's own thread opened (the
session, the voter, the answer's owner) once the view has answered, for the same reason,
and `close_asgi_request_connection` does it after every request served under ASGI.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import sync_to_async
from django.db import close_old_connections, connection

from .patience import patiently

THREADS = 4
# Whether PostgreSQL's stream calls go to the pool. A test whose rows live in its own open
# transaction turns it off (tests/conftest.py): another connection could not see them; the
# transactional tests of this module turn it on.
POOLED = True

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="stream-db")
        return _pool


def _call(function, args, kwargs):
    close_old_connections()  # one that expired or broke is not reused
    try:
        return patiently(function, *args, **kwargs)
    finally:
        close_old_connections()


async def database(function, *args, **kwargs):
    """`function(*args, **kwargs)` on the stream threads (tried again while SQLite is
    locked: endpoints/patience.py). With SQLite, on asgiref's one thread-sensitive thread
    instead: the embedded mode's single writer, and the connection a test's transaction
    holds (another thread's connection could not see or write the test's rows)."""
    if connection.vendor == "sqlite" or not POOLED:
        return await sync_to_async(patiently, thread_sensitive=True)(function, *args, **kwargs)
    context = contextvars.copy_context()
    call = functools.partial(context.run, _call, function, args, kwargs)
    return await asyncio.get_running_loop().run_in_executor(_executor(), call)


def close_asgi_request_connection(sender, **kwargs) -> None:
    """After each request served under ASGI (Django sends `request_finished` on the
    request's own thread): its connection is closed even when ``EVALHUB_CONN_MAX_AGE``
    would keep it, since that thread ends with the request and its connection would stay
    open, unused, until garbage-collected; under load those pile up past PostgreSQL's
    ``max_connections``."""
    from django.core.handlers.asgi import ASGIHandler

    if isinstance(sender, type) and issubclass(sender, ASGIHandler):
        release_request_connection()


def release_request_connection() -> None:
    """Close this thread's connection unless a transaction is open on it (a test's)."""
    if connection.connection is not None and not connection.in_atomic_block:
        connection.close()
