"""A tournament as a Hugging Face dataset (evalhub/hf): the two tables of its JSONL export
(tournaments/exporters.py), the same rows in Parquet.

- `conversations`: the conversations its campaign's items show (or would be built from),
  in the catalog's Hugging Face layout (evalhub/hf/catalog.py: `speakers` and `messages`);
- `judgments`: one row per judgment of a task item, the task kind's export row (gold checks
  left out, as in the JSONL export), nested values as JSON text.
"""

from evalhub.hf.bundle import Table
from evalhub.hf.card import CardText
from evalhub.hf.catalog import conversation_row, conversations_schema
from evalhub.models import Conversation

from . import exporters
from .models import Tournament


def conversation_rows(tournament: Tournament):
    ordered = exporters.in_external_id_order(exporters.conversation_ids(tournament))
    for start in range(0, len(ordered), exporters.CHUNK):
        chunk = Conversation.objects.filter(pk__in=ordered[start : start + exporters.CHUNK])
        for conversation in chunk.prefetch_related("speakers__system", "turns").order_by(
            "external_id"
        ):
            yield conversation_row(conversation)


def tables(tournament: Tournament) -> list[Table]:
    return [
        Table(
            "conversations",
            lambda: conversation_rows(tournament),
            schema=conversations_schema(),
            about='The conversations judged: `speakers` are system slugs ("human" for a '
            "person); each message's `speaker` indexes them.",
        ),
        Table(
            "judgments",
            lambda: exporters.judgment_lines(tournament),
            about="One row per judgment of a task item, the task kind's fields "
            "(`conversation` is the conversation's `id`).",
        ),
    ]


def card_text(tournament: Tournament, *, license: str, citation: str) -> CardText:
    return CardText(
        title=tournament.name,
        description=tournament.description
        or f'The EvalHub {tournament.get_kind_display()} tournament "{tournament.name}".',
        license=license,
        citation=citation,
        source=tournament.get_absolute_url(),
    )
