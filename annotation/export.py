"""A campaign's judgments as rows of its task kind, as JSONL or CSV.

JSONL keeps each kind's `export_row` as it is, nested values included, plus the item's
`role` (task, gold or training) as the last field of every row, JSONL and CSV alike. CSV gives every
field its own column (a label per speaker, a rating per dimension, a choice per feature):
a kind's `csv_rows` may split a judgment into several lines (one per bot turn) and
`flat_row` spreads what is left nested into `key_subkey` columns, so no cell holds JSON.

Staff exports (`platform_ids=True`) also carry, beside EvalHub's own `worker` id, the
crowd platform's ids: `platform` (the worker's provider), `platform_worker_id` (their MTurk
worker id or Prolific participant id) and `platform_submission_id` (the MTurk assignment
id or Prolific submission id, `Assignment.provider_ref`). Researchers' exports never do.

Rows are produced lazily, a chunk of judgments per query with everything `export_row`
reads joined in, so a download of any size holds one chunk in memory and costs a number
of queries proportional to its size divided by the chunk size.
"""

import io
import json
from collections.abc import Iterable, Iterator

from evalhub import csv_safe

from .models import Campaign, Judgment

CHUNK = 1000


def judgments(campaign: Campaign):
    return (
        Judgment.objects.filter(campaign=campaign)
        .select_related("campaign", "item", "worker", "assignment__batch")
        .order_by("pk")
    )


def _platform_ids(judgment) -> dict:
    return {
        "platform": judgment.worker.provider,
        "platform_worker_id": judgment.worker.external_id,
        "platform_submission_id": judgment.assignment.provider_ref,
    }


def export_row(kind, judgment, *, platform_ids: bool = False) -> dict:
    """The kind's row, with the item's `role` (task, gold or training): an analysis must be
    able to leave attention checks out, so every export says which rows are which. Staff
    exports add the platform's worker and submission ids."""
    row = {**kind.export_row(judgment), "role": judgment.item.role}
    return {**row, **_platform_ids(judgment)} if platform_ids else row


def csv_rows(kind, judgment, *, platform_ids: bool = False) -> list[dict]:
    extra = _platform_ids(judgment) if platform_ids else {}
    return [{**row, "role": judgment.item.role, **extra} for row in kind.csv_rows(judgment)]


def export_rows(campaign: Campaign, *, platform_ids: bool = False) -> Iterator[dict]:
    kind = campaign.kind
    for judgment in judgments(campaign).iterator(chunk_size=CHUNK):
        yield export_row(kind, judgment, platform_ids=platform_ids)


def export_csv_rows(campaign: Campaign, *, platform_ids: bool = False) -> Iterator[dict]:
    kind = campaign.kind
    for judgment in judgments(campaign).iterator(chunk_size=CHUNK):
        for row in csv_rows(kind, judgment, platform_ids=platform_ids):
            yield flat_row(row)


def flat_row(row: dict) -> dict:
    """One column per field: a dict becomes `key_subkey` columns, recursively; a list of
    plain values becomes one cell, its values joined by "; " in order."""
    flat = {}
    for key, value in row.items():
        if isinstance(value, dict):
            for subkey, subvalue in flat_row(value).items():
                flat[f"{key}_{subkey}"] = subvalue
        elif isinstance(value, list | tuple):
            flat[key] = "; ".join("" if v is None else str(v) for v in value)
        else:
            flat[key] = value
    return flat


def jsonl_lines(rows: Iterable[dict]) -> Iterator[str]:
    for row in rows:
        yield json.dumps(row, ensure_ascii=False) + "\n"


def flat(value):
    """A CSV cell: booleans as JSON text (what is still nested, too), None as an empty cell."""
    if value is None:
        return ""
    if isinstance(value, dict | list | tuple | bool):
        return json.dumps(value, ensure_ascii=False)
    return value


def csv_lines(rows: Iterable[dict]) -> Iterator[str]:
    """A header from the first row's keys, then one line per row.

    A kind's rows share their keys; a row with a key the header lacks is an error rather
    than a column silently dropped. Cells that a spreadsheet would run as formulas are
    neutralised (evalhub/csv_safe.py).
    """
    buffer = io.StringIO()
    writer = None
    for row in rows:
        if writer is None:
            writer = csv_safe.DictWriter(buffer, fieldnames=list(row), extrasaction="raise")
            writer.writeheader()
        writer.writerow({key: flat(value) for key, value in row.items()})
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
