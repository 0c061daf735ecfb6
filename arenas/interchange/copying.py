"""Storing imported battles on PostgreSQL: COPY into a temporary table while the file is
checked, then a few INSERT ... SELECT statements, whatever the file's size.

Through the ORM a million battles took some fifteen minutes on the project's machine: two
readings of the file, each line parsed twice, and a battle cost an INSERT row built by the
ORM and a psycopg array element quoted in Python. Here the one reading that checks the file
also writes each checked battle to `Staging` (COPY, formatted by psycopg's C code), in the
same transaction; nothing reaches the arena's tables until the whole file is checked and
its models matched, and a refused file only drops the temporary table (the transaction is
rolled back). Then `store`:

1. locks the arena's row (two imports into one arena wait for each other);
2. deletes from the staging table the battles the arena already has (by question_id, or
   content hash): what is left is new, so an import again stores nothing;
3. inserts the rest into arenas_battle in the file's order (an index on the staged line,
   not a sort of the wide rows), the systems by their number in the file (an array, not a
   join),
   every other column at its model default (a field added to Battle later gets its
   default here too, as through the ORM);
4. inserts the conversations' turns and answers, when the file has conversations.

The values of each battle are rows.battle_values's, as the ORM writer's are, so both
store the same battles (bench/bench_arena_import.py compares them).
"""

from __future__ import annotations

from datetime import datetime

from django.db import connection
from django.db.models import Model
from django.utils import timezone

from evalhub.models import System

from ..models import Arena, Battle, BattleAnswer, BattleTurn
from .reading import ParsedBattle, to_json
from .rows import battle_values

STAGING = "arenas_import_staging"
STAGING_COLUMNS = (
    ("line", "bigint"),
    ("question_id", "text"),
    ("system_a", "integer"),  # the model's number in Staging.models, from 1
    ("system_b", "integer"),
    ("vote", "text"),
    ("voter_ref", "text"),
    ("turns", "integer"),
    ("anonymous", "boolean"),
    ("language", "text"),
    ("started_at", "timestamptz"),
    ("tokens_a", "bigint"),
    ("tokens_b", "bigint"),
    ("style_a", "jsonb"),
    ("style_b", "jsonb"),
    ("extra", "jsonb"),
    ("exchanges", "jsonb"),  # [[prompt, answer of a, answer of b], ...] or NULL
)


def available() -> bool:
    return connection.vendor == "postgresql"


