"""The inputs of the dimensional reports, from the database: ABC-Eval behaviour labels,
Likert ratings and comparative verdicts of one campaign, or every campaign of an imported
study together.

Bounded queries as in ``analysis.inputs.judgments``: one ``values_list`` query per campaign (the
payload and the parts of the item's content the analysis needs, never the conversation
text). Only task items count; payloads are read as the kinds write them (an ABC-Eval payload
holds the labels present, each a list of flags per bot turn in ``bot_turns`` order).
"""

from __future__ import annotations

from django.db.models import QuerySet

from analysis.reports import BehaviourData, ComparativeData, LikertData, StudyData
from annotation.models import Campaign, Study

__all__ = ["DIMENSIONAL_KINDS", "campaign_inputs", "study_inputs"]

DIMENSIONAL_KINDS = ("abc_eval", "likert", "comparative", "chat")


def _rows(queryset: QuerySet, *fields: str):
    return queryset.order_by("pk").values_list("pk", "payload", *fields)


def _column_names(cls) -> list[str]:
    """The per-entry fields of an input dataclass, in order (not its subject and kind)."""
    return [f for f in cls.__dataclass_fields__ if f not in ("subject", "kind")]


def _from_rows(cls, slug: str, rows: list[tuple]):
    """The dataclass whose columns are `rows` (one tuple per entry, fields in order)."""
    names = _column_names(cls)
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(names)
    rows.clear()  # the dataclass turns the columns into arrays: no need for both at once
    return cls(subject=slug, **dict(zip(names, columns, strict=True)))


def behaviour_data(slug: str, queryset: QuerySet) -> BehaviourData:
    rows = [
        (meta["conversation"], meta["system"], int(position), pk, label, bool(flag))
        for pk, payload, bot_turns, meta in _rows(
            queryset, "item__content__bot_turns", "item__content__meta"
        )
        for label, flags in sorted((payload.get("labels") or {}).items())
        for position, flag in zip(bot_turns, flags, strict=False)
    ]
    return _from_rows(BehaviourData, slug, rows)


def likert_data(slug: str, queryset: QuerySet) -> LikertData:
    rows = []
    for pk, payload, bot_turns, meta in _rows(
        queryset, "item__content__bot_turns", "item__content__meta"
    ):
        for dimension, rating in sorted((payload.get("ratings") or {}).items()):
            # A turn-level rating is a list of scores in bot_turns order.
            scored = (
                zip((int(p) for p in bot_turns or []), rating, strict=False)
                if isinstance(rating, list)
                else [(None, rating)]
            )
            for turn, score in scored:
                row = (meta["conversation"], meta["system"], pk, dimension, int(score), turn)
                rows.append(row)
    return _from_rows(LikertData, slug, rows)


def comparative_data(slug: str, queryset: QuerySet) -> ComparativeData:
    rows = [
        (
            item,
            pk,
            meta["a"],
            meta["b"],
            "+".join(meta["systems_a"]),
            "+".join(meta["systems_b"]),
            dimension,
            choice,
        )
        for pk, payload, item, meta in _rows(queryset, "item_id", "item__content__meta")
        for dimension, choice in sorted((payload.get("choices") or {}).items())
    ]
    return _from_rows(ComparativeData, slug, rows)


def chat_ratings_data(slug: str, queryset: QuerySet) -> LikertData:
    """A chat campaign's closing ratings as dialogue-level Likert entries of the system the
    worker talked with; chats that ended incomplete were not rated and carry no ratings."""
    rows = [
        (payload["conversation"], meta["system"], pk, dimension, int(score), None)
        for pk, payload, meta in _rows(queryset, "item__content__meta")
        if payload.get("complete")
        for dimension, score in sorted((payload.get("ratings") or {}).items())
    ]
    return _from_rows(LikertData, slug, rows)


_LOADERS = {
    "abc_eval": behaviour_data,
    "likert": likert_data,
    "comparative": comparative_data,
    "chat": chat_ratings_data,
}


def campaign_inputs(slug: str, kind: str, queryset: QuerySet):
    """The report inputs of one campaign of a dimensional kind."""
    return _LOADERS[kind](slug, queryset)


def _concatenate(parts: list, cls):
    """One dataclass of every field's entries in turn (the study's campaigns together)."""
    if not parts:
        return None
    import numpy as np  # here, not at app start-up (the signals import this module)

    fields = _column_names(cls)
    return cls(
        subject=parts[0].subject,
        **{f: np.concatenate([getattr(part, f) for part in parts]) for f in fields},
    )


def study_inputs(study: Study, judgments) -> StudyData:
    """Every campaign of the study, by kind; ``judgments(campaign)`` gives the queryset of
    a campaign's judgments the analysis uses."""
    parts: dict[str, list] = {kind: [] for kind in DIMENSIONAL_KINDS}
    campaigns = []
    for campaign in Campaign.objects.filter(study=study).order_by("slug"):
        if campaign.task_kind not in _LOADERS:
            continue
        queryset = judgments(campaign)
        campaigns.append((campaign.slug, campaign.task_kind, queryset.count()))
        data = campaign_inputs(study.slug, campaign.task_kind, queryset)
        parts[data.kind].append(data)  # a chat campaign's ratings join the Likert part
    return StudyData(
        subject=study.slug,
        campaigns=tuple(campaigns),
        behaviours=_concatenate(parts["abc_eval"], BehaviourData),
        likert=_concatenate(parts["likert"], LikertData),
        comparative=_concatenate(parts["comparative"], ComparativeData),
    )
