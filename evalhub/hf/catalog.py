"""The catalog's studies as Hugging Face datasets: a prompt set's prompts, a submission's
responses, and conversations, in the layout Hugging Face datasets use for them (the one the
importer reads back: evalhub/importers/hf_layout.py).

- prompts: `id`, `context` (the utterances, oldest first), `references`;
- responses: those, plus `response` and `system` (the submitting system's slug);
- conversations: `id`, `domain`, `source`, `speakers` (system slugs, "human" for a
  person), `messages` (each {role, content, speaker}: role "user" for a person, "assistant"
  for a system, `speaker` the index into `speakers`), `metadata` (JSON text).
"""

from __future__ import annotations

import json
from functools import cache

from ..models import Conversation, PromptSet, Response, Submission
from .arrow import pa
from .bundle import Table
from .card import CardText

CHUNK = 2000


# The declared shapes, built on first use (pyarrow is not imported at app loading).
@cache
def prompts_schema():
    texts = pa.list_(pa.string())
    return pa.schema([("id", pa.string()), ("context", texts), ("references", texts)])


@cache
def responses_schema():
    return pa.schema([*prompts_schema(), ("response", pa.string()), ("system", pa.string())])


@cache
def conversations_schema():
    messages = pa.list_(
        pa.struct([("role", pa.string()), ("content", pa.string()), ("speaker", pa.int64())])
    )
    return pa.schema(
        [
            ("id", pa.string()),
            ("domain", pa.string()),
            ("source", pa.string()),
            ("speakers", pa.list_(pa.string())),
            ("messages", messages),
            ("metadata", pa.string()),
        ]
    )


def prompt_rows(prompt_set: PromptSet):
    prompts = prompt_set.prompts.order_by("position").values_list(
        "external_id", "context", "references"
    )
    for external_id, context, references in prompts.iterator(chunk_size=CHUNK):
        yield {"id": external_id, "context": context, "references": references or []}


def response_rows(submission: Submission):
    responses = (
        Response.objects.filter(submission=submission)
        .order_by("prompt__position")
        .values_list("prompt__external_id", "prompt__context", "prompt__references", "text")
    )
    system = submission.system.slug
    for external_id, context, references, text in responses.iterator(chunk_size=CHUNK):
        yield {
            "id": external_id,
            "context": context,
            "references": references or [],
            "response": text,
            "system": system,
        }


def conversation_row(conversation: Conversation) -> dict:
    """A conversation with its speakers (and their systems) and turns prefetched."""
    speakers = sorted(conversation.speakers.all(), key=lambda s: s.index)
    slugs = [s.system.slug if s.system_id else "human" for s in speakers]
    return {
        "id": conversation.external_id,
        "domain": conversation.domain,
        "source": conversation.source,
        "speakers": slugs,
        "messages": [
            {
                "role": "user" if slugs[turn.speaker] == "human" else "assistant",
                "content": turn.text,
                "speaker": turn.speaker,
            }
            for turn in sorted(conversation.turns.all(), key=lambda t: t.position)
        ],
        "metadata": json.dumps(conversation.metadata, ensure_ascii=False)
        if conversation.metadata
        else None,
    }


def prompt_tables(prompt_set: PromptSet) -> list[Table]:
    return [Table("prompts", lambda: prompt_rows(prompt_set), schema=prompts_schema())]


def prompt_card(prompt_set: PromptSet, *, license: str, citation: str) -> CardText:
    return CardText(
        title=prompt_set.name,
        description=prompt_set.description
        + (f"\n\nSource: {prompt_set.source}" if prompt_set.source else ""),
        license=license,
        citation=citation,
        source=prompt_set.get_absolute_url(),
    )


def response_tables(submission: Submission) -> list[Table]:
    return [
        Table(
            "responses",
            lambda: response_rows(submission),
            schema=responses_schema(),
            about=f"The responses of {submission.system.slug} to the prompt set "
            f"{submission.prompt_set.slug} (version {submission.prompt_set.version}).",
        )
    ]


def response_card(submission: Submission, *, license: str, citation: str) -> CardText:
    system = submission.system
    return CardText(
        title=f"{system.name} on {submission.prompt_set.name}",
        description=(system.description or f"Responses of the system {system.name}.")
        + f"\n\nPrompt set: {submission.prompt_set.name}.",
        license=license,
        citation=citation,
        source=system.get_absolute_url(),
    )