class Staging:
    """The temporary table and the COPY filling it; `take` is reading.check's sink. Open it
    inside the import's transaction."""

    def __init__(self):
        self.now = timezone.now()
        self.conversations = 0
        # Each model's number, in the order the file names them: the staged rows hold the
        # number, and `store` subscripts an array of system ids with it (no join).
        self.models: dict[str, int] = {}
        self._cursor = None
        self._copying = None
        self._copy = None

    def __enter__(self) -> Staging:
        self._cursor = connection.cursor()
        columns = ", ".join(f"{name} {kind}" for name, kind in STAGING_COLUMNS)
        self._cursor.execute(f"CREATE TEMPORARY TABLE {STAGING} ({columns})")
        names = ", ".join(name for name, _ in STAGING_COLUMNS)
        # The psycopg cursor itself: Django's wrapper has no COPY.
        self._copying = self._cursor.cursor.copy(f"COPY {STAGING} ({names}) FROM STDIN")
        self._copy = self._copying.__enter__()
        return self

    def take(self, parsed: ParsedBattle) -> None:
        values = battle_values(parsed, self.now)
        models = self.models
        system_a = models.get(parsed.model_a) or models.setdefault(parsed.model_a, len(models) + 1)
        system_b = models.get(parsed.model_b) or models.setdefault(parsed.model_b, len(models) + 1)
        exchanges = None
        if parsed.exchanges:
            self.conversations += 1
            exchanges = to_json([list(exchange) for exchange in parsed.exchanges])
        self._copy.write_row(
            (
                parsed.line,
                values["question_id"],
                system_a,
                system_b,
                values["vote"],
                values["voter_ref"],
                values["turns"],
                values["anonymous"],
                values["language"],
                values["started_at"],
                values["tokens_a"],
                values["tokens_b"],
                to_json(values["style_a"]),
                to_json(values["style_b"]),
                parsed.extra_json if parsed.extra_json is not None else to_json(values["extra"]),
                exchanges,
            )
        )

    def finish_copy(self) -> None:
        """End the COPY (the file has been read); the table may then be queried."""
        if self._copying is not None:
            copying, self._copying = self._copying, None
            copying.__exit__(None, None, None)

    def __exit__(self, kind, error, traceback):
        if self._copying is not None:
            copying, self._copying = self._copying, None
            copying.__exit__(kind, error, traceback)
        if kind is None:
            self._cursor.execute(f"DROP TABLE {STAGING}")
        # On an error the transaction is rolled back, and the temporary table with it.
        self._cursor.close()

    def store(self, arena: Arena, systems: dict[str, System]) -> int:
        """Insert the staged battles the arena does not have yet; how many were new."""
        self.finish_copy()
        cursor = self._cursor
        cursor.execute(f"SELECT 1 FROM {Arena._meta.db_table} WHERE id = %s FOR UPDATE", [arena.pk])
        battle_table = Battle._meta.db_table
        cursor.execute(
            f"DELETE FROM {STAGING} s USING {battle_table} b "
            "WHERE b.arena_id = %s AND b.question_id = s.question_id",
            [arena.pk],
        )
        # The rows are in the file's order already (COPY appends): an index on the line
        # lets the INSERT read them in that order instead of sorting the wide rows on disk.
        cursor.execute(f"CREATE INDEX ON {STAGING} (line)")
        # A temporary table is never analyzed by itself; the plans need only these columns.
        cursor.execute(f"ANALYZE {STAGING} (line, question_id)")
        ids = [systems[name].pk for name in self.models]
        given = {
            "arena_id": ("%s", [arena.pk]),
            "system_a_id": ("(%s::bigint[])[s.system_a]", [ids]),
            "system_b_id": ("(%s::bigint[])[s.system_b]", [ids]),
            "source": ("%s", [Battle.Source.IMPORTED.value]),
            "voter_platform": ("%s", [Battle.Platform.IMPORTED.value]),
            "public_id": ("gen_random_uuid()", []),
            "voted_at": ("s.started_at", []),
            **{
                column: (f"s.{column}", [])
                for column in (
                    "question_id",
                    "anonymous",
                    "started_at",
                    "voter_ref",
                    "language",
                    "turns",
                    "vote",
                    "tokens_a",
                    "tokens_b",
                    "style_a",
                    "style_b",
                    "extra",
                )
            },
        }
        columns, selected, params = _select_list(Battle, given, self.now)
        cursor.execute(
            f"INSERT INTO {battle_table} ({columns}) SELECT {selected} FROM {STAGING} s "
            "ORDER BY s.line ON CONFLICT (arena_id, question_id) DO NOTHING",
            params,
        )
        created = cursor.rowcount
        if self.conversations:
            self._store_conversations(arena)
        return created

    def _store_conversations(self, arena: Arena) -> None:
        battle_table = Battle._meta.db_table
        turn_table = BattleTurn._meta.db_table
        exchanges = (
            f"FROM {STAGING} s JOIN {battle_table} b "
            "ON b.arena_id = %s AND b.question_id = s.question_id "
            "CROSS JOIN LATERAL jsonb_array_elements(s.exchanges) WITH ORDINALITY AS e(x, n) "
            "WHERE s.exchanges IS NOT NULL"
        )
        given = {
            "battle_id": ("b.id", []),
            "number": ("e.n", []),
            "prompt": ("e.x ->> 0", []),
        }
        columns, selected, params = _select_list(BattleTurn, given, self.now)
        self._cursor.execute(
            f"INSERT INTO {turn_table} ({columns}) SELECT {selected} {exchanges} "
            "ORDER BY s.line, e.n",
            [*params, arena.pk],
        )
        given = {
            "turn_id": ("t.id", []),
            "side": ("v.side", []),
            "status": ("%s", [BattleAnswer.Status.DONE.value]),
            "text": ("e.x ->> v.i", []),
        }
        columns, selected, params = _select_list(BattleAnswer, given, self.now)
        self._cursor.execute(
            f"INSERT INTO {BattleAnswer._meta.db_table} ({columns}) SELECT {selected} "
            f"FROM {STAGING} s JOIN {battle_table} b "
            "ON b.arena_id = %s AND b.question_id = s.question_id "
            "CROSS JOIN LATERAL jsonb_array_elements(s.exchanges) WITH ORDINALITY AS e(x, n) "
            f"JOIN {turn_table} t ON t.battle_id = b.id AND t.number = e.n "
            "CROSS JOIN (VALUES ('a', 1), ('b', 2)) AS v(side, i) "
            "WHERE s.exchanges IS NOT NULL ORDER BY s.line, e.n, v.i",
            [*params, arena.pk],
        )


def _select_list(model: type[Model], given: dict, now: datetime) -> tuple[str, str, list]:
    """(columns, select expressions, their parameters) for every concrete column of
    `model` but the key: `given`'s expression, else the field's default."""
    columns, selected, params = [], [], []
    for field in model._meta.concrete_fields:
        if field.primary_key:
            continue
        columns.append(connection.ops.quote_name(field.column))
        if field.column in given:
            expression, values = given[field.column]
            selected.append(expression)
            params.extend(values)
            continue
        if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
            value = now
        else:
            value = field.get_default()
        selected.append("%s")
        params.append(field.get_db_prep_save(value, connection))
    missing = set(given) - {field.column for field in model._meta.concrete_fields}
    assert not missing, f"not columns of {model.__name__}: {missing}"
    return ", ".join(columns), ", ".join(selected), params
