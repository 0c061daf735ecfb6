"""Sessions kept in the database with a copy in the cache (Django's cached_db engine) that
go on when the cache is down: a session is then read from and written to the database
alone, and a warning is logged. Nobody is logged out, no worker loses their place.

Django's engine already reads the database when a cache read fails, but then writes the copy
back to the cache unguarded, and its `exists` and `delete` raise: a login, or a start link
that gives a browser a new session, answered 500 while Redis was down.

One consequence is documented (docs/production.md): a session changed while Redis was down
may be read as it was before the outage from a Redis that kept its data, until it expires or
the cache is cleared.
"""

from django.contrib.sessions.backends import cached_db

from .cache import Degrading


class SessionStore(cached_db.SessionStore):
    def __init__(self, session_key=None):
        super().__init__(session_key)
        self._cache = Degrading(
            self._cache, "sessions", "sessions are read from and written to the database"
        )
