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
from typing import TYPE_CHECKING

from django.db.models import QuerySet

from analysis.inputs.dimensional import DIMENSIONAL_KINDS, campaign_inputs, study_inputs
from analysis.reports import ABData, RankingData, SpotTheBotData
from annotation.kinds import spot_the_bot
from annotation.models import Campaign, Item, Study
from annotation.quality import judgments_for_analysis
from evalhub.errors import UserInputError
from tournaments.models import Tournament

# The kinds whose judgments are rankings (of responses, of whole conversations): one
# model, Plackett-Luce, and one report.
RANKING_KINDS = ("ranking", "conversation_ranking")

if TYPE_CHECKING:
    import numpy as np

__all__ = ["InputsChanged", "NoCampaign", "judgments_queryset", "load_inputs"]


class NoCampaign(UserInputError, ValueError):
    """The tournament has no campaign yet, so there is nothing to analyse."""


class InputsChanged(RuntimeError):
    """The judgments changed between the request and the computation of a run (or of a
    part of it computed later)."""


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
    imported study (every campaign of it; ``analysis.inputs.dimensional``)."""
    if study is not None and tournament is None and campaign is None:
        return study_inputs(study, lambda c: judgments_queryset(c, exclude_blocked=exclude_blocked))
    slug, campaign, kind = _subject(tournament, campaign)
    queryset = judgments_queryset(campaign, exclude_blocked=exclude_blocked).order_by("pk")
    if kind == "spot_the_bot":
        return _spot_the_bot(slug, campaign, queryset, partners_of(tournament))
    if kind == "ab":
        return _ab(slug, campaign, queryset)
    if kind in RANKING_KINDS:
        return _ranking(slug, campaign, queryset)
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
    # The task kind owns how a payload becomes per-speaker rows; it reads these attributes.
    judgments = (
        SimpleNamespace(
            pk=pk,
            worker_id=worker,
            payload=payload,
            item=SimpleNamespace(role=Item.Role.TASK, content={"meta": meta}),
        )
        for pk, worker, payload, meta in queryset.values_list(
            "pk", "worker_id", "payload", "item__content__meta"
        )
    )
    import numpy as np  # here, not at app start-up (the signals import this module)

    table = spot_the_bot.analysis_rows(judgments)
    # One transpose of the row tuples, then one array per column.
    fields = spot_the_bot.AnalysisRow._fields
    column = dict(zip(fields, list(zip(*table, strict=True)) or [()] * len(fields), strict=True))
    return SpotTheBotData(
        subject=slug,
        features=features,
        judgment=np.array(column["judgment"], dtype=np.int64),
        worker=np.array(column["worker"], dtype=np.int64),
        conversation=np.array(column["conversation"], dtype=str),
        speaker=np.array(column["speaker"], dtype=np.int64),
        system=np.array(column["system"], dtype=str),
        opponent=np.array(column["opponent"], dtype=str),
        exchanges=np.array(column["exchanges"], dtype=np.int64),
        label=np.array(column["label"], dtype=str),
        opponent_label=np.array(column["opponent_label"], dtype=str),
        preferences=np.fromiter(
            (row.get(f, 0) for row in column["features"] for f in features),
            np.int8,
            len(table) * len(features),
        ).reshape(len(table), len(features)),
        partners=partners,
    )


def _ab(slug: str, campaign: Campaign, queryset: QuerySet) -> ABData:
    import numpy as np

    judged = _ab_columns(
        (item, worker, meta, payload)
        for item, worker, payload, meta in queryset.values_list(
            "item_id", "worker_id", "payload", "item__content__meta"
        )
    )
    automatic = _ab_columns(
        (item, -1, meta, payload)
        for item, payload, meta in Item.objects.filter(
            campaign=campaign, role=Item.Role.TASK, auto_payload__isnull=False
        )
        .order_by("pk")
        .values_list("pk", "auto_payload", "content__meta")
    )
    automatic["automatic"] = np.ones(len(automatic["item"]), dtype=bool)
    judged["automatic"] = np.zeros(len(judged["item"]), dtype=bool)
    columns = {name: np.concatenate([judged[name], automatic[name]]) for name in judged}
    # By item, judgments before the item's automatic tie, then by worker (stable).
    order = np.lexsort((columns["worker"], columns["automatic"], columns["item"]))
    return ABData(
        subject=slug,
        **{name: values[order] for name, values in columns.items()},
        automatic_weight=campaign.redundancy,
    )


def _ranking(slug: str, campaign: Campaign, queryset: QuerySet) -> RankingData:
    """One entry per (ranking, system): the rank of the shown response the system wrote
    (identical responses were shown once: their systems share its rank)."""
    import numpy as np

    judged = queryset.values_list("item_id", "worker_id", "payload", "item__content__meta")
    automatic = (
        Item.objects.filter(campaign=campaign, role=Item.Role.TASK, auto_payload__isnull=False)
        .order_by("pk")
        .values_list("pk", "auto_payload", "content__meta")
    )
    rows = [(item, worker, payload, meta, False) for item, worker, payload, meta in judged]
    rows += [(item, -1, payload, meta, True) for item, payload, meta in automatic]
    columns: dict[str, list] = {
        name: [] for name in ("ranking", "item", "worker", "system", "rank", "automatic")
    }
    for number, (item, worker, payload, meta, auto) in enumerate(rows):
        for systems, rank in zip(meta["systems"], payload["ranks"], strict=True):
            for system in systems:
                for name, value in (
                    ("ranking", number),
                    ("item", item),
                    ("worker", worker),
                    ("system", system),
                    ("rank", rank),
                    ("automatic", auto),
                ):
                    columns[name].append(value)
    return RankingData(
        subject=slug,
        **{name: np.array(values) for name, values in columns.items()},
        automatic_weight=campaign.redundancy,
    )


_AB_COLUMNS = {
    "item": "int64",
    "worker": "int64",
    "system_a": str,
    "system_b": str,
    "choice": str,
}


def _ab_columns(rows) -> dict[str, np.ndarray]:
    """(item, worker, meta, payload) rows as the A/B columns but ``automatic``."""
    import numpy as np

    columns: dict = {name: [] for name in _AB_COLUMNS}
    for item, worker, meta, payload in rows:
        columns["item"].append(item)
        columns["worker"].append(worker)
        columns["system_a"].append(meta["system_a"])
        columns["system_b"].append(meta["system_b"])
        columns["choice"].append(payload["choice"])
    for name, dtype in _AB_COLUMNS.items():
        # Each list goes as soon as its array exists: never every list and every array at once.
        columns[name] = np.array(columns[name], dtype=dtype)
    return columns
