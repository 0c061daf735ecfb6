"""Sessions kept in the database with a copy in the cache (Django's cached_db engine) that
go on when the cache is down: a session is then read from and written to the database
alone, and a warning is logged. Nobody is logged out, no worker loses their place.

Django's engine already reads the database when a cache read fails, but then writes the copy
back to the cache unguarded, and its `exists` and `delete` raise: a login, or a start link
that gives a browser a new session, answered 500 while Redis was down.

A session changed while Redis was down (a logout, say) may still have its earlier copy in a
Redis that kept its data through the outage. Copies are therefore kept ten minutes at most
(then read again from the database), which bounds how long such a stale copy can be read
after Redis is back; emptying the cache's Redis database ends it at once (docs/production.md).
"""

from django.contrib.sessions.backends import cached_db

from .cache import Degrading

# The longest a session's copy stays in the cache: one database read per session this often.
COPY_SECONDS = 600


class SessionStore(cached_db.SessionStore):
    def __init__(self, session_key=None):
        super().__init__(session_key)
        self._cache = Degrading(
            self._cache,
            "sessions",
            "sessions are read from and written to the database",
            longest=COPY_SECONDS,
        )
