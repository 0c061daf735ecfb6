"""Database calls of a stream that SQLite may refuse for a moment (the arena's answers and the
chat campaigns' replies).

A stream writes from its own thread (its claim, its stored answer) while the page's other
requests read and write the same rows. PostgreSQL waits for row locks; SQLite (the embedded
mode, and the tests' in-memory database, where another connection's write locks the whole
table and the refusal comes at once) may answer "database table is locked" or "database is
locked". Such a call is tried again, briefly, instead of failing the answer the
person is waiting for.
"""

import time

from django.db import OperationalError, connection

TRIES = 40
PAUSE_SECONDS = 0.05


def patiently(function, *args, **kwargs):
    for attempt in range(TRIES):
        try:
            return function(*args, **kwargs)
        except OperationalError as error:
            locked = connection.vendor == "sqlite" and "locked" in str(error)
            if not locked or attempt == TRIES - 1:
                raise
            time.sleep(PAUSE_SECONDS)
    raise AssertionError("unreachable")
