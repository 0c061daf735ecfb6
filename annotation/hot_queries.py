"""The queries behind every page a crowdworker loads (an item, and the submit of it), and
allocation's look at what the worker holds (every start link), with their SQL written once
per database connection instead of compiled on every request.

The ORM turns a queryset into SQL each time it is evaluated. For the two reads (the
assignment with its campaign and worker, and the batch's items with a judged flag) that
compilation was about a third of a judgment's CPU (bench/profile_serving.py), for the same
text every time; the judgment's INSERT is compiled the same way on every submit. Here the
text is built from the models' metadata (tables and columns, so it follows the
migrations), values pass through the converters the ORM would apply (``get_db_prep_save``
on the way in), and instances are made with ``Model.from_db`` as the ORM makes them;
tests/annotation/test_hot_queries.py checks them against the ORM's.

On PostgreSQL they run on a cursor that binds parameters on the server, so that psycopg
prepares them (the connection's ``prepare_threshold``, evalhub/settings.py): PostgreSQL
then parses and plans each once per connection instead of on every request. The ORM's own
cursors bind on the client and are never prepared.
"""

from dataclasses import dataclass
from functools import lru_cache

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import BooleanField, Value

from .models import Assignment, Campaign, Item, Judgment, Worker


@dataclass(frozen=True)
class Columns:
    """A model's concrete columns in a SELECT, and how to make an instance of them."""

    model: type
    converters: tuple  # per column: (converters, expression), as the ORM's compiler has them

    @classmethod
    def of(cls, model, connection) -> "Columns":
        converters = []
        for field in model._meta.concrete_fields:
            column = field.get_col(model._meta.db_table)
            found = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
            converters.append((tuple(found), column))
        return cls(model, tuple(converters))

    def sql(self, connection) -> str:
        q = connection.ops.quote_name
        table = q(self.model._meta.db_table)
        return ", ".join(f"{table}.{q(f.column)}" for f in self.model._meta.concrete_fields)

    def __len__(self):
        return len(self.converters)

    def index(self, field) -> int:
        """Position of ``field``'s column in the SELECT."""
        return list(self.model._meta.concrete_fields).index(field)

    def build(self, values, connection):
        converted = []
        for value, (converters, expression) in zip(values, self.converters, strict=True):
            for converter in converters:
                value = converter(value, expression, connection)
            converted.append(value)
        return self.model.from_db(connection.alias, None, converted)


@dataclass(frozen=True)
class AssignmentQuery:
    sql: str
    assignment: Columns
    campaign: Columns
    worker: Columns


@dataclass(frozen=True)
class BatchItemsQuery:
    sql: str
    item: Columns
    judged: tuple  # (converters, expression)


def _connection():
    return connections[DEFAULT_DB_ALIAS]


def _cursor(connection):
    """Django's cursor (health check, thread check as usual); on PostgreSQL around a
    server-binding psycopg cursor, which psycopg may prepare. Not while queries are logged
    (DEBUG, tests counting them): a prepared statement's execution leaves no SQL text to log."""
    if connection.vendor != "postgresql" or connection.queries_logged:
        return connection.cursor()
    import psycopg

    connection.close_if_health_check_failed()
    connection.ensure_connection()
    with connection.wrap_database_errors:
        return connection._prepare_cursor(psycopg.Cursor(connection.connection))


@lru_cache(maxsize=64)  # one per connection: each thread of a web process has its own
def _assignment_query(connection) -> AssignmentQuery:
    q = connection.ops.quote_name
    a, c, w = (Columns.of(m, connection) for m in (Assignment, Campaign, Worker))
    assignments, campaigns, workers = (q(m._meta.db_table) for m in (Assignment, Campaign, Worker))
    field = Assignment._meta.get_field
    sql = (
        f"SELECT {a.sql(connection)}, {c.sql(connection)}, {w.sql(connection)} "
        f"FROM {assignments} "
        f"INNER JOIN {campaigns} ON {assignments}.{q(field('campaign').column)} = "
        f"{campaigns}.{q(Campaign._meta.pk.column)} "
        f"LEFT OUTER JOIN {workers} ON {assignments}.{q(field('worker').column)} = "
        f"{workers}.{q(Worker._meta.pk.column)} "
        f"WHERE {assignments}.{q(field('public_id').column)} = %s"
    )
    return AssignmentQuery(sql, a, c, w)


def assignment_with_campaign_and_worker(public_id) -> Assignment | None:
    """The assignment with this public id, its campaign and worker loaded (as
    ``select_related("campaign", "worker")``); None if there is none."""
    connection = _connection()
    query = _assignment_query(connection)
    value = Assignment._meta.get_field("public_id").get_db_prep_value(public_id, connection)
    with _cursor(connection) as cursor:
        cursor.execute(query.sql, [value])
        row = cursor.fetchone()
    if row is None:
        return None
    n_a, n_c = len(query.assignment), len(query.campaign)
    assignment = query.assignment.build(row[:n_a], connection)
    campaign = query.campaign.build(row[n_a : n_a + n_c], connection)
    Assignment.campaign.field.set_cached_value(assignment, campaign)
    if assignment.worker_id is not None:
        worker = query.worker.build(row[n_a + n_c :], connection)
        Assignment.worker.field.set_cached_value(assignment, worker)
    return assignment


