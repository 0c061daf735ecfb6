"""From the database to the plain arrays that ``analysis.reports`` analyses.

Bounded queries: judgments are read as ``values_list`` rows (the payload and the item's
``content["meta"]``, never whole items with their conversation text), one query for the
judgments and, for A/B, one for the automatic ties, whatever the campaign's size. Only task
items count: gold checks and training measure workers, not systems.

``exclude_blocked`` leaves out the judgments of blocked workers. The quality module's
``annotation.quality.judgments_for_analysis(campaign, exclude_blocked=...)`` decides which
judgments count when it exists; without it, blocked workers are filtered here.
"""

from __future__ import annotations

from types import SimpleNamespace

from django.db.models import QuerySet

from annotation.kinds import spot_the_bot
from annotation.models import Campaign, Item, Study
from annotation.quality import judgments_for_analysis
from evalhub.errors import UserInputError
from tournaments.models import Tournament

from .dimensional_inputs import DIMENSIONAL_KINDS, campaign_inputs, study_inputs
from .reports import ABData, SpotTheBotData

__all__ = ["NoCampaign", "judgments_queryset", "load_inputs"]


class NoCampaign(UserInputError, ValueError):
    """The tournament has no campaign yet, so there is nothing to analyse."""


def judgments_queryset(campaign: Campaign, *, exclude_blocked: bool) -> QuerySet:
    """The campaign's judgments of task items that the analysis uses."""
    queryset = judgments_for_analysis(campaign, exclude_blocked=exclude_blocked)
    return queryset.filter(item__role=Item.Role.TASK)


def _subject(tournament: Tournament | None, campaign: Campaign | None):
    if tournament is not None:
        if tournament.campaign_id is None:
            raise NoCampaign(f"Tournament {tournament.slug} has no campaign to analyse yet.")
        return tournament.slug, tournament.campaign, tournament.kind
    if campaign is None:
        raise TypeError("give a tournament or a campaign")
    return campaign.slug, campaign, campaign.task_kind


def load_inputs(
    tournament: Tournament | None = None,
    *,
    campaign: Campaign | None = None,
    study: Study | None = None,
    exclude_blocked: bool = False,
):
    """The analysis inputs of a tournament, of a campaign without a tournament, or of an
    imported study (every campaign of it; ``analysis.dimensional_inputs``)."""
    if study is not None and tournament is None and campaign is None:
        return study_inputs(study, lambda c: judgments_queryset(c, exclude_blocked=exclude_blocked))
    slug, campaign, kind = _subject(tournament, campaign)
    queryset = judgments_queryset(campaign, exclude_blocked=exclude_blocked).order_by("pk")
    if kind == "spot_the_bot":
        return _spot_the_bot(slug, campaign, queryset, partners_of(tournament))
    if kind == "ab":
        return _ab(slug, campaign, queryset)
    if kind in DIMENSIONAL_KINDS:
        return campaign_inputs(slug, kind, queryset)
    raise ValueError(f"No analysis for {kind!r} campaigns.")


def partners_of(tournament: Tournament | None) -> tuple[str, ...]:
    """The partner set's system slugs of a bipartite-play tournament (reported apart from
    the targets, never ranked); empty otherwise."""
    if (
        tournament is None
        or tournament.schedule != Tournament.Schedule.BIPARTITE_PLAY
        or tournament.partner_set_id is None
    ):
        return ()
    return tuple(sorted(tournament.partner_set.systems.values_list("slug", flat=True)))


def _spot_the_bot(
    slug: str, campaign: Campaign, queryset: QuerySet, partners: tuple[str, ...] = ()
) -> SpotTheBotData:
    features = tuple(spot_the_bot.clean_config(campaign.task_config)["features"])
    rows = queryset.values_list("pk", "worker_id", "payload", "item__content__meta")
    # The task kind owns how a payload becomes per-speaker rows; it reads these attributes.
    judgments = (
        SimpleNamespace(
            pk=pk,
            worker_id=worker,
            payload=payload,
            item=SimpleNamespace(role=Item.Role.TASK, content={"meta": meta}),
        )
        for pk, worker, payload, meta in rows
    )
    analysis_rows = spot_the_bot.analysis_rows(judgments)
    return SpotTheBotData(
        subject=slug,
        features=features,
        judgment=tuple(r.judgment for r in analysis_rows),
        worker=tuple(r.worker for r in analysis_rows),
        conversation=tuple(r.conversation for r in analysis_rows),
        speaker=tuple(r.speaker for r in analysis_rows),
        system=tuple(r.system for r in analysis_rows),
        opponent=tuple(r.opponent for r in analysis_rows),
        exchanges=tuple(int(r.exchanges) for r in analysis_rows),
        label=tuple(r.label for r in analysis_rows),
        opponent_label=tuple(r.opponent_label for r in analysis_rows),
        preferences=tuple(tuple(r.features.get(f, 0) for f in features) for r in analysis_rows),
        partners=partners,
    )


def _ab(slug: str, campaign: Campaign, queryset: QuerySet) -> ABData:
    judged = [
        (item, worker, meta["system_a"], meta["system_b"], payload["choice"], False)
        for item, worker, payload, meta in queryset.values_list(
            "item_id", "worker_id", "payload", "item__content__meta"
        )
    ]
    automatic = [
        (item, -1, meta["system_a"], meta["system_b"], payload["choice"], True)
        for item, payload, meta in Item.objects.filter(
            campaign=campaign, role=Item.Role.TASK, auto_payload__isnull=False
        )
        .order_by("pk")
        .values_list("pk", "auto_payload", "content__meta")
    ]
    rows = sorted(judged + automatic, key=lambda row: (row[0], row[5], row[1]))
    return ABData(
        subject=slug,
        item=tuple(r[0] for r in rows),
        worker=tuple(r[1] for r in rows),
        system_a=tuple(r[2] for r in rows),
        system_b=tuple(r[3] for r in rows),
        choice=tuple(r[4] for r in rows),
        automatic=tuple(r[5] for r in rows),
        automatic_weight=campaign.redundancy,
    )
