"""A judge run's automatic judgments as a Hugging Face dataset (evalhub/hf): one row per
item (or arena battle) the judge answered, with its payload in the task kind's judgment
schema (JSON text, as in the campaign's export), the reply as the model wrote it, and what
it cost. What the run's page shows its manager, and no more."""

from __future__ import annotations

import json
from functools import cache

from evalhub.hf.arrow import pa
from evalhub.hf.bundle import Table
from evalhub.hf.card import CardText

from .models import AutomaticJudgment, JudgeRun

CHUNK = 1000


@cache
def schema():
    """The columns (built on first use: pyarrow is not imported at app loading)."""
    return pa.schema(
        [
            ("judge", pa.string()),
            ("rubric", pa.string()),
            ("rubric_version", pa.int64()),
            ("task_kind", pa.string()),
            ("campaign", pa.string()),
            ("item", pa.int64()),
            ("conversation", pa.string()),
            ("arena", pa.string()),
            ("battle", pa.string()),
            ("status", pa.string()),
            ("payload", pa.string()),
            ("raw_text", pa.string()),
            ("error", pa.string()),
            ("attempts", pa.int64()),
            ("prompt_tokens", pa.int64()),
            ("completion_tokens", pa.int64()),
            ("created", pa.string()),
        ]
    )


def rows(run: JudgeRun):
    judgments = (
        AutomaticJudgment.objects.filter(run=run)
        .select_related("item__conversation", "battle")
        .order_by("item__position", "battle__started_at", "pk")
    )
    for judgment in judgments.iterator(chunk_size=CHUNK):
        item, battle = judgment.item, judgment.battle
        yield {
            "judge": run.judge.slug,
            "rubric": run.rubric.name,
            "rubric_version": run.rubric.version,
            "task_kind": run.rubric.task_kind,
            "campaign": run.campaign.slug if run.campaign_id else None,
            "item": item.position if item else None,
            "conversation": item.conversation.external_id if item and item.conversation else None,
            "arena": run.arena.slug if run.arena_id else None,
            "battle": battle.question_id if battle else None,
            "status": judgment.status,
            "payload": json.dumps(judgment.payload, ensure_ascii=False),
            "raw_text": judgment.raw_text,
            "error": judgment.error,
            "attempts": judgment.attempts,
            "prompt_tokens": judgment.prompt_tokens,
            "completion_tokens": judgment.completion_tokens,
            "created": judgment.created.isoformat(),
        }


def tables(run: JudgeRun) -> list[Table]:
    return [
        Table(
            "automatic_judgments",
            lambda: rows(run),
            schema=schema(),
            about="One row per item or battle the judge answered; `payload` (JSON text) has "
            "the task kind's judgment fields, empty when the reply did not parse.",
        )
    ]


def card_text(run: JudgeRun, *, license: str, citation: str) -> CardText:
    return CardText(
        title=f"{run.judge.name} on {run.target_name}",
        description=f'Automatic judgments of the judge "{run.judge.name}" with the rubric '
        f"{run.rubric.name} (version {run.rubric.version}) on {run.target_name}, made on "
        "EvalHub.",
        license=license,
        citation=citation,
        source=run.get_absolute_url(),
    )
