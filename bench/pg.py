"""A throwaway PostgreSQL database for a benchmark: created fresh, dropped afterwards.

Benchmarks that measure the database path must not run on SQLite by accident, so an
unreachable server is a clear failure (exit status 2 with the reason), never a fallback.
"""

import os
import sys
from contextlib import contextmanager

import psycopg

# The server to create the database on; the database named here is only used to connect.
ADMIN_URL = os.environ.get("EVALHUB_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/postgres")


def _admin_connection():
    try:
        return psycopg.connect(ADMIN_URL, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as error:
        print(
            f"PostgreSQL is unreachable at {ADMIN_URL} ({str(error).strip()}); this benchmark "
            "measures the PostgreSQL path and does not run without it. Start PostgreSQL or set "
            "EVALHUB_BENCH_PG to a server where this user may CREATE DATABASE.",
            file=sys.stderr,
        )
        raise SystemExit(2) from None


@contextmanager
def fresh_database(prefix: str):
    """Yield the DATABASE_URL of a new, empty database; drop it on the way out."""
    name = f"{prefix}_{os.getpid()}"
    with _admin_connection() as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f'CREATE DATABASE "{name}"')
    base = ADMIN_URL.rsplit("/", 1)[0]
    try:
        yield f"{base}/{name}"
    finally:
        _close_django_connections()
        with _admin_connection() as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _close_django_connections() -> None:
    if "django.db" in sys.modules:
        from django.db import connections

        connections.close_all()