@lru_cache(maxsize=64)
def _batch_items_query(connection) -> BatchItemsQuery:
    q = connection.ops.quote_name
    item = Columns.of(Item, connection)
    items, judgments = q(Item._meta.db_table), q(Judgment._meta.db_table)
    field = Judgment._meta.get_field
    sql = (
        f"SELECT {item.sql(connection)}, EXISTS (SELECT 1 FROM {judgments} "
        f"WHERE {judgments}.{q(field('assignment').column)} = %s "
        f"AND {judgments}.{q(field('item').column)} = {items}.{q(Item._meta.pk.column)}) "
        f"FROM {items} WHERE {items}.{q(Item._meta.get_field('batch').column)} = %s "
        f"ORDER BY {items}.{q(Item._meta.get_field('order_in_batch').column)} ASC"
    )
    judged = Value(False, output_field=BooleanField())
    converters = connection.ops.get_db_converters(judged) + judged.get_db_converters(connection)
    return BatchItemsQuery(sql, item, (tuple(converters), judged))


class BatchEntry:
    """One item of a batch: its id and whether this assignment judged it, with the item
    itself made (``.item``, with ``judged`` set) only when asked for. A page shows one item
    of the batch and counts the others; making all twenty instances (converters, JSON
    decoding, ``Model.from_db``) was a fifth of a judgment's CPU."""

    __slots__ = ("pk", "judged", "_row", "_query", "_connection", "_item")

    def __init__(self, pk, judged, row, query, connection):
        self.pk, self.judged = pk, judged
        self._row, self._query, self._connection = row, query, connection
        self._item = None

    @property
    def item(self) -> Item:
        if self._item is None:
            self._item = self._query.item.build(self._row, self._connection)
            self._item.judged = self.judged
        return self._item


def batch_items(assignment: Assignment) -> list[BatchEntry]:
    """The items of the assignment's batch in order, each with `judged` (this assignment
    has a judgment of it)."""
    connection = _connection()
    query = _batch_items_query(connection)
    with _cursor(connection) as cursor:
        cursor.execute(query.sql, [assignment.pk, assignment.batch_id])
        rows = cursor.fetchall()
    n = len(query.item)
    pk_index = query.item.index(Item._meta.pk)
    converters, expression = query.judged
    entries = []
    for row in rows:
        judged = row[n]
        for converter in converters:
            judged = converter(judged, expression, connection)
        entries.append(BatchEntry(row[pk_index], bool(judged), row[:n], query, connection))
    return entries


@dataclass(frozen=True)
class InsertQuery:
    sql: str
    fields: tuple  # the concrete fields after the primary key, in the VALUES' order


@lru_cache(maxsize=64)
def _judgment_insert(connection) -> InsertQuery:
    q = connection.ops.quote_name
    meta = Judgment._meta
    fields = tuple(f for f in meta.concrete_fields if f is not meta.pk)
    columns = ", ".join(q(f.column) for f in fields)
    placeholders = ", ".join(["%s"] * len(fields))
    sql = (
        f"INSERT INTO {q(meta.db_table)} ({columns}) VALUES ({placeholders}) "
        f"RETURNING {q(meta.db_table)}.{q(meta.pk.column)}"
    )
    return InsertQuery(sql, fields)


def insert_judgment(judgment: Judgment) -> Judgment:
    """Store a new judgment as ``judgment.save()`` would (``auto_now_add`` included) and
    return it saved. No model signals are sent: none listens to Judgment (a test checks
    that), and this is the one INSERT of every submit. An IntegrityError (the unique
    (assignment, item) constraint) propagates as from the ORM."""
    connection = _connection()
    query = _judgment_insert(connection)
    values = [f.get_db_prep_save(f.pre_save(judgment, True), connection) for f in query.fields]
    with _cursor(connection) as cursor:
        cursor.execute(query.sql, values)
        (judgment.pk,) = cursor.fetchone()
    judgment._state.adding = False
    judgment._state.db = connection.alias
    return judgment


@dataclass(frozen=True)
class HeldQuery:
    sql: str
    assignment: Columns


@lru_cache(maxsize=64)
def _held_query(connection) -> HeldQuery:
    q = connection.ops.quote_name
    assignment = Columns.of(Assignment, connection)
    table = q(Assignment._meta.db_table)

    def column(name):
        return f"{table}.{q(Assignment._meta.get_field(name).column)}"

    holding = ", ".join(["%s"] * len(Assignment.HOLDING))
    # Every holding row carries their count (the window is taken before the LIMIT); the
    # started one, if any, comes first.
    sql = (
        f"SELECT {assignment.sql(connection)}, COUNT(*) OVER () FROM {table} "
        f"WHERE {column('campaign')} = %s AND {column('worker')} = %s "
        f"AND {column('status')} IN ({holding}) "
        f"ORDER BY CASE WHEN {column('status')} = %s THEN 0 ELSE 1 END, {column('id')} ASC "
        f"LIMIT 1"
    )
    return HeldQuery(sql, assignment)


def started_and_held(campaign: Campaign, worker: Worker) -> tuple[Assignment | None, int]:
    """The worker's started assignment in the campaign, its campaign set (None if there is
    none), and how many of the campaign's batches the worker holds (``Assignment.HOLDING``),
    in one statement: allocation asks both on every start link."""
    connection = _connection()
    query = _held_query(connection)
    statuses = [status.value for status in Assignment.HOLDING]
    with _cursor(connection) as cursor:
        cursor.execute(
            query.sql, [campaign.pk, worker.pk, *statuses, Assignment.Status.STARTED.value]
        )
        row = cursor.fetchone()
    if row is None:
        return None, 0
    assignment = query.assignment.build(row[:-1], connection)
    held = int(row[-1])
    if assignment.status != Assignment.Status.STARTED:
        return None, held
    Assignment.campaign.field.set_cached_value(assignment, campaign)
    return assignment, held
