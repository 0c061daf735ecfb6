"""Rows as a Parquet file, written one row group at a time.

A table either declares its Arrow schema (prompts, responses, conversations: their shape is
fixed, so a conversation's `messages` stay a list of {role, content} that `datasets` reads
as such) or lets the writer infer it from its first row group: booleans, integers, floats
and strings keep their types; a value that is nested (a task kind's labels per speaker, a
rating per dimension), or a column whose types disagree or that is empty in the first group,
becomes a column of JSON text, marked as such in the schema's metadata and on the card.
Inferred columns are fixed by the first group: a later row with a field the first rows
lacked is an error (as in the CSV export), never a column silently dropped.

Memory holds one row group: rows come from an iterator (a queryset's `.iterator()`), and
each group is written and released before the next is read.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice

from ..errors import UserInputError
from .arrow import pa, pq

ROW_GROUP = 1000
JSON_FLAG = b"evalhub.json"


class ExportError(UserInputError):
    """A table that cannot be written: rows that fit no one Parquet schema, or no rows
    and no declared schema to give even the columns. Its state, not the request, is at
    fault, hence 409; raised before a byte is sent, so the download is refused whole."""

    status_code = 409


@dataclass
class Written:
    rows: int
    row_groups: int
    schema: pa.Schema
    json_columns: list[str] = field(default_factory=list)


def _kind(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    return "json"


def infer_schema(rows: list[dict]) -> pa.Schema:
    """The schema of a first row group (see the module's docstring)."""
    seen: dict[str, set] = {}
    for row in rows:
        for key, value in row.items():
            kinds = seen.setdefault(key, set())
            if (kind := _kind(value)) is not None:
                kinds.add(kind)
    fields = []
    for name, kinds in seen.items():
        if kinds == {"bool"}:
            fields.append(pa.field(name, pa.bool_()))
        elif kinds == {"int"}:
            fields.append(pa.field(name, pa.int64()))
        elif kinds in ({"float"}, {"int", "float"}):
            fields.append(pa.field(name, pa.float64()))
        elif kinds == {"string"}:
            fields.append(pa.field(name, pa.string()))
        else:
            fields.append(pa.field(name, pa.string(), metadata={JSON_FLAG: b"true"}))
    return pa.schema(fields)


def json_columns(schema: pa.Schema) -> list[str]:
    return [f.name for f in schema if f.metadata and f.metadata.get(JSON_FLAG) == b"true"]


def _cell(name: str, value, arrow_type, as_json: bool, number: int):
    if value is None:
        return None
    if as_json:
        return json.dumps(value, ensure_ascii=False)
    if pa.types.is_int64(arrow_type):
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            raise ExportError(f"row {number}: '{name}' is {value!r}; the column holds integers.")
    elif pa.types.is_float64(arrow_type):
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise ExportError(f"row {number}: '{name}' is {value!r}; the column holds numbers.")
        return float(value)
    elif pa.types.is_boolean(arrow_type) and not isinstance(value, bool):
        raise ExportError(f"row {number}: '{name}' is {value!r}; the column holds booleans.")
    elif pa.types.is_string(arrow_type) and not isinstance(value, str):
        raise ExportError(f"row {number}: '{name}' is {value!r}; the column holds text.")
    return value


def _inferred_batch(rows: list[dict], schema: pa.Schema, first: int) -> pa.Table:
    as_json = set(json_columns(schema))
    names = set(schema.names)
    columns = {name: [] for name in schema.names}
    for number, row in enumerate(rows, first):
        if extra := set(row) - names:
            raise ExportError(
                f"row {number} has {', '.join(sorted(map(repr, extra)))}, which the first "
                f"{ROW_GROUP} rows lack."
            )
        for f in schema:
            columns[f.name].append(
                _cell(f.name, row.get(f.name), f.type, f.name in as_json, number)
            )
    return pa.Table.from_pydict(columns, schema=schema)


def groups(rows: Iterable[dict], size: int) -> Iterator[list[dict]]:
    iterator = iter(rows)
    while chunk := list(islice(iterator, size)):
        yield chunk


def write(
    rows: Iterable[dict], sink, *, schema: pa.Schema | None = None, row_group: int | None = None
) -> Written:
    """Write `rows` to `sink` (a path or a binary file) as one Parquet file, `row_group`
    rows (default ROW_GROUP) at a time."""
    row_group = row_group or ROW_GROUP
    writer = None
    written = Written(rows=0, row_groups=0, schema=schema or pa.schema([]))
    try:
        for chunk in groups(rows, row_group):
            if writer is None:
                if schema is None:
                    written.schema = infer_schema(chunk)
                writer = pq.ParquetWriter(sink, written.schema)
            if schema is None:
                table = _inferred_batch(chunk, written.schema, written.rows + 1)
            else:
                table = pa.Table.from_pylist(chunk, schema=schema)
            writer.write_table(table, row_group_size=len(chunk))
            written.rows += len(chunk)
            written.row_groups += 1
        if writer is None:
            if schema is None:
                # `datasets` cannot read a file without columns, and none can be inferred.
                raise ExportError("There is nothing to export yet: the table has no rows.")
            writer = pq.ParquetWriter(sink, written.schema)
    finally:
        if writer is not None:
            writer.close()
    written.json_columns = json_columns(written.schema)
    return written
