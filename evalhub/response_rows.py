"""Storing a submission's responses: one INSERT for the whole file, whatever its size.

``bulk_create`` builds a model instance and three bound parameters per row (and on SQLite
splits them into statements of 333 rows); a 100,000-response upload spent most of its time
there. Here the rows travel as one JSON array that the database unpacks itself
(``json_array_elements`` on PostgreSQL, ``json_each`` on SQLite), so an upload is a constant
number of statements and costs no Python object per row beyond its tuple. The foreign keys
and the one-response-per-prompt constraint are checked by the database as before.
"""

import json
from collections.abc import Sequence

from django.db import connection

from .models import Response

UNPACK = {
    "postgresql": "SELECT %s, (e->>0)::bigint, e->>1 FROM json_array_elements(%s::json) AS e",
    "sqlite": "SELECT %s, json_extract(value, '$[0]'), json_extract(value, '$[1]') "
    "FROM json_each(%s)",
}


def insert_responses(submission_id: int, rows: Sequence[tuple[int, str]]) -> None:
    """Store (prompt id, text) rows for one submission in a single statement."""
    if not rows:
        return
    unpack = UNPACK.get(connection.vendor)
    if unpack is None:
        Response.objects.bulk_create(
            Response(submission_id=submission_id, prompt_id=prompt_id, text=text)
            for prompt_id, text in rows
        )
        return
    table = connection.ops.quote_name(Response._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (submission_id, prompt_id, text) {unpack}",
            [submission_id, json.dumps(rows)],
        )
