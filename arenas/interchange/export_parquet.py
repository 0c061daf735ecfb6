"""An arena's voted battles as a Hugging Face dataset (evalhub/hf), in the columns of
Chatbot Arena's own published datasets: the clean-battle line of `export.battle_line`,
with the conversations as lists of {role, content} and what is nested (`conv_metadata`,
EvalHub's own `evalhub`) as JSON text. The other fields of an imported line, which differ
from one source to another, go together into `extra` (JSON text): a table has one schema.

Voters appear as the JSONL export's pseudonyms, never their accounts.
"""

from __future__ import annotations

import json
from functools import cache

from evalhub.hf.arrow import pa
from evalhub.hf.bundle import Table
from evalhub.hf.card import CardText

from ..models import Arena
from .export import battle_lines


@cache
def schema():
    """Chatbot Arena's clean-battle columns (built on first use: pyarrow is not imported at
    app loading)."""
    messages = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
    return pa.schema(
        [
            ("question_id", pa.string()),
            ("model_a", pa.string()),
            ("model_b", pa.string()),
            ("winner", pa.string()),
            ("judge", pa.string()),
            ("turn", pa.int64()),
            ("anony", pa.bool_()),
            ("language", pa.string()),
            ("tstamp", pa.float64()),
            ("conversation_a", messages),
            ("conversation_b", messages),
            ("conv_metadata", pa.string()),
            ("evalhub", pa.string()),
            ("extra", pa.string()),
        ]
    )


JSON_COLUMNS = ("conv_metadata", "evalhub", "extra")


def parquet_row(line: dict) -> dict:
    row = {name: line.pop(name, None) for name in schema().names if name not in JSON_COLUMNS}
    row["conv_metadata"] = json.dumps(line.pop("conv_metadata"), ensure_ascii=False)
    row["evalhub"] = json.dumps(line.pop("evalhub"), ensure_ascii=False)
    row["extra"] = json.dumps(line, ensure_ascii=False) if line else None
    return row


def tables(arena: Arena) -> list[Table]:
    return [
        Table(
            "battles",
            lambda: (parquet_row(line) for line in battle_lines(arena)),
            schema=schema(),
            about="One row per voted battle, Chatbot Arena's clean-battle fields; "
            "`conv_metadata`, `evalhub` and `extra` are JSON text.",
        )
    ]


def card_text(arena: Arena, *, license: str, citation: str) -> CardText:
    return CardText(
        title=arena.name,
        description=arena.description
        or f'Voted battles of the EvalHub arena "{arena.name}", in Chatbot Arena\'s format.',
        license=license,
        citation=citation,
        source=arena.get_absolute_url(),
    )
