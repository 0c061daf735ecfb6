"""A campaign's judgments as rows of its task kind (`kind.export_row`), as JSONL or CSV.

Rows are produced lazily, a chunk of judgments per query with everything `export_row`
reads joined in, so a download of any size holds one chunk in memory and costs a number
of queries proportional to its size divided by the chunk size.
"""

import csv
import io
import json
from collections.abc import Iterable, Iterator

from .models import Campaign, Judgment

CHUNK = 1000


def judgments(campaign: Campaign):
    return (
        Judgment.objects.filter(campaign=campaign)
        .select_related("campaign", "item", "worker", "assignment__batch")
        .order_by("pk")
    )


def export_rows(campaign: Campaign) -> Iterator[dict]:
    kind = campaign.kind
    for judgment in judgments(campaign).iterator(chunk_size=CHUNK):
        yield kind.export_row(judgment)


def jsonl_lines(rows: Iterable[dict]) -> Iterator[str]:
    for row in rows:
        yield json.dumps(row, ensure_ascii=False) + "\n"


def flat(value):
    """A CSV cell: nested values and booleans as JSON text, None as an empty cell."""
    if value is None:
        return ""
    if isinstance(value, dict | list | tuple | bool):
        return json.dumps(value, ensure_ascii=False)
    return value


def csv_lines(rows: Iterable[dict]) -> Iterator[str]:
    """A header from the first row's keys, then one line per row.

    A kind's rows share their keys; a row with a key the header lacks is an error rather
    than a column silently dropped.
    """
    buffer = io.StringIO()
    writer = None
    for row in rows:
        if writer is None:
            writer = csv.DictWriter(buffer, fieldnames=list(row), extrasaction="raise")
            writer.writeheader()
        writer.writerow({key: flat(value) for key, value in row.items()})
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
